// Live input: the goroutine that reads in chunks so that the Scanner can
// emit an incident after ScanOptions.IdleTimeout and NextContext can return
// while the reader is blocked.

package scan

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"
)

var (
	errIdle    = errors.New("crashsig: input idle")
	errStopped = errors.New("crashsig: scan stopped")
)

// liveChunkBytes is the size of one read of the live goroutine.
const liveChunkBytes = 64 << 10

// chunk is one Read of the live goroutine.
type chunk struct {
	b   []byte
	err error
}

// liveReader is the consumer side of the reading goroutine. Memory is
// bounded: at most cap(ch)+cap(free)+1 chunks exist, and pend holds at
// most one line of MaxLineBytes plus one chunk.
type liveReader struct {
	ch       chan chunk
	free     chan []byte
	quit     chan struct{}
	stopOnce sync.Once
	max      int
	pend     []byte // received bytes not yet returned as lines
	off      int    // start of the unread part of pend
	rerr     error  // the reader's last error, once received
	long     []byte // a line longer than max, cut to max
	cutting  bool   // dropping the rest of a long line
	timer    *time.Timer
	last     time.Time // when the last chunk arrived
	armed    bool      // bytes arrived since the last idle report
	// A line still unfinished when the input went idle is returned as
	// the open incident's last line (a dying process's last write may
	// end mid-line, and the writer of a live be.out may pause inside
	// one: stdout's block buffering flushes 4 KiB at a time); the idle
	// report follows at once (idleNext), and the rest of that line, if
	// it ever comes, is dropped (skipRest) rather than read as a line
	// of its own, which made a second, empty incident of it.
	idleNext bool
	skipRest bool
}

func startLive(r io.Reader, max int) *liveReader {
	l := &liveReader{ch: make(chan chunk, 4), free: make(chan []byte, 4), quit: make(chan struct{}), max: max}
	go l.run(r)
	return l
}

// run is the reading goroutine. It ends at the reader's first error or
// when stop was called and its current Read returned.
func (l *liveReader) run(r io.Reader) {
	empty := 0
	for {
		var b []byte
		select {
		case b = <-l.free:
		default:
			b = make([]byte, liveChunkBytes)
		}
		n, err := r.Read(b[:cap(b)])
		if n == 0 && err == nil {
			if empty++; empty < 100 {
				continue
			}
			err = io.ErrNoProgress
		}
		empty = 0
		select {
		case l.ch <- chunk{b: b[:n], err: err}:
		case <-l.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (l *liveReader) stop() { l.stopOnce.Do(func() { close(l.quit) }) }

// readLine is Scanner.readLine for live input. It returns errIdle when the
// input was quiet for the idle timeout while an incident was open, and
// errStopped when the context is done.
func (l *liveReader) readLine(s *Scanner) ([]byte, bool, error) {
	if l.idleNext {
		l.idleNext = false
		return nil, false, errIdle
	}
	for {
		data := l.pend[l.off:]
		if l.skipRest {
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				l.off += i + 1
				l.skipRest = false
				continue
			}
			l.off = len(l.pend)
			data = nil
		}
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l.off += i + 1
			if l.cutting {
				l.cutting = false
				return l.long, true, nil
			}
			if i > l.max {
				return data[:l.max], true, nil
			}
			return data[:i], false, nil
		}
		if l.cutting || len(data) > l.max {
			if !l.cutting {
				l.long = append(l.long[:0], data[:l.max]...)
				l.cutting = true
			}
			l.off = len(l.pend)
			data = nil
		}
		if l.rerr != nil {
			l.off = len(l.pend)
			if l.cutting {
				l.cutting = false
				return l.long, true, l.rerr
			}
			return data, false, l.rerr
		}
		if l.off > 0 {
			l.pend = l.pend[:copy(l.pend, l.pend[l.off:])]
			l.off = 0
		}
		c, err := l.wait(s)
		if err == errIdle && len(data) > 0 && !l.cutting {
			// data was taken before pend moved to its start.
			line := l.pend[l.off:]
			l.off = len(l.pend)
			l.idleNext, l.skipRest = true, true
			return line, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		l.pend = append(l.pend, c.b...)
		l.rerr = c.err
		select {
		case l.free <- c.b[:0]:
		default:
		}
	}
}

// wait returns the next chunk, or errIdle / errStopped.
func (l *liveReader) wait(s *Scanner) (chunk, error) {
	var idle <-chan time.Time
	if d := s.p.opts.IdleTimeout; d > 0 && l.armed && s.p.cur != nil {
		left := d - time.Since(l.last)
		if left <= 0 {
			l.armed = false
			return chunk{}, errIdle
		}
		if l.timer == nil {
			l.timer = time.NewTimer(left)
		} else {
			l.timer.Reset(left)
		}
		idle = l.timer.C
	}
	var done <-chan struct{}
	if s.ctx != nil {
		done = s.ctx.Done()
	}
	select {
	case c := <-l.ch:
		if l.timer != nil {
			l.timer.Stop()
		}
		l.armed, l.last = true, time.Now()
		return c, nil
	case <-idle:
		l.armed = false
		return chunk{}, errIdle
	case <-done:
		if l.timer != nil {
			l.timer.Stop()
		}
		return chunk{}, errStopped
	}
}
