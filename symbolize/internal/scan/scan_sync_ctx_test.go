package scan

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startTimeRun is a run of `start time:` lines equal but for their digits,
// the run skipRepeats skips (fastrun.go), then a crash.
func startTimeRun(size int) []byte {
	var b bytes.Buffer
	r := rand.New(rand.NewPCG(1, 1))
	for b.Len() < size {
		b.WriteString(substDigits(r, "start time: Tue Nov 12 14:20:05 CST 2024") + "\n")
	}
	b.WriteString(liveCrash)
	return b.Bytes()
}

// A cancellable context (the CLI's signal.NotifyContext, the pipeline's)
// over a reader that never blocks keeps the synchronous reader, so the
// fast skips of fastrun.go, which only run without the reading goroutine,
// still run (review: they never ran through the CLI or the pipeline; 32
// MiB of `start time:` lines took 88 ms instead of 13 ms). A pipe still
// gets the reading goroutine. The incidents are the same either way.
func TestScanCancellableContextKeepsSyncReader(t *testing.T) {
	data := startTimeRun(2 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want, err := ParseAll(context.Background(), bytes.NewReader(data), ScanOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, want)

	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()

	for name, r := range map[string]io.Reader{
		"bytes.Reader":   bytes.NewReader(data),
		"strings.Reader": strings.NewReader(string(data)),
		"bytes.Buffer":   bytes.NewBuffer(data),
		"SectionReader":  io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))),
		"regular file":   f,
	} {
		s := NewScanner(r, ScanOptions{})
		var got []*Crash
		for s.NextContext(ctx) {
			assert.Nil(t, s.live, "%s: a cancellable context started the reading goroutine", name)
			got = append(got, s.Crash())
		}
		require.NoError(t, s.Err(), name)
		assert.Nil(t, s.live, name)
		assert.Equal(t, want, got, name)
	}

	pr, pw := io.Pipe()
	go func() {
		pw.Write(data)
		pw.Close()
	}()
	s := NewScanner(pr, ScanOptions{})
	var got []*Crash
	for s.NextContext(ctx) {
		got = append(got, s.Crash())
	}
	require.NoError(t, s.Err())
	assert.NotNil(t, s.live, "a pipe may block: it is read by the goroutine")
	assert.Equal(t, want, got)
}

// cancelAfterReader returns its bytes and cancels a context once it has
// returned after of them; it counts what it returned.
type cancelAfterReader struct {
	r      io.Reader
	after  int
	read   int
	cancel context.CancelFunc
}

func (c *cancelAfterReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	if c.read >= c.after {
		c.cancel()
	}
	return n, err
}

// The synchronous reader stops at the first read after the context is
// done, with Err() == ctx.Err(), inside runs it skips, inside NUL holes
// the holeSqueezer reads through (a single Read of it could otherwise
// cover any length) and inside ordinary text.
func TestScanSyncReaderStopsOnCancel(t *testing.T) {
	holes := append([]byte("start time: Tue Nov 12 14:20:05 CST 2024\n"), make([]byte, 64<<20)...)
	var glog bytes.Buffer
	for glog.Len() < 64<<20 {
		glog.WriteString("I0303 10:15:02.118230 1 a.cpp:1] x\n")
	}
	for name, data := range map[string][]byte{"runs": startTimeRun(64 << 20), "hole": holes, "glog": glog.Bytes()} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &cancelAfterReader{r: bytes.NewReader(data), after: 1 << 20, cancel: cancel}
		s := NewScanner(r, ScanOptions{NonBlocking: true})
		for s.NextContext(ctx) {
		}
		assert.ErrorIs(t, s.Err(), context.Canceled, name)
		assert.Nil(t, s.live, name)
		// One read after the one that cancelled at most (the buffer is
		// 256 KiB, a read 256 KiB at most; the holeSqueezer asks again
		// after a read it squeezes to nothing).
		assert.LessOrEqual(t, r.read, 1<<20+2*(256<<10), name)
		cancel()
	}
}
