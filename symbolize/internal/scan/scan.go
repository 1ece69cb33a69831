package scan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/crashsig/crashsig/symbolize/internal/demangler"
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
	// DefaultFollowIdleTimeout (2 s). With a positive IdleTimeout, or a
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
	br   *bufio.Reader
	p    parser
	q    []*Crash
	cur  *Crash
	err  error
	done bool
	buf  []byte // holds a line longer than the reader's buffer
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
	s := &Scanner{br: bufio.NewReaderSize(&holeSqueezer{r: cr}, 256<<10), cr: cr}
	s.p.init(opts)
	return s
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
		s.live = startLive(s.br, s.p.opts.MaxLineBytes)
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
	s.p.physical(line, truncated)
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
	b, err := s.br.ReadSlice('\n')
	if err == nil {
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

// parser holds the state across lines of one input.
type parser struct {
	opts   ScanOptions
	dem    *demangler.Demangler
	lineNo int
	cur    *incident
	out    []*Crash
	banner banner
	// pending holds context events seen since the last incident.
	pending []Event
	// pfx is the line prefix learned from the input (lines.go).
	pfx prefixLearner
	// pf is the literal prefilter (prefilter.go); nil runs every rule on
	// every line, the reference the tests compare it with.
	pf *prefilter
}

// maxPendingEvents bounds the context lines kept for the next incident.
const maxPendingEvents = 8

func isContextEvent(k lineKind) bool {
	return k == kMemLimit || k == kOOMKill || k == kShell || k == kInstrCheck || k == kMinidump || k == kLifecycleLog
}

func eventKind(k lineKind) string {
	switch k {
	case kMemLimit:
		return "memory-limit"
	case kOOMKill:
		return "oom-kill"
	case kShell:
		return "shell"
	case kInstrCheck:
		return "startup"
	case kMinidump:
		return "minidump"
	case kLifecycleLog:
		return EventLifecycleLog
	}
	return "other"
}

// hasMemoryLimit says whether a WARNING/ERROR glog message reports a
// memory limit (F8.2, the kMemLimit rules of format_misc.go): context for
// a crash that may follow.
func hasMemoryLimit(msg string) bool {
	for _, r := range memLimitRules {
		if strings.Contains(msg, r.contains) {
			return true
		}
	}
	return false
}

// banner is product/version information seen outside a dump (startup
// banners in be.INFO); it applies to later incidents of the same process
// lifetime.
type banner struct {
	product Product
	version string
	build   string
	btype   string
}

func (p *parser) init(opts ScanOptions) {
	p.opts = opts
	p.lineNo = max(opts.FirstLine, 1) - 1
	p.dem = demangler.New(4096)
	p.pf = anchored
}

// physical handles one physical line: NUL runs, repair, prefixes, split
// collapsed pastes, and hand each logical line to the assembler.
func (p *parser) physical(b []byte, truncated bool) {
	p.lineNo++
	nul := bytes.IndexByte(b, 0)
	if nul >= 0 {
		if i, j := nextHole(b, nul); i >= 0 {
			p.holes(b, i, j, truncated)
			return
		}
	}
	p.text(b, truncated, nul < 0)
}

// minHole is the shortest NUL run taken for a hole in the file (holes).
// Binary junk (a core or a compressed file cat'ed into the log) holds
// shorter runs all the time (a random byte is NUL once in 256), and so
// does UTF-16 text; a NUL run of 8 happens in random bytes once in 2^64.
const minHole = 8

// holes handles a physical line holding a hole (b[i:j], the first). A
// run of minHole or more NULs is a hole in the file, not text: the
// preallocated tail a crash leaves in a log file, or the range a truncated
// file was never written to; the next process writes after it on the same
// physical line. So each hole ends the text before it, and the text after
// it is a new line with the same line number: a dump after the hole is
// read as if it began the line, and the old process's line cut before the
// hole does not swallow it. A line of NULs alone is junk (skipped between
// incidents, a foreign line inside one), as any line with control bytes.
// Only subslices of b are handed on, so memory does not grow.
func (p *parser) holes(b []byte, i, j int, truncated bool) {
	start, texts := 0, false
	for {
		if i > start {
			p.text(b[start:i], false, false)
			texts = true
		}
		if j == len(b) {
			break
		}
		k, l := nextHole(b, j)
		if k < 0 {
			p.text(b[j:], truncated, false)
			return
		}
		start, i, j = j, k, l
	}
	if texts {
		return
	}
	if p.cur == nil {
		// What text does with it: junk (isJunk), skipped.
		p.pfx.hasPrev = false
		return
	}
	p.text(b, truncated, false)
}

// nextHole returns where the first run of minHole or more NULs in b[i:]
// starts and ends, or -1, -1.
func nextHole(b []byte, i int) (int, int) {
	for {
		k := bytes.IndexByte(b[i:], 0)
		if k < 0 {
			return -1, -1
		}
		i += k
		n := skipNUL(b[i:])
		if n >= minHole {
			return i, i + n
		}
		i += n
	}
}

// maxHoleBytes is what holeSqueezer keeps of a NUL run: more than minHole,
// so a hole stays one (and a shorter run stays as it was).
const maxHoleBytes = 64

// holeSqueezer passes its reader's bytes on with every NUL run cut to
// maxHoleBytes: a hole of any size is then one line break (holes), and the
// text after a hole larger than ScanOptions.MaxLineBytes is not cut off
// with it (a crash can leave megabytes of NULs before the next process's
// first line). Line numbers do not change (no newline is removed).
type holeSqueezer struct {
	r   io.Reader
	run int // NULs at the end of what was passed on
}

func (h *holeSqueezer) Read(p []byte) (int, error) {
	for {
		n, err := h.r.Read(p)
		if i := bytes.IndexByte(p[:n], 0); i >= 0 || h.run > 0 {
			if i < 0 {
				i = n
			}
			n = h.squeeze(p[:n], i)
		} else {
			h.run = 0
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// squeeze cuts the NUL runs of b (b[:i] holds none) in place and returns
// the new length.
func (h *holeSqueezer) squeeze(b []byte, i int) int {
	if i > 0 {
		h.run = 0
	}
	w := i
	for i < len(b) {
		if b[i] != 0 {
			k := bytes.IndexByte(b[i:], 0)
			if k < 0 {
				k = len(b) - i
			}
			if w != i {
				copy(b[w:], b[i:i+k])
			}
			w += k
			i += k
			h.run = 0
			continue
		}
		n := skipNUL(b[i:])
		keep := max(0, min(n, maxHoleBytes-h.run))
		if w != i {
			copy(b[w:], b[i:i+keep])
		}
		w += keep
		h.run += n
		i += n
	}
	return w
}

// zeroBlock is compared with whole blocks of a NUL run (skipNUL); never
// written.
var zeroBlock = strings.Repeat("\x00", 256)

// skipNUL returns the length of the NUL run b starts with: eight bytes at
// a time, whole blocks once a run is long.
func skipNUL(b []byte) int {
	i := 0
	for i+8 <= len(b) {
		if x := binary.LittleEndian.Uint64(b[i:]); x != 0 {
			// Most runs are short (a NUL in binary junk is one byte in
			// 256): the first word ends them.
			return i + bits.TrailingZeros64(x)>>3
		}
		i += 8
		if i == 8 || i%len(zeroBlock) == 0 {
			for len(b)-i >= len(zeroBlock) && string(b[i:i+len(zeroBlock)]) == zeroBlock {
				i += len(zeroBlock)
			}
		}
	}
	for i < len(b) && b[i] == 0 {
		i++
	}
	return i
}

// text handles the text of one physical line (all of it, or a piece
// between NUL runs): repair, prefixes, split collapsed pastes, and hand
// each logical line to the assembler. nulFree says that b holds no NUL
// (physical looked), so that the tests for one need not look again.
func (p *parser) text(b []byte, truncated, nulFree bool) {
	text, rl, prefixed := normalizeLine(b)
	text, stripped := p.pfx.strip(text)
	if stripped {
		var rl2 bool
		text, rl2, _ = normalizeLine(text)
		rl, prefixed = rl || rl2, true
	}
	idle := p.cur == nil && !truncated
	// hits are the prefilter's anchors in text, while scanned. same: text
	// is the previous line but for its digits; differs: the two were
	// compared and are not (learnPrefix need not compare them again).
	var hits scanHits
	scanned, same, differs := false, false, false
	if idle {
		// Idle fast path: look at the line through a temporary view and
		// copy it only when it may start an incident.
		if len(text) == 0 {
			return
		}
		if !stripped && !p.mayStart(unsafe.String(&text[0], len(text))) {
			p.pfx.hasPrev = false
			return
		}
	}
	if p.cur != nil && len(text) > 0 {
		// Inside an incident a line holding a NUL that is junk between
		// incidents (isJunk) ends the incident and is skipped: binary junk
		// cuts a dump, and it must not start another one (`#0 00\x00`
		// after a gdb line started a backtrace that its span alone does
		// not give: FuzzScan's invariant).
		if view := unsafe.String(&text[0], len(text)); !nulFree && strings.IndexByte(view, 0) >= 0 && isJunk(view) {
			p.closeCurrent()
			p.pfx.hasPrev = false
			return
		}
	}
	if p.cur == nil && len(text) > 0 {
		view := unsafe.String(&text[0], len(text))
		bin := false
		if p.pf != nil && idle && !stripped {
			same, differs = p.pfx.sameAsPrevCmp(text, p.lineNo)
		}
		switch {
		case p.pf == nil:
			bin = isBinary(view)
		case same:
			// Equal to the line before but for its digits: the same
			// anchors (they have no digits), and nothing to learn.
			hits, scanned, same = p.pfx.prevHits, true, true
		case !nulFree && strings.IndexByte(view, 0) >= 0:
			// A NUL alone makes junk (binaryWeight); found at memory speed.
			bin, scanned = true, true
		default:
			hits, scanned = p.pf.scanFrom(view, false), true
			bin = hits&hitBinary != 0
		}
		if bin {
			if isJunk(view) {
				p.pfx.hasPrev = false
				return
			}
			if p.pf != nil {
				hits = p.pf.scan(view)
			}
		}
	}
	if !stripped && len(text) > 0 && (!scanned || hits&hitStars != 0) {
		// A dump header after other text: that text is a prefix, whatever
		// its length.
		view := unsafe.String(&text[0], len(text))
		if k := headerAnchor(view); k > 0 && strings.TrimLeft(view[:k], " \t") != "" && !collapsedMarker.MatchString(view[:k]) && !glogContent(view, k) {
			text, prefixed, stripped = text[k:], true, true
			scanned = false
			if p.pfx.learnAnchored(strings.Clone(view[:k])) && p.cur == nil {
				if prev, info, ok := p.pfx.relearnPrev(p.lineNo); ok {
					p.process(prev, info)
				}
			}
		}
	}
	if idle && p.cur == nil {
		view := unsafe.String(&text[0], len(text))
		if (stripped || !scanned) && !p.mayStart(view) {
			p.pfx.hasPrev = false
			return
		}
		k, inert := p.inert(view, hits, scanned)
		learned := 0
		if learnable(k) && !stripped {
			if same && !stripped {
				p.pfx.keep(text, p.lineNo, true)
			} else {
				learned = p.pfx.learnCmp(text, p.lineNo, true, differs)
			}
			if learned == 0 && scanned {
				p.pfx.prevHits, p.pfx.prevScanned = hits, true
			}
		} else if !learnable(k) {
			p.pfx.hasPrev = false
		}
		if learned == 0 {
			if inert {
				return
			}
			if k == kStart && scanned && hits&hitRepair == 0 {
				// What logical does with a start marker between incidents,
				// without copying the line.
				p.banner = banner{}
				p.pending = p.pending[:0]
				return
			}
		} else {
			if prev, info, ok := p.pfx.relearnPrev(p.lineNo); ok {
				// The line before taught nothing alone; with the prefix
				// known it may be the first line of a dump.
				p.process(prev, info)
			}
			text, _, _ = normalizeLine(text[learned:])
			prefixed = true
			if len(text) == 0 {
				return
			}
			view = unsafe.String(&text[0], len(text))
			if p.cur == nil {
				if !p.mayStart(view) {
					return
				}
				if _, inert := p.inert(view, 0, false); inert {
					return
				}
			}
		}
	} else if !stripped && len(text) > 0 {
		view := unsafe.String(&text[0], len(text))
		var k lineKind
		if scanned {
			k = p.kindOf(view, hits, scanned)
		} else {
			k, _ = p.classify(view)
		}
		e := 0
		if learnable(k) {
			if e = p.pfx.learn(text, p.lineNo, false); e > 0 {
				text, _, _ = normalizeLine(text[e:])
				prefixed = true
			}
		} else {
			p.pfx.hasPrev = false
		}
		if e == 0 && scanned && p.cur == nil && hits&hitRepair == 0 && p.inertKind(k, view) {
			// A cut line between incidents that cannot start one:
			// process would change nothing.
			return
		}
	}
	p.process(text, lineInfo{no: p.lineNo, runtimeLogger: rl, prefixed: prefixed, truncated: truncated})
	if p.pfx.prevNo == p.lineNo {
		// An incident holds it, or none does (one that saw it may have
		// ended before it: format_misc.go numberedStart).
		p.pfx.prevIdle = p.cur == nil && !truncated
	}
}

// process hands one repaired physical line to the assembler, split into
// logical lines when it holds a collapsed paste.
func (p *parser) process(text []byte, ln lineInfo) {
	s := string(text)
	if strings.IndexByte(s, '&') >= 0 {
		s = unescapeHTML(s)
	}
	if parts := splitCollapsed(s); parts != nil {
		repaired := repairFirstPart(parts)
		for _, part := range parts {
			ln.text = part
			p.logical(ln)
		}
		if p.cur != nil {
			p.cur.note("split a line holding %d collapsed dump lines", len(parts))
			if repaired {
				p.cur.note("the collapsed paste starts inside a gdb frame: numbered it before the next one")
			}
		}
		return
	}
	ln.text = s
	p.logical(ln)
}

// mayStart is the pre-filter of the idle state: it says whether a line can
// begin an incident or change scanner state. It must be cheap: most lines of
// a be.out or be.INFO are ordinary log lines.
func (p *parser) mayStart(s string) bool {
	if sev, _, msg, ok := glogLine(s); ok {
		if sev == 'F' {
			return true
		}
		if sev != 'I' && hasMemoryLimit(msg) {
			return true
		}
		return isBannerMsg(msg) || strings.HasPrefix(msg, "DIAGNOSE ") || isLifecycleMsg(msg)
	}
	return true
}

// inert reports whether an idle line that passed mayStart still cannot
// matter: it classifies as nothing that opens an incident or changes state,
// and it holds no collapsed dump or HTML entity to repair. It looks at the
// temporary view only; nothing it returns outlives the call. It also
// returns the line's kind (kOther for lines it did not classify).
//
// With the prefilter, hits (scan(view), when scanned) stand for the
// repairs' tests: a line needs a repair only when it holds an HTML entity
// or a collapsed-paste marker, and with neither, handing it to process
// would change nothing for the kinds inert accepts.
func (p *parser) inert(view string, hits scanHits, scanned bool) (lineKind, bool) {
	if p.pf != nil && !scanned {
		hits, scanned = p.pf.scan(view), true
	}
	k := p.kindOf(view, hits, scanned)
	if p.pf == nil {
		if strings.IndexByte(view, '&') >= 0 || splitCandidate(view) {
			return k, false
		}
	} else if hits&hitRepair != 0 {
		return k, false
	}
	return k, p.inertKind(k, view)
}

// inertKind says whether an idle line of kind k leaves everything as it is
// (no incident, no context event, no start marker or banner).
func (p *parser) inertKind(k lineKind, view string) bool {
	switch k {
	case kStart, kBanner:
		return false
	case kOther:
		if t := trimBlanks(view); p.pf != nil && (t == "" || !headerlessStart[t[0]]) {
			return true
		}
	}
	return !isContextEvent(k) && !startsIncident(k, view, p)
}

// headerlessStartBytes are the first bytes (after blanks) of the lines no
// rule recognizes that startsIncident lets open an incident (headerless
// pastes: `0# …`, a fragment's `12# …` (fragment.go), `@ 0x…`,
// `#3 0x… in …`); with the prefilter, other unrecognized lines are not
// shown to it. TestHeaderlessStartBytes (and
// TestPrefilterEquivalence) fail when startsIncident learns a start this
// list lacks.
const headerlessStartBytes = "0123456789@#"

// headerlessStart marks the bytes of headerlessStartBytes (a lookup per
// idle line instead of a search).
var headerlessStart = func() (t [256]bool) {
	for i := 0; i < len(headerlessStartBytes); i++ {
		t[headerlessStartBytes[i]] = true
	}
	return t
}()

// isJunk says whether a line that is not text (isBinary) is skipped
// between incidents — no recognizer is run on it and it teaches no prefix
// — which it is unless it holds `*** ` (a glog or boost dump header after
// the junk, cut off by headerAnchor) or is a glog line from its first
// byte after blanks. The NUL run a crash leaves in a log file before the
// next process's output does not get here: a run of minHole NULs ends the
// line (holes), and the text after it is classified as a line of its own.
func isJunk(view string) bool {
	if strings.Contains(view, "*** ") {
		return false
	}
	_, _, _, ok := glogLine(trimBlanks(view))
	return !ok
}

// logical classifies one logical line and feeds the assembler.
func (p *parser) logical(ln lineInfo) {
	k, m := p.classify(ln.text)
	if k == kStart {
		if p.cur != nil {
			p.cur.cutBy = "a process start marker"
		}
		p.closeCurrent()
		p.banner = banner{}
		p.pending = p.pending[:0]
		return
	}
	if k == kBanner {
		p.setBanner(m)
		if p.cur == nil {
			return
		}
	}
	if p.cur == nil && isContextEvent(k) && !(k == kShell && shellCrash(ln.text) != nil) {
		// Memory-limit, OOM-kill and shell lines seen between incidents
		// are context for the next incident of the same process lifetime.
		p.pending = append(p.pending, Event{Line: ln.no, Kind: eventKind(k), Text: strings.TrimSpace(ln.text)})
		if len(p.pending) > maxPendingEvents {
			p.pending = p.pending[len(p.pending)-maxPendingEvents:]
		}
		return
	}
	if p.cur != nil {
		if p.cur.accept(p, ln, k, m) {
			return
		}
		if p.cur != nil {
			p.cur.cutBy = fmt.Sprintf("line %d, which it cannot hold", ln.no)
		}
		p.closeCurrent()
	}
	if startsIncident(k, ln.text, p) {
		p.cur = newIncident(p, ln)
		if k == kOther {
			p.cur.fragment = fragmentStart(p, ln.text)
		}
		if len(p.pending) > 0 {
			p.cur.c.Events = append(p.cur.c.Events, p.pending...)
			p.pending = p.pending[:0]
		}
		if !p.cur.accept(p, ln, k, m) {
			p.cur = nil
		}
	}
}

// trimBlanks is strings.TrimLeft(s, " \t") without building a set.
func trimBlanks(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// classify returns the kind of a line and the submatches of its rule.
func (p *parser) classify(s string) (lineKind, []string) { return p.classifyHits(s, 0, false) }

// kindOf is classify's kind alone, given the prefilter's hits in s (when
// scanned); it does not build the submatches of the rules that have none.
func (p *parser) kindOf(s string, hits scanHits, scanned bool) lineKind {
	trimmed := trimBlanks(s)
	if trimmed == "" {
		return kBlank
	}
	if trimmed[0] != 'I' && trimmed[0] != 'W' && trimmed[0] != 'E' && trimmed[0] != 'F' {
		if r, _ := p.match(s, trimmed, hits, scanned); r != nil {
			return r.kind
		}
		return kOther
	}
	k, _ := p.classifyHits(s, hits, scanned)
	return k
}

// classifyHits is classify given the prefilter's hits in s (when scanned).
func (p *parser) classifyHits(s string, hits scanHits, scanned bool) (lineKind, []string) {
	trimmed := trimBlanks(s)
	if trimmed == "" {
		return kBlank, nil
	}
	if sev, tid, msg, ok := glogLine(trimmed); ok {
		if sev == 'F' {
			return kFatal, []string{trimmed, msg, tid}
		}
		if strings.HasPrefix(msg, "DIAGNOSE ") {
			return p.classifyDiagnose(msg)
		}
		if sev != 'I' && hasMemoryLimit(msg) {
			return kMemLimit, []string{trimmed}
		}
		if isBannerMsg(msg) {
			if r, m := p.match(msg, strings.TrimLeft(msg, " "), 0, false); r != nil && r.kind == kBanner {
				return kBanner, m
			}
		}
		if isLifecycleMsg(msg) {
			return kLifecycleLog, []string{trimmed, msg}
		}
		return kGlog, []string{trimmed, msg}
	}
	r, m := p.match(s, trimmed, hits, scanned)
	if r == nil {
		return kOther, nil
	}
	if m == nil {
		m = []string{trimmed}
	}
	return r.kind, m
}

// match runs the rules on a line, through the prefilter when there is one.
func (p *parser) match(text, trimmed string, hits scanHits, scanned bool) (*lineRule, []string) {
	if p.pf == nil {
		return allRules.match(text, trimmed, true)
	}
	return p.pf.match(text, trimmed, true, hits, scanned)
}

func (p *parser) setBanner(m []string) {
	if len(m) < 2 {
		return
	}
	v := m[1]
	b := banner{version: v}
	switch {
	case strings.HasPrefix(v, "doris-"), strings.HasPrefix(v, "palo-"):
		b.product = ProductDoris
	}
	if len(m) > 3 {
		b.btype, b.build = m[2], m[3]
	}
	p.banner = b
}

// startsIncident says whether a line of this kind opens an incident when
// none is open (or after the open one refused it).
func startsIncident(k lineKind, text string, p *parser) bool {
	switch k {
	case kQueryID, kNereids, kTablet, kCommit, kAbortedAt, kSignal, kPC, kSRQuery, kTracker,
		kVersion, kFatal, kCheckHeader, kTerminate, kWhat, kJVMStart, kJVMOOM, kHsErrThread,
		kJstackStart, kJavaThread, kAsanStart, kAsanDeadly, kTsanStart, kUbsanStart,
		kGDBCore, kGDBTerminated, kGDBThread, kGDBCurrent, kJemalloc, kAssert, kKernelSegv, kKernelTrap,
		kDorisAPIStart, kMinidump, kDiagGroup, kCoredumpStart, kCoredumpThread:
		return true
	case kTcmalloc:
		return isFatalAllocatorLine(text)
	case kSanEnd:
		return sanitizerSummaryStarts(p, text) // a SUMMARY line alone (format_sanitizer.go)
	case kShell:
		return shellCrash(text) != nil // a crash with no stack (format_misc.go)
	case kOther:
		// Headerless pastes: a boost frame 0, a glog `@` frame, a gdb frame #0.
		t := trimBlanks(text)
		if len(t) < 3 {
			return false
		}
		switch {
		case t[0] == '0' && t[1] == '#':
			return true
		case isDigit(t[0]):
			// A boost frame numbered above 0: a fragment (fragment.go).
			return fragmentStart(p, t) > 0
		case t[0] == '@' && t[1] == ' ':
			_, _, ok := p.parseAtFrame(t)
			return ok
		case t[0] == '#' && isDigit(t[1]):
			// gdb frames; a paste may start at any frame (`#43 0x… in f (…`).
			f, ok := p.parseGDBFrame(t)
			return ok && (f.Index == 0 || f.PC != 0)
		}
	}
	return false
}

// closeCurrent finishes the open incident, if any.
func (p *parser) closeCurrent() {
	if p.cur == nil {
		return
	}
	if c := p.cur.finish(p); c != nil {
		p.out = append(p.out, c)
	}
	p.cur = nil
}

// finish closes the input: the open incident ends at EOF (eof) or because
// the caller stopped the scan.
func (p *parser) finish(eof bool) []*Crash {
	if p.cur != nil {
		p.cur.eof = eof
		if eof {
			p.cur.cutBy = "the end of the input"
		} else {
			p.cur.note("scan stopped by the caller while the incident was open")
		}
	}
	p.closeCurrent()
	out := p.out
	p.out = nil
	return out
}

// repairFirstPart handles a collapsed gdb paste that starts inside its first
// frame (`0x… in f (…) at x.h:372 #1 <signal handler called> #2 …` or
// `f (this=…) at x.cpp:1 #1 0x… in g …`): the text before the first marker is
// the frame just before it, so it gets that frame's number. It reports
// whether it changed parts.
func repairFirstPart(parts []string) bool {
	if len(parts) < 2 {
		return false
	}
	first := strings.TrimSpace(parts[0])
	next := strings.TrimLeft(parts[1], " ")
	if first == "" || first[0] == '#' || first[0] == '*' || !strings.HasPrefix(next, "#") || len(next) < 2 || !isDigit(next[1]) {
		return false
	}
	if !strings.Contains(first, " at ") && !strings.Contains(first, " in ") {
		return false
	}
	first = first[framePrefix(first):]
	n := 0
	for i := 1; i < len(next) && isDigit(next[i]); i++ {
		n = n*10 + int(next[i]-'0')
	}
	if n < 1 {
		return false
	}
	parts[0] = "#" + strconv.Itoa(n-1) + "  " + first
	return true
}

// isBannerMsg says whether a glog message may be the startup version
// banner (` version doris-2.1.6-rc04(AVX2) RELEASE (build …)`), which
// glog prints at the start of the message.
func isBannerMsg(msg string) bool {
	return strings.HasPrefix(strings.TrimLeft(msg, " "), "version ")
}

// idle is called when the live input has been quiet for the idle timeout:
// the open incident is complete as far as anyone can tell, so it is
// emitted now rather than when a later line arrives.
func (p *parser) idle() {
	if p.cur == nil {
		return
	}
	p.cur.note("emitted after %s without input", p.opts.IdleTimeout)
	p.closeCurrent()
}

// Live reading: a goroutine reads the input in chunks and hands them over a
// channel, so that the Scanner can wait for input, for the idle timeout and
// for the context at once.

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
	for {
		data := l.pend[l.off:]
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

// learnable says whether a line of this kind may carry a prefix no table
// knows: unrecognized lines, and lines recognized by a rule that looks
// anywhere in the line rather than at its start.
func learnable(k lineKind) bool {
	switch k {
	case kOther, kShell, kMemLimit, kOOMKill, kTcmalloc, kKernelSegv, kKernelTrap, kBanner:
		return true
	}
	return false
}

// gdbAddrIn finds the `0x… in ` that starts a gdb frame body.
var gdbAddrIn = mustCompile(`0x[0-9a-fA-F]+ in `)

// framePrefix returns the length of a log prefix before the gdb frame body
// a collapsed paste starts with (`host | 0x… in f (…) at x.h:372`): up to
// its `0x… in `, else up to the last separator (`: `, `| `, `] `, a tab)
// before the argument list, else a leading timestamp. A one-line paste
// has no other line to learn its prefix from.
func framePrefix(first string) int {
	if loc := gdbAddrIn.FindStringIndex(first); loc != nil {
		return loc[0]
	}
	limit := strings.IndexByte(first, '(')
	if limit < 0 {
		limit = len(first)
	}
	end := 0
	for i := 0; i+1 < limit; i++ {
		switch {
		case first[i] == '\t':
			end = i + 1
		case (first[i] == ':' || first[i] == '|' || first[i] == ']') && first[i+1] == ' ':
			end = i + 2
		}
	}
	if end > 0 {
		return end
	}
	digits := 0
	for i := 0; i < limit; i++ {
		c := first[i]
		if strings.IndexByte(timestampChars, c) < 0 {
			break
		}
		if isDigit(c) {
			digits++
		}
		if c == ' ' && digits >= 4 {
			end = i + 1
		}
	}
	return end
}
