package symbolize

import (
	"bytes"
	"slices"
)

// carried is everything a parser carries from one physical line to the
// next when no incident is open (an idle line boundary): what, together
// with the rest of the input, decides every later Crash. Two parsers
// whose carried states are equal at the same line boundary give the same
// incidents from there on, which is what ScanParallel relies on to hand
// over from one chunk's scan to the next (parallel.go).
//
// COMPLETENESS: a field added to parser or prefixLearner that outlives a
// line must be added here (snapshot, matches, seed), or the parallel scan
// may hand over between two parsers that differ. TestParallelEquivalence
// and FuzzParallel compare the parallel scan with the single pass and
// catch a missing field. What is not here, and why:
//   - parser.opts, parser.pf: the same for every chunk of one scan;
//   - parser.dem: a cache, its results do not depend on what it holds;
//   - parser.out: the Crashes already finished, taken at the boundary;
//   - parser.cur: nil at an idle boundary (only those are compared);
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
	c := carried{
		lineNo:  p.lineNo,
		banner:  p.banner,
		pending: slices.Clone(p.pending),
		shape:   p.pfx.shape,
	}
	l := &p.pfx
	if l.prevNo == p.lineNo {
		c.hasPrevLine = true
		c.prev = slices.Clone(l.prev)
		c.hasPrev, c.prevIdle, c.prevCut, c.prevScanned = l.hasPrev, l.prevIdle, l.prevCut, l.prevScanned
		if l.prevScanned {
			c.prevHits = l.prevHits
		}
	}
	return c
}

// matches reports whether the parser, at an idle boundary, carries
// exactly the state c (a snapshot taken at the same boundary by another
// parser over the same bytes). It allocates nothing.
func (p *parser) matches(c *carried) bool {
	if p.cur != nil || p.lineNo != c.lineNo || p.banner != c.banner || p.pfx.shape != c.shape {
		return false
	}
	if !slices.Equal(p.pending, c.pending) {
		return false
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

// seed gives a fresh parser, about to read the line after lineNo, the
// long-lived part of c — banner, pending events, learned prefix — taken
// from another place of the same input: a guess at its real state there
// that a later snapshot comparison confirms or refutes (ScanParallel).
// It changes nothing a single pass does.
func (p *parser) seed(c *carried, lineNo int) {
	p.lineNo = lineNo
	p.banner = c.banner
	p.pending = append(p.pending[:0], c.pending...)
	p.pfx.shape = c.shape
}
