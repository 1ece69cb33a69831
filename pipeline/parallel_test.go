package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

// corpusTexts returns the crash texts of testdata/corpus and
// testdata/validation (used as input data), in a stable order.
func corpusTexts(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, dir := range []string{"../testdata/corpus", "../testdata/validation"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".txt") {
				return err
			}
			b, err := os.ReadFile(path)
			out = append(out, b)
			return err
		})
		require.NoError(t, err)
	}
	require.NotEmpty(t, out)
	return out
}

// runTranscript encodes what a Run yields, in order: each Result as JSON,
// each error as its text.
func runTranscript(t *testing.T, seq func(func(*Result, error) bool)) []string {
	t.Helper()
	var out []string
	for r, err := range seq {
		if err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

// parallelInputs writes n files of shuffled sizes: a crash text of the
// corpus behind 0 to 20k ordinary log lines, sometimes two, sometimes
// none; a binary file and a missing path are among them.
func parallelInputs(t *testing.T, n int) []string {
	t.Helper()
	texts := corpusTexts(t)
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	dir := t.TempDir()
	var paths []string
	for i := range n {
		var b strings.Builder
		for range rng.IntN(3) {
			for j := range rng.IntN(20000) {
				fmt.Fprintf(&b, "I1203 10:15:%02d.%06d 12345 tablet_manager.cpp:%d] ordinary line %d\n", j%60, j, j%900, j)
			}
			b.Write(texts[rng.IntN(len(texts))])
		}
		p := filepath.Join(dir, fmt.Sprintf("be-%03d.out", i))
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		paths = append(paths, p)
	}
	bin := filepath.Join(dir, "junk.out")
	require.NoError(t, os.WriteFile(bin, []byte("\x00\x01\x02\x03\x00\x00\x00\x00binary"), 0o644))
	paths = slices.Insert(paths, n/3, bin, filepath.Join(dir, "missing.out"))
	return paths
}

// TestRunJobsSameSequence: Run with Jobs 2, 3 and 8 yields exactly what it
// yields with one job (Results and errors, in input order) over many
// files of shuffled sizes, a skipped file and a missing one. Run it with
// -race.
func TestRunJobsSameSequence(t *testing.T) {
	ctx := context.Background()
	paths := parallelInputs(t, 40)
	want := runTranscript(t, newPipeline(t, Options{}).Run(ctx, nil, paths...))
	// One Result per incident the scanner finds in each file read alone,
	// and an error line each for the skipped and the missing file.
	incidents := 0
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue // missing.out
		}
		cs, err := symbolize.ParseAll(ctx, f, symbolize.ScanOptions{})
		f.Close()
		require.NoError(t, err)
		incidents += len(cs)
	}
	require.Greater(t, incidents, 20, "the random draw holds crash texts")
	require.Len(t, want, incidents+2)
	assert.Contains(t, strings.Join(want, "\n"), "junk.out: skipped")
	assert.Contains(t, strings.Join(want, "\n"), "missing.out")
	for _, jobs := range []int{2, 3, 8} {
		got := runTranscript(t, newPipeline(t, Options{Jobs: jobs}).Run(ctx, nil, paths...))
		require.Equal(t, want, got, "jobs %d", jobs)
	}
	// A directory is read in the same order too.
	dir := filepath.Dir(paths[0])
	want = runTranscript(t, newPipeline(t, Options{}).Run(ctx, nil, dir))
	got := runTranscript(t, newPipeline(t, Options{Jobs: 4}).Run(ctx, nil, dir))
	require.Equal(t, want, got)
}

// TestRunJobsEarlyExitAndCancel: leaving the loop early or cancelling the
// context ends every reader (no goroutine outlives Run), and a cancelled
// run yields the context's error last.
func TestRunJobsEarlyExitAndCancel(t *testing.T) {
	paths := parallelInputs(t, 12)
	p := newPipeline(t, Options{Jobs: 4})
	before := runtime.NumGoroutine()
	n := 0
	for r, err := range p.Run(context.Background(), nil, paths...) {
		if err == nil && r != nil {
			n++
		}
		if n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	n = 0
	for _, err := range p.Run(ctx, nil, paths...) {
		n++
		if n == 2 {
			cancel()
		}
		last = err
	}
	require.ErrorIs(t, last, context.Canceled)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left running")
}

// TestRunJobsBoundedWindow: while the consumer holds the first Result,
// the readers of the next inputs stop once each has resultWindow Results
// ready: the Results of a large batch are never all held.
func TestRunJobsBoundedWindow(t *testing.T) {
	texts := corpusTexts(t)
	dir := t.TempDir()
	var paths []string
	for i := range 6 {
		var b strings.Builder
		for j := range 300 {
			b.Write(texts[(i*300+j)%len(texts)])
			b.WriteString("\n\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("be-%d.out", i))
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		paths = append(paths, p)
	}
	var prog Progress
	p := newPipeline(t, Options{Jobs: 3, Progress: &prog})
	total := 0
	for r, err := range p.Run(context.Background(), nil, paths...) {
		require.NoError(t, err)
		require.NotNil(t, r)
		if total == 0 {
			time.Sleep(500 * time.Millisecond) // the readers run ahead meanwhile
			assert.LessOrEqual(t, prog.Incidents(), int64(3*(resultWindow+2)), "Results made ahead of the consumer")
		}
		total++
	}
	assert.Greater(t, total, 6*200, "the whole batch is read")
	assert.Equal(t, int64(total), prog.Incidents())
}

// TestRunCancelErrorLast: whatever Jobs, a Run whose context is cancelled
// between inputs yields the context's error once, last (review: with one
// job the run stopped after the input being read without saying why, so a
// caller took the cut run for a complete one; with Jobs > 1 it said it).
func TestRunCancelErrorLast(t *testing.T) {
	texts := corpusTexts(t)
	dir := t.TempDir()
	var paths []string
	for i := range 8 {
		p := filepath.Join(dir, fmt.Sprintf("be-%d.out", i))
		require.NoError(t, os.WriteFile(p, texts[i], 0o644))
		paths = append(paths, p)
	}
	for _, jobs := range []int{1, 3} {
		ctx, cancel := context.WithCancel(context.Background())
		var got []error
		results := 0
		for r, err := range newPipeline(t, Options{Jobs: jobs}).Run(ctx, nil, paths...) {
			if err != nil {
				got = append(got, err)
				continue
			}
			require.Empty(t, got, "jobs %d: a Result after the context's error", jobs)
			require.NotNil(t, r)
			results++
			cancel()
		}
		cancel()
		require.Len(t, got, 1, "jobs %d", jobs)
		assert.ErrorIs(t, got[0], context.Canceled, "jobs %d", jobs)
		assert.Less(t, results, len(paths), "jobs %d", jobs)
	}
}

// TestRunFileShrankWhileRead: a file truncated while it is read (a restart
// script emptying be.out under a batch run) is an *InputError after the
// Results read, whatever Jobs, instead of a silent early end (review: the
// chunked scan of a 1.6 GB be.out truncated to 300 MB gave 597 Results and
// no error; one goroutine likewise).
func TestRunFileShrankWhileRead(t *testing.T) {
	texts := corpusTexts(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "be.out")
	for _, jobs := range []int{1, 2} {
		var b bytes.Buffer
		b.Write(texts[0])
		for j := 0; b.Len() < 24<<20; j++ {
			fmt.Fprintf(&b, "I1203 10:15:%02d.%06d 12345 tablet_manager.cpp:%d] ordinary line %d\n", j%60, j, j%900, j)
		}
		b.Write(texts[1])
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		var errs []error
		for r, err := range newPipeline(t, Options{Jobs: jobs, ChunkScanBytes: 1}).Run(context.Background(), nil, path) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if r.StartLine == 1 {
				require.NoError(t, os.Truncate(path, 1<<20))
			}
		}
		require.Len(t, errs, 1, "jobs %d", jobs)
		var ie *InputError
		require.ErrorAs(t, errs[0], &ie, "jobs %d", jobs)
		assert.Equal(t, path, ie.Name)
		assert.Contains(t, errs[0].Error(), "shrank", "jobs %d", jobs)
		assert.Equal(t, 1, strings.Count(errs[0].Error(), path), errs[0].Error())
	}
	// A file that only grows while it is read is no error.
	require.NoError(t, os.WriteFile(path, texts[0], 0o644))
	for _, err := range newPipeline(t, Options{}).Run(context.Background(), nil, path) {
		require.NoError(t, err)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		f.WriteString("I1203 10:15:00.000000 12345 x.cpp:1] more\n")
		f.Close()
	}
}
