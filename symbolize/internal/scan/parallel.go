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
	// snapshots and more lines read in order at their starts.
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
	// incidents, the lines before it could take a worker's state in each
	// chunk, and whole chunks where it never could. With chunks of
	// megabytes and incidents far apart they are a small part of the
	// input.
	ContinuedLines int64
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
// to the next line start. Workers scan the chunks, numbering lines from
// the chunk's start, from a guessed state: the long-lived part of the
// state — startup banner, learned line prefix — the in-order scan had at
// the end of the latest chunk it finished. On the way a worker records,
// at some of the line boundaries where no incident is open, a snapshot of
// the whole state the scanner carries between lines (every field that
// decides later output, see carried), the file offset there, and how many
// incidents it had finished by then; the incidents themselves are
// dropped. One in-order scan reads the input for real, from the start.
// When it reaches a recorded boundary of a chunk in a state equal to the
// snapshot (line numbers moved by where the chunk starts), it would do
// from there exactly what the worker did, so it takes the state of the
// furthest snapshot before the worker's next incident (moving its line
// numbers) and goes on reading at that snapshot's offset: it reads the
// incidents itself, with the right line numbers, and skips the lines
// between them. The parser does not depend on where line numbering
// starts, only on differences of line numbers (TestParallelEquivalence
// and FuzzParallel check the whole construction against the single
// pass). Where no snapshot is equal (a dump longer than a chunk, a banner
// or prefix the guess did not hold) the in-order scan reads the lines
// itself: still exact, only not parallel there. Memory is bounded by the
// chunks in flight (2×Workers+1 chunks, their snapshots, one read buffer
// per worker); the snapshots of a chunk hold at most an eighth of its
// size (snapBudget) plus one snapshot, past which the in-order scan
// reads more lines itself.
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

	snapBudget int // bytes of snapshots per chunk (snapBudget)
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
	m := &merger{parent: ctx, ctx: inner, cancel: cancel, r: r, size: size, opts: opts, chunk: chunk, seedAt: -1, snapBudget: snapBudget(chunk), first: first,
		queue: make(chan *chunkJob, 2*workers+1)}
	work := make(chan *chunkJob)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(m.queue)
		defer close(work)
		buf := make([]byte, findPiece)
		start := int64(0) // where the next chunk's first line starts
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
	s *Scanner
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
	m.mu.Lock()
	seed, seedAt := m.seed, m.seedAt
	m.mu.Unlock()
	if j.idx == 0 {
		seed = nil
	}
	if !m.scanLines(j, w, seed) {
		return
	}
	// When the in-order scan has meanwhile finished the chunk before and
	// its state there differs from the guess in what lasts (a prefix
	// learned or a banner seen in between), the snapshots would never
	// match: scan again from the state now known, in parallel with the
	// in-order scan, rather than leave it to read the whole chunk.
	m.mu.Lock()
	now, nowAt := m.seed, m.seedAt
	m.mu.Unlock()
	if j.idx > 0 && nowAt == j.idx-1 && nowAt != seedAt && now != nil && (seed == nil || now.banner != seed.banner || !sameShape(now.shape, seed.shape)) {
		j.snaps, j.snapBytes = j.snaps[:0], 0
		j.rescanned = true
		m.scanLines(j, w, now)
	}
}

// sameShape says whether two learned prefixes are the same but for their
// digits: the same prefix learned again from other lines. A chunk seeded
// with one does not agree with a scan holding the other, but both learn
// the next one alike, so the chunk is not scanned again for that.
func sameShape(a, b string) bool {
	return equalModDigits([]byte(a), []byte(b))
}

// scanLines scans the lines of chunk j from the state seed (nil: the
// initial state) and records its snapshots. It returns false when the
// chunk failed.
func (m *merger) scanLines(j *chunkJob, w *worker, seed *carried) bool {
	raw := &countingReader{r: io.NewSectionReader(m.r, j.start, j.end-j.start)}
	sq := &countingReader{r: &holeSqueezer{r: raw}}
	if w.s == nil {
		w.s = m.newScanner(sq, 1)
	} else {
		w.s.br.Reset(sq)
		w.s.err = nil
		out := w.s.p.out[:0]
		w.s.p = parser{out: out}
		opts := m.opts
		opts.FirstLine = 1
		opts.fill()
		w.s.p.init(opts)
	}
	s := w.s
	if seed != nil {
		s.p.seed(seed)
	}
	// Snapshots are dense after the chunk's start and after each
	// incident, where the in-order scan looks for an equal state; in a
	// long stretch without incidents only the latest is kept, the one the
	// in-order scan skips to.
	outs, dense := 0, 0
	gap, next := 1, 1
	snap := func() {
		// The offset of the next line is known while the squeezer has
		// removed no NUL: then the bytes read are the bytes passed on.
		if raw.n != sq.n {
			return
		}
		off := j.start + sq.n - int64(s.br.Buffered())
		n := len(j.snaps)
		if n > 0 && ((j.snaps[n-1].outs == outs && dense >= denseSnaps) || j.snapBytes+s.p.snapCost() > m.snapBudget) {
			// Past the dense ones, or past the chunk's budget: the latest
			// snapshot moves here (with the incidents finished by now,
			// so the in-order scan never skips one). Over the budget the
			// in-order scan reads the lines after each incident itself
			// until it reaches the latest snapshot: exact, less parallel.
			last := &j.snaps[n-1]
			j.snapBytes -= last.cost()
			s.p.snapshotInto(&last.c)
			last.off, last.outs = off, outs
			j.snapBytes += last.cost()
			return
		}
		j.snaps = append(j.snaps, chunkSnap{c: s.p.snapshot(), off: off, outs: outs})
		j.snapBytes += j.snaps[n].cost()
		dense++
	}
	for steps := 1; ; steps++ {
		more := s.step()
		if len(s.p.out) > 0 {
			outs += len(s.p.out)
			clear(s.p.out)
			s.p.out = s.p.out[:0]
			gap, next, dense = 1, s.p.lineNo, 0
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
	if s.p.idleBoundary() && (len(j.snaps) == 0 || j.snaps[len(j.snaps)-1].c.lineNo != s.p.lineNo) {
		snap()
	}
	return true
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

// findPiece is the size of the reads that look for a line's end.
const findPiece = 32 << 10

// maxSnapGap is the most lines between two snapshots of a chunk's scan:
// they are taken at the first idle boundaries, then ever less often;
// denseSnaps are kept after the chunk's start and after each incident.
const (
	maxSnapGap = 256
	denseSnaps = 12
)

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
		if pos != j.start {
			// Cannot happen: chunks follow each other at line starts.
			finish(fmt.Errorf("crashsig: parallel scan lost its place at byte %d (chunk at %d)", pos, j.start))
			return
		}
		ok, err := m.readChunk(cur, j.start, j.end, j, emit)
		if !ok {
			return
		}
		if err != nil {
			finish(err)
			return
		}
		pos = j.end
		j.snaps = nil
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
// chunk), it takes the state of the furthest snapshot before j's next
// incident and reads on from there. It returns false when the consumer
// left, and the read or context error that stopped it.
func (m *merger) readChunk(s *Scanner, from, end int64, j *chunkJob, emit func([]*Crash) bool) (bool, error) {
	s.br.Reset(&holeSqueezer{r: io.NewSectionReader(m.r, from, end-from)})
	var snaps []chunkSnap
	if j != nil {
		snaps = j.snaps
	}
	base := s.p.lineNo // the lines before the chunk
	k, adopted := 0, false
	for steps := 1; ; steps++ {
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
		for k < len(snaps) && base+snaps[k].c.lineNo < s.p.lineNo {
			k++
		}
		if k < len(snaps) && base+snaps[k].c.lineNo == s.p.lineNo && s.p.matchesAt(&snaps[k].c, base) {
			// Equal states: the lines up to the worker's next incident
			// change nothing but the state; take it.
			n := k
			for n+1 < len(snaps) && snaps[n+1].outs == snaps[k].outs {
				n++
			}
			skip := n > k
			if skip {
				s.p.restore(&snaps[n].c, base)
				s.br.Reset(&holeSqueezer{r: io.NewSectionReader(m.r, snaps[n].off, end-snaps[n].off)})
				if !adopted {
					adopted = true
					m.stats.Adopted++
				}
			}
			k = n + 1
			if skip {
				continue
			}
		}
		if !more {
			return true, nil
		}
		if steps%4096 == 0 {
			if err := m.parent.Err(); err != nil {
				return true, err
			}
		}
	}
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
