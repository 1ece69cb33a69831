package symbolize

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
)

// ParallelOptions tune ScanParallel. The zero value is usable.
type ParallelOptions struct {
	// Workers is how many chunks are scanned at once. Default GOMAXPROCS.
	Workers int
	// ChunkBytes is the size of one chunk before it is moved to line
	// starts. Default DefaultChunkBytes. The tests use chunks down to a
	// few bytes; below about 1 MiB the hand-over costs more than it gains.
	ChunkBytes int64
	// Stats, when not nil, is filled in when the scan ends.
	Stats *ParallelStats
}

// DefaultChunkBytes is ParallelOptions.ChunkBytes by default: large
// enough that the lines read twice at a chunk's start are few, small
// enough that Workers chunks in flight stay a few MiB.
const DefaultChunkBytes = 4 << 20

// ParallelStats says how a ScanParallel went: how much of the input was
// scanned twice.
type ParallelStats struct {
	// Chunks is the number of chunks holding at least one line start.
	Chunks int
	// Adopted is how many chunks after the first were handed over to: the
	// in-order scan reached a line where its state equalled the chunk's
	// own scan, whose incidents were taken from there on.
	Adopted int
	// ContinuedLines is how many lines the in-order scan read in chunks
	// after the first: before each hand-over, and through every chunk
	// with none. With chunks of megabytes they are a small part of the
	// input, unless the state never agrees (see ScanParallel).
	ContinuedLines int64
}

// ScanParallel yields every incident of the size bytes of r, the same
// Crashes in the same order as a Scanner reading them from the start
// (NewScanner over io.NewSectionReader(r, 0, size)), using up to
// par.Workers goroutines. It then yields one error at most: a read error
// (ErrRead), or ctx.Err() when ctx is done (the incident open then is
// yielded before it, as NextContext does). opts.IdleTimeout is ignored: r
// is a file that ends. Leaving the loop early stops the workers.
//
// How it stays exact. r is cut into chunks of par.ChunkBytes, each moved
// to the next line start; workers count the lines of each chunk (so that
// every chunk's line numbers are those of the single pass, see
// ScanOptions.FirstLine) and scan it from a guessed state: the long-lived
// part of the state — startup banner, context events waiting for an
// incident, learned line prefix — at the end of the last chunk a worker
// finished. On the way each worker records a snapshot of the whole state
// the scanner carries between lines (every field that decides later
// output; see carried) at some of the line boundaries where no incident
// is open, with how many incidents it had finished by then. One in-order
// scan — the first chunk's, whose state is the real one — goes on past
// the end of its chunk into the next one, line by line, until it reaches
// a recorded boundary where its own state equals the snapshot. From that
// line on the two scans would do the same thing with the same bytes, so
// the chunk's own incidents after the boundary are taken, its scanner
// becomes the in-order one and goes on into the chunk after it. When no
// snapshot is equal (a dump longer than the chunk, a banner the guess did
// not hold) the in-order scan reads the whole chunk itself: still exact,
// only not parallel there. Memory is bounded by the chunks in flight
// (2×Workers+1 chunks, their incidents and one read buffer per worker).
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
// its scan.
type chunkJob struct {
	idx  int
	a, b int64
	prev *chunkJob // until counted: the chunk before
	// counted is closed when nlBefore is known: the number of newlines
	// in [0, b-1), -1 when a read failed.
	counted  chan struct{}
	nlBefore int64
	done     chan struct{}
	// The results, valid once done is closed.
	empty      bool  // no line starts in [a, b)
	start, end int64 // the lines of the chunk, when not empty
	failed     bool  // a read failed: the in-order scan reads on itself
	adopted    bool  // set by the in-order scan when it handed over to s
	s          *Scanner
	crashes    []*Crash
	snaps      []chunkSnap
}

// chunkSnap is a snapshot taken at an idle line boundary with the number
// of Crashes the chunk's scan had finished by then.
type chunkSnap struct {
	c    carried
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
	seedAt int // index of the chunk seed was taken from, -1 when none
	seed   *carried
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
	opts.FirstLine = 0
	inner, cancel := context.WithCancel(ctx)
	m := &merger{parent: ctx, ctx: inner, cancel: cancel, r: r, size: size, opts: opts, chunk: chunk, seedAt: -1,
		queue: make(chan *chunkJob, 2*workers+1)}
	work := make(chan *chunkJob)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(m.queue)
		defer close(work)
		var prev *chunkJob
		for i := 0; int64(i)*chunk < size || i == 0; i++ {
			a := int64(i) * chunk
			j := &chunkJob{idx: i, a: a, b: min(size, a+chunk), prev: prev,
				counted: make(chan struct{}), done: make(chan struct{})}
			prev = j
			select {
			case m.queue <- j:
			case <-inner.Done():
				return
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
			var buf []byte
			for j := range work {
				buf = m.scanChunk(j, buf)
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

// scanChunk is a worker's work on one chunk: read it, count its lines,
// find its line starts, scan it from a guessed state recording
// snapshots. buf is the worker's read buffer; it returns it for the next
// chunk.
func (m *merger) scanChunk(j *chunkJob, buf []byte) []byte {
	defer close(j.done)
	if cap(buf) < countPiece {
		buf = make([]byte, countPiece)
	}
	// The chunk is read twice, in pieces that stay in the processor's
	// cache: once here to count its newlines in [a-1, b-1) (from 0 for
	// the first chunk: the byte before a says whether a line starts at
	// a), once by the scan. Reading it once into a buffer of its size
	// costs more: the copies then go through main memory.
	from := max(j.a-1, 0)
	count, first := int64(0), int64(-1) // first: the first newline in [a-1, b-1)
	lastNL := false                     // byte b-1 is a newline
	var err error
	for off := from; off < j.b && err == nil; {
		piece := buf[:min(int64(len(buf)), j.b-off)]
		if err = readFull(m.r, piece, off); err != nil {
			break
		}
		body := piece
		if off+int64(len(piece)) == j.b {
			body = piece[:len(piece)-1]
			lastNL = piece[len(piece)-1] == '\n'
		}
		if first < 0 {
			if k := bytes.IndexByte(body, '\n'); k >= 0 {
				first = off + int64(k)
			}
		}
		count += int64(bytes.Count(body, []byte{'\n'}))
		off += int64(len(piece))
	}
	if err != nil {
		count = -1
	}
	// The newlines before a-1 come from the chunks before.
	before := int64(0)
	if j.prev != nil {
		select {
		case <-j.prev.counted:
		case <-m.ctx.Done():
			j.failed = true
			j.nlBefore = -1
			close(j.counted)
			return buf
		}
		before = j.prev.nlBefore
	}
	j.prev = nil
	if before < 0 || count < 0 {
		j.nlBefore = -1
	} else {
		j.nlBefore = before + count
	}
	close(j.counted)
	if err != nil || before < 0 {
		j.failed = true
		return buf
	}
	// The chunk's lines: those starting in [a, b).
	lines := int64(0) // lines before start
	if j.idx > 0 {
		if first < 0 {
			j.empty = true
			return buf
		}
		j.start = first + 1
		lines = before + 1 // the newline at start-1 is the first after a-1
	}
	j.end = j.b
	if j.b < m.size && (j.b == from || !lastNL) {
		// The line crossing b is the chunk's: find its end.
		end, err := m.lineEnd(j.b)
		if err != nil {
			j.failed = true
			return buf
		}
		j.end = end
	}
	rd := io.NewSectionReader(m.r, j.start, j.end-j.start)
	s := m.newScanner(rd, int(lines)+1)
	if j.idx > 0 {
		m.mu.Lock()
		if m.seed != nil && m.seedAt < j.idx {
			s.p.seed(m.seed, int(lines))
		}

		m.mu.Unlock()
	}
	gap, next := 1, s.p.lineNo+1
	for steps := 1; ; steps++ {
		more := s.step()
		if len(s.p.out) > 0 {
			j.crashes = append(j.crashes, s.p.out...)
			clear(s.p.out)
			s.p.out = s.p.out[:0]
		}
		if s.err != nil {
			j.failed = true
			return buf
		}
		if j.idx > 0 && s.p.lineNo >= next && s.p.idleBoundary() {
			j.snaps = append(j.snaps, chunkSnap{c: s.p.snapshot(), outs: len(j.crashes)})
			next = s.p.lineNo + gap
			gap = min(2*gap, maxSnapGap)
		}
		if !more {
			break
		}
		if steps%4096 == 0 && m.ctx.Err() != nil {
			j.failed = true
			return buf
		}
	}
	j.s = s
	return buf
}

// countPiece is the size of the reads that count a chunk's lines.
const countPiece = 128 << 10

// maxSnapGap is the most lines between two snapshots of a chunk's scan:
// they are taken at the first idle boundaries, then ever less often.
const maxSnapGap = 256

// lineEnd returns the offset after the first newline at or after off
// (the size of r when there is none).
func (m *merger) lineEnd(off int64) (int64, error) {
	var piece [32 << 10]byte
	for off < m.size {
		b := piece[:min(int64(len(piece)), m.size-off)]
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

// run is the in-order scan: it takes the chunks in order, continues its
// scanner into each until it can hand over, and yields the Crashes.
func (m *merger) run(yield func(*Crash, error) bool) {
	var (
		cur *Scanner // its state is the single pass's at pos
		pos int64
	)
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
		if cur == nil {
			cur = m.newScanner(nil, 1)
		}
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
			if cur == nil {
				cur = m.newScanner(nil, 1)
			}
			if ok, err := m.continueScan(cur, io.NewSectionReader(m.r, pos, m.size-pos), nil, emit); ok {
				finish(err)
			}
			return
		}
		if j.empty {
			continue
		}
		m.stats.Chunks++
		if cur == nil {
			// The first chunk: scanned from the start, its state is real.
			if !emit(j.crashes) {
				return
			}
			cur, pos = j.s, j.end
			m.publishSeed(j.idx, cur)
			continue
		}
		if pos != j.start {
			// Cannot happen: chunks follow each other at line starts.
			finish(fmt.Errorf("crashsig: parallel scan lost its place at byte %d (chunk at %d)", pos, j.start))
			return
		}
		ok, err := m.continueScan(cur, io.NewSectionReader(m.r, j.start, j.end-j.start), j, emit)
		if !ok {
			return
		}
		if err != nil {
			finish(err)
			return
		}
		if j.adopted {
			m.stats.Adopted++
			cur = j.s
		}
		pos = j.end
		j.crashes, j.snaps, j.s = nil, nil, nil
		m.publishSeed(j.idx, cur)
	}
	finish(m.parent.Err())
}

// continueScan reads the lines of rd with s, the in-order scanner, and
// emits what it finishes. With a chunk j it compares its state with j's
// snapshots at the same lines and, at the first equal one, emits j's
// Crashes after it and stops: j.adopted says so, and j.s is then the
// in-order scanner. It returns false when the consumer left, and the
// read or context error that stopped it.
func (m *merger) continueScan(s *Scanner, rd io.Reader, j *chunkJob, emit func([]*Crash) bool) (bool, error) {
	s.br.Reset(&holeSqueezer{r: rd})
	var snaps []chunkSnap
	if j != nil {
		snaps = j.snaps
	}
	k := 0
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
		for k < len(snaps) && snaps[k].c.lineNo < s.p.lineNo {
			k++
		}
		if k < len(snaps) && snaps[k].c.lineNo == s.p.lineNo && s.p.matches(&snaps[k].c) {
			j.adopted = true
			return emit(j.crashes[snaps[k].outs:]), nil
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

// publishSeed makes the in-order scanner's state at the end of chunk idx,
// the real one, the guess later chunks start from: what lasts long
// (banner, learned prefix, waiting events) rarely changes over the few
// chunks the workers are ahead, so chunks seeded with it usually agree
// with the in-order scan at their first snapshots. A guess from another
// chunk's own scan could be wrong and pass the error on to every chunk
// seeded from it.
func (m *merger) publishSeed(idx int, s *Scanner) {
	c := s.p.snapshot()
	c.hasPrevLine, c.prev = false, nil
	m.mu.Lock()
	m.seedAt, m.seed = idx, &c
	m.mu.Unlock()
}

// newScanner returns a synchronous Scanner numbering from line first,
// its read buffer no larger than a chunk needs (a line longer than the
// buffer is read the same way, see readLine).
func (m *merger) newScanner(r io.Reader, first int) *Scanner {
	opts := m.opts
	opts.FirstLine = first
	opts.fill()
	s := &Scanner{br: bufio.NewReaderSize(&holeSqueezer{r: r}, int(min(max(m.chunk, 4<<10), 256<<10)))}
	s.p.init(opts)
	return s
}
