package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
