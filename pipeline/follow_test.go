package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFollower reads a file that appears late, grows, is truncated by a
// restart and rotated; every byte written is read once, in order, and Read
// ends with io.EOF when the context is done.
func TestFollower(t *testing.T) {
	path := filepath.Join(t.TempDir(), "be.out")
	ctx, cancel := context.WithCancel(context.Background())
	f := Follow(ctx, path, 20*time.Millisecond)
	defer f.Close()
	got := make(chan string, 100)
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				got <- string(buf[:n])
			}
			if err != nil {
				close(got)
				return
			}
		}
	}()
	read := func(want string) {
		t.Helper()
		s := ""
		deadline := time.After(3 * time.Second)
		for s != want {
			select {
			case part := <-got:
				s += part
			case <-deadline:
				t.Fatalf("read %q, want %q", s, want)
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // the file does not exist yet
	require.NoError(t, os.WriteFile(path, []byte("one\n"), 0o644))
	read("one\n")
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	fh.WriteString("two\n")
	fh.Close()
	read("two\n")
	require.NoError(t, os.WriteFile(path, []byte("3\n"), 0o644)) // truncated and shorter
	read("3\n")
	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, os.WriteFile(path, []byte("rotated and longer than before\n"), 0o644))
	read("rotated and longer than before\n")
	cancel()
	select {
	case _, ok := <-got:
		assert.False(t, ok, "no more bytes after cancel")
	case <-time.After(time.Second):
		t.Fatal("Read did not return io.EOF after cancel")
	}
	n, err := f.Read(make([]byte, 8))
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF)
}

// TestFollowerCloseWhileReading: Close from one goroutine while another
// is in Read (the scanner's reading goroutine, when the caller gives up)
// is no data race, and the Read returns io.EOF (the collector's deferred
// Close raced with the live scanner's Read).
func TestFollowerCloseWhileReading(t *testing.T) {
	for _, exists := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "be.out")
		if exists {
			require.NoError(t, os.WriteFile(path, []byte("a line\n"), 0o644))
		}
		r := Follow(context.Background(), path, 10*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			buf := make([]byte, 64)
			for {
				if _, err := r.Read(buf); err != nil {
					done <- err
					return
				}
			}
		}()
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, r.Close())
		select {
		case err := <-done:
			assert.Equal(t, io.EOF, err, "exists=%v", exists)
		case <-time.After(5 * time.Second):
			t.Fatalf("exists=%v: Read did not return after Close", exists)
		}
	}
}

// TestFollowerEndsCutLineAtSwitch: when the file followed ended in a cut
// line (the process died mid-write) and is then truncated or replaced,
// the Follower ends that line before the new file's first one, which
// would otherwise be glued to it: a crash written from the new file's
// first line (a gdb session `#0  doris::KeyCoder::…`) was not found.
func TestFollowerEndsCutLineAtSwitch(t *testing.T) {
	crash, err := os.ReadFile("../testdata/corpus/doris/050-gdb-schema-change-key-coder-null.txt")
	require.NoError(t, err)
	for _, how := range []string{"rename", "truncate"} {
		path := filepath.Join(t.TempDir(), "be.out")
		require.NoError(t, os.WriteFile(path, []byte("a line\ncut mid-li"), 0o644))
		ctx, cancel := context.WithCancel(context.Background())
		f := Follow(ctx, path, 10*time.Millisecond)
		p := newPipeline(t, Options{IdleFlush: 200 * time.Millisecond})
		done := make(chan []string, 1)
		go func() {
			var keys []string
			for r, err := range p.Text(ctx, path, f) {
				if err == nil {
					keys = append(keys, r.Signature.Key)
				}
			}
			done <- keys
		}()
		time.Sleep(100 * time.Millisecond) // the cut line is read
		if how == "rename" {
			require.NoError(t, os.Rename(path, path+".1"))
		} else {
			require.NoError(t, os.Truncate(path, 0))
		}
		time.Sleep(50 * time.Millisecond)
		fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = fh.Write(crash)
		require.NoError(t, err)
		require.NoError(t, fh.Close())
		time.Sleep(600 * time.Millisecond) // idle: the crash is flushed
		cancel()
		f.Close()
		assert.Equal(t, []string{"FAULT | doris::KeyCoder::full_encode_ascending"}, <-done, how)

		// The bytes: the cut line ended once, nothing else added.
		path = filepath.Join(t.TempDir(), "be.out")
		require.NoError(t, os.WriteFile(path, []byte("a\ncut"), 0o644))
		rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer rcancel()
		f = Follow(rctx, path, 10*time.Millisecond) // io.EOF once rctx is done
		buf := make([]byte, 64)
		n, err := io.ReadAtLeast(f, buf, 5)
		require.NoError(t, err)
		require.Equal(t, "a\ncut", string(buf[:n]))
		if how == "rename" {
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.WriteFile(path, []byte("new line\n"), 0o644))
		} else {
			require.NoError(t, os.Truncate(path, 0))
			time.Sleep(50 * time.Millisecond)
			require.NoError(t, os.WriteFile(path, []byte("new\n"), 0o644))
		}
		want := map[string]string{"rename": "\nnew line\n", "truncate": "\nnew\n"}[how]
		n, err = io.ReadAtLeast(f, buf, len(want))
		assert.Equal(t, want, string(buf[:n]), "%s: %v", how, err)
		f.Close()
	}
}
