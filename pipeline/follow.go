package pipeline

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// DefaultFollowPoll is how often a Follower looks for new bytes at the end
// of its file.
const DefaultFollowPoll = 200 * time.Millisecond

// Follower reads a growing log file like `tail -F`: at the end of the file
// it waits for more instead of returning io.EOF; when the file shrinks
// (a start script truncated it) or is replaced (rotated), it goes on from
// the beginning of the new file, so line numbers count every line read
// since the start; a last line the old file left cut (the process died
// mid-write) is ended there, not glued to the new file's first line. A
// file that does not exist yet is waited for. Read returns io.EOF once
// the context is done. A truncation followed by new
// output within one poll interval is not noticed when the new file is
// already as long as the old offset. Use it with Pipeline.Text and
// Options.IdleFlush.
type Follower struct {
	ctx  context.Context
	path string
	poll time.Duration
	// mu guards the fields below: a scanner reading in a goroutine of its
	// own (Pipeline.Text with a context that can be done) may still be in
	// Read when the caller closes the Follower.
	mu     sync.Mutex
	f      *os.File
	off    int64
	closed bool
	// cut: the last byte read was not a newline; endCut: the file was
	// truncated or replaced after a cut line, which Read ends next.
	cut, endCut bool
}

// Follow returns a Follower of path; poll ≤ 0 means DefaultFollowPoll.
func Follow(ctx context.Context, path string, poll time.Duration) *Follower {
	if poll <= 0 {
		poll = DefaultFollowPoll
	}
	return &Follower{ctx: ctx, path: path, poll: poll}
}

// Read reads the next bytes of the file, waiting for them at its end. After
// Close it returns io.EOF.
func (r *Follower) Read(p []byte) (int, error) {
	for {
		if err := r.ctx.Err(); err != nil {
			return 0, io.EOF
		}
		if n, wait, err := r.readOnce(p); !wait {
			return n, err
		}
		t := time.NewTimer(r.poll)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return 0, io.EOF
		case <-t.C:
		}
	}
}

// readOnce is one look at the file: data, an error, or wait (nothing new).
func (r *Follower) readOnce(p []byte) (n int, wait bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if r.closed {
			return 0, false, io.EOF
		}
		if r.endCut && len(p) > 0 {
			// The old file ended in a cut line: end it before the new
			// file's first line.
			r.endCut = false
			p[0] = '\n'
			return 1, false, nil
		}
		if r.f == nil {
			f, err := os.Open(r.path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return 0, false, err
			}
			r.f, r.off = f, 0
		}
		if r.f == nil {
			return 0, true, nil
		}
		n, err := r.f.Read(p)
		r.off += int64(n)
		if n > 0 {
			r.cut = p[n-1] != '\n'
			return n, false, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		if st, err := os.Stat(r.path); err != nil || st.Size() < r.off || !r.same(st) {
			// Truncated, replaced or removed: the new file from its start.
			r.f.Close()
			r.f = nil
			r.endCut, r.cut = r.cut, false
			continue
		}
		return 0, true, nil
	}
}

func (r *Follower) same(st os.FileInfo) bool {
	fst, err := r.f.Stat()
	return err == nil && os.SameFile(fst, st)
}

// Close closes the file being followed. It is safe to call while another
// goroutine reads: that Read, and every later one, returns io.EOF (a Read
// waiting for bytes at the next look, within the poll interval).
func (r *Follower) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
