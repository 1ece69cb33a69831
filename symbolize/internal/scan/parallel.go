package scan

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"unsafe"
)

// ParallelOptions tune ScanParallel. The zero value is usable.
type ParallelOptions struct {
	// Workers is how many chunks are scanned at once. Default GOMAXPROCS.
	Workers int
	// ChunkBytes is the size of one chunk before it is moved to line
	// starts. Default DefaultChunkBytes. Any size gives the same output
	// (the tests go down to one byte); small chunks only cost more
	// snapshots, more incidents across chunk borders and more lines read
	// in order at their starts.
	ChunkBytes int64
	// Stats, when not nil, is filled in when the scan ends.
	Stats *ParallelStats
}

// DefaultChunkBytes is ParallelOptions.ChunkBytes by default: large
// enough that the lines read twice at a chunk's start are few, small
// enough that Workers chunks in flight stay a few MiB.
const DefaultChunkBytes = 4 << 20

// ParallelStats says how a ScanParallel went.
type ParallelStats struct {
	// Chunks is the number of chunks holding at least one line start.
	Chunks int
	// Adopted is how many chunks the in-order scan skipped lines of by
	// taking the state a worker's scan of the chunk had there.
	Adopted int
	// Rescanned is how many chunks a worker scanned a second time, from
	// a better guess.
	Rescanned int
	// ContinuedLines is how many lines the in-order scan read itself:
	// the lines before it could take a worker's state in each chunk, the
	// incidents it could not take from a worker (one open at a chunk's
	// end, one whose text names an input line, those past the workers'
	// budget), and whole chunks where it never could. With chunks of
	// megabytes they are a small part of the input.
	ContinuedLines int64
	// Reused is how many of the Crashes yielded were a worker's, taken
	// with its state (their line numbers moved) instead of read again by
	// the in-order scan.
	Reused int
}

// ScanParallel yields every incident of the size bytes of r, the same
// Crashes in the same order as a Scanner reading them from the start
// (NewScanner over io.NewSectionReader(r, 0, size)), using up to
// par.Workers goroutines. It then yields one error at most: a read error
// (ErrRead), or ctx.Err() when ctx is done (the incident open then is
// yielded before it, as NextContext does). opts.IdleTimeout is ignored: r
// is a file that ends. opts.FirstLine numbers the first line, as for a
// Scanner. Leaving the loop early stops the workers.
//
// How it stays exact. r is cut into chunks of par.ChunkBytes, each moved
// to the next line start. Workers scan the chunks (from the line before
// each), numbering lines from workerBase, from a guessed state: the
// long-lived part of the state — startup banner, learned line prefix —
// latest known at a chunk's end. On the way a worker records, at line
// boundaries where no incident is open (the chunk's start, densely after
// each incident, then every 256 lines at most), a snapshot of the whole
// state the scanner carries between lines (every field that decides
// later output, see carried), the file offset there, and how many
// incidents it had finished by then; it keeps the incidents, and reads
// on past the chunk's end to finish one open there. One in-order scan
// follows the input from the start. When it reaches a recorded boundary
// of a chunk in a state equal to the snapshot (line numbers moved by
// where the chunk starts), the single pass would do from there exactly
// what the worker did: it yields the worker's incidents up to the
// chunk's last snapshot, their line numbers moved (also those their
// notes print, found by lineSlots), takes that snapshot's state and goes
// on at its offset. It reads lines itself only before the first equal
// snapshot of a chunk, and for an incident it cannot take (one whose
// text numbers could not be told apart, one past the memory budget, one
// that runs on past a quarter chunk). The parser does not depend on
// where line numbering starts, only on differences of line numbers
// (TestParallelEquivalence and FuzzParallel check the whole construction
// against the single pass). Where no snapshot is equal (a banner or
// prefix the guess did not hold, a dump longer than a chunk) the
// in-order scan reads the lines itself: still exact, only not parallel
// there. Memory is bounded by the chunks in flight (2×Workers+1 chunks,
// their snapshots and incidents, one read buffer per worker); the
// snapshots of a chunk hold at most an eighth of its size (snapBudget),
// its incidents a quarter (outBudget), past which the in-order scan
// reads more itself.
func ScanParallel(ctx context.Context, r io.ReaderAt, size int64, opts ScanOptions, par ParallelOptions) iter.Seq2[*Crash, error] {
	return func(yield func(*Crash, error) bool) {
		m := newMerger(ctx, r, size, opts, par)
		defer m.stop()
		m.run(yield)
		if par.Stats != nil {
			*par.Stats = m.stats
		}
	}
}

// chunkJob is one chunk: its nominal byte range [a, b), and, once done,
// what its worker found.
type chunkJob struct {
	idx  int
	a, b int64
	done chan struct{}
	// The results, valid once done is closed.
	empty      bool  // no line starts in [a, b)
	start, end int64 // the lines of the chunk, when not empty
	failed     bool  // a read failed: the in-order scan reads on itself
	snaps      []chunkSnap
	snapBytes  int  // what snaps hold, as snapCost counts it
	rescanned  bool // scanned again from a better guess
	// outs are the Crashes the worker's scan finished, in order, their
	// lines numbered from workerBase+1 at the chunk's start; nil where
	// one may not be taken (its line numbers in text not found, see
	// lineSlots) or past the budget (outBytes, crashCost). slots[i] are
	// the line numbers in outs[i]'s text.
	outs     []*Crash
	slots    [][]lineSlot
	outBytes int
	// endLine is the worker's number of the chunk's last line; limit,
	// when past end, is how far the worker read on to finish an incident
	// (extend).
	endLine int
	limit   int64
	// prev is the chunk before, for its worker (scanChunk); lasting is what
	// lasts of the state at the end of the worker's scan (banner, learned
	// prefix), set when ended.
	prev    *chunkJob
	lasting carried
	ended   bool
}

// chunkSnap is a snapshot taken at an idle line boundary of a chunk's
// scan (its line numbers counted from the chunk's start), with the file
// offset of the next line and the number of Crashes the scan had
// finished by then.
type chunkSnap struct {
	c    carried
	off  int64
	outs int
}

// merger runs the workers and the in-order scan.
type merger struct {
	parent context.Context // the caller's
	ctx    context.Context // the workers', done when the scan ends
	cancel context.CancelFunc
	r      io.ReaderAt
	size   int64
	opts   ScanOptions
	chunk  int64
	wg     sync.WaitGroup
	queue  chan *chunkJob
	stats  ParallelStats

	mu     sync.Mutex
	seed   *carried // the in-order scan's latest state at a chunk's end
	seedAt int      // that chunk's index
	// guess is what lasts (banner, learned prefix) of the state at the
	// end of the latest chunk a worker finished, guessAt, from its own
	// scan: newer than seed, maybe wrong.
	guess   *carried
	guessAt int

	// pos is where the in-order scan goes on after a chunk: its end, or
	// a place in the next chunk, whose start is then after line
	// nextLine (readChunk).
	pos      int64
	nextLine int

	snapBudget int // bytes of snapshots per chunk (snapBudget)
	outBudget  int // bytes of kept Crashes per chunk (outBudget)
	first      int // the number of the input's first line (ScanOptions.FirstLine)
}

func newMerger(ctx context.Context, r io.ReaderAt, size int64, opts ScanOptions, par ParallelOptions) *merger {
	workers := par.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunk := par.ChunkBytes
	if chunk <= 0 {
		chunk = DefaultChunkBytes
	}
	opts.IdleTimeout = 0
	// The in-order scan numbers from opts.FirstLine; the workers number
	// each chunk from 1 (the parser depends only on differences of line
	// numbers, see readChunk), so their options do not carry it.
	first := max(opts.FirstLine, 1)
	opts.FirstLine = 0
	inner, cancel := context.WithCancel(ctx)
	m := &merger{parent: ctx, ctx: inner, cancel: cancel, r: r, size: size, opts: opts, chunk: chunk, seedAt: -1, guessAt: -1, snapBudget: snapBudget(chunk), outBudget: outBudget(chunk), first: first,
		queue: make(chan *chunkJob, 2*workers+1)}
	work := make(chan *chunkJob)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(m.queue)
		defer close(work)
		buf := make([]byte, findPiece)
		start := int64(0)  // where the next chunk's first line starts
		var last *chunkJob // the latest chunk given to a worker
		for i := 0; int64(i)*chunk < size || i == 0; i++ {
			a := int64(i) * chunk
			j := &chunkJob{idx: i, a: a, b: min(size, a+chunk), done: make(chan struct{})}
			start = m.bounds(j, start, buf)
			select {
			case m.queue <- j:
			case <-inner.Done():
				return
			}
			if j.failed || j.empty {
				// Nothing for a worker; after a failure the in-order
				// scan reads on alone and takes no more chunks.
				close(j.done)
				if j.failed {
					return
				}
				continue
			}
			j.prev, last = last, j
			select {
			case work <- j:
			case <-inner.Done():
				return
			}
		}
	}()
	for range workers {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			w := &worker{}
			for j := range work {
				m.scanChunk(j, w)
			}
		}()
	}
	return m
}

// stop ends the workers and waits for them.
func (m *merger) stop() {
	m.cancel()
	m.wg.Wait()
}

// readFull reads len(b) bytes at off.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

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
		w.s = m.newScanner(sq, first)
	} else {
		w.s.br.Reset(sq)
		w.s.err = nil
		out := w.s.p.out[:0]
		w.s.p = parser{out: out}
		opts := m.opts
		opts.FirstLine = first
		opts.fill()
		w.s.p.init(opts)
	}
	s := w.s
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
	s.br.Reset(sq)
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

// workerBase numbers the lines of a worker's scan: the first line of a
// chunk is workerBase+1. The parser depends on differences of line
// numbers only, so the in-order scan moves them by where the chunk
// starts, in snapshots (matchesAt, restore) and in Crashes (StartLine,
// EndLine, Events, and the line numbers notes and reasons print, found
// by lineSlots). Any line number of a worker then has ten digits or more,
// which is how lineSlots knows a text that holds none.
const workerBase = 1 << 30

// replayShift is how much further a worker's replay of an incident
// numbers its lines (lineSlots).
const replayShift = 1 << 20

// lineSlot is a line number printed in a text field of a Crash: Notes[f],
// or CorruptedReason when f is -1, bytes [a, b).
type lineSlot struct{ f, a, b int }

// lineSlots finds the line numbers that c, the worker's Crash number idx
// of chunk j (finished at line emitted), prints in its notes and corrupted reason
// (`dump cut by line N`, `joined hard-wrapped line N`): a text without a
// run of ten digits holds none. Otherwise the incident is read again from
// the chunk's latest snapshot before it (the worker's state there) with
// its lines numbered replayShift higher, and the two texts compared: a
// number that moved by replayShift is a line number, one that did not is
// not (a thread id), anything else — no snapshot before the incident,
// other differences — makes c one the in-order scan reads itself (false).
func (m *merger) lineSlots(j *chunkJob, w *worker, c *Crash, idx, emitted int) ([]lineSlot, bool) {
	if !longDigitRun(c.CorruptedReason) && !slices.ContainsFunc(c.Notes, longDigitRun) {
		return nil, true
	}
	k := len(j.snaps) - 1
	for k >= 0 && j.snaps[k].outs > idx {
		k--
	}
	if k < 0 || j.snaps[k].outs != idx {
		return nil, false
	}
	sn := &j.snaps[k]
	if w.replay == nil {
		w.replay = m.newScanner(nil, 1)
	}
	r := w.replay
	r.br.Reset(&holeSqueezer{r: io.NewSectionReader(m.r, sn.off, max(j.end, j.limit)-sn.off)})
	r.err = nil
	r.p.out = r.p.out[:0]
	r.p.restore(&sn.c, replayShift)
	var d *Crash
	for d == nil {
		more := r.step()
		if len(r.p.out) > 0 {
			d = r.p.out[0]
			clear(r.p.out)
			r.p.out = r.p.out[:0]
		}
		if r.err != nil || (!more && d == nil) || r.p.lineNo > emitted+replayShift {
			return nil, false
		}
	}
	if d.StartLine != c.StartLine+replayShift || d.EndLine != c.EndLine+replayShift || len(d.Notes) != len(c.Notes) || len(d.Events) != len(c.Events) {
		return nil, false
	}
	out, ok := diffSlots(nil, -1, c.CorruptedReason, d.CorruptedReason)
	for i := 0; ok && i < len(c.Notes); i++ {
		out, ok = diffSlots(out, i, c.Notes[i], d.Notes[i])
	}
	return out, ok
}

// diffSlots appends to out the numbers of a, field f, that are replayShift
// lower than the same numbers of b; the rest of a and b must be equal.
func diffSlots(out []lineSlot, f int, a, b string) ([]lineSlot, bool) {
	i, k := 0, 0
	for i < len(a) && k < len(b) {
		if !isDigit(a[i]) || !isDigit(b[k]) {
			if a[i] != b[k] {
				return nil, false
			}
			i++
			k++
			continue
		}
		i0, k0 := i, k
		for i < len(a) && isDigit(a[i]) {
			i++
		}
		for k < len(b) && isDigit(b[k]) {
			k++
		}
		if a[i0:i] == b[k0:k] {
			continue
		}
		va, err1 := strconv.ParseInt(a[i0:i], 10, 64)
		vb, err2 := strconv.ParseInt(b[k0:k], 10, 64)
		if err1 != nil || err2 != nil || vb-va != replayShift {
			return nil, false
		}
		out = append(out, lineSlot{f, i0, i})
	}
	return out, i == len(a) && k == len(b)
}

// longDigitRun says whether s holds ten or more decimal digits in a row.
func longDigitRun(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			if run++; run >= 10 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// shiftCrash moves the input line numbers of c, a worker's Crash, by d,
// also those its text prints (slots, lineSlots).
func shiftCrash(c *Crash, slots []lineSlot, d int) {
	c.StartLine += d
	c.EndLine += d
	for i := range c.Events {
		c.Events[i].Line += d
	}
	for i := 0; i < len(slots); {
		f := slots[i].f
		k := i
		for k < len(slots) && slots[k].f == f {
			k++
		}
		text := &c.CorruptedReason
		if f >= 0 {
			text = &c.Notes[f]
		}
		*text = moveNumbers(*text, slots[i:k], d)
		i = k
	}
}

// moveNumbers returns s with the numbers at slots (in order) moved by d.
func moveNumbers(s string, slots []lineSlot, d int) string {
	var b []byte
	last := 0
	for _, sl := range slots {
		v, _ := strconv.Atoi(s[sl.a:sl.b])
		b = append(b, s[last:sl.a]...)
		b = strconv.AppendInt(b, int64(v+d), 10)
		last = sl.b
	}
	return string(append(b, s[last:]...))
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
// after each incident, then ever less often.
const maxSnapGap = 256

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

// run is the in-order scan: it takes the chunks in order, reads each,
// skipping what it can by the chunk's snapshots, and yields the Crashes.
func (m *merger) run(yield func(*Crash, error) bool) {
	cur := m.newScanner(nil, m.first) // its state is the single pass's at pos
	pos := int64(0)
	emit := func(cs []*Crash) bool {
		for _, c := range cs {
			if !yield(c, nil) {
				return false
			}
		}
		return true
	}
	// finish ends the scan as a Scanner does: the open incident cut by the
	// end of the input (or stopped by the caller), then the error.
	finish := func(err error) {
		out := cur.p.finish(err == nil || errors.Is(err, ErrRead))
		if emit(out) && err != nil {
			yield(nil, err)
		}
	}
	for j := range m.queue {
		select {
		case <-j.done:
		case <-m.ctx.Done():
		}
		if err := m.parent.Err(); err != nil {
			finish(err)
			return
		}
		if j.failed {
			// Read on alone from pos to the end: a read error shows where
			// a single pass would see it.
			m.cancel()
			if ok, err := m.readChunk(cur, pos, m.size, nil, emit); ok {
				finish(err)
			}
			return
		}
		if j.empty {
			continue
		}
		m.stats.Chunks++
		if pos < j.start || pos >= j.end {
			// Cannot happen: chunks follow each other at line starts, and
			// a chunk's scan reads on into the next one only.
			finish(fmt.Errorf("crashsig: parallel scan lost its place at byte %d (chunk at %d)", pos, j.start))
			return
		}
		ok, err := m.readChunk(cur, pos, j.end, j, emit)
		if !ok {
			return
		}
		if err != nil {
			finish(err)
			return
		}
		pos = m.pos
		j.snaps, j.outs, j.slots = nil, nil, nil
		if j.rescanned {
			m.stats.Rescanned++
		}
		m.publishSeed(j.idx, cur)
	}
	finish(m.parent.Err())
}

// readChunk reads [from, end) with s, the in-order scanner, and emits what
// it finishes. With a chunk j, at each of j's snapshots where its state
// equals the snapshot's (line numbers moved by the lines before the
// chunk), it would from there do what j's worker did: it emits the
// worker's Crashes up to the furthest snapshot before one it may not take
// as it is (nil in j.outs), takes that snapshot's state and reads on from
// its offset. It returns false when the consumer left, and the read or
// context error that stopped it.
func (m *merger) readChunk(s *Scanner, from, end int64, j *chunkJob, emit func([]*Crash) bool) (bool, error) {
	s.br.Reset(&holeSqueezer{r: io.NewSectionReader(m.r, from, end-from)})
	h := handOver{m: m, s: s, end: end, emit: emit}
	if j != nil {
		h.snaps, h.outs, h.slots = j.snaps, j.outs, j.slots
	}
	// The worker numbered the chunk's first line workerBase+1, the
	// in-order scan numbers it startLine+1: the lines before the chunk,
	// s.p.lineNo when it starts reading at the chunk's start, else
	// m.nextLine (the chunk before took a worker's state inside this one).
	startLine := s.p.lineNo
	if j != nil && from > j.start {
		startLine = m.nextLine
	}
	m.pos = end
	h.shift = startLine - workerBase
	if _, ok := h.jump(); !ok {
		return false, nil
	}
	for steps := 1; h.beyond == 0; steps++ {
		before := s.p.lineNo
		more := s.step()
		m.stats.ContinuedLines += int64(s.p.lineNo - before)
		if len(s.p.out) > 0 {
			if !emit(s.p.out) {
				return false, nil
			}
			clear(s.p.out)
			s.p.out = s.p.out[:0]
		}
		if s.err != nil {
			return true, s.err
		}
		jumped, ok := h.jump()
		if !ok {
			return false, nil
		}
		if !more && !jumped {
			return true, nil
		}
		if steps%4096 == 0 {
			if err := m.parent.Err(); err != nil {
				return true, err
			}
		}
	}
	// The in-order scan took the worker's state past the chunk's end.
	m.pos, m.nextLine = h.beyond, h.shift+j.endLine
	return true, nil
}

// handOver is the in-order scan's side of one chunk: the chunk's
// snapshots and Crashes, and the next snapshot to compare with.
type handOver struct {
	m       *merger
	s       *Scanner
	end     int64
	emit    func([]*Crash) bool
	snaps   []chunkSnap
	outs    []*Crash
	slots   [][]lineSlot
	shift   int // in-order line number - worker line number
	k       int // the next snapshot
	adopted bool
	beyond  int64 // where the in-order scan goes on in the next chunk, when not 0
	batch   []*Crash
}

// jump compares the in-order state, at an idle line boundary, with the
// chunk's snapshot there, if any. When equal, from there the single pass
// finishes what the worker finished: jump emits the worker's Crashes up
// to the furthest snapshot before one it may not take as it is (nil in
// outs), takes that snapshot's state and moves the reader to its offset.
// It reports whether it moved, and false when the consumer left.
func (h *handOver) jump() (bool, bool) {
	s, snaps := h.s, h.snaps
	for h.k < len(snaps) && h.shift+snaps[h.k].c.lineNo < s.p.lineNo {
		h.k++
	}
	k := h.k
	if k == len(snaps) || h.shift+snaps[k].c.lineNo != s.p.lineNo || !s.p.matchesAt(&snaps[k].c, h.shift) {
		return false, true
	}
	n := k
	for n+1 < len(snaps) && takeable(h.outs, snaps[n].outs, snaps[n+1].outs) {
		n++
	}
	h.k = n + 1
	if n == k {
		return false, true
	}
	h.batch = h.batch[:0]
	for i := snaps[k].outs; i < snaps[n].outs; i++ {
		c := h.outs[i]
		h.outs[i] = nil
		shiftCrash(c, h.slots[i], h.shift)
		h.batch = append(h.batch, c)
	}
	h.m.stats.Reused += len(h.batch)
	if len(h.batch) > 0 && !h.emit(h.batch) {
		return false, false
	}
	clear(h.batch)
	s.p.restore(&snaps[n].c, h.shift)
	if snaps[n].off > h.end {
		// Past the chunk: the worker finished the incident open at its
		// end (extend); the in-order scan goes on there in the next.
		h.beyond = snaps[n].off
	} else {
		s.br.Reset(&holeSqueezer{r: io.NewSectionReader(h.m.r, snaps[n].off, h.end-snaps[n].off)})
	}
	if !h.adopted {
		h.adopted = true
		h.m.stats.Adopted++
	}
	return true, true
}

// takeable says whether outs[a:b], a worker's Crashes, may all be taken
// as they are.
func takeable(outs []*Crash, a, b int) bool {
	for _, c := range outs[a:b] {
		if c == nil {
			return false
		}
	}
	return true
}

// publishSeed makes the in-order scanner's state at the end of a chunk,
// the real one, the guess the chunks started next begin with: what lasts
// long (banner, learned prefix) rarely changes over the few chunks the
// workers are ahead, so chunks seeded with it usually agree with the
// in-order scan at their first snapshots. A guess from another chunk's
// own scan could be wrong and pass the error on to every chunk seeded
// from it.
func (m *merger) publishSeed(idx int, s *Scanner) {
	c := s.p.snapshot()
	m.mu.Lock()
	m.seed, m.seedAt = &c, idx
	m.mu.Unlock()
}

// newScanner returns a synchronous Scanner numbering from line first,
// its read buffer no larger than a chunk needs (a line longer than the
// buffer is read the same way, see readLine).
func (m *merger) newScanner(r io.Reader, first int) *Scanner {
	opts := m.opts
	opts.FirstLine = first
	opts.fill()
	s := &Scanner{br: bufio.NewReaderSize(r, int(min(max(m.chunk, 4<<10), 256<<10)))}
	s.p.init(opts)
	return s
}
