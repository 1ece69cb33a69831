package scan

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"sync"
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
	hs := &holeSqueezer{r: io.NewSectionReader(m.r, from, end-from)}
	s.readThrough(hs, hs)
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
		hs := &holeSqueezer{r: io.NewSectionReader(h.m.r, snaps[n].off, h.end-snaps[n].off)}
		s.readThrough(hs, hs)
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
