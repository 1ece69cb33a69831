// Prefix learning: a prefix that a paste or a log shipper put before every
// line (timestamps, host names, line numbers) is learned from two lines
// and stripped from the lines after them.

package scan

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"
)

// maxPrefixBytes bounds a learned prefix.
const maxPrefixBytes = 8 << 10

// headerAnchors are the dump headers that may follow a prefix on their
// line: `*** ` and one of these.
var headerAnchors = []string{"Aborted at ", "SIG", "Signal ", "Query id: ", "is nereids: ", "tablet id: ", "Current BE git commitID: ", "Check failure stack trace"}

// headerAnchor returns the position of the first strong dump header in s,
// or -1.
func headerAnchor(s string) int {
	off := 0
	for off < len(s) {
		i := strings.Index(s[off:], "*** ")
		if i < 0 {
			return -1
		}
		i += off
		rest := s[i+4:]
		for _, h := range headerAnchors {
			if strings.HasPrefix(rest, h) {
				return i
			}
		}
		off = i + 4
	}
	return -1
}

// prefixLearner holds the prefix learned so far and the previous
// unrecognized line to learn from.
type prefixLearner struct {
	shape string // learned prefix; a run of digits stands for any run of digits
	// prev is the previous line (its first maxPrefixBytes+2 bytes). It is
	// prevBuf, or, when prevAlias, the line's bytes in the Scanner's read
	// buffer, which stay as they are until the Scanner reads through its
	// bufio.Reader again: Scanner.sync calls pin first, which copies them
	// (a copy per line was 4% of a scan of JVM chatter, issue 11). Only
	// setPrev and setPrevFrom write prev; never append to it (an alias's
	// capacity ends with it, but its bytes are the reader's).
	prev      []byte
	prevBuf   []byte
	prevAlias bool
	hasPrev   bool
	prevNo    int  // line number of prev
	prevIdle  bool // prev was dropped by the idle path (no incident saw it)
	prevCut   bool // prev is only the first maxPrefixBytes+2 bytes of its line
	// prevHits are the prefilter's anchors in prev, when prevScanned.
	prevHits    scanHits
	prevScanned bool
}

// sameAsPrev reports whether t, line no, is the line after prev and equal
// to it but for its digits (then learn would learn nothing from them, and
// the prefilter would find the same anchors).
func (l *prefixLearner) sameAsPrev(t []byte, no int) bool {
	return l.hasPrev && l.prevScanned && !l.prevCut && l.prevNo == no-1 && len(t) <= maxPrefixBytes && equalModDigits(l.prev, t)
}

// keep is learn for a line sameAsPrev: it becomes the previous line.
func (l *prefixLearner) keep(t []byte, no int, idle, stable bool) {
	l.setPrevFrom(t, stable)
	l.hasPrev, l.prevNo, l.prevIdle, l.prevCut, l.prevScanned = true, no, idle, false, false
}

// strip removes the learned prefix from t; it returns the rest and whether
// the prefix was there.
func (l *prefixLearner) strip(t []byte) ([]byte, bool) {
	if !l.mayStrip(t) {
		return t, false
	}
	return l.stripShape(t)
}

// mayStrip is strip's first test, inlined where every line is stripped
// (text): the shape may begin t (t's first byte is the shape's, or both
// are digits).
func (l *prefixLearner) mayStrip(t []byte) bool {
	return l.shape != "" && len(t) > 0 && (t[0] == l.shape[0] || isDigit(t[0]) && isDigit(l.shape[0]))
}

// stripShape is strip for a t that passed mayStrip.
func (l *prefixLearner) stripShape(t []byte) ([]byte, bool) {
	if n := matchPrefix(t, l.shape); n > 0 {
		return t[n:], true
	}
	return t, false
}

// learnAnchored learns the text before a dump header as the prefix when it
// ends with a blank and is not only digits (a run of digits alone would
// strip the start of too many lines). It reports whether it learned.
func (l *prefixLearner) learnAnchored(pre string) bool {
	if len(pre) > maxPrefixBytes || pre == "" || (pre[len(pre)-1] != ' ' && pre[len(pre)-1] != '\t') {
		return false
	}
	if lineNumberAnchor(pre) { // `106 *** Aborted at …` (format_misc.go)
		l.shape = pre
		return true
	}
	for i := 0; i < len(pre); i++ {
		if c := pre[i]; !isDigit(c) && c != ' ' && c != '\t' {
			l.shape = pre
			return true
		}
	}
	return false
}

// learn compares an unrecognized line with the previous one. It returns
// the length of the prefix learned from them (0 when none), else keeps t
// as the previous line (number no; idle when no incident saw it).
func (l *prefixLearner) learn(t []byte, no int, idle bool) int {
	return l.learnCmp(t, no, idle, false, false)
}

// relearnPrev returns the previous line without the prefix just learned
// from it, when no incident saw it: it may have been the first line of a
// dump. Only the start of a long line is kept: info.truncated says so, so
// that a dump read from it is marked cut. The returned bytes stay valid
// until the next call of learn.
func (l *prefixLearner) relearnPrev(no int) (rest []byte, info lineInfo, ok bool) {
	if !l.hasPrev && !l.prevIdle || !l.prevIdle || l.prevNo != no-1 || len(l.prev) == 0 {
		return nil, lineInfo{}, false
	}
	l.prevIdle, l.hasPrev = false, false
	rest, ok = l.strip(l.prev)
	if !ok {
		return nil, lineInfo{}, false
	}
	rest, _, _ = normalizeLine(rest)
	return rest, lineInfo{no: l.prevNo, prefixed: true, truncated: l.prevCut}, len(rest) > 0
}

// reprocessPrev hands the previous line, without the prefix just learned
// from it, to process when no incident saw it (relearnPrev) and it may
// matter. Between incidents a line that inert accepts changes nothing in
// process (the idle path of text skips such lines the same way), and most
// relearned lines are such: ordinary log lines behind a shipper's or a
// logger's prefix. Skipping them saves the copy and the assembler (on
// JVM chatter whose prefix changes every few lines, a tenth of the scan;
// issue 11).
//
// The previous line's anchors, when they are known and none, stand for
// those of its rest (subHits): the rest is not scanned again.
func (p *parser) reprocessPrev() {
	hits, scanned := p.subHits(p.pfx.prevHits, p.pfx.prevScanned)
	prev, info, ok := p.pfx.relearnPrev(p.lineNo)
	if !ok {
		return
	}
	if p.cur == nil {
		if _, inert := p.inert(unsafe.String(&prev[0], len(prev)), hits, scanned); inert {
			return
		}
	}
	p.process(prev, info)
}

// matchPrefix returns the length of the text matching shape at the start of
// t (digit runs match digit runs), or 0. A line that holds only the prefix
// with its trailing blanks trimmed (a blank line behind a prefix) matches.
func matchPrefix(t []byte, shape string) int {
	if n, ok := matchPrefixAligned(t, shape); ok {
		return n
	}
	i, j := 0, 0
	for i < len(shape) {
		// Words of the shape without a digit match equal words of t.
		for i+8 <= len(shape) && j+8 <= len(t) {
			w := word8(shape[i:])
			if digitBytes(w) != 0 || binary.LittleEndian.Uint64(t[j:]) != w {
				break
			}
			i, j = i+8, j+8
		}
		if i == len(shape) {
			break
		}
		if j >= len(t) {
			if strings.TrimRight(shape[i:], " \t") == "" {
				return j
			}
			return 0
		}
		c := shape[i]
		if isDigit(c) {
			if !isDigit(t[j]) {
				return 0
			}
			for i < len(shape) && isDigit(shape[i]) {
				i++
			}
			for j < len(t) && isDigit(t[j]) {
				j++
			}
			continue
		}
		if t[j] != c {
			return 0
		}
		i++
		j++
	}
	return j
}

// matchPrefixAligned is matchPrefix where each digit run of t under the
// shape has the length of the shape's (a timestamp with two-digit fields,
// a thread id of the same width): it compares eight bytes at a time, the
// shape's other bytes with t's, its digits with digits of t. ok false
// says that it could not decide: t is shorter than the shape, the shape
// shorter than a word, or t differs after a digit of the shape (t's digit
// run there may be longer or shorter: matchPrefix walks). When t differs
// before any digit of the shape, the walk would stop there too: no match.
func matchPrefixAligned(t []byte, shape string) (n int, ok bool) {
	if len(shape) < 8 || len(t) < len(shape) {
		return 0, false
	}
	digits := false // a digit of the shape before the word
	for i := 0; i < len(shape); i += 8 {
		i = min(i, len(shape)-8)
		w, x := word8(shape[i:]), binary.LittleEndian.Uint64(t[i:])
		d := digitBytes(w)
		// The high bit of each byte that differs where the shape has no
		// digit, or is no digit where the shape has one.
		bad := (^bytesBelow(w^x, 1)&swarHigh)&^d | d&^digitBytes(x)
		if bad != 0 {
			if digits || d&(bad&-bad-1) != 0 {
				return 0, false
			}
			return 0, true
		}
		digits = digits || d != 0
	}
	n = len(shape)
	if isDigit(shape[n-1]) {
		for n < len(t) && isDigit(t[n]) {
			n++
		}
	}
	return n, true
}

// timestampChars are the characters of a timestamp-like prefix.
const timestampChars = "0123456789 -:.,/+TZ[]"

// learnPrefix returns the length of the prefix b shares with a, up to and
// including its last separator, or 0. Digit runs compare equal to any
// digit run. The prefix stops early where a glog line or a prefix of a
// known family (which normalizeLine removes) begins: those are content.
// Two lines equal but for their digits (a retried allocation, a log loop)
// teach no prefix. It runs on every unrecognized idle line, so it is one
// pass without allocation.
func learnPrefix(a, b []byte) int { return learnPrefixCmp(a, b, false) }

// equalModDigits reports whether the walk of learnPrefix goes through both
// a and b to their ends: they are equal but for their runs of digits. It
// goes over equal bytes eight at a time and looks at digits only where the
// lines differ.
func equalModDigits(a, b []byte) bool {
	i, j := 0, 0
	for {
		for i+8 <= len(a) && j+8 <= len(b) {
			if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[j:]); x != 0 {
				d := bits.TrailingZeros64(x) >> 3
				i, j = i+d, j+d
				break
			}
			i, j = i+8, j+8
		}
		for i < len(a) && j < len(b) && a[i] == b[j] {
			i, j = i+1, j+1
		}
		// A difference or an end. Inside a run of digits (or where both
		// lines have one) the runs match whatever their digits and length.
		da, db := i < len(a) && isDigit(a[i]), j < len(b) && isDigit(b[j])
		if da && db || (da || db) && i > 0 && isDigit(a[i-1]) {
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			continue
		}
		return i == len(a) && j == len(b)
	}
}

// timestampChar marks the characters of a timestamp-like prefix.
var timestampChar = func() (t [256]bool) {
	for i := 0; i < len(timestampChars); i++ {
		t[timestampChars[i]] = true
	}
	return t
}()

// contentStarts reports whether b begins with a glog line or with a prefix
// normalizeLine knows: a learned prefix ends before either.
func contentStarts(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if _, _, _, ok := glogLine(unsafe.String(&b[0], len(b))); ok {
		return true
	}
	t, rl, pre := normalizeLine(b)
	if rl || pre && len(t) < len(b) {
		return true
	}
	v := unsafe.String(&b[0], len(b))
	r, _ := allRules.match(v, v, false)
	return r != nil
}

// subHits returns what inert may take for the anchors of a piece of a
// text (a substring of it: a learned prefix stripped, normalizeLine's
// repairs) whose anchors are h, when scanned: when h holds none but
// pf.always, neither does the piece (every literal in the piece is in the
// text, and its control bytes weigh no more), so the piece needs no scan
// of its own. Otherwise it returns 0, false: inert scans the piece.
func (p *parser) subHits(h scanHits, scanned bool) (scanHits, bool) {
	if scanned && p.pf != nil && h == p.pf.always {
		return h, true
	}
	return 0, false
}

// setPrev makes a copy of b the previous line.
func (l *prefixLearner) setPrev(b []byte) {
	l.prevBuf = append(l.prevBuf[:0], b...)
	l.prev, l.prevAlias = l.prevBuf, false
}

// setPrevFrom makes b the previous line: b itself when stable (b is in the
// Scanner's read buffer, unchanged until pin), else a copy.
func (l *prefixLearner) setPrevFrom(b []byte, stable bool) {
	if !stable {
		l.setPrev(b)
		return
	}
	l.prev, l.prevAlias = b[:len(b):len(b)], true
}

// pin copies the previous line out of the Scanner's read buffer before the
// buffer is read into again (Scanner.sync).
func (l *prefixLearner) pin() {
	if l.prevAlias {
		l.setPrev(l.prev)
	}
}
