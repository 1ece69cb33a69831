package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// followRead reads f until it has read len(want) bytes or f ends (its
// context is done) and checks that it read want.
func followRead(t *testing.T, f *Follower, want string) {
	t.Helper()
	var got []byte
	buf := make([]byte, 64)
	for len(got) < len(want) {
		n, err := f.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	assert.Equal(t, want, string(got))
}

func startAt(off int64) func(os.FileInfo) int64 {
	return func(os.FileInfo) int64 { return off }
}

// TestFollowFrom: a Follower made by FollowFrom starts where its start
// function says in the file it finds first: at a line's start, at the
// next line for an offset inside a line (also a line still being
// written), at the end, and at the beginning for an offset past the end
// (the file is not the one the offset was taken in) or negative. A file
// that does not exist yet is read from its start once it appears, and
// the start function is not called. A collector restarted by systemd
// started at byte 0 and reported every old crash again.
func TestFollowFrom(t *testing.T) {
	const text = "one\ntwo\nthree\n"
	cases := []struct {
		name  string
		start func(os.FileInfo) int64
		want  string
	}{
		{"zero", startAt(0), text},
		{"line start", startAt(4), "two\nthree\n"},
		{"inside a line", startAt(5), "three\n"},
		{"on a newline", startAt(3), "two\nthree\n"},
		{"end", func(fi os.FileInfo) int64 { return fi.Size() }, ""},
		{"past the end", startAt(100), text},
		{"negative", startAt(-1), text},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "be.out")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		var seen os.FileInfo
		f := FollowFrom(ctx, path, 10*time.Millisecond, func(fi os.FileInfo) int64 {
			seen = fi
			return c.start(fi)
		})
		followRead(t, f, c.want)
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.NotNil(t, seen, c.name)
		assert.True(t, os.SameFile(st, seen), c.name)
		appendTo(t, path, "four\n")
		followRead(t, f, "four\n")
		f.Close()
		cancel()
	}

	// Inside a line not yet ended: its rest is skipped when it comes.
	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, []byte("one\ntw"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	f := FollowFrom(ctx, path, 10*time.Millisecond, startAt(5))
	defer f.Close()
	go func() {
		time.Sleep(100 * time.Millisecond)
		appendTo(t, path, "o\nthree\n")
	}()
	followRead(t, f, "three\n")

	// Missing at first: read from its start when it appears.
	path = filepath.Join(t.TempDir(), "be.out")
	called := false
	g := FollowFrom(ctx, path, 10*time.Millisecond, func(os.FileInfo) int64 { called = true; return 4 })
	defer g.Close()
	go func() {
		time.Sleep(100 * time.Millisecond)
		appendTo(t, path, text)
	}()
	followRead(t, g, text)
	assert.False(t, called)
}

func appendTo(t *testing.T, path, s string) {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if assert.NoError(t, err) {
		_, err = fh.WriteString(s)
		assert.NoError(t, err)
		assert.NoError(t, fh.Close())
	}
}

// TestFollowerPosition: Position gives the file a line is in and the
// offset just past it, for lines counted from where the Follower started
// (as Pipeline.Text counts them): a line still being written ends at the
// bytes read so far (a restart there skips its rest), a line of a file
// rotated away has no position, and after a rotation the cut line the
// old file left ends at the new file's start.
func TestFollowerPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, []byte("a\nbb\nccc"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	f := Follow(ctx, path, 10*time.Millisecond)
	defer f.Close()
	followRead(t, f, "a\nbb\nccc")
	st, err := os.Stat(path)
	require.NoError(t, err)
	for _, c := range []struct {
		line int
		off  int64
		ok   bool
	}{{0, 0, true}, {1, 2, true}, {2, 5, true}, {3, 8, true}, {4, 0, false}, {1, 2, true}, {-1, 0, false}} {
		fi, off, ok := f.Position(c.line)
		assert.Equal(t, c.ok, ok, "line %d", c.line)
		assert.Equal(t, c.off, off, "line %d", c.line)
		if ok {
			assert.True(t, os.SameFile(st, fi), "line %d", c.line)
		}
	}

	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, os.WriteFile(path, []byte("x\nyy\n"), 0o644))
	followRead(t, f, "\nx\nyy\n")
	st, err = os.Stat(path)
	require.NoError(t, err)
	for _, c := range []struct {
		line int
		off  int64
		ok   bool
	}{{2, 0, false}, {3, 0, true}, {4, 2, true}, {5, 5, true}, {6, 5, true}, {7, 0, false}} {
		fi, off, ok := f.Position(c.line)
		assert.Equal(t, c.ok, ok, "line %d", c.line)
		assert.Equal(t, c.off, off, "line %d", c.line)
		if ok {
			assert.True(t, os.SameFile(st, fi), "line %d", c.line)
		}
	}
}

// TestFollowerRestartAtPosition: a follower restarted at the Position of
// a Result's EndLine gives the incidents after it and none before: each
// incident once across the restart.
func TestFollowerRestartAtPosition(t *testing.T) {
	a, err := os.ReadFile("../testdata/formats/f3-doris-check-then-f1.txt")
	require.NoError(t, err)
	b, err := os.ReadFile("../testdata/formats/f9-kernel-segfault.txt")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, slices.Concat(a, []byte("I0303 10:15:02.118230 1 a.cpp:1] started\n"), b), 0o644))
	p := newPipeline(t, Options{IdleFlush: 200 * time.Millisecond})
	type pos struct {
		fi  os.FileInfo
		off int64
	}
	// follow reads path from start until it has given want results and
	// then nothing for 600 ms; it returns the keys and positions.
	follow := func(start func(os.FileInfo) int64, want int) ([]string, []pos) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f := FollowFrom(ctx, path, 10*time.Millisecond, start)
		defer f.Close()
		var keys []string
		var ps []pos
		wait := 5 * time.Second
		if want == 0 {
			wait = 600 * time.Millisecond
		}
		timer := time.AfterFunc(wait, cancel)
		for r, err := range p.Text(ctx, path, f) {
			if errors.Is(err, context.Canceled) {
				continue
			}
			require.NoError(t, err)
			keys = append(keys, r.Signature.Key)
			fi, off, ok := f.Position(r.EndLine)
			require.True(t, ok)
			ps = append(ps, pos{fi, off})
			if len(keys) == want {
				timer.Reset(600 * time.Millisecond)
			}
		}
		return keys, ps
	}
	keys, ps := follow(nil, 2)
	require.Len(t, keys, 2)
	require.NotEqual(t, keys[0], keys[1])
	// Each ends after its last line: a's text ends in a blank line, b's
	// incident is its first line (the Code: line after it is not part).
	assert.Equal(t, int64(len(a)-1), ps[0].off)
	assert.Equal(t, int64(len(a)+41+bytes.IndexByte(b, '\n')+1), ps[1].off)

	again, _ := follow(startAt(ps[0].off), 1)
	assert.Equal(t, keys[1:], again)
	again, _ = follow(startAt(ps[1].off), 0)
	assert.Empty(t, again)
}
