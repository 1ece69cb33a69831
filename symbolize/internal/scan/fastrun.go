package scan

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unsafe"
)

// Runs of repeated lines (issue 11). A log loop writes one line again and
// again with other numbers in it: `start time: …` at every restart of a
// crash-looping process, a retried allocation, a DEBUG line per request.
// Each of them costs the scanner its fixed cost per line (read, repairs,
// glog test, anchor scan, rules), several times what `grep -c` spends on
// it. After a line, skipRepeats looks at the bytes already read: when the
// next lines are the same line with other digits (the same length, the
// same bytes but where both have a digit; compared eight bytes at a time)
// and the state the line left is one that such a line leaves unchanged,
// those lines are counted and skipped, and the state is set to the one
// processing them would leave.
//
// Why a skipped line changes nothing. Call P the line just processed, S
// the parser's state after it, and P' a line of the run: P with some
// digits replaced by digits (no length change, so the digits and the
// other bytes sit at the same places). repeatFixed accepts S and P only
// when text (scan.go) takes, for P', one of three paths whose every
// decision is the same for P and P' and whose end state is S again but
// for the line number and the prefix learner's previous line:
//
//  1. normalizeLine changes nothing: every test normalizeLine makes (its
//     prefixes, the trailing CR) compares bytes with non-digit constants
//     or asks isDigit, which answer the same on P and P'
//     (TestNormalizeDigitBlind, on every line repeatFirstByte lets by);
//  2. the learned prefix does not strip it: matchPrefix compares digit
//     runs with digit runs and other bytes exactly (same answer);
//  3. mayStart lets it through: glogLine needs I, W, E or F as the first
//     byte (P's first byte, a blank or its first non-blank byte, is none
//     of them, so P''s is none of them either);
//  4. its anchors are none (scan(P) == 0: no literal, no binary weight, no
//     `*** `, no repair marker). The scan literals have no digits, a digit
//     is never a chosen byte and weighs nothing, and the byte after a
//     chosen one is tested against a set with no digit unless it holds
//     every byte: scan(P') == scan(P) == 0;
//  5. the rule that wins is the same (blindMatch): when P's first
//     non-blank byte c is no digit, the same rules byFirst[c] are tried in
//     the same order; when it is one, P''s is another digit, and a rule of
//     byFirst of a digit has a digit in its prefix (there is none today),
//     which stops the fast path like any rule whose prefix or bare form
//     has a digit; a digit-free prefix is at the start of P' iff at the start of
//     P; a rule's required literals are digit-free (bestTerm), so whether
//     its expression runs is the same; when an expression would run the
//     fast path stops (its answer may depend on the digits); with no
//     anchors no contains rule runs;
//  6. the kind k then decides, as in text:
//     - kStart: the line resets the banner and the pending events and
//     forgets the previous line; S must already be so;
//     - kOther (c is not in headerlessStartBytes, so inertKind is true;
//     or c is a digit and the first digit run is not followed by `#`, so
//     neither P nor P' is a boost frame, a fragment's frame or anything
//     else startsIncident opens, and inertKind is true again): the line
//     is inert and learnable: with S's previous line P itself
//     (prevNo the current line, scanned with hits 0, not cut, idle), P'
//     is sameAsPrev, and keep makes P' the previous line, numbered as it,
//     setting nothing else that S does not hold already;
//     - any other kind that is inert by its kind alone (no context event,
//     opens no incident, not kBanner or kTcmalloc, not learnable): the
//     line forgets the previous line; S must already be so.
//
// So after a run of such lines the state is S with the line number of the
// last one and, on the kOther path, that line as the learner's previous
// line, numbered as it: skipRepeats sets exactly that, so the state after
// every step is the one the full path gives (the snapshots of
// ScanParallel, parallel_state.go, compare equal to it).
//
// skipRepeats adds no state to the parser: it decides from S and P alone,
// right after P, and only moves the reader, the line number and the
// learner's previous line. It only runs when the Scanner reads
// synchronously (not live) and with the prefilter (the reference path
// without it, pf nil, never skips, so the equivalence tests compare the
// fast path with the full one). TestRepeatSkipEquivalence and
// FuzzRepeatSkip check it.

// maxRunLine bounds the lines skipRepeats looks for repeats of.
const maxRunLine = 1024

// Where a skip ends. A skip ends at the end of the run or of the junk,
// where the reader's buffer ends, or after a line whose bytes hash to a
// chosen value (one line in 256: stopHash). The last rule makes two scans
// of the same bytes read with other buffer boundaries and other line
// numbers (ScanParallel's chunk scans and its in-order scan, parallel.go)
// end steps after the same lines inside long runs and junk, so that their
// snapshots, taken at the end of steps, can be compared there.

// stopHash reports whether a skip ends after a line whose words fold to h.
func stopHash(h uint64) bool { return (h*0x9e3779b97f4a7c15)>>56 == 0 }

// skipRepeats is called by Scanner.step after the physical line line was
// processed (err is the error of its read): it skips the following lines
// already in the reader's buffer that repeat line but for their digits
// when they would change nothing (see above), or that are binary junk
// the full path would skip (skipJunk).
func (s *Scanner) skipRepeats(line []byte, truncated bool, err error) {
	// Inlined in step: a line that starts with a glog severity letter
	// (most of a be.INFO) costs no call. Such a line is no run skipRun
	// takes (repeatFirstByte) and, as a gate, no junk.
	if len(line) >= 8 && !glogSeverity[line[0]] {
		s.skipAfter(line, truncated, err)
	}
}

// glogSeverity marks the severity letters that begin a glog line.
var glogSeverity = [256]bool{'I': true, 'W': true, 'E': true, 'F': true}

// skipAfter is skipRepeats past its cheap tests.
func (s *Scanner) skipAfter(line []byte, truncated bool, err error) {
	if err != nil || truncated || s.live != nil || s.p.pf == nil || s.p.cur != nil {
		return
	}
	// The lines after line that are read already (Peek reads nothing).
	buf := s.buffered()
	// skipRun's and skipJunk's first tests, without their calls: the next
	// line has line's length, or one of the two looks binary.
	if n := len(line); n <= maxRunLine && len(buf) > n && buf[n] == '\n' && s.skipRun(line, buf) {
		return
	}
	if looksBinary(line) || looksBinary(buf) {
		s.skipJunk(line, buf)
	}
}

// skipRun skips the lines that repeat line (see above) in buf, the bytes
// buffered after it; it reports whether it could try.
func (s *Scanner) skipRun(line, buf []byte) bool {
	p := &s.p
	n := len(line)
	if n < 8 || n > maxRunLine || len(buf) <= n || buf[n] != '\n' || !repeatFirstByte(line) {
		return false
	}
	if !repeatsLine(buf, line) {
		return false
	}
	fixed, learner := p.repeatFixed(line)
	if !fixed {
		return false
	}
	k := countRepeats(buf, line)
	if k == 0 {
		return false
	}
	if learner {
		// keep: the last line skipped is the previous line.
		last := buf[(k-1)*(n+1) : (k-1)*(n+1)+n]
		p.pfx.setPrev(last)
		p.pfx.prevNo = p.lineNo + k
	}
	p.lineNo += k
	// The bytes are buffered: Discard drops them all (it reads nothing).
	s.skip(k * (n + 1))
	return true
}

// repeatFirstByte is the cheap first test of repeatFixed: the line's
// first non-blank byte is no glog severity and no headerless start; a
// digit only when the first digit run is not followed by `#` (steps 3, 6).
func repeatFirstByte(line []byte) bool {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i == len(line) {
		return false
	}
	switch c := line[i]; {
	case c == 'I', c == 'W', c == 'E', c == 'F', c == '@', c == '#':
		return false
	case isDigit(c):
		// A date or a time (`2025-03-03 10:15:09,145 INFO …`, a Java
		// logger's line) leads with digits; a boost frame (`0# …`) or a
		// fragment's frame (`12# …`) leads with digits and `#`: only the
		// byte after the first digit run tells them apart, and digits
		// replaced by digits keep it where it is (step 6).
		j := digitRunEnd(unsafe.String(&line[0], len(line)), i)
		return j < len(line) && line[j] != '#'
	}
	return true
}

// repeatFixed reports whether the parser's state is one that a line equal
// to line but for its digits leaves unchanged (but for the line number
// and the prefix learner's previous line), line being the physical line
// just processed; learner says that the learner's previous line moves
// with the run. See the proof above; the numbers are its steps.
func (p *parser) repeatFixed(line []byte) (fixed, learner bool) {
	if p.cur != nil || !repeatFirstByte(line) || bytes.IndexByte(line, 0) >= 0 {
		return false, false
	}
	// 1, 2.
	if text, rl, prefixed := normalizeLine(line); rl || prefixed || len(text) != len(line) {
		return false, false
	}
	if _, ok := p.pfx.strip(line); ok {
		return false, false
	}
	view := unsafe.String(&line[0], len(line))
	// 4.
	if p.pf.scan(view) != 0 {
		return false, false
	}
	// 5.
	r, blind := p.pf.blindMatch(trimBlanks(view))
	if !blind {
		return false, false
	}
	k := kOther
	if r != nil {
		k = r.kind
	}
	// 6.
	l := &p.pfx
	switch {
	case k == kStart:
		return !l.hasPrev && p.banner == (banner{}) && len(p.pending) == 0, false
	case k == kOther:
		return l.hasPrev && l.prevScanned && l.prevHits == 0 && !l.prevCut && l.prevIdle &&
			l.prevNo == p.lineNo && len(line) <= maxPrefixBytes && bytes.Equal(l.prev, line), true
	case k != kBanner && k != kTcmalloc && !learnable(k) && !isContextEvent(k) && !startsIncident(k, view, p):
		return !l.hasPrev, false
	}
	return false, false
}

// blindMatch is prefilter.match on a line without anchors (scan == 0),
// for a rule whose outcome does not depend on the line's digits: it
// returns the rule that wins (nil: none), and blind false when the
// outcome may depend on the digits (a rule with digits in its prefix, or
// an expression that would run).
func (pf *prefilter) blindMatch(trimmed string) (*lineRule, bool) {
	if trimmed == "" {
		return nil, true
	}
	for i := range pf.byFirst[trimmed[0]] {
		pr := &pf.byFirst[trimmed[0]][i]
		r := pr.r
		if hasDigit(r.prefix) || hasDigit(r.bare) {
			return nil, false
		}
		if !strings.HasPrefix(trimmed, r.prefix) && !(r.bare != "" && strings.HasPrefix(trimmed, r.bare)) {
			continue
		}
		if r.re == nil {
			return r, true
		}
		if !pr.needs(trimmed) {
			continue
		}
		return nil, false
	}
	return nil, true
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// countRepeats returns how many lines at the start of buf repeat line:
// line with some digits replaced by digits, then a newline. Words equal
// to line's cost one comparison; in the others the bytes that differ must
// be where line has digits, and be digits. It stops after a line whose
// words fold to a stopHash.
func countRepeats(buf, line []byte) int {
	if hasAVX2 && len(line) >= 32 {
		var vp vecPattern
		vp.prepare(line)
		return countRepeatsAVX2(buf, &vp)
	}
	var rp repeatPattern
	rp.prepare(line)
	return countRepeatsWords(buf, &rp)
}

// countRepeatsWords is countRepeats eight bytes at a time, with line
// prepared in rp.
func countRepeatsWords(buf []byte, rp *repeatPattern) int {
	n, nw := rp.n, rp.nw
	words, digit, offs := rp.words[:nw], rp.digit[:nw], rp.off[:nw]
	k := 0
	for off := 0; off+n < len(buf) && buf[off+n] == '\n'; off += n + 1 {
		// The line's words are loaded without bounds checks: off+n < len(buf)
		// and every offs[i]+8 <= n (prepare), so each load is inside buf.
		b := unsafe.Pointer(unsafe.SliceData(buf[off:]))
		var h uint64
		for i, y := range words {
			x := binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(b, offs[i])), 8))
			h ^= x
			if x != y {
				m := digit[i]
				xm := x & m
				if (x^y)&^m != 0 || xm&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030&m ||
					(xm&0x0f0f0f0f0f0f0f0f+0x0606060606060606&m)&0x1010101010101010 != 0 {
					return k
				}
			}
		}
		k++
		if stopHash(h) {
			break
		}
	}
	return k
}

// repeatsLine is countRepeats for one line, without preparing a pattern: the
// test of the line after the one just processed.
func repeatsLine(b, t []byte) bool {
	n := len(t)
	if len(b) <= n || b[n] != '\n' {
		return false
	}
	for i := 0; i < n; i += 8 {
		i = min(i, n-8)
		if x, y := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(t[i:]); x != y && !digitsDiffer(x, y) {
			return false
		}
	}
	return true
}

// repeatPattern is a line prepared for countRepeats: its eight-byte words
// (the last one overlapping the one before when the length is not a
// multiple of eight), their offsets and, for each, the mask of its digit
// bytes.
type repeatPattern struct {
	n, nw int
	words [repeatMaxWords]uint64
	digit [repeatMaxWords]uint64 // 0xff in each byte that is a digit
	off   [repeatMaxWords]int
}

// prepare sets the pattern to t (8 <= len(t) <= maxRunLine).
func (rp *repeatPattern) prepare(t []byte) {
	rp.n, rp.nw = len(t), 0
	for _, i := range repeatWords(len(t), rp.off[:0]) {
		w := binary.LittleEndian.Uint64(t[i:])
		rp.words[rp.nw] = w
		rp.digit[rp.nw] = digitBytes(w) >> 7 * 0xff
		rp.off[rp.nw] = i
		rp.nw++
	}
}

// repeatMaxWords bounds the words of a line (repeatWords): four for each
// of its 32-byte blocks.
const repeatMaxWords = 4 * (maxRunLine/32 + 1)

// repeatWords appends to off the offsets of the eight-byte words of a
// line of n bytes (8 <= n <= maxRunLine) that countRepeats compares and
// whose XOR is the line's stop hash (stopHash): every eighth byte, the
// last word ending at the line's end; from 32 bytes on, the words of the
// 32-byte blocks of vecPattern (at 0, 32, 64, …, the last block ending at
// the line's end), so that the vector compare (countRepeatsAVX2) and the
// word compare fold the same words into the hash.
func repeatWords(n int, off []int) []int {
	if n < 32 {
		for i := 0; i < n; i += 8 {
			off = append(off, min(i, n-8))
		}
		return off
	}
	for b := 0; b < n; b += 32 {
		b = min(b, n-32)
		off = append(off, b, b+8, b+16, b+24)
	}
	return off
}

// vecPattern is a line of 32 bytes or more prepared for
// countRepeatsAVX2: its 32-byte blocks (the last one overlapping the one
// before when the length is not a multiple of 32), their offsets, for
// each a mask of its digit bytes. The assembly reads it by the offsets
// checked in TestVecPatternLayout.
type vecPattern struct {
	n, nb int
	off   [maxRunLine/32 + 1]int
	pat   [maxRunLine/32 + 1][32]byte
	dig   [maxRunLine/32 + 1][32]byte // 0xff where pat holds a digit
}

// prepare sets the pattern to t (32 <= len(t) <= maxRunLine).
func (vp *vecPattern) prepare(t []byte) {
	vp.n, vp.nb = len(t), 0
	for b := 0; b < len(t); b += 32 {
		b = min(b, len(t)-32)
		vp.off[vp.nb] = b
		copy(vp.pat[vp.nb][:], t[b:b+32])
		for i, c := range t[b : b+32] {
			if isDigit(c) {
				vp.dig[vp.nb][i] = 0xff
			}
		}
		vp.nb++
	}
}

const (
	swarLow7 = 0x7f7f7f7f7f7f7f7f
	swarHigh = 0x8080808080808080
	swarOnes = 0x0101010101010101
)

// digitsDiffer reports whether every byte in which the words x and y
// differ is a digit in both.
func digitsDiffer(x, y uint64) bool {
	d := x ^ y
	diff := ((d & swarLow7) + swarLow7 | d) & swarHigh // high bit of each differing byte
	return diff&^(digitBytes(x)&digitBytes(y)) == 0
}

// digitBytes sets the high bit of each byte of x that is an ASCII digit.
func digitBytes(x uint64) uint64 {
	return bytesBelow(x, '9'+1) &^ bytesBelow(x, '0')
}

// bytesBelow sets the high bit of each byte of x below n (1 <= n <= 0x80):
// exact, no carry crosses a byte.
func bytesBelow(x uint64, n uint64) uint64 {
	return ^((x & swarLow7) + (0x80-n)*swarOnes | x) & swarHigh
}

// Binary junk (a core or a compressed file cat'ed into a log, random
// bytes): between incidents the full path reads each line, repairs it,
// looks for NUL runs and anchors until its control bytes make it junk
// (isJunk), and skips it: the only state it touches is the prefix
// learner's previous line, forgotten (hasPrev false), or nothing (a line
// empty after its repairs). skipJunk skips, in the read buffer, the
// complete lines that the full path would skip so, while the state is
// idle, and sets what they would set: the line number and, when one of
// them was not empty, hasPrev false. junkLine decides for one line with
// the same tests text (scan.go) makes, in the same order (the first line
// after a learned one could be sameAsPrev, which junkLine checks: later
// ones cannot, the previous line being older than the line before them).
// TestJunkSkipEquivalence (incidents and the carried state after every
// step) and FuzzJunkSkip compare it with the full path.

// skipJunk skips the junk lines after line (see above) when line or the
// next one looks like junk (looksBinary: a cheap gate, so that text lines
// cost little more; the next line too, so that the first junk line after
// a line of text, as random bytes have every few lines, does not take the
// full path).
func (s *Scanner) skipJunk(line, buf []byte) {
	p := &s.p
	if !looksBinary(line) && !looksBinary(buf) {
		return
	}
	off, k, forgets := 0, 0, false
	for {
		st := junkScan(buf[off:]) // junkscan.go: the newline and the bytes before it in one pass
		nl := st.nl
		if nl < 0 || nl > p.opts.MaxLineBytes {
			break
		}
		skip, f := p.junkLineStats(buf[off:off+nl], &st, p.lineNo+k+1)
		if !skip {
			break
		}
		forgets = forgets || f
		off += nl + 1
		k++
		if junkStop(buf[off-nl-1 : off-1]) {
			break
		}
	}
	if k == 0 {
		return
	}
	p.lineNo += k
	if forgets {
		p.pfx.hasPrev = false
	}
	s.skip(off)
}

// looksBinary reports whether the first 16 bytes of line hold a byte
// below a blank (a tab too: it is only a gate; junkLine decides).
func looksBinary(line []byte) bool {
	if len(line) < 16 {
		return false
	}
	x, y := binary.LittleEndian.Uint64(line), binary.LittleEndian.Uint64(line[8:])
	// Some byte below 0x20: the classic test, exact for "any".
	return ((x-0x2020202020202020)&^x|(y-0x2020202020202020)&^y)&swarHigh != 0
}

// junkLine reports whether text (scan.go), idle, skips the physical line
// b, numbered no, changing nothing but the line number and, when forgets,
// the prefix learner's hasPrev (set false). b is a whole line, not cut
// (len(b) <= MaxLineBytes).
func (p *parser) junkLine(b []byte, no int) (skip, forgets bool) {
	st := junkScanFrom(b, 0, junkStats{nl: -1, nul: -1})
	return p.junkLineStats(b, &st, no)
}

// junkLineStats is junkLine given the junkStats of b.
func (p *parser) junkLineStats(b []byte, st *junkStats, no int) (skip, forgets bool) {
	// physical: a NUL run of minHole or more cuts the line (holes).
	if st.hole != 0 {
		return false, false
	}
	text, _, _ := normalizeLine(b)
	text, stripped := p.pfx.strip(text)
	if stripped {
		text, _, _ = normalizeLine(text)
	}
	if len(text) == 0 {
		return true, false // text returns at once
	}
	view := unsafe.String(&text[0], len(text))
	if _, _, _, ok := glogLine(view); ok {
		return false, false // mayStart would look at it
	}
	if !stripped && no == p.lineNo+1 && p.pfx.sameAsPrev(text, no) {
		// The previous line's anchors are taken. (Only the first line
		// after it can be sameAsPrev: prevNo is at most p.lineNo.)
		return false, false
	}
	// Binary when it holds a NUL or its control bytes weigh binaryLimit
	// (scanFrom's early stop); then skipped when isJunk. text is the end of
	// b (repairs cut a start and a CR).
	start := cap(b) - cap(text)
	if start == 0 {
		// text is b, or b but its last byte, a CR: it weighs nothing and
		// is in no `*** `, so b's figures are text's.
		if st.nul < 0 && st.ctl < binaryLimit {
			return false, true
		}
		_, _, _, glog := glogLine(trimBlanks(view))
		return st.star == 0 && !glog, true // isJunk
	}
	// b's first NUL is in text when it is at or after text's start.
	hasNUL := st.nul >= 0 && (st.nul >= start || strings.IndexByte(view, 0) >= 0)
	return (hasNUL || weighsBinary(view)) && isJunk(view), true
}

// junkStop is stopHash for a junk line: its length and its first and last
// eight bytes.
func junkStop(b []byte) bool {
	h := uint64(len(b))
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b) ^ binary.LittleEndian.Uint64(b[len(b)-8:])<<1
	}
	return stopHash(h)
}

// weighsBinary is isBinary stopping as soon as the weight is reached.
func weighsBinary(s string) bool {
	w := 0
	for i := 0; i < len(s); i++ {
		if w += int(binaryWeight[s[i]]); w >= binaryLimit {
			return true
		}
	}
	return false
}
