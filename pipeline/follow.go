package pipeline

import (
	"bytes"
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
//
// To resume where an earlier run stopped (a collector restarted by
// systemd must not report old crashes again), record Position after each
// Result and start the next run with FollowFrom.
type Follower struct {
	ctx  context.Context
	path string
	poll time.Duration
	// start is FollowFrom's function, until the first look at the file.
	start func(os.FileInfo) int64
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
	// err is an error of FollowFrom's first look, for the first Read.
	err error
	// skip: the start was inside a line, whose rest is dropped.
	skip bool
	// lines counts the newlines Read returned; base is lines when the
	// current file was opened, startOff the offset its lines start at.
	// After anchorLine lines the current file is at anchorOff (Position
	// counts on from there).
	lines, base, anchorLine int
	startOff, anchorOff     int64
}

// Follow returns a Follower of path from its start; poll ≤ 0 means
// DefaultFollowPoll.
func Follow(ctx context.Context, path string, poll time.Duration) *Follower {
	return FollowFrom(ctx, path, poll, nil)
}

// FollowFrom is Follow starting elsewhere in the file: it looks at path
// at once and calls start with the file found there, which returns the
// byte offset to start at: typically one Position returned in an earlier
// run when fi is the same file (os.SameFile, or its device and inode),
// else 0; fi.Size() starts at the end. An offset inside a line starts at
// the next line (a line still being written: once it ends), as do the
// offsets Position gives for a line cut; an offset past the end of the
// file, or negative, starts at its beginning: the file is not the one the
// offset was taken in. A file that does not exist then is read from its
// beginning when it appears, without calling start, and so is every file
// after a truncation or rotation. Lines are counted from the start. An
// error opening the file is returned by the first Read. nil start is
// Follow.
func FollowFrom(ctx context.Context, path string, poll time.Duration, start func(fi os.FileInfo) int64) *Follower {
	if poll <= 0 {
		poll = DefaultFollowPoll
	}
	r := &Follower{ctx: ctx, path: path, poll: poll, start: start}
	if start != nil {
		// The start is taken now: what is written after this call is read.
		r.err = r.open()
	}
	return r
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
			r.lines++
			return 1, false, nil
		}
		if r.err != nil {
			err := r.err
			r.err = nil
			return 0, false, err
		}
		if r.f == nil {
			if err := r.open(); err != nil {
				return 0, false, err
			}
			if r.f == nil {
				return 0, true, nil
			}
		}
		n, err := r.f.Read(p)
		r.off += int64(n)
		if r.skip && n > 0 {
			i := bytes.IndexByte(p[:n], '\n')
			if i < 0 {
				continue // all of it the line started in
			}
			r.skip = false
			n = copy(p, p[i+1:n])
			r.startOff = r.off - int64(n)
			r.anchorOff = r.startOff
			if n == 0 {
				continue
			}
		}
		if n > 0 {
			r.cut = p[n-1] != '\n'
			r.lines += bytes.Count(p[:n], []byte{'\n'})
			return n, false, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		if st, err := os.Stat(r.path); err != nil || st.Size() < r.off || !r.same(st) {
			// Truncated, replaced or removed: the new file from its start.
			r.f.Close()
			r.f = nil
			r.endCut, r.cut, r.skip = r.cut, false, false
			continue
		}
		return 0, true, nil
	}
}

// open opens the file, if it exists, and sets it up: its line count,
// and the start FollowFrom asked for when it is the first.
func (r *Follower) open() error {
	f, err := os.Open(r.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	r.f, r.off = f, 0
	if f == nil {
		r.start = nil // a file that appears later is new
		return nil
	}
	r.base = r.lines
	if start := r.start; start != nil {
		r.start = nil
		st, err := r.f.Stat()
		if err != nil {
			return err
		}
		if off := start(st); off > 0 && off <= st.Size() {
			var b [1]byte
			if _, err := r.f.ReadAt(b[:], off-1); err != nil {
				return err
			}
			if _, err := r.f.Seek(off, io.SeekStart); err != nil {
				return err
			}
			r.off, r.skip = off, b[0] != '\n'
		}
	}
	r.startOff = r.off
	r.anchorLine, r.anchorOff = r.base, r.off
	return nil
}

// Position returns where line ends: the file it is in and the offset
// just past it, for FollowFrom to resume at. Lines are
// numbered as Pipeline.Text numbers them for this Follower, from 1 at
// its start: give a Result's EndLine, once the Result is reported, and a
// run resumed there gives every later incident and none before. A line
// still being written ends at the bytes read so far (a resumed run skips
// its rest, as Pipeline.Text does). ok is false for a line of a file that
// was truncated or rotated away (keep the Position taken before) and for
// a line not read yet. It reads the file again from the line asked for
// before (the start, going backwards), so it costs as much as reading the
// lines between.
func (r *Follower) Position(line int) (fi os.FileInfo, offset int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil || line < r.base || line > r.lines+1 {
		return nil, 0, false
	}
	st, err := r.f.Stat()
	if err != nil {
		return nil, 0, false
	}
	if line == r.lines+1 {
		return st, r.off, true
	}
	if line < r.anchorLine {
		r.anchorLine, r.anchorOff = r.base, r.startOff
	}
	n, off := r.anchorLine, r.anchorOff
	buf := make([]byte, 32<<10)
	for n < line {
		k, err := r.f.ReadAt(buf[:min(int64(len(buf)), r.off-off)], off)
		i := 0
		for n < line {
			j := bytes.IndexByte(buf[i:k], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			n++
		}
		if n == line {
			off += int64(i)
			break
		}
		off += int64(k)
		if k == 0 || (err != nil && !errors.Is(err, io.EOF)) {
			return nil, 0, false // shrunk under us: the next Read says so
		}
	}
	r.anchorLine, r.anchorOff = n, off
	return st, off, true
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
