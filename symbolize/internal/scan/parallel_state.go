package scan

import (
	"bytes"
)

// carried is everything a parser carries from one physical line to the
// next when no incident is open (an idle line boundary): what, together
// with the rest of the input, decides every later Crash. Two parsers
// whose carried states are equal at the same line boundary give the same
// incidents from there on, which is what ScanParallel relies on to hand
// over from one chunk's scan to the next (parallel.go).
//
// COMPLETENESS: a field added to parser or prefixLearner that outlives a
// line must be added here (snapshotInto, matchesAt, restore), or the
// parallel scan may skip ahead into a state that differs from the single
// pass's. TestCarriedFields fails on any new field until it is placed;
// TestParallelEquivalence and FuzzParallel compare the parallel scan with
// the single pass. What is not here, and why:
//   - parser.opts, parser.pf: the same for every chunk of one scan;
//   - parser.dem: a cache, its results do not depend on what it holds;
//   - parser.out: the Crashes already finished, taken at the boundary;
//   - parser.cur: nil at an idle boundary (only those are compared);
//   - parser.stable: set by the Scanner for each line before it is read;
//   - prefixLearner.prevBuf, prevAlias: where prev's bytes are kept (its
//     own buffer, or the Scanner's read buffer until the Scanner syncs);
//     prev's bytes are what is carried;
//   - the Scanner's reader: chunks start at line starts, where the
//     holeSqueezer holds no NUL run and the bufio.Reader no partial line.
type carried struct {
	// lineNo is the number of the last line read.
	lineNo  int
	banner  banner
	pending []Event
	shape   string
	// The previous line of the prefix learner matters only when it is the
	// line just read (every use of it checks prevNo == lineNo-1 for the
	// next line, see prefixLearner); hasPrevLine says so, and the prev*
	// fields are kept only then.
	hasPrevLine bool
	prev        []byte
	hasPrev     bool
	prevIdle    bool
	prevCut     bool
	prevScanned bool
	// prevHits matters only when prevScanned.
	prevHits scanHits
}

// idleBoundary says whether the parser is between incidents after a
// physical line: the state a snapshot may be taken of.
func (p *parser) idleBoundary() bool { return p.cur == nil }

// snapshot returns a copy of the carried state (at an idle boundary).
func (p *parser) snapshot() carried {
	var c carried
	p.snapshotInto(&c)
	return c
}

// snapshotInto is snapshot into c, reusing its slices.
func (p *parser) snapshotInto(c *carried) {
	l := &p.pfx
	*c = carried{
		lineNo:  p.lineNo,
		banner:  p.banner,
		pending: append(c.pending[:0], p.pending...),
		shape:   l.shape,
		prev:    c.prev[:0],
	}
	if l.prevNo == p.lineNo {
		c.hasPrevLine = true
		c.prev = append(c.prev, l.prev...)
		c.hasPrev, c.prevIdle, c.prevCut, c.prevScanned = l.hasPrev, l.prevIdle, l.prevCut, l.prevScanned
		if l.prevScanned {
			c.prevHits = l.prevHits
		}
	}
}

// matches reports whether the parser, at an idle boundary, carries
// exactly the state c (a snapshot taken at the same boundary by another
// parser over the same bytes, numbering lines as this one).
func (p *parser) matches(c *carried) bool { return p.matchesAt(c, 0) }

// matchesAt is matches for a snapshot of a parser that numbered its
// lines base lower. It allocates nothing.
func (p *parser) matchesAt(c *carried, base int) bool {
	if p.cur != nil || p.lineNo != base+c.lineNo || p.banner != c.banner || p.pfx.shape != c.shape {
		return false
	}
	if len(p.pending) != len(c.pending) {
		return false
	}
	for i, e := range c.pending {
		if q := p.pending[i]; q.Line != base+e.Line || q.Kind != e.Kind || q.Text != e.Text {
			return false
		}
	}
	l := &p.pfx
	if (l.prevNo == p.lineNo) != c.hasPrevLine {
		return false
	}
	if !c.hasPrevLine {
		return true
	}
	if !bytes.Equal(l.prev, c.prev) || l.hasPrev != c.hasPrev || l.prevIdle != c.prevIdle || l.prevCut != c.prevCut || l.prevScanned != c.prevScanned {
		return false
	}
	return !l.prevScanned || l.prevHits == c.prevHits
}

// restore puts the parser, between incidents, in the state c, its line
// numbers moved up by base: the state a parser that matched c at an
// earlier boundary has at c's boundary after reading the same lines (the
// parser depends on differences of line numbers only).
func (p *parser) restore(c *carried, base int) {
	p.cur = nil
	p.lineNo = base + c.lineNo
	p.banner = c.banner
	p.pending = p.pending[:0]
	for _, e := range c.pending {
		e.Line += base
		p.pending = append(p.pending, e)
	}
	p.pfx.shape = c.shape
	l := &p.pfx
	if !c.hasPrevLine {
		// No use of the previous line looks at one older than the line
		// just read.
		l.prevNo, l.hasPrev, l.prevIdle = -1, false, false
		return
	}
	l.setPrev(c.prev)
	l.prevNo = p.lineNo
	l.hasPrev, l.prevIdle, l.prevCut, l.prevScanned, l.prevHits = c.hasPrev, c.prevIdle, c.prevCut, c.prevScanned, c.prevHits
}

// seed gives a fresh parser the long-lived part of c — banner and learned
// prefix — taken from another place of the same input: a guess at its
// state there that a later snapshot comparison confirms or refutes
// (ScanParallel). It changes nothing a single pass does.
func (p *parser) seed(c *carried) {
	p.banner = c.banner
	p.pfx.shape = c.shape
}
