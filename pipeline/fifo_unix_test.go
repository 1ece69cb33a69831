//go:build unix

package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o600))
}

// TestFilesSkipsFIFO: a FIFO met in a walk is a *SkipError (SkipNotRegular),
// not dropped in silence and not opened (review: it was dropped silently).
func TestFilesSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.log"), []byte(mustRead(t, crashFile)), 0o600))
	mkfifo(t, filepath.Join(dir, "be.out"))
	p := newPipeline(t, Options{})
	rs, errs := collect(t, p.Run(context.Background(), nil, dir))
	require.Len(t, rs, 1)
	assert.Equal(t, filepath.Join(dir, "a.log"), rs[0].Source)
	require.Len(t, errs, 1)
	var se *SkipError
	require.ErrorAs(t, errs[0], &se)
	assert.Equal(t, SkipNotRegular, se.Reason)
	assert.Equal(t, filepath.Join(dir, "be.out"), se.Name)
	assert.Contains(t, se.Detail, "named pipe")
}

// TestFileFIFOHonoursContext: a FIFO named explicitly does not hold the
// caller past its context, neither in open(2) (no writer yet) nor in a
// read (a writer that writes nothing) (review: `run -timeout 2s fifo`
// hung in open).
func TestFileFIFOHonoursContext(t *testing.T) {
	for _, writer := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "be.out")
		mkfifo(t, path)
		if writer {
			opened := make(chan *os.File, 1)
			go func() {
				w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
				if err == nil {
					opened <- w
				}
			}()
			t.Cleanup(func() {
				select {
				case w := <-opened:
					w.Close()
				case <-time.After(time.Second):
				}
			})
		}
		p := newPipeline(t, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		rs, errs := collect(t, p.Run(ctx, nil, path))
		cancel()
		assert.Less(t, time.Since(start), 3*time.Second, "writer=%v", writer)
		assert.Empty(t, rs)
		require.Len(t, errs, 1, "writer=%v: %v", writer, errs)
		assert.ErrorIs(t, errs[0], context.DeadlineExceeded, "writer=%v", writer)
	}
}

// TestFileFIFOReads: a FIFO whose writer comes later is read to the
// writer's end, with the same Results as the file.
func TestFileFIFOReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "be.out")
	mkfifo(t, path)
	text := mustRead(t, crashFile)
	go func() {
		time.Sleep(100 * time.Millisecond)
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		half := len(text) / 2
		w.WriteString(text[:half])
		time.Sleep(50 * time.Millisecond)
		w.WriteString(text[half:])
		w.Close()
	}()
	p := newPipeline(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want, errs := collect(t, p.File(ctx, crashFile))
	require.Empty(t, errs)
	got, errs := collect(t, p.File(ctx, path))
	require.Empty(t, errs)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Signature.Key, got[i].Signature.Key)
		assert.Equal(t, want[i].StartLine, got[i].StartLine)
		assert.Equal(t, want[i].EndLine, got[i].EndLine)
	}
}

// TestStdinCoreHonoursContext: a compressed core arriving on stdin from a
// writer that stays open (a shell pipeline) does not hold the caller past
// its context while it is being copied, and the partial copy is removed
// (review: the copy's Read of stdin was not interrupted; a FIFO or a file
// were).
func TestStdinCoreHonoursContext(t *testing.T) {
	core, err := os.ReadFile("../testdata/core/cores/kern_fp.core.gz")
	require.NoError(t, err)
	tmp := t.TempDir()
	p := newPipeline(t, Options{TempDir: tmp})
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write(core[:len(core)-8]) // all but the gzip trailer; the writer stays open
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	rs, errs := collect(t, p.Run(ctx, pr, "-"))
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Empty(t, rs)
	require.Len(t, errs, 1, "%v", errs)
	assert.ErrorIs(t, errs[0], context.DeadlineExceeded)
	left, err := filepath.Glob(filepath.Join(tmp, "crashsig-core-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the partial copy of the core is left behind")
}
