// The workers of ScanParallel: each scans a chunk from a guessed state,
// records snapshots of the parser's carried state at idle line boundaries,
// keeps its incidents, and reads on past the chunk's end to finish one.

package scan

import (
	"bufio"
	"bytes"
	"io"
	"unsafe"
)

// squeezed reads a section of the input, from offset at, through a
// holeSqueezer and tracks where the lines it passes on are in the input.
// Bytes without a NUL bypass the squeezer (which passes them on as they
// are); a read that meets a NUL stops before it, and the NULs go through
// the squeezer in pieces of squeezePiece, so that only the lines of such
// a piece lose their offset (squeezed.offset), and a chunk without holes
// is read in the reader's own large reads.
type squeezed struct {
	sec     *io.SectionReader
	raw     countingReader // sec, counted
	sq      holeSqueezer   // over raw
	at      int64
	out     int64 // bytes passed on
	removed int64 // NULs the squeezer removed
	clean   int64 // out after the last Read that removed NULs
}

// squeezePiece bounds one Read through the squeezer.
const squeezePiece = 4 << 10

func newSqueezed(sec *io.SectionReader, at int64) *squeezed {
	z := &squeezed{sec: sec, raw: countingReader{r: sec}, at: at}
	z.sq.r = &z.raw
	return z
}

func (z *squeezed) Read(p []byte) (int, error) {
	n, err := z.raw.Read(p)
	if k := bytes.IndexByte(p[:n], 0); k != 0 {
		if k > 0 {
			// Up to the NUL now, the rest later.
			if _, serr := z.sec.Seek(int64(k-n), io.SeekCurrent); serr != nil {
				return 0, serr
			}
			z.raw.n -= int64(n - k)
			n, err = k, nil
		}
		if n > 0 {
			z.sq.run = 0 // what the squeezer does after a byte that is not NUL
		}
		z.out += int64(n)
		return n, err
	}
	if _, serr := z.sec.Seek(int64(-n), io.SeekCurrent); serr != nil {
		return 0, serr
	}
	z.raw.n -= int64(n)
	before := z.raw.n
	n, err = z.sq.Read(p[:min(len(p), squeezePiece)])
	z.out += int64(n)
	if d := z.raw.n - before - int64(n); d > 0 {
		z.removed += d
		z.clean = z.out
	}
	return n, err
}

// offset returns the input offset of the next line of b, a reader over
// z: known unless the squeezer removed NULs in the part of the input it
// passed on in the same Read as that line (which NULs came before the
// line is not known then).
func (z *squeezed) offset(b *bufio.Reader) (int64, bool) {
	o := z.out - int64(b.Buffered())
	if o < z.clean {
		return 0, false
	}
	return z.at + o + z.removed, true
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// worker is what a worker keeps from one chunk to the next: its scanner
// and read buffer (a new one per chunk costs page faults and cache
// misses).
type worker struct {
	s      *Scanner
	replay *Scanner // lineSlots'
	buf    []byte   // for prevLineStart
}

// bounds sets the lines of chunk j: those starting in [j.a, j.b). start
// is where the first line at or after j.a starts (the end of the chunk
// before, 0 for the first); bounds returns where the next chunk's first
// line starts. The chunks are bounded in order, so that no byte is
// searched for a newline twice: when the line that ends the chunk before
// reaches past j.b (a region without a newline, a hole of NULs), j is
// empty and the chunk before holds its lines, without searching that
// region again for every chunk inside it (which made a 1 GiB hole
// quadratic). It marks j failed on a read error or when the scan is
// stopped.
func (m *merger) bounds(j *chunkJob, start int64, buf []byte) int64 {
	if start >= j.b {
		j.empty = true
		return start
	}
	j.start, j.end = start, j.b
	if j.b < m.size {
		end, err := m.lineEnd(j.b-1, buf)
		if err != nil {
			j.failed = true
			return start
		}
		j.end = end
	}
	if j.start >= j.end {
		j.empty = true
	}
	return j.end
}

// scanChunk is a worker's work on one chunk (its lines found by bounds):
// scan it from a guessed state, record snapshots.
func (m *merger) scanChunk(j *chunkJob, w *worker) {
	defer close(j.done)
	prev := j.prev
	j.prev = nil // no chain of chunks kept alive
	// The guess: the latest state known at a chunk's end, the in-order
	// scan's or, newer, a worker's.
	m.mu.Lock()
	seed, seedAt := m.seed, m.seedAt
	if m.guessAt > seedAt {
		seed = m.guess
	}
	m.mu.Unlock()
	if j.idx == 0 {
		seed = nil
	}
	if !m.scanLines(j, w, seed) {
		return
	}
	// When the state at the chunk's start is by now known better and
	// differs from the guess in what lasts (a prefix learned or a banner
	// seen in the chunk before), the snapshots would never match: scan
	// again from the better guess, in parallel with the in-order scan,
	// rather than leave it to read the whole chunk. Best is the in-order
	// scan's state at the end of the chunk before; until it has one, the
	// end of the worker's scan of the chunk before (waited for: it was
	// started first): a prefix learned in that chunk is learned whatever
	// its own guess was.
	var better *carried
	if j.idx > 0 {
		m.mu.Lock()
		if m.seedAt == j.idx-1 {
			better = m.seed
		}
		m.mu.Unlock()
		if better == nil && prev != nil {
			select {
			case <-prev.done:
			case <-m.ctx.Done():
				j.failed = true
				return
			}
			if prev.ended {
				better = &prev.lasting
			}
		}
	}
	if better != nil && (seed == nil || better.banner != seed.banner || !sameShape(better.shape, seed.shape)) {
		j.snaps, j.snapBytes = j.snaps[:0], 0
		j.rescanned = true
		if !m.scanLines(j, w, better) {
			return
		}
	}
	j.lasting = carried{banner: w.s.p.banner, shape: w.s.p.pfx.shape}
	j.ended = true
	m.mu.Lock()
	if j.idx > m.guessAt {
		m.guess, m.guessAt = &j.lasting, j.idx
	}
	m.mu.Unlock()
}

// sameShape says whether two learned prefixes are the same but for their
// digits: the same prefix learned again from other lines. A chunk seeded
// with one does not agree with a scan holding the other, but both learn
// the next one alike, so the chunk is not scanned again for that.
func sameShape(a, b string) bool {
	return equalModDigits([]byte(a), []byte(b))
}

// scanLines scans the lines of chunk j from the state seed (nil: the
// initial state), records its snapshots and keeps its Crashes. It returns
// false when the chunk failed.
func (m *merger) scanLines(j *chunkJob, w *worker, seed *carried) bool {
	// The scan starts with the line before the chunk when it is short:
	// the in-order scan has read it too, so the state after it (the
	// prefix learner's previous line above all) may equal the in-order
	// scan's at the chunk's start, where a snapshot lets it take the
	// chunk's first incident.
	from, first := j.start, workerBase+1
	if ps, ok := m.prevLineStart(j.start, w); ok {
		from, first = ps, workerBase
	}
	sq := newSqueezed(io.NewSectionReader(m.r, from, j.end-from), from)
	if w.s == nil {
		w.s = m.newScanner(nil, first)
	} else {
		w.s.err = nil
		out := w.s.p.out[:0]
		w.s.p = parser{out: out}
		opts := m.opts
		opts.FirstLine = first
		opts.fill()
		w.s.p.init(opts)
	}
	s := w.s
	s.readThrough(sq, &sq.sq)
	if seed != nil {
		s.p.seed(seed)
	}
	j.limit = 0
	clear(j.outs)
	clear(j.slots)
	j.outs, j.slots, j.outBytes = j.outs[:0], j.slots[:0], 0
	// Snapshots are dense after the chunk's start and after each
	// incident, then ever sparser, at most maxSnapGap lines apart: the
	// in-order scan compares its state with them where it reads lines
	// itself (the chunk's first lines, an incident that crossed into the
	// chunk, one it could not take) and jumps from an equal one.
	outs := 0
	gap, next := 1, workerBase+1
	snap := func() {
		// The offset of the next line is known unless NULs were
		// squeezed out near it (squeezed.offset).
		s.sync() // br's Buffered is then the bytes after the lines read
		off, ok := sq.offset(s.br)
		if !ok {
			return
		}
		n := len(j.snaps)
		if n > 0 && j.snapBytes+s.p.snapCost() > m.snapBudget {
			// Past the chunk's budget the latest snapshot moves here
			// (with the incidents finished by now, so the in-order scan
			// never skips one): the in-order scan reads more lines itself
			// before it finds an equal state. Exact, less parallel.
			last := &j.snaps[n-1]
			j.snapBytes -= last.cost()
			s.p.snapshotInto(&last.c)
			last.off, last.outs = off, outs
			j.snapBytes += last.cost()
			return
		}
		j.snaps = append(j.snaps, chunkSnap{c: s.p.snapshot(), off: off, outs: outs})
		j.snapBytes += j.snaps[n].cost()
	}
	// keep keeps the Crashes the last step finished.
	keep := func() {
		for i, c := range s.p.out {
			var sl []lineSlot
			ok := false
			if cost := crashCost(c); j.outBytes+cost <= m.outBudget {
				sl, ok = m.lineSlots(j, w, c, outs+i, s.p.lineNo)
				j.outBytes += cost
			}
			if !ok {
				c = nil
			}
			j.outs = append(j.outs, c)
			j.slots = append(j.slots, sl)
		}
		outs += len(s.p.out)
		clear(s.p.out)
		s.p.out = s.p.out[:0]
	}
	for steps := 1; ; steps++ {
		more := s.step()
		if steps == 1 && first == workerBase && s.p.lineNo == workerBase && s.p.idleBoundary() && len(s.p.out) == 0 {
			// The chunk's start, after the line before it.
			j.snaps = append(j.snaps, chunkSnap{c: s.p.snapshot(), off: j.start})
			j.snapBytes += j.snaps[len(j.snaps)-1].cost()
		}
		if len(s.p.out) > 0 {
			keep()
			gap, next = 1, s.p.lineNo
		}
		if s.err != nil {
			j.failed = true
			return false
		}
		if !more {
			break
		}
		if s.p.lineNo >= next && s.p.idleBoundary() {
			snap()
			next = s.p.lineNo + gap
			gap = min(2*gap, maxSnapGap)
		}
		if steps%4096 == 0 && m.ctx.Err() != nil {
			j.failed = true
			return false
		}
	}
	// The chunk's end, where the in-order scan goes on into the next one.
	j.endLine = s.p.lineNo
	if s.p.idleBoundary() {
		if len(j.snaps) == 0 || j.snaps[len(j.snaps)-1].c.lineNo != s.p.lineNo {
			snap()
		}
		return true
	}
	return m.extend(j, s, keep)
}

// extend reads on past the end of chunk j, whose scan s ends inside an
// incident, until the incident is finished and the parser is between
// incidents, and records a snapshot there: the in-order scan, in the
// worker's state before the incident, then takes it with the worker's
// Crash and goes on from there in the next chunk, instead of reading the
// incident itself. It reads no further than a quarter of a chunk (what
// it reads is read again by the next chunk's worker, and all of it is
// lost when it finds no end: an incident that runs on for megabytes, or
// one closed by the next incident's first line, is the in-order scan's
// to read) nor than the next chunk's nominal end (the in-order scan's
// place must stay inside the next chunk), and records nothing when it
// gets there or to the input's end (a single pass would cut the incident
// there, which the in-order scan does). It returns false when the scan is
// stopped.
func (m *merger) extend(j *chunkJob, s *Scanner, keep func()) bool {
	limit := min(m.size, j.b+m.chunk, j.end+max(m.chunk/4, 4<<10))
	if j.end >= limit {
		return true
	}
	j.limit = limit
	sq := newSqueezed(io.NewSectionReader(m.r, j.end, limit-j.end), j.end)
	s.readThrough(sq, &sq.sq)
	for steps := 1; ; steps++ {
		more := s.step()
		if len(s.p.out) > 0 {
			keep()
		}
		if s.err != nil || !more {
			// A read error is the in-order scan's to report.
			s.err = nil
			return true
		}
		if s.p.idleBoundary() {
			s.sync()
			if off, ok := sq.offset(s.br); ok && off < limit {
				j.snaps = append(j.snaps, chunkSnap{c: s.p.snapshot(), off: off, outs: len(j.outs)})
			}
			return true
		}
		if steps%4096 == 0 && m.ctx.Err() != nil {
			return false
		}
	}
}

// maxOverlap is the longest line before a chunk that its scan reads
// first (prevLineStart).
const maxOverlap = 4 << 10

// prevLineStart returns where the line that ends at start (start > 0 is
// a line start) begins, when it is at most maxOverlap long.
func (m *merger) prevLineStart(start int64, w *worker) (int64, bool) {
	if start <= 0 {
		return 0, false
	}
	if w.buf == nil {
		w.buf = make([]byte, maxOverlap+1)
	}
	from := max(0, start-int64(len(w.buf)))
	b := w.buf[:start-from]
	if readFull(m.r, b, from) != nil || b[len(b)-1] != '\n' {
		return 0, false
	}
	if k := bytes.LastIndexByte(b[:len(b)-1], '\n'); k >= 0 {
		return from + int64(k) + 1, true
	}
	if from == 0 {
		return 0, true
	}
	return 0, false
}

// crashCost is about the memory c holds (an upper bound of its strings,
// which may share bytes): what a chunk's kept Crashes count against
// outBudget.
func crashCost(c *Crash) int {
	n := int(unsafe.Sizeof(*c)) + len(c.Source) + len(c.Version) + len(c.Build) + len(c.BuildType) + len(c.Signal) + len(c.SignalReason) +
		len(c.QueryID) + len(c.FragmentID) + len(c.PlanNodeID) + len(c.TabletID) + len(c.IsNereids) +
		len(c.Message) + len(c.CheckExpr) + len(c.ExceptionType) + len(c.SanitizerBug) + len(c.CorruptedReason) +
		cap(c.Formats)*int(unsafe.Sizeof("")) + cap(c.Trackers)*int(unsafe.Sizeof(Tracker{})) + cap(c.Events)*int(unsafe.Sizeof(Event{})) +
		cap(c.Notes)*int(unsafe.Sizeof("")) + cap(c.Threads)*int(unsafe.Sizeof(Thread{}))
	for _, e := range c.Events {
		n += len(e.Text)
	}
	for _, s := range c.Notes {
		n += len(s)
	}
	for _, t := range c.Trackers {
		n += len(t.Name)
	}
	for i := range c.Threads {
		t := &c.Threads[i]
		n += len(t.Handle) + len(t.Name) + len(t.State) + cap(t.Frames)*int(unsafe.Sizeof(Frame{}))
		for k := range t.Frames {
			f := &t.Frames[k]
			n += len(f.Function) + len(f.Demangled) + len(f.Module) + len(f.File) + len(f.Raw)
		}
	}
	return n
}

// snapCost is what a snapshot of the parser (at an idle boundary) would
// hold, as chunkSnap.cost counts it.
func (p *parser) snapCost() int {
	n := int(unsafe.Sizeof(chunkSnap{})) + len(p.pending)*int(unsafe.Sizeof(Event{}))
	for _, e := range p.pending {
		n += len(e.Text)
	}
	if p.pfx.prevNo == p.lineNo {
		n += len(p.pfx.prev)
	}
	return n
}

// cost is the memory the snapshot holds: itself, its copies of the
// pending events and the previous line, and the events' texts (shared
// with other snapshots, so counted more than once: an upper bound).
func (c *chunkSnap) cost() int {
	n := int(unsafe.Sizeof(*c)) + cap(c.c.pending)*int(unsafe.Sizeof(Event{})) + cap(c.c.prev)
	for _, e := range c.c.pending {
		n += len(e.Text)
	}
	return n
}

// snapBudget returns the bytes the snapshots of one chunk may hold
// (chunkSnap.cost): an eighth of the chunk, at least 64 KiB. A few
// incidents per chunk need a few KiB; input with an incident every few
// lines, each after some context events (a memory-limit line repeated
// before each kernel segfault line), took tens of MiB per chunk before
// the budget.
func snapBudget(chunk int64) int {
	return int(max(chunk/8, 64<<10))
}

// outBudget returns the bytes of Crashes (crashCost) a chunk's scan
// keeps for the in-order scan to take: a quarter of the chunk, at least
// 64 KiB. Past it the in-order scan reads the incidents itself. A crash
// text is a few KiB to a few hundred; an incident every few lines (the
// memory-limit lines and segfault line of TestParallelSnapshotBudget)
// would otherwise keep more than the chunk's size.
func outBudget(chunk int64) int {
	return int(max(chunk/4, 64<<10))
}

// findPiece is the size of the reads that look for a line's end.
const findPiece = 32 << 10

// maxSnapGap is the most lines between two snapshots of a chunk's scan:
// they are taken at the first idle boundaries after the chunk's start and
// after each incident, then ever less often. Each costs a sync of the read
// window and a copy of the carried state: at 256 a worker scanning the
// generated 1 GiB be.out (8.4M lines) took 33k of them and used 17% more
// CPU than one Scanner, at 4096 10% (min of 8 alternations pinned to one
// core); the lines the in-order scan reads itself did not change (30,250),
// as the snapshots it meets are the dense ones after a chunk's start and
// after each incident.
const maxSnapGap = 4096

// lineEnd returns the offset after the first newline at or after off
// (the size of r when there is none), reading into buf. It stops with
// the context's error when the scan is stopped.
func (m *merger) lineEnd(off int64, buf []byte) (int64, error) {
	off = max(off, 0)
	for off < m.size {
		if err := m.ctx.Err(); err != nil {
			return 0, err
		}
		b := buf[:min(int64(len(buf)), m.size-off)]
		if err := readFull(m.r, b, off); err != nil {
			return 0, err
		}
		if k := bytes.IndexByte(b, '\n'); k >= 0 {
			return off + int64(k) + 1, nil
		}
		off += int64(len(b))
	}
	return m.size, nil
}
