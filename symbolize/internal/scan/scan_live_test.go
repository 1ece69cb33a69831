package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const liveCrash = `*** Aborted at 1731400000 (unix time) try "date -d @1731400000" if you are using GNU date ***
PC: @          0x5a1b2c3 starrocks::ParsedPageV1::read()
*** SIGSEGV (@0x28) received by PID 12001 (TID 0x7f0e2d7fe700) from PID 40; stack trace: ***
    @          0x7e8d9c2 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7f0f3a1c4630 (unknown)
    @          0x5a1b2c3 starrocks::ParsedPageV1::read()
    @          0x5a1c004 starrocks::ColumnReader::read_page()
    @          0x3c9e2a1 starrocks::ThreadPool::dispatch_thread()
`

// nextWithin runs sc.Next in a goroutine and reports its result and how
// long it took, failing the test if it takes longer than limit.
func nextWithin(t *testing.T, sc *Scanner, ctx context.Context, limit time.Duration) (bool, time.Duration) {
	t.Helper()
	start := time.Now()
	res := make(chan bool, 1)
	go func() { res <- sc.NextContext(ctx) }()
	select {
	case ok := <-res:
		return ok, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("NextContext did not return within %s", limit)
		return false, 0
	}
}

// A crash written to a live log, then silence: the incident comes out once
// the input has been quiet for the idle timeout, not when a later line
// arrives; the Scanner keeps reading afterwards.
func TestScanIdleTimeoutEmitsOpenIncident(t *testing.T) {
	const idle = 300 * time.Millisecond
	pr, pw := io.Pipe()
	defer pr.Close()
	sc := NewScanner(pr, ScanOptions{Source: "be.out", IdleTimeout: idle})
	go func() {
		io.WriteString(pw, "I0303 10:15:02.118230 90211 daemon.cpp:312] ordinary line\n")
		io.WriteString(pw, liveCrash)
	}()
	written := time.Now()
	ok, _ := nextWithin(t, sc, context.Background(), idle+2*time.Second)
	require.True(t, ok, "err %v", sc.Err())
	took := time.Since(written)
	assert.GreaterOrEqual(t, took, idle, "emitted before the input went quiet")
	assert.Less(t, took, idle+500*time.Millisecond)
	c := sc.Crash()
	assert.Equal(t, "SIGSEGV", c.Signal)
	assert.Equal(t, 2, c.StartLine)
	require.NotNil(t, c.CrashingThread())
	assert.Len(t, c.CrashingThread().Frames, 5)
	assert.False(t, c.Corrupted, c.CorruptedReason)

	// A second crash later on the same input is found too, and EOF ends it.
	go func() {
		io.WriteString(pw, liveCrash)
		pw.Close()
	}()
	ok, _ = nextWithin(t, sc, context.Background(), 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, 10, sc.Crash().StartLine)
	ok, _ = nextWithin(t, sc, context.Background(), 5*time.Second)
	assert.False(t, ok)
	assert.NoError(t, sc.Err())
}

// Silence with no incident open emits nothing.
func TestScanIdleTimeoutNothingOpen(t *testing.T) {
	pr, pw := io.Pipe()
	sc := NewScanner(pr, ScanOptions{IdleTimeout: 50 * time.Millisecond})
	go func() {
		io.WriteString(pw, "I0303 10:15:02.118230 90211 daemon.cpp:312] ordinary line\n")
		time.Sleep(300 * time.Millisecond)
		pw.Close()
	}()
	ok, took := nextWithin(t, sc, context.Background(), 5*time.Second)
	assert.False(t, ok)
	assert.GreaterOrEqual(t, took, 250*time.Millisecond, "returned before the input ended")
	assert.NoError(t, sc.Err())
}

// A reader blocked in Read: NextContext returns within 100 ms of the
// context's deadline with Err() == ctx.Err(), and the reading goroutine
// ends once the reader is closed.
func TestScanContextWhileBlockedInRead(t *testing.T) {
	before := runtime.NumGoroutine()
	pr, pw := io.Pipe()
	sc := NewScanner(pr, ScanOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ok, took := nextWithin(t, sc, ctx, 5*time.Second)
	assert.False(t, ok)
	assert.Less(t, took, 2100*time.Millisecond)
	assert.GreaterOrEqual(t, took, 2*time.Second)
	require.ErrorIs(t, sc.Err(), context.DeadlineExceeded)
	assert.Equal(t, ctx.Err(), sc.Err())
	assert.False(t, sc.Next(), "a stopped Scanner stays stopped")

	pw.Close() // frees the Read the goroutine is blocked in
	assertNoGoroutineLeak(t, before)
}

// An incident open when the context is done is returned (not marked cut by
// the end of the input), then NextContext returns false.
func TestScanContextCancelWithOpenIncident(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	sc := NewScanner(pr, ScanOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.WriteString(pw, liveCrash)
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	ok, _ := nextWithin(t, sc, ctx, 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, "SIGSEGV", sc.Crash().Signal)
	assert.False(t, sc.Crash().Corrupted, sc.Crash().CorruptedReason)
	ok, _ = nextWithin(t, sc, ctx, time.Second)
	assert.False(t, ok)
	assert.ErrorIs(t, sc.Err(), context.Canceled)
}

// Close stops a live Scanner whose caller gives up early.
func TestScanClose(t *testing.T) {
	before := runtime.NumGoroutine()
	sc := NewScanner(strings.NewReader(strings.Repeat(liveCrash, 2000)), ScanOptions{IdleTimeout: time.Second})
	require.True(t, sc.Next())
	require.NoError(t, sc.Close())
	assert.False(t, sc.Next())
	assertNoGoroutineLeak(t, before)
}

// The live path (a goroutine, chunks, a cancellable context) finds exactly
// what the synchronous path finds, whatever the sizes of the reads, long
// lines included.
func TestScanLiveSameAsSync(t *testing.T) {
	var files []string
	for _, pat := range []string{"corpus/*/*.txt", "formats/*.txt"} {
		ms, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", pat))
		require.NoError(t, err)
		files = append(files, ms...)
	}
	require.NotEmpty(t, files)
	long := "I0303 10:15:02.118230 90211 x.cpp:1] " + strings.Repeat("x", 300) + "\n"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if i%3 == 0 {
			b = append([]byte(long), b...)
		}
		opts := ScanOptions{Source: "x", MaxLineBytes: 200}
		want, err := ParseAll(context.Background(), bytes.NewReader(b), opts)
		require.NoError(t, err)
		var r io.Reader = bytes.NewReader(b)
		switch i % 3 {
		case 0:
			r = iotest.OneByteReader(r)
		case 1:
			r = iotest.HalfReader(r)
		}
		got, err := ParseAll(ctx, r, opts)
		require.NoError(t, err)
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		require.JSONEq(t, string(wj), string(gj), f)
	}
}

// A read error on the live path is reported like on the synchronous one.
func TestScanLiveReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(liveCrash), iotest.ErrReader(boom))
	sc := NewScanner(r, ScanOptions{IdleTimeout: time.Minute})
	n := 0
	for sc.Next() {
		n++
	}
	assert.Equal(t, 1, n)
	require.ErrorIs(t, sc.Err(), ErrRead)
	assert.ErrorIs(t, sc.Err(), boom)
}

// assertNoGoroutineLeak waits up to 2 s for the number of goroutines to
// come back to before (assert.Eventually would add one of its own).
func assertNoGoroutineLeak(t *testing.T, before int) {
	t.Helper()
	for range 200 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines, %d before: the reading goroutine leaked", runtime.NumGoroutine(), before)
}

// A crash whose last line stops mid-line when the input goes quiet (the
// writer's block buffering, or a process that died inside a write): the
// incident comes out after the idle timeout with that line as written so
// far, and the rest of the line, when it arrives, is not taken for a line
// of its own (it made a second, empty incident). Line numbers go on as
// in the file.
func TestScanIdleTimeoutMidLine(t *testing.T) {
	const idle = 200 * time.Millisecond
	pr, pw := io.Pipe()
	defer pr.Close()
	sc := NewScanner(pr, ScanOptions{Source: "be.out", IdleTimeout: idle})
	cut := len(liveCrash) - len("_thread()\n")
	go func() {
		io.WriteString(pw, "I0303 10:15:02.118230 90211 daemon.cpp:312] ordinary line\n")
		io.WriteString(pw, liveCrash[:cut])
	}()
	ok, _ := nextWithin(t, sc, context.Background(), idle+2*time.Second)
	require.True(t, ok, "err %v", sc.Err())
	c := sc.Crash()
	assert.Equal(t, "SIGSEGV", c.Signal)
	assert.Equal(t, 2, c.StartLine)
	assert.Equal(t, 9, c.EndLine)
	th := c.CrashingThread()
	require.NotNil(t, th)
	require.Len(t, th.Frames, 5)
	assert.Equal(t, "starrocks::ColumnReader::read_page()", th.Frames[3].Function)

	go func() {
		io.WriteString(pw, liveCrash[cut:])
		io.WriteString(pw, "I0303 10:15:03.000000 90211 daemon.cpp:312] ordinary line\n")
		io.WriteString(pw, liveCrash)
		pw.Close()
	}()
	ok, _ = nextWithin(t, sc, context.Background(), 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, 11, sc.Crash().StartLine, "the rest of line 9 is line 9, then line 10, then the crash")
	assert.NotEmpty(t, sc.Crash().Signal)
	ok, _ = nextWithin(t, sc, context.Background(), 5*time.Second)
	assert.False(t, ok, "no incident made of the rest of the cut line")
	assert.NoError(t, sc.Err())
}
