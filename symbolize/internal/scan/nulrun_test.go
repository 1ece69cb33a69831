package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nulRun is the preallocated tail of a log file a crash leaves behind: the
// next process writes after it, on the same physical line.
var nulRun = strings.Repeat("\x00", 32)

// TestNULRunBeforeDump: a crash text written after a NUL run gives the same
// incidents (so the same signature keys) as without it, with and without
// the prefilter, for every corpus, format and validation text — also when
// the old process's last line, cut by the crash, comes before the run. At
// 9e5a28c most of them differed: the line was junk unless it held `*** `
// or was a glog line, and the glog test failed on the leading NULs.
func TestNULRunBeforeDump(t *testing.T) {
	inputs := prefilterInputs(t)
	for name, data := range inputs {
		want := parseWith(t, data, ScanOptions{}, true)
		for _, before := range []string{nulRun, "I0303 10:15:02.118230 1 daemon.cpp:312] cut by the cra" + nulRun + "x" + nulRun} {
			prefixed := append([]byte(before), data...)
			for _, filtered := range []bool{true, false} {
				got := parseWith(t, prefixed, ScanOptions{}, filtered)
				assert.Equal(t, want, got, "%s after %q (prefilter %v)", filepath.Base(name), before[:min(len(before), 8)], filtered)
			}
		}
	}
}

func TestSkipNUL(t *testing.T) {
	for n := range 600 {
		b := []byte(strings.Repeat("\x00", n) + "a\x00")
		require.Equal(t, n, skipNUL(b), n)
		require.Equal(t, n, skipNUL(b[:n]), n)
	}
}

// TestShortNULRun: NUL runs shorter than minHole (binary junk, UTF-16) do
// not split a line, which stays junk between incidents; minHole NULs do.
func TestShortNULRun(t *testing.T) {
	for n, events := range map[int]int{1: 0, minHole - 1: 0, minHole: 1, 4096: 1} {
		in := strings.Repeat("\x00", n) + "Segmentation fault\n" + tailDump
		for _, filtered := range []bool{true, false} {
			got := parseWith(t, []byte(in), ScanOptions{}, filtered)
			assert.Equal(t, events, strings.Count(got, `"kind":"shell"`), "%d NULs (prefilter %v)", n, filtered)
		}
	}
}

// TestLargeHole: a hole larger than MaxLineBytes (megabytes of NULs a
// crash leaves) does not cut off the line after it (holeSqueezer), read
// synchronously or live; line numbers are kept.
func TestLargeHole(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "formats", "f9-kernel-segfault.txt"))
	require.NoError(t, err)
	want := parseWith(t, data, ScanOptions{}, true)
	for _, n := range []int{100 << 10, 3 << 20} {
		in := append(bytes.Repeat([]byte{0}, n), data...)
		assert.Equal(t, want, parseWith(t, in, ScanOptions{}, true), "%d NULs", n)
		assert.Equal(t, want, parseWith(t, in, ScanOptions{}, false), "%d NULs, no prefilter", n)
		cs, err := ParseAll(context.Background(), iotest.OneByteReader(bytes.NewReader(in)), ScanOptions{IdleTimeout: time.Minute})
		require.NoError(t, err)
		got, err := json.Marshal(cs)
		require.NoError(t, err)
		assert.Equal(t, want, string(got), "%d NULs, live, one byte at a time", n)
	}
}

// TestHoleSqueezer: NUL runs are cut to maxHoleBytes across reads of any
// size, other bytes pass unchanged.
func TestHoleSqueezer(t *testing.T) {
	in := "a" + strings.Repeat("\x00", 300) + "b\x00c" + strings.Repeat("\x00", 7) + "\n" + strings.Repeat("\x00", 65) + "d"
	want := "a" + strings.Repeat("\x00", maxHoleBytes) + "b\x00c" + strings.Repeat("\x00", 7) + "\n" + strings.Repeat("\x00", maxHoleBytes) + "d"
	for _, r := range []func(string) io.Reader{
		func(s string) io.Reader { return strings.NewReader(s) },
		func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	} {
		got, err := io.ReadAll(&holeSqueezer{r: r(in)})
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
}

// refSqueeze is holeSqueezer's contract written plainly: every NUL run of
// s cut to maxHoleBytes.
func refSqueeze(s []byte) []byte {
	out := []byte{}
	run := 0
	for _, c := range s {
		if c != 0 {
			run = 0
			out = append(out, c)
			continue
		}
		if run++; run <= maxHoleBytes {
			out = append(out, 0)
		}
	}
	return out
}

// FuzzHoleSqueezer: the squeezer (which looks for NUL words, not NULs)
// gives refSqueeze's bytes for any input read in pieces of any sizes.
func FuzzHoleSqueezer(f *testing.F) {
	f.Add([]byte("a\x00\x00b"), uint8(3))
	f.Add(append(append([]byte("xy"), make([]byte, 70)...), 'z'), uint8(5))
	f.Add(append(make([]byte, 14), append([]byte("q"), make([]byte, 200)...)...), uint8(9))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		// Widen the fuzzer's bytes: runs of NULs of many lengths.
		var s []byte
		for i, c := range in {
			if c < 8 {
				s = append(s, make([]byte, int(c)*13+i%7)...)
				continue
			}
			s = append(s, c)
		}
		n := int(step%64) + 1
		got, err := io.ReadAll(&holeSqueezer{r: &pieceReader{s: s, n: n}})
		require.NoError(t, err)
		require.Equal(t, refSqueeze(s), got, "read %d bytes at a time", n)
	})
}

// pieceReader returns s n bytes (or fewer) at a time.
type pieceReader struct {
	s []byte
	n int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n, len(r.s))], r.s)
	r.s = r.s[k:]
	return k, nil
}

// TestHoleSqueezerBinary: random bytes (a NUL in 256) with NUL runs of
// every length from 1 to 200 put in, read in reads of many sizes.
func TestHoleSqueezerBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	s := make([]byte, 1<<20)
	for i := range s {
		s[i] = byte(r.Uint32())
	}
	for n := 1; n <= 200; n++ {
		at := r.IntN(len(s) - n)
		clear(s[at : at+n])
	}
	want := refSqueeze(s)
	for _, n := range []int{1, 7, 8, 15, 64, 4096, 1 << 20} {
		got, err := io.ReadAll(&holeSqueezer{r: &pieceReader{s: s, n: n}})
		require.NoError(t, err)
		require.Equal(t, want, got, "read %d bytes at a time", n)
	}
}

// TestLateNULRun: the first NUL of the input comes after megabytes of
// text (past many reads of the squeezer, whose sawNUL spares each line's
// NUL search until then), in a hole before a dump and inside a line; read
// synchronously the incidents are those of a scan that looks for NULs in
// every line (the Scanner without its squeezer's flag), of a live scan and
// of ScanParallel.
func TestLateNULRun(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "formats", "f9-kernel-segfault.txt"))
	require.NoError(t, err)
	var in []byte
	for i := 0; len(in) < 3<<20; i++ {
		in = fmt.Appendf(in, "I0303 10:15:%02d.%06d 140073341400640 daemon.cpp:312] Current memory usage: %d\n", i%60, i%1000000, i)
	}
	in = append(in, "W0303 10:16:00.000001 1 a.cpp:1] half\x00a line\n"...)
	in = append(append(in, nulRun...), data...)
	in = append(append(in, nulRun...), data...)
	want := parseWith(t, in, ScanOptions{}, true)
	s := NewScanner(bytes.NewReader(in), ScanOptions{})
	s.sq = nil // look for NULs in every line
	assert.Equal(t, want, scannerJSON(t, s))
	assert.Contains(t, want, `"kind"`, "the dumps after the holes are read")
	live, err := ParseAll(context.Background(), iotest.HalfReader(bytes.NewReader(in)), ScanOptions{IdleTimeout: time.Minute})
	require.NoError(t, err)
	got, err := json.Marshal(live)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "live")
	var single []*Crash
	require.NoError(t, json.Unmarshal([]byte(want), &single))
	for _, chunk := range []int64{8 << 10, 256 << 10} {
		// Chunk scanners read through their own squeezers (their sawNUL).
		assert.Equal(t, crashesJSON(t, single), parallelJSON(t, in, ScanOptions{}, ParallelOptions{Workers: 2, ChunkBytes: chunk}), "parallel, chunks of %d", chunk)
	}
}
