package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOncallPaste: a paste on stdin with the version said on the command
// line gets the answer first (affected, upgrade) and the evidence after.
func TestOncallPaste(t *testing.T) {
	paste, err := os.ReadFile("../../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt")
	require.NoError(t, err)
	var out bytes.Buffer
	code := run(context.Background(), pipeline.Options{AssumeVersion: "2.1.5", NoSystemDebugDirs: true}, nil, bytes.NewReader(paste), &out, &bytes.Buffer{})
	require.Equal(t, 0, code)
	first, _, _ := strings.Cut(out.String(), "\n")
	assert.Contains(t, first, "known defect SR-6046")
	assert.Contains(t, first, "upgrade to 2.1.7")
	assert.Contains(t, out.String(), "- version 2.1.5 given by the caller")

	out.Reset()
	code = run(context.Background(), pipeline.Options{NoSystemDebugDirs: true}, nil, strings.NewReader("nothing here\n"), &out, &bytes.Buffer{})
	assert.Equal(t, 3, code)
	assert.Contains(t, out.String(), "no crash found")
}

// TestSharesResultType: the answer is printed from a pipeline.Result.
func TestSharesResultType(t *testing.T) {
	assert.Equal(t, reflect.TypeOf(&pipeline.Result{}), reflect.TypeOf(answer).In(1))
}

// TestOncallUnreadable: an input that cannot be read is an error (exit 1),
// not "no crash found" (exit 3), which tells the on-call engineer the
// paste was looked at and is clean.
func TestOncallUnreadable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "be.out")
	var out, errs bytes.Buffer
	code := run(context.Background(), pipeline.Options{NoSystemDebugDirs: true}, []string{missing}, strings.NewReader(""), &out, &errs)
	assert.Equal(t, 1, code)
	assert.NotContains(t, out.String(), "no crash found")
	assert.Contains(t, errs.String(), missing)
}

// TestOncallInterrupted: Ctrl-C while an input is still being read (a
// FIFO whose writer never comes) exits 1 and says so, not "no crash
// found" (exit 3).
func TestOncallInterrupted(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(ctx, pipeline.Options{NoSystemDebugDirs: true}, []string{fifo}, strings.NewReader(""), &out, &errs)
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 1, code)
	case <-time.After(10 * time.Second):
		t.Fatal("oncall did not stop 10 s after it was cancelled")
	}
	assert.NotContains(t, out.String(), "no crash found")
	assert.Equal(t, "oncall: interrupted\n", errs.String())
}

// TestMain runs main itself when ONCALL_TEST_ARG is set, so that a test
// can send the process a signal (testutil.ChildMain).
func TestMain(m *testing.M) { testutil.ChildMain(m, "ONCALL_TEST_ARG", "oncall", main) }

// TestOncallSIGTERM: SIGTERM ends oncall as Ctrl-C does: a compressed
// core (here from a FIFO) is being copied to a temporary file, and the
// copy is removed. Before, the process died at once and left it behind.
func TestOncallSIGTERM(t *testing.T) {
	code, stderr, left := testutil.SIGTERMDuringCoreCopy(t, "ONCALL_TEST_ARG", "../../testdata/core/cores/kern_fp.core.gz",
		func(fifo string) []string { return []string{fifo} })
	assert.Equal(t, 1, code, "-1: killed by the signal; stderr: %s", stderr)
	assert.Empty(t, left, "the temporary copy of the core is left behind")
}

// failWriter fails every write, as stdout redirected to /dev/full does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOncallWriteError: an answer that cannot be written is an error
// (exit 1, said on stderr), as for crashsig; it exited 0.
func TestOncallWriteError(t *testing.T) {
	var errs bytes.Buffer
	code := run(context.Background(), pipeline.Options{NoSystemDebugDirs: true}, []string{"../../testdata/formats/f2-glog04-preamble.txt"}, strings.NewReader(""), failWriter{}, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "no space left on device")
}
