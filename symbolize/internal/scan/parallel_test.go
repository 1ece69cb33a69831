package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sequentialJSON is the single pass over data: its incidents as JSON, one
// per line, and its error.
func sequentialJSON(t testing.TB, data []byte, opts ScanOptions) []string {
	t.Helper()
	cs, err := ParseAll(context.Background(), bytes.NewReader(data), opts)
	require.NoError(t, err)
	return crashesJSON(t, cs)
}

func crashesJSON(t testing.TB, cs []*Crash) []string {
	t.Helper()
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// parallelJSON is ScanParallel over data.
func parallelJSON(t testing.TB, data []byte, opts ScanOptions, par ParallelOptions) []string {
	t.Helper()
	var cs []*Crash
	for c, err := range ScanParallel(context.Background(), bytes.NewReader(data), int64(len(data)), opts, par) {
		require.NoError(t, err)
		cs = append(cs, c)
	}
	return crashesJSON(t, cs)
}

// tcmallocLines are the two lines from which the single pass learns
// `tcmalloc: large alloc ` as a line prefix (README, Parallel
// classification: the case a prototype that compared outputs got wrong).
const tcmallocLines = "tcmalloc: large alloc 1073741824 bytes == 0x7f1c2a000000 @  0x5630e5c0e1a1 0x5630e5c0f2b2\n" +
	"tcmalloc: large alloc 2147483648 bytes == 0x7f1caa000000 @  0x5630e5c0e1a1 0x5630e5c0f2b2\n"

// parallelInput is every crash text of testdata (corpus, formats,
// validation) concatenated, with what crosses chunk borders in a real
// log between and inside them: process restarts (start marker and
// banner), damaged variants (prefixes, CRLF, entities, joined and cut
// lines, binary bytes), CRLF texts, NUL holes (short and 100 KiB, inside
// a text), a line longer than MaxLineBytes, ordinary chatter, and the
// tcmalloc lines that teach a prefix.
func parallelInput(t testing.TB) []byte {
	t.Helper()
	inputs := prefilterInputs(t)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	r := rand.New(rand.NewPCG(11, 12))
	var b bytes.Buffer
	b.WriteString(tcmallocLines)
	for i, name := range names {
		data := inputs[name]
		switch i % 9 {
		case 0:
			b.WriteString("start time: Tue Nov 12 14:20:05 CST 2024\n")
			b.WriteString("I1112 14:20:06.000001 12345 daemon.cpp:100] version doris-2.1.6-rc04(AVX2) RELEASE (build git://x@4f5a6b7)\n")
		case 1:
			data = mutate(r, data)
		case 2:
			data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		case 3:
			// A hole inside the text.
			k := bytes.IndexByte(data[len(data)/2:], '\n')
			if k >= 0 {
				k += len(data) / 2
				data = slices.Concat(data[:k], bytes.Repeat([]byte{0}, 40), data[k:])
			}
		case 4:
			for range r.IntN(40) {
				b.WriteString(ordinaryLines[r.IntN(len(ordinaryLines))] + "\n")
			}
		case 5:
			b.WriteString(tcmallocLines)
		case 6:
			if i%18 == 6 {
				b.Write(bytes.Repeat([]byte{0}, 100<<10))
			}
		case 7:
			if i%27 == 7 {
				b.WriteString("W0303 10:15:02.118230 1 x.cpp:1] " + strings.Repeat("long line ", 7<<10) + "\n")
			}
		}
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestParallelEquivalence: ScanParallel yields the single pass's
// incidents, byte for byte, over every crash text of testdata
// concatenated, with chunk borders falling everywhere (chunks down to
// 1 KiB: inside incidents, hard-wrapped and cut lines, NUL holes, CRLF
// line ends, the long line) and one to four workers. With chunks of
// 64 KiB and more most chunks are handed over to (their own scan is
// used), so the hand-over itself is what is tested, not only the
// fallback of reading on.
func TestParallelEquivalence(t *testing.T) {
	data := parallelInput(t)
	opts := ScanOptions{Source: "all.txt"}
	want := sequentialJSON(t, data, opts)
	require.Greater(t, len(want), 300)
	chunks := []int64{1 << 10, 1<<10 + 7, 3 << 10, 5<<10 + 1, 16 << 10, 64 << 10, 256 << 10, 1 << 20}
	if testing.Short() {
		chunks = []int64{1<<10 + 7, 64 << 10}
	}
	for _, chunk := range chunks {
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("chunk=%d/workers=%d", chunk, workers), func(t *testing.T) {
				var st ParallelStats
				got := parallelJSON(t, data, opts, ParallelOptions{Workers: workers, ChunkBytes: chunk, Stats: &st})
				require.Equal(t, len(want), len(got), "incidents")
				for i := range want {
					require.Equal(t, want[i], got[i], "incident %d", i)
				}
				t.Logf("%d bytes, %d lines: %d chunks, %d skipped in, %d lines read in order, %d of %d incidents reused, %d rescanned", len(data), bytes.Count(data, []byte{'\n'}), st.Chunks, st.Adopted, st.ContinuedLines, st.Reused, len(want), st.Rescanned)
				if chunk >= 16<<10 && chunk <= 256<<10 {
					// Most of these bytes are incidents, which the in-order
					// scan reads itself; it skips what lies between them.
					assert.Positive(t, st.Adopted, "lines skipped by a worker's state")
					assert.Positive(t, st.Reused, "incidents taken from the workers")
				}
			})
		}
	}
}

// TestParallelPrefixLearned is the README's case: the single pass learns
// `tcmalloc: large alloc ` as a line prefix from two lines long before a
// chunk border, and a line with that prefix after the border only means
// what it means with the prefix known. A chunk scanned from a fresh state
// has not learned it; the hand-over must not happen until the states,
// not the outputs, agree.
func TestParallelPrefixLearned(t *testing.T) {
	inputs := prefilterInputs(t)
	dump := inputs[filepath.Join("..", "..", "..", "testdata", "formats", "f2-starrocks-file-line.txt")]
	require.NotNil(t, dump)
	build := func(head string) []byte {
		var b bytes.Buffer
		b.WriteString(head)
		for range 80 {
			b.WriteString("I0303 10:15:02.118230 140073341400640 daemon.cpp:312] Current memory usage: process 12.3 GB\n")
		}
		for range 6 {
			b.Write(dump)
			b.WriteString("tcmalloc: large alloc 3221225472 bytes == 0x7f1d2a000000 @  0x5630e5c0e1a1\n")
			b.WriteString("I0303 10:15:02.118230 140073341400640 daemon.cpp:312] done\n")
		}
		return b.Bytes()
	}
	data := build(tcmallocLines)
	opts := ScanOptions{}
	want := sequentialJSON(t, data, opts)
	require.NotEmpty(t, want)
	// The prefix learned at the top changes the incidents: without the
	// two lines that teach it they differ.
	require.NotEqual(t, want, sequentialJSON(t, build("I0303 10:15:02.118230 1 x.cpp:1] a\nI0303 10:15:02.118230 1 x.cpp:1] b\n"), opts))
	for chunk := int64(512); chunk < int64(len(data)); chunk += 997 {
		got := parallelJSON(t, data, opts, ParallelOptions{Workers: 2, ChunkBytes: chunk})
		require.Equal(t, want, got, "chunk %d", chunk)
	}
}

// TestParallelSnapshotComplete: the snapshot holds what decides later
// output. Two parsers with different learned prefixes, banners, pending
// events or held-back lines do not match; the same parser matches its own
// snapshot.
func TestParallelSnapshotComplete(t *testing.T) {
	feed := func(lines ...string) *parser {
		p := &parser{}
		p.init(ScanOptions{})
		for _, l := range lines {
			p.physical([]byte(l), false, false)
		}
		return p
	}
	chatter := "I0303 10:15:02.118230 140073341400640 daemon.cpp:312] Current memory usage: process 12.3 GB"
	base := feed(chatter, chatter, chatter)
	c := base.snapshot()
	require.True(t, base.idleBoundary())
	assert.True(t, base.matches(&c))
	for name, p := range map[string]*parser{
		"prefix":  feed(strings.TrimSuffix(tcmallocLines, "\n"), "tcmalloc: large alloc 3 bytes", chatter),
		"banner":  feed("I1112 14:20:06.000001 12345 daemon.cpp:100] version doris-2.1.6-rc04(AVX2) RELEASE (build git://x@4f5a6b7)", chatter, chatter),
		"pending": feed(chatter, ordinaryLines[5], chatter),
		"prev":    feed(chatter, chatter, "some unrecognized line: 1"),
	} {
		assert.Equal(t, 3, p.lineNo, name)
		assert.False(t, p.matches(&c), name)
		pc := p.snapshot()
		assert.True(t, p.matches(&pc), name)
	}
}

// TestCarriedFields: every field of the parser and of its prefix learner
// is either in carried or left out of it for a reason written in
// carried's doc comment. A field added later fails here until it is
// placed: in carried (snapshotInto, matchesAt, restore) when it outlives
// a line, else in the list below with the reason in carried's comment.
func TestCarriedFields(t *testing.T) {
	names := func(v any) []string {
		ty := reflect.TypeOf(v)
		var out []string
		for i := range ty.NumField() {
			out = append(out, ty.Field(i).Name)
		}
		return out
	}
	assert.Equal(t, []string{
		"stable",      // set for each line
		"opts", "dem", // the same for every chunk / a cache
		"lineNo",                   // carried.lineNo
		"cur",                      // nil at an idle boundary
		"out",                      // taken at the boundary
		"banner", "pending", "pfx", // carried
		"pf", // the same for every chunk
	}, names(parser{}))
	assert.Equal(t, []string{"shape", "prev", "prevBuf", "prevAlias", "hasPrev", "prevNo", "prevIdle", "prevCut", "prevHits", "prevScanned"}, names(prefixLearner{}),
		"carried holds each of these (prevNo as hasPrevLine)")
}

// FuzzParallel: on arbitrary bytes, any chunk size and worker count,
// ScanParallel yields what the single pass yields.
func FuzzParallel(f *testing.F) {
	for i, pat := range []string{"corpus/*/*.txt", "formats/*.txt"} {
		ms, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", pat))
		for k, m := range ms {
			if b, err := os.ReadFile(m); err == nil && len(b) < 64<<10 {
				f.Add(b, uint16(64+k*37+i), uint8(k))
			}
		}
	}
	f.Add([]byte(tcmallocLines+tcmallocLines+"tcmalloc: large alloc *** SIGSEGV address not mapped to object (@0x8) received by PID 1 (TID 2 OR 0x7f) from PID 0; stack trace: ***\n"), uint16(40), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, workers uint8) {
		opts := ScanOptions{MaxLineBytes: 4096}
		want := sequentialJSON(t, data, opts)
		got := parallelJSON(t, data, opts, ParallelOptions{Workers: 1 + int(workers%4), ChunkBytes: 1 + int64(chunk%4096)})
		require.Equal(t, want, got)
	})
}

// TestParallelStops: a consumer that leaves early stops the workers; a
// context done during the scan ends it with its error.
func TestParallelStops(t *testing.T) {
	data := parallelInput(t)
	before := runtime.NumGoroutine()
	n := 0
	for _, err := range ScanParallel(context.Background(), bytes.NewReader(data), int64(len(data)), ScanOptions{}, ParallelOptions{Workers: 3, ChunkBytes: 8 << 10}) {
		require.NoError(t, err)
		if n++; n == 5 {
			break
		}
	}
	goroutinesBack(t, before)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	n = 0
	for c, err := range ScanParallel(ctx, bytes.NewReader(data), int64(len(data)), ScanOptions{}, ParallelOptions{Workers: 2, ChunkBytes: 8 << 10}) {
		if err != nil {
			last = err
			continue
		}
		require.NotNil(t, c)
		if n++; n == 5 {
			cancel()
		}
	}
	require.ErrorIs(t, last, context.Canceled)
	goroutinesBack(t, before)
}

// goroutinesBack waits until no more than n goroutines run (those of
// the scan end soon after it).
func goroutinesBack(t *testing.T, n int) {
	t.Helper()
	for range 500 {
		if runtime.NumGoroutine() <= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines, %d before the scan", runtime.NumGoroutine(), n)
}

// failingReaderAt fails every read that reaches off.
type failingReaderAt struct {
	r   io.ReaderAt
	off int64
}

var errDisk = errors.New("disk error")

func (f failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.off {
		n := max(0, int(f.off-off))
		copy(p[:n], make([]byte, 0))
		m, _ := f.r.ReadAt(p[:n], off)
		return m, errDisk
	}
	return f.r.ReadAt(p, off)
}

// TestParallelReadError: a read error ends the scan with ErrRead (and the
// reader's error), after the incidents before it.
func TestParallelReadError(t *testing.T) {
	data := parallelInput(t)
	all := sequentialJSON(t, data, ScanOptions{})
	fr := failingReaderAt{r: bytes.NewReader(data), off: int64(len(data) / 2)}
	var got []*Crash
	var last error
	for c, err := range ScanParallel(context.Background(), fr, int64(len(data)), ScanOptions{}, ParallelOptions{Workers: 2, ChunkBytes: 16 << 10}) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, c)
	}
	require.ErrorIs(t, last, ErrRead)
	require.ErrorIs(t, last, errDisk)
	js := crashesJSON(t, got)
	require.NotEmpty(t, js)
	require.Less(t, len(js), len(all))
	// All but the incident the error cut are the single pass's.
	assert.Equal(t, all[:len(js)-1], js[:len(js)-1])
}

// TestParallelConstantMemory: scanning a large file in parallel keeps the
// heap bounded: 256 MiB of be.out-like text (a crash text every 256 KiB)
// never grows the live heap by more than 48 MiB.
func TestParallelConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB")
	}
	inputs := prefilterInputs(t)
	var texts [][]byte
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range inputs {
			if !yield(n) {
				return
			}
		}
	}) {
		texts = append(texts, inputs[name])
	}
	path := filepath.Join(t.TempDir(), "be.out")
	f, err := os.Create(path)
	require.NoError(t, err)
	var chatter bytes.Buffer
	for i := 0; chatter.Len() < 256<<10; i++ {
		chatter.WriteString(ordinaryLines[i%5] + "\n")
	}
	const size = 256 << 20
	written, crashes := 0, 0
	lines, textLines := int64(0), int64(0) // in the file, in its crash texts
	chatterLines := int64(bytes.Count(chatter.Bytes(), []byte("\n")))
	for written < size {
		n, err := f.Write(chatter.Bytes())
		require.NoError(t, err)
		text := texts[crashes%len(texts)]
		m, err := f.Write(text)
		require.NoError(t, err)
		f.WriteString("\n")
		written += n + m + 1
		crashes++
		tl := int64(bytes.Count(text, []byte("\n"))) + 1
		lines += chatterLines + tl
		textLines += tl
	}
	require.NoError(t, f.Sync())
	st, err := f.Stat()
	require.NoError(t, err)

	n := 0
	var stats ParallelStats
	growth := peakHeapGrowth(func() {
		for c, err := range ScanParallel(context.Background(), f, st.Size(), ScanOptions{}, ParallelOptions{Workers: 2, Stats: &stats}) {
			require.NoError(t, err)
			require.NotNil(t, c)
			n++
		}
	})
	require.NoError(t, f.Close())
	t.Logf("%d incidents from %d MiB (%d crash texts, %d lines, %d in crash texts): peak heap growth %d MiB; %d chunks, %d skipped in, %d lines read in order",
		n, st.Size()>>20, crashes, lines, textLines, growth>>20, stats.Chunks, stats.Adopted, stats.ContinuedLines)
	assert.Greater(t, n, crashes/2)
	assert.Less(t, growth, int64(48<<20), "the heap grows with the input")
	// The in-order scan takes the workers' incidents and states: it reads
	// the lines before a chunk's first snapshot equal to its state, and
	// whole chunks where none is (a prefix taught by a crash text the
	// chunk's guess lacks, corrected by scanning the chunk again when the
	// chunk before is done). How many depends on the scheduling: a chunk
	// scanned before the one before it finished, whose guess is wrong,
	// is read in order. Measured 465 lines of 2.7M on 2 shared cores (1.2M
	// before the workers' incidents were taken); the bound, a quarter of
	// the lines, catches the in-order scan reading (nearly) everything, the
	// failure mode when snapshots never match.
	t.Logf("%d incidents taken from the workers", stats.Reused)
	assert.Less(t, stats.ContinuedLines, lines/4, "lines the in-order scan read itself")
	assert.Greater(t, stats.Reused, n/2, "incidents taken from the workers")
}

// TestParallelTwinFatal: two threads' FATAL lines and preambles of one
// death (twinFatal, twinPreamble) give one incident with chunk borders
// anywhere in them, as in the single pass.
func TestParallelTwinFatal(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "defects", "starrocks", "clone-expr-nullable-sum-check-non-numeric-column.txt"))
	require.NoError(t, err)
	// and two threads' FATAL lines and check-failure stacks, one after the other
	late := "F20260130 11:08:08.581553 140153981888064 sum.h:60] Check failed: x\n" +
		"*** Check failure stack trace: ***\n    @     0x2743bd8a google::LogMessage::Fail()\n    @     0x1e8a3f0c starrocks::SumAggregateFunction::update()\n" +
		"F20260130 11:08:08.582600 140154763994688 sum.h:60] Check failed: x\n" +
		"*** Check failure stack trace: ***\n    @     0x2743bd8a google::LogMessage::Fail()\n    @     0x1e8a4444 starrocks::SumAggregateFunction::merge()\n" +
		"*** Aborted at 1769771288 (unix time) try \"date -d @1769771288\" if you are using GNU date ***\n" +
		"*** SIGABRT (@0x3e80002848e) received by PID 165006 (TID 0x7f77a6ffd700) LWP(166298) from PID 165006; stack trace: ***\n" +
		"    @     0x7f5e9b6b2387 __GI_raise\n    @         0x1e8a4444 starrocks::SumAggregateFunction::merge()\n"
	filler := []byte(strings.Repeat("I20260130 11:08:07.000001 140153981888064 daemon.cpp:312] ordinary line\n", 40))
	for _, text := range [][]byte{b, []byte(late)} {
		requireOneDeathChunked(t, append(slices.Clone(filler), text...), 53)
	}
}

// requireOneDeathChunked requires that data holds one incident and that
// ScanParallel with a chunk border every step bytes finds the same.
func requireOneDeathChunked(t *testing.T, data []byte, step int64) {
	t.Helper()
	opts := ScanOptions{MaxLineBytes: 4096}
	want := sequentialJSON(t, data, opts)
	require.Len(t, want, 1, "one death")
	for chunk := int64(16); chunk < int64(len(data)); chunk += step {
		got := parallelJSON(t, data, opts, ParallelOptions{Workers: 2, ChunkBytes: chunk})
		require.Equal(t, want, got, "chunk %d", chunk)
	}
}
