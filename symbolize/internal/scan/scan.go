package scan

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"os"
	"strings"
	"time"
)

// ScanOptions configure a Scanner. The zero value is usable.
type ScanOptions struct {
	// Source names the input in every Crash (a path, "-" for stdin).
	Source string
	// MaxLineBytes bounds one line; longer lines are cut (and the cut noted
	// when inside an incident). Default 64 KiB.
	MaxLineBytes int
	// MaxFrames bounds the frames kept per thread. Default 1024.
	MaxFrames int
	// MaxThreads bounds the threads kept per incident (thread dumps of
	// leaking processes hold tens of thousands). Default 100000.
	MaxThreads int
	// MaxIncidentLines closes an incident that grows beyond this many lines
	// and marks it corrupted. Default 1,000,000.
	MaxIncidentLines int
	// IdleTimeout, when positive, makes the Scanner emit the open incident
	// once no new byte has arrived for that long: a crashed process often
	// writes nothing more until it is restarted, and a follower of a live
	// log (tail -f) must not wait for the next line to learn about the
	// crash. Zero (the default) turns it off, which is right for files and
	// pipes that end. Callers that follow a live log should set
	// DefaultFollowIdleTimeout (2 s). A line still unfinished when the
	// input goes quiet is the incident's last line as written so far, and
	// the rest of it, if it comes later, is skipped (not a line of its
	// own). With a positive IdleTimeout, or a
	// context that can be done over a reader that may block (see
	// NonBlocking), the Scanner reads in a goroutine of its own; see
	// Scanner.Close.
	IdleTimeout time.Duration
	// NonBlocking says that the reader's Read never waits for input: a
	// regular file, a decompressor over one, bytes in memory. Then a
	// context that can be done does not make the Scanner read in a
	// goroutine of its own (which the fast skips of fastrun.go cannot
	// use): it reads synchronously and looks at the context between
	// reads. NewScanner sets it by itself for a regular *os.File, a
	// *bytes.Reader, *strings.Reader, *bytes.Buffer or *io.SectionReader.
	// A reader that may block (a pipe, a terminal, a socket) must leave it
	// false, or a done context waits for its Read to return.
	NonBlocking bool
	// FirstLine is the number given to the first line read (default 1):
	// a caller that starts reading a file after its first lines numbers
	// the incidents as a scan of the whole file would (ScanParallel).
	FirstLine int
}

// DefaultFollowIdleTimeout is the IdleTimeout recommended for following a
// live log: long enough that a dump being written is not cut (a dump is
// written within milliseconds, symbolization by the crash handler takes
// at most about a second), short enough to answer at once.
const DefaultFollowIdleTimeout = 2 * time.Second

func (o *ScanOptions) fill() {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 64 << 10
	}
	if o.MaxFrames <= 0 {
		o.MaxFrames = 1024
	}
	if o.MaxThreads <= 0 {
		o.MaxThreads = 100000
	}
	if o.MaxIncidentLines <= 0 {
		o.MaxIncidentLines = 1_000_000
	}
}

// ErrRead wraps an error of the underlying reader.
var ErrRead = errors.New("crashsig: reading input")

// Scanner finds crash incidents in a stream of log text (be.out, be.INFO,
// be.WARNING, a ticket paste, gdb or jstack output) and yields them one at a
// time. It holds one incident and one line at a time, never the whole input,
// so memory stays bounded by the options whatever the input size. A Scanner
// is not safe for concurrent use; use one per input.
type Scanner struct {
	br *bufio.Reader
	// sq is the squeezer every byte br reads passes through (readThrough),
	// nil once a goroutine reads: its sawNUL spares physical a NUL search
	// per line.
	sq   *holeSqueezer
	p    parser
	q    []*Crash
	cur  *Crash
	err  error
	done bool
	buf  []byte // holds a line longer than the reader's buffer
	// win is the window: the bytes br held after the line its last read
	// returned (Peek, which reads nothing); readLine takes the next lines
	// from it, from wpos on, without a call of br per line, and
	// skipRepeats looks at it. br has not dropped the bytes before wpos
	// yet: sync drops them (Discard) before anything else uses br. nlb
	// holds the newlines of win's whole 64-byte chunks, a bit per byte
	// (newlineBitsAVX2, with AVX2), for the chunks nlbLo to nlbHi: a
	// line's end is found without a search of its bytes (issue 11). They
	// are set a few chunks at a time, where lines are read (the chunks a
	// skip of repeated lines jumps over cost nothing).
	win          []byte
	wpos         int
	nlb          []uint64
	nlbLo, nlbHi int
	// live is the reading goroutine, started by the first NextContext
	// that needs it (IdleTimeout > 0, or a context that can be done over a
	// reader that may block); from then on every line comes through it.
	live *liveReader
	// cr gives the synchronous reader the context of the NextContext call
	// in progress (nil in other calls and once live reads).
	cr  *ctxReader
	ctx context.Context // of the NextContext call in progress
	// stopped says the scan ended because the context was done.
	stopped bool
}

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader, opts ScanOptions) *Scanner {
	opts.fill()
	if !opts.NonBlocking {
		opts.NonBlocking = neverBlocks(r)
	}
	cr := &ctxReader{r: r}
	sq := &holeSqueezer{r: cr}
	s := &Scanner{br: bufio.NewReaderSize(sq, 256<<10), sq: sq, cr: cr}
	s.p.init(opts)
	return s
}

// readThrough makes s read r, whose bytes all pass through sq (r is sq,
// or a squeezed reader around it), from its start.
func (s *Scanner) readThrough(r io.Reader, sq *holeSqueezer) {
	s.p.pfx.pin()
	s.win, s.wpos = nil, 0
	s.br.Reset(r)
	s.sq = sq
}

// neverBlocks says whether r is a reader known never to wait for input
// (ScanOptions.NonBlocking).
func neverBlocks(r io.Reader) bool {
	switch r := r.(type) {
	case *bytes.Reader, *strings.Reader, *bytes.Buffer, *io.SectionReader:
		return true
	case *os.File:
		st, err := r.Stat()
		return err == nil && st.Mode().IsRegular()
	}
	return false
}

// ctxReader is the synchronous Scanner's reader: before each Read it
// looks at the context of the NextContext call in progress and returns
// errStopped when it is done. It sits under the holeSqueezer, which reads
// on through NUL runs of any length, so a done context is noticed within
// one buffer of input whatever the bytes.
type ctxReader struct {
	r   io.Reader
	ctx context.Context
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.ctx != nil && c.ctx.Err() != nil {
		return 0, errStopped
	}
	return c.r.Read(p)
}

// Next advances to the next incident, which Crash then returns. It returns
// false at the end of the input or on a read error (see Err).
func (s *Scanner) Next() bool { return s.NextContext(context.Background()) }

// NextContext is Next that stops early, with Err returning ctx.Err(), when
// ctx is done, also while the reader is blocked in Read: it returns false
// at once when ctx is done (an incident still open is returned first, not
// marked as cut). A positive ScanOptions.IdleTimeout, or a context that
// can be done over a reader that may block (ScanOptions.NonBlocking),
// makes the Scanner read in a goroutine of its own (see Close); otherwise
// it reads synchronously, looking at the context between reads.
func (s *Scanner) NextContext(ctx context.Context) bool {
	if s.live == nil && !s.done && (s.p.opts.IdleTimeout > 0 || (ctx.Done() != nil && !s.p.opts.NonBlocking)) {
		s.sync()
		s.live = startLive(s.br, s.p.opts.MaxLineBytes)
		s.sq = nil // the reading goroutine sets its sawNUL
	}
	s.ctx = ctx
	if s.live == nil && s.cr != nil && ctx.Done() != nil {
		// Only while no goroutine reads: s.cr is then this call's alone.
		s.cr.ctx = ctx
		defer func() { s.cr.ctx = nil }()
	}
	defer func() { s.ctx = nil }()
	for len(s.q) == 0 {
		if s.done {
			s.cur = nil
			return false
		}
		for range 4096 {
			if !s.step() {
				s.end(!s.stopped)
				break
			}
			if len(s.p.out) > 0 {
				s.q = append(s.q, s.p.out...)
				s.p.out = s.p.out[:0]
				break
			}
		}
		if err := ctx.Err(); err != nil && !s.done {
			s.err = err
			s.end(false)
		}
	}
	s.cur = s.q[0]
	s.q[0] = nil
	s.q = s.q[1:]
	return true
}

// end stops the scan: the open incident is finished (cut by the end of the
// input when eof) and queued, and the reading goroutine is told to stop.
func (s *Scanner) end(eof bool) {
	s.done = true
	s.q = append(s.q, s.p.finish(eof)...)
	if s.live != nil {
		s.live.stop()
	}
}

// Close stops the Scanner: later calls of Next return false. It stops the
// reading goroutine a live Scanner started (see ScanOptions.IdleTimeout),
// but it does not close the reader: a Read in progress stays blocked until
// it returns, so to free it close the reader (the file, pipe or connection
// under it) or have it return. The reading goroutine also ends by itself
// at the end of the input, on a read error, or when the context of
// NextContext is done and its Read returns. Close always returns nil.
func (s *Scanner) Close() error {
	if !s.done {
		s.done = true
		s.q = nil
		if s.live != nil {
			s.live.stop()
		}
	}
	return nil
}

// Crash returns the incident found by the last call to Next.
func (s *Scanner) Crash() *Crash { return s.cur }

// Err returns the first read or context error, or nil at a clean end.
func (s *Scanner) Err() error { return s.err }

// All returns an iterator over the remaining incidents; check Err after it.
// Leaving the loop early closes the Scanner (see Close), so that a live
// Scanner's reading goroutine does not outlive the loop.
func (s *Scanner) All(ctx context.Context) iter.Seq[*Crash] {
	return func(yield func(*Crash) bool) {
		for s.NextContext(ctx) {
			if !yield(s.Crash()) {
				s.Close()
				return
			}
		}
	}
}

// ParseAll reads r to the end and returns every incident in it.
func ParseAll(ctx context.Context, r io.Reader, opts ScanOptions) ([]*Crash, error) {
	s := NewScanner(r, opts)
	var out []*Crash
	for s.NextContext(ctx) {
		out = append(out, s.Crash())
	}
	return out, s.Err()
}

// step reads and processes one physical line. It returns false at the end.
func (s *Scanner) step() bool {
	var (
		line      []byte
		truncated bool
		err       error
	)
	if s.live != nil {
		line, truncated, err = s.live.readLine(s)
		switch {
		case err == errIdle:
			s.p.idle()
			return true
		case err == errStopped:
			s.err = s.ctx.Err()
			s.stopped = true
			return false
		}
	} else {
		line, truncated, err = s.readLine()
		if err == errStopped {
			// ctxReader: the context is done (the line read so far is
			// dropped, as the live path does).
			s.err = s.ctx.Err()
			s.stopped = true
			return false
		}
	}
	if len(line) == 0 && err != nil {
		if !errors.Is(err, io.EOF) {
			s.err = fmt.Errorf("%w: %w", ErrRead, err)
		}
		return false
	}
	s.p.stable = s.live == nil
	s.p.physical(line, truncated, s.sq != nil && !s.sq.sawNUL)
	s.skipRepeats(line, truncated, err) // fastrun.go: skips repeats of line that change nothing; carries no state
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = fmt.Errorf("%w: %w", ErrRead, err)
		return false
	}
	return err == nil
}

// readLine returns the next line without its newline, cut to MaxLineBytes.
// The returned slice is valid until the next call.
func (s *Scanner) readLine() ([]byte, bool, error) {
	if s.win != nil {
		if i := s.nextNewline(); i >= 0 && i-s.wpos <= s.p.opts.MaxLineBytes {
			// The next line is in the window: what ReadSlice would
			// return, without its calls.
			b := s.win[s.wpos:i]
			s.wpos = i + 1
			return b, false, nil
		}
	}
	s.sync()
	b, err := s.br.ReadSlice('\n')
	if err == nil {
		s.setWindow()
		if n := len(b) - 1; n > s.p.opts.MaxLineBytes {
			return b[:s.p.opts.MaxLineBytes], true, nil
		}
		return b[:len(b)-1], false, nil
	}
	max := s.p.opts.MaxLineBytes
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(b) > max {
			return b[:max], true, err
		}
		return b, false, err
	}
	s.buf = append(s.buf[:0], b[:min(len(b), max)]...)
	truncated := len(b) > max
	for {
		b, err = s.br.ReadSlice('\n')
		if err == nil {
			b = b[:len(b)-1]
		}
		if room := max - len(s.buf); room > 0 {
			s.buf = append(s.buf, b[:min(len(b), room)]...)
			if len(b) > room {
				truncated = true
			}
		} else if len(b) > 0 {
			truncated = true
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err != nil && errors.Is(err, io.EOF) {
				return s.buf, truncated, err
			}
			return s.buf, truncated, err
		}
	}
}

// setWindow makes the bytes br holds after the line just read the window
// (see Scanner.win), with the newline bits of its whole 64-byte chunks.
func (s *Scanner) setWindow() {
	s.win, _ = s.br.Peek(s.br.Buffered())
	s.wpos, s.nlbLo, s.nlbHi = 0, 0, 0
	s.nlb = s.nlb[:0]
	if !hasAVX2 {
		return
	}
	n := len(s.win) / 64
	if cap(s.nlb) < n {
		s.nlb = make([]uint64, n)
	}
	s.nlb = s.nlb[:n]
}

// nlbBatch is the number of chunks (64 bytes each) whose newline bits
// nextNewline sets at a time.
const nlbBatch = 16

// nextNewline returns the offset in the window of the first newline at
// or after wpos, or -1.
func (s *Scanner) nextNewline() int {
	p := s.wpos
	for p < len(s.nlb)*64 {
		k := p >> 6
		if k < s.nlbLo || k >= s.nlbHi {
			hi := min(k+nlbBatch, len(s.nlb))
			newlineBitsAVX2(s.win[k*64:hi*64], s.nlb[k:hi])
			s.nlbLo, s.nlbHi = k, hi
		}
		if w := s.nlb[k] >> (p & 63); w != 0 {
			return p + bits.TrailingZeros64(w)
		}
		p = p&^63 + 64
	}
	if p >= len(s.win) {
		return -1
	}
	if i := bytes.IndexByte(s.win[p:], '\n'); i >= 0 {
		return p + i
	}
	return -1
}

// sync drops from br the bytes of the window before wpos and forgets the
// window: br is then where the lines handed on end, for any use of it.
func (s *Scanner) sync() {
	s.p.pfx.pin() // the previous line may be in br's buffer
	if s.wpos > 0 {
		s.br.Discard(s.wpos) //nolint:errcheck // buffered: Discard drops them all
	}
	s.win, s.wpos = nil, 0
}

// skip drops the next n bytes read already (skipRepeats: n is at most
// len(buffered())).
func (s *Scanner) skip(n int) {
	if s.win != nil {
		s.wpos += n
		return
	}
	s.br.Discard(n) //nolint:errcheck // buffered: Discard drops them all
}

// buffered returns the bytes read already after the lines handed on: the
// rest of the window, or what br holds.
func (s *Scanner) buffered() []byte {
	if s.win != nil {
		return s.win[s.wpos:]
	}
	buf, _ := s.br.Peek(s.br.Buffered())
	return buf
}

// headerlessStart marks the bytes of headerlessStartBytes (a lookup per
// idle line instead of a search).
var headerlessStart = func() (t [256]bool) {
	for i := 0; i < len(headerlessStartBytes); i++ {
		t[headerlessStartBytes[i]] = true
	}
	return t
}()

// Live reading: a goroutine reads the input in chunks and hands them over a
// channel, so that the Scanner can wait for input, for the idle timeout and
// for the context at once.
