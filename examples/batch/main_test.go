package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatch runs over a directory of a log, a gzip log, a compressed core
// and an executable: every crash is in the table (the core too), the
// executable is skipped, and two runs print the same bytes.
func TestBatch(t *testing.T) {
	dir := t.TempDir()
	crash, err := os.ReadFile("../../testdata/formats/f2-glog04-preamble.txt")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "be.out"), crash, 0o644))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(crash)
	zw.Close()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "old"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old", "be.out.1.gz"), gz.Bytes(), 0o644))
	core, err := os.ReadFile("../../testdata/core/cores/kern_fp.core.gz")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "core.41237.gz"), core, 0o644))
	exe, err := os.ReadFile("../../testdata/core/bin/sim_fp.gz")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sim_fp.gz"), exe, 0o644))

	var out, errs bytes.Buffer
	opts := pipeline.Options{NoSystemDebugDirs: true, AssumeVersion: "3.3.9"}
	require.Equal(t, 0, run(context.Background(), opts, []string{dir}, &out, &errs))
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, rows, 3, out.String()) // header, the log twice in one bucket, the core
	assert.Contains(t, rows[0], "count")
	assert.Contains(t, out.String(), "core.41237.gz")
	assert.Regexp(t, `(?m)^2 .* 3\.2\.8 .*be\.out:1 `, out.String(), "the version the log prints")
	assert.Regexp(t, `(?m)^1 .* 3\.3\.9 .*core\.41237\.gz`, out.String(), "the version assumed for the core")
	assert.Contains(t, errs.String(), "sim_fp.gz: skipped")

	var again bytes.Buffer
	run(context.Background(), opts, []string{dir}, &again, &bytes.Buffer{})
	assert.Equal(t, out.String(), again.String())
}

// TestSharesResultType: the table is made of pipeline.Buckets, whose
// representative is the pipeline.Result of classify --json.
func TestSharesResultType(t *testing.T) {
	ft := reflect.TypeOf(table)
	assert.Equal(t, reflect.TypeOf([]pipeline.Bucket{}), ft.In(1))
	f, ok := reflect.TypeOf(pipeline.Bucket{}).FieldByName("Representative")
	require.True(t, ok)
	assert.Equal(t, reflect.TypeOf(&pipeline.Result{}), f.Type)
}

// TestBatchExitCodes: the exit status says what crashsig's does (usage 2,
// an unreadable input 1, nothing found 3), and a missing input is named
// on stderr while the other inputs still make the table.
func TestBatchExitCodes(t *testing.T) {
	const log = "../../testdata/formats/f2-glog04-preamble.txt"
	empty := t.TempDir()
	junk := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(junk, "be.out"), bytes.Repeat([]byte{0, 0xff, 0x13, 0x80}, 4096), 0o644))
	missing := filepath.Join(empty, "gone.log")
	opts := pipeline.Options{NoSystemDebugDirs: true}
	for _, tc := range []struct {
		name  string
		paths []string
		code  int
		err   string
	}{
		{"no paths", nil, 2, "usage"},
		{"missing", []string{missing}, 1, "gone.log"},
		{"missing and a log", []string{missing, log}, 1, "gone.log"},
		{"empty directory", []string{empty}, 3, "no crash found"},
		{"junk", []string{junk}, 3, "no crash found"},
		{"a log", []string{log}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			assert.Equal(t, tc.code, run(context.Background(), opts, tc.paths, &out, &errs), errs.String())
			if tc.err == "" {
				assert.Empty(t, errs.String())
			} else {
				assert.Contains(t, errs.String(), tc.err)
			}
			if slices.Contains(tc.paths, log) {
				assert.Contains(t, out.String(), "starrocks::HashJoiner::_probe")
			}
		})
	}
}

// TestBatchInterrupted: a run cancelled while an input is still being
// read (a FIFO whose writer never comes) exits 1, says so once (not one
// "context canceled" per file) and prints what it had read.
func TestBatchInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "live.log")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	logs := slices.Repeat([]string{"../../testdata/formats/f2-glog04-preamble.txt"}, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs bytes.Buffer
	done := make(chan int)
	var prog pipeline.Progress
	go func() {
		done <- run(ctx, pipeline.Options{NoSystemDebugDirs: true, Progress: &prog}, append([]string{logs[0], fifo}, logs...), &out, &errs)
	}()
	// The first log's crash is made (it is then yielded whatever follows);
	// a fixed sleep was too short under -race with other packages' tests
	// running (the table held its header alone).
	require.Eventually(t, func() bool { return prog.Incidents() >= 1 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 1, code)
	case <-time.After(10 * time.Second):
		t.Fatal("batch did not stop 10 s after it was cancelled")
	}
	assert.Equal(t, 1, strings.Count(errs.String(), "\n"), errs.String())
	assert.Contains(t, errs.String(), "interrupted")
	assert.Regexp(t, `(?m)^[0-9]+ .*HashJoiner::_probe`, out.String(), "the logs read")
}

// TestBatchMemoryBounded: the table is made as the Results come, so the
// heap does not grow with the number of incidents (it held every Result
// until the end: 1.35 GB for 163,000 incidents of a 200 MB log).
func TestBatchMemoryBounded(t *testing.T) {
	crash, err := os.ReadFile("../../testdata/formats/f2-glog04-preamble.txt")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, bytes.Repeat(crash, 20000), 0o644))

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
		}
	}()
	var out bytes.Buffer
	code := run(context.Background(), pipeline.Options{NoSystemDebugDirs: true}, []string{path}, &out, &bytes.Buffer{})
	close(stop)
	<-sampled
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^20000 `, out.String())
	t.Logf("peak heap in use %d MB", peak.Load()>>20)
	assert.Less(t, peak.Load(), uint64(96<<20), "heap in use while bucketing 20,000 incidents")
}

// TestMain runs main itself when BATCH_TEST_ARGS is set, so that a test
// can send the process a signal (testutil.ChildMain).
func TestMain(m *testing.M) { testutil.ChildMain(m, "BATCH_TEST_ARGS", "batch", main) }

// TestBatchSIGTERM: SIGTERM (kill, systemd, docker stop) ends a run as
// Ctrl-C does: the temporary copy of a compressed core being decompressed
// is removed and the exit status is 1. Before, the process died at once
// and left the copy (up to the size of the core) in the temporary
// directory.
func TestBatchSIGTERM(t *testing.T) {
	code, stderr, left := testutil.SIGTERMDuringCoreCopy(t, "BATCH_TEST_ARGS", "../../testdata/core/cores/kern_fp.core.gz",
		func(fifo string) []string { return []string{fifo} })
	assert.Equal(t, 1, code, "exit status (-1: killed by the signal); stderr: %s", stderr)
	assert.Empty(t, left, "the temporary copy of the core is left behind")
	assert.Contains(t, stderr, "interrupted")
}

// failWriter fails every write, as stdout redirected to /dev/full does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestBatchWriteError: a table that cannot be written exits 1 and says
// why on stderr (it exited 1 in silence).
func TestBatchWriteError(t *testing.T) {
	var errs bytes.Buffer
	code := run(context.Background(), pipeline.Options{NoSystemDebugDirs: true}, []string{"../../testdata/formats/f2-glog04-preamble.txt"}, failWriter{}, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "no space left on device")
}
