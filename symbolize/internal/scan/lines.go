package scan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"
)

// lineInfo is one input line after paste repair (§2 of the formats spec).
// text is what the recognizers see; raw is kept for display.
type lineInfo struct {
	no            int    // 1-based line number in the input
	text          string // normalized text
	runtimeLogger bool   // a `RuntimeLogger ` prefix was removed
	prefixed      bool   // a quote/timestamp/syslog prefix was removed
	truncated     bool   // the physical line was longer than the limit and was cut
}

// normalizeLine strips the transport damage of §2 from one physical line:
// trailing CR, Markdown quote markers, code fences, K8s/CI/syslog/dmesg
// timestamp prefixes and the Doris console `RuntimeLogger ` prefix. It
// keeps leading whitespace (it carries meaning in frame lines).
func normalizeLine(b []byte) (text []byte, runtimeLogger, prefixed bool) {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if len(b) == 0 {
		return b, false, false
	}
	for range 4 { // prefixes can stack: "> 2025-…Z RuntimeLogger F…"
		if len(b) == 0 {
			break
		}
		switch c := b[0]; {
		case c == '>':
			// Markdown quote: "> text", ">text", ">" (possibly nested).
			i := 1
			for i < len(b) && (b[i] == '>' || (b[i] == ' ' && i == 1)) {
				i++
			}
			if i < len(b) && b[i] == ' ' && b[i-1] == '>' {
				i++
			}
			b = b[i:]
			prefixed = true
			continue
		case c == '`':
			if bytes.HasPrefix(b, []byte("```")) {
				return nil, runtimeLogger, true // fence line: treat as blank
			}
		case c == '{':
			if bytes.HasPrefix(b, []byte("{code")) || bytes.HasPrefix(b, []byte("{noformat")) {
				return nil, runtimeLogger, true
			}
		case c >= '0' && c <= '9':
			if n := isoTimestampPrefix(b); n > 0 {
				b = b[n:]
				prefixed = true
				continue
			}
			if n := clockPrefix(b); n > 0 {
				b = b[n:]
				prefixed = true
				continue
			}
		case c == '[':
			// markdownLink's expression needs `](` after at most 64
			// bytes without a bracket: the first `]` is that one.
			if i := bytes.IndexByte(b[:min(len(b), 66)], ']'); i > 0 && i+1 < len(b) && b[i+1] == '(' {
				if n := markdownLink(b); n > 0 { // format_misc.go
					b = b[n:]
					prefixed = true
					continue
				}
			}
			if n := dmesgPrefix(b); n > 0 {
				b = b[n:]
				prefixed = true
				continue
			}
		case c == 'R':
			if bytes.HasPrefix(b, []byte("RuntimeLogger ")) {
				b = b[len("RuntimeLogger "):]
				runtimeLogger = true
				continue
			}
		case c >= 'A' && c <= 'Z':
			if n := syslogPrefix(b); n > 0 {
				b = b[n:]
				prefixed = true
				continue
			}
		}
		break
	}
	return b, runtimeLogger, prefixed
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isoTimestampPrefix recognizes K8s/docker/CI prefixes:
// `2025-03-03T10:15:02.118Z `, `2025-03-03T10:15:02.118123456+08:00 stdout F `.
func isoTimestampPrefix(b []byte) int {
	if len(b) < 21 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return 0
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if !isDigit(b[i]) {
			return 0
		}
	}
	i := 19
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	switch {
	case i < len(b) && b[i] == 'Z':
		i++
	case i+5 < len(b) && (b[i] == '+' || b[i] == '-'):
		i++
		for i < len(b) && (isDigit(b[i]) || b[i] == ':') {
			i++
		}
	}
	if i >= len(b) || b[i] != ' ' {
		return 0
	}
	i++
	// CRI log format: "stdout F " / "stderr P ".
	if rest := b[i:]; len(rest) >= 9 && (bytes.HasPrefix(rest, []byte("stdout ")) || bytes.HasPrefix(rest, []byte("stderr "))) && (rest[7] == 'F' || rest[7] == 'P') && rest[8] == ' ' {
		i += 9
	}
	return i
}

// dmesgPrefix recognizes `[12345.678901] ` and `[Thu Apr 24 17:02:22 2025] `.
func dmesgPrefix(b []byte) int {
	end := bytes.IndexByte(b, ']')
	if end < 3 || end > 40 || end+1 >= len(b) || b[end+1] != ' ' {
		return 0
	}
	in := b[1:end]
	digits, colons := 0, 0
	for _, c := range in {
		switch {
		case isDigit(c):
			digits++
		case c == ':':
			colons++
		case c == '.' || c == ' ' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'):
		default:
			return 0
		}
	}
	// "[12345.678901]" or a date with a time of day.
	if bytes.IndexByte(in, '.') > 0 && colons == 0 && digits >= 4 && !bytes.ContainsAny(in, " ") {
		return end + 2
	}
	if colons == 2 && digits >= 8 {
		return end + 2
	}
	return 0
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// syslogPrefix recognizes `Mar  3 10:15:02 host prog[123]: ` and
// `Mar  3 10:15:02 host kernel: `.
func syslogPrefix(b []byte) int {
	if len(b) < 20 || b[3] != ' ' || b[6] != ' ' || b[9] != ':' || b[12] != ':' || b[15] != ' ' {
		return 0
	}
	ok := false
	for _, m := range months {
		if string(b[:3]) == m {
			ok = true
			break
		}
	}
	if !ok {
		return 0
	}
	// host, then tag ending in ": "
	rest := b[16:]
	sp := bytes.IndexByte(rest, ' ')
	if sp <= 0 {
		return 0
	}
	tag := rest[sp+1:]
	colon := bytes.Index(tag, []byte(": "))
	if colon <= 0 || colon > 64 || bytes.IndexByte(tag[:colon], ' ') >= 0 {
		return 0
	}
	return 16 + sp + 1 + colon + 2
}

// unescapeHTML undoes the entities seen in scraped pastes.
func unescapeHTML(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return htmlReplacer.Replace(s)
}

var htmlReplacer = strings.NewReplacer(htmlEntities...)

// splitCollapsed splits a line that holds a whole dump (pastes that lost
// their newlines: `*** Aborted at … *** *** SIGSEGV … *** 0# … 1# …`) into
// logical lines. It returns nil when the line is not collapsed.
func splitCollapsed(s string) []string {
	if !splitCandidate(s) {
		return nil
	}
	var cuts []int
	for _, loc := range collapsedMarker.FindAllStringSubmatchIndex(s, 4096) {
		cut := loc[2] // start of the marker group
		if cut > 0 {
			cuts = append(cuts, cut)
		}
	}
	if len(cuts) < 2 {
		return nil
	}
	out := make([]string, 0, len(cuts)+1)
	prev := 0
	for _, c := range cuts {
		if part := strings.TrimRight(s[prev:c], " "); strings.TrimSpace(part) != "" {
			out = append(out, part)
		}
		prev = c
	}
	if part := s[prev:]; strings.TrimSpace(part) != "" {
		out = append(out, part)
	}
	return out
}

// collapsedMarker finds the places where a collapsed paste had its line
// breaks: dump headers, boost `N# ` frames, gdb `#N  ` frames, glog `@ 0x`
// frames and `PC: @`.
var collapsedMarker = mustCompile(`(?:^|\s)(\*\*\* (?:Query id|is nereids|tablet id|Aborted at|Current BE|SIG[A-Z]+|Signal \d|Check failure)|\d{1,4}# |#\d{1,4} +(?:0x[0-9a-f]+ in |<signal|[A-Za-z_])|@ +0x[0-9a-f]+ |PC: @ )`)

// clockPrefix recognizes the time-of-day prefix of CI logs:
// `15:21:03    0# doris::…` (the blanks after it are kept only if they
// are the frame's own indent, which we cannot tell: keep one).
func clockPrefix(b []byte) int {
	if len(b) < 10 || b[2] != ':' || b[5] != ':' || !isDigit(b[0]) || !isDigit(b[1]) || !isDigit(b[3]) || !isDigit(b[4]) || !isDigit(b[6]) || !isDigit(b[7]) {
		return 0
	}
	i := 8
	if b[i] == '.' {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i >= len(b) || (b[i] != ' ' && b[i] != '\t') {
		return 0
	}
	for i+1 < len(b) && (b[i+1] == ' ' || b[i+1] == '\t') {
		i++
	}
	return i
}

// splitCandidate is the cheap test before splitCollapsed: a collapsed dump
// is long and holds frame or header markers, two of them after a blank
// (markerStarts).
func splitCandidate(s string) bool {
	return len(s) >= 24 && (strings.IndexByte(s, '#') >= 0 || strings.Contains(s, "*** ") || strings.Contains(s, "@ 0x")) &&
		markerStarts(s, 2) >= 2
}

// markerStarts counts, up to max, the places after the first byte where
// collapsedMarker could cut s: after a blank (its \s), the start of one of
// its markers (`*** `, digits and `# `, `#` and a digit, `@ `, `PC: @ `).
// splitCollapsed cuts only there, and needs two cuts: a line with fewer
// such places is not run through the expression (random bytes with a `#`
// in them were, every line).
func markerStarts(s string, max int) int {
	n := 0
	for i := 1; i < len(s) && n < max; i++ {
		switch s[i-1] {
		case ' ', '\t', '\n', '\f', '\r':
		default:
			continue
		}
		rest := s[i:]
		switch c := rest[0]; {
		case c == '*':
			if strings.HasPrefix(rest, "*** ") {
				n++
			}
		case isDigit(c):
			j := 1
			for j < len(rest) && j < 4 && isDigit(rest[j]) {
				j++
			}
			if strings.HasPrefix(rest[j:], "# ") {
				n++
			}
		case c == '#':
			if len(rest) > 1 && isDigit(rest[1]) {
				n++
			}
		case c == '@':
			if len(rest) > 1 && rest[1] == ' ' {
				n++
			}
		case c == 'P':
			if strings.HasPrefix(rest, "PC: @ ") {
				n++
			}
		}
	}
	return n
}

// Prefixes no table knows. Log shippers, container runtimes and ticket
// tools put text of their own before every line (a fluent-bit tag
// `kube.var.log.containers.be-0_starrocks_be-<hash>.log: `, `host | `,
// `[pod/be-0/be] `, a log4j-style timestamp). The scanner learns such a
// prefix from the input itself, in two ways:
//
//   - a dump header (`*** SIGSEGV …`, `*** Aborted at …`, any strong header
//     of headerAnchors) found after other text on its line: the text before
//     it is a prefix whatever its length, and it is learned when it ends
//     with a blank;
//   - two consecutive lines that no rule recognizes and that begin with the
//     same text up to a separator (`: `, `| `, `] `, `> `, a tab, or a
//     timestamp-like run of digits and punctuation ending in a blank),
//     comparing any run of digits with any run of digits.
//
// A learned prefix is removed from every later line that begins with it
// (digits free) until another one is learned. It never contains a glog
// header: glog lines are recognized before any learning.

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
	shape    string // learned prefix; a run of digits stands for any run of digits
	prev     []byte
	hasPrev  bool
	prevNo   int  // line number of prev
	prevIdle bool // prev was dropped by the idle path (no incident saw it)
	prevCut  bool // prev is only the first maxPrefixBytes+2 bytes of its line
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

// sameAsPrevCmp is sameAsPrev that also says whether the lines were
// compared and found to differ (then learnPrefix's first test fails too).
func (l *prefixLearner) sameAsPrevCmp(t []byte, no int) (same, differs bool) {
	if !l.hasPrev || !l.prevScanned || l.prevCut || l.prevNo != no-1 || len(t) > maxPrefixBytes {
		return false, false
	}
	same = equalModDigits(l.prev, t)
	return same, !same
}

// keep is learn for a line sameAsPrev: it becomes the previous line.
func (l *prefixLearner) keep(t []byte, no int, idle bool) {
	l.prev = append(l.prev[:0], t...)
	l.hasPrev, l.prevNo, l.prevIdle, l.prevCut, l.prevScanned = true, no, idle, false, false
}

// strip removes the learned prefix from t; it returns the rest and whether
// the prefix was there.
func (l *prefixLearner) strip(t []byte) ([]byte, bool) {
	if l.shape == "" || len(t) == 0 || (t[0] != l.shape[0] && !(isDigit(t[0]) && isDigit(l.shape[0]))) {
		return t, false
	}
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
	return l.learnCmp(t, no, idle, false)
}

// learnCmp is learn for a line that sameAsPrevCmp found to differ from
// the previous one, when differs.
func (l *prefixLearner) learnCmp(t []byte, no int, idle, differs bool) int {
	if l.hasPrev && l.prevNo == no-1 {
		if e := learnPrefixCmp(l.prev, t, differs); e > 0 {
			l.shape = string(t[:e])
			return e
		}
	}
	l.prev = append(l.prev[:0], t[:min(len(t), maxPrefixBytes+2)]...)
	l.hasPrev, l.prevNo, l.prevIdle, l.prevCut, l.prevScanned = true, no, idle, len(t) > maxPrefixBytes+2, false
	return 0
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

// matchPrefix returns the length of the text matching shape at the start of
// t (digit runs match digit runs), or 0. A line that holds only the prefix
// with its trailing blanks trimmed (a blank line behind a prefix) matches.
func matchPrefix(t []byte, shape string) int {
	i, j := 0, 0
	for i < len(shape) {
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

// learnPrefixCmp is learnPrefix knowing, when differs, that a and b are
// not equal but for their digits.
func learnPrefixCmp(a, b []byte, differs bool) int {
	if !differs && len(b) <= maxPrefixBytes && equalModDigits(a, b) {
		// The walk below would reach both ends: no prefix. Checked first,
		// eight bytes at a time: a log loop repeats one line (issue 11).
		return 0
	}
	if e := pastePrefix(a, b); e > 0 { // shapes no separator finds (format_misc.go)
		return e
	}
	var ends [8]int
	n, last := 0, 0
	i, j, digits := 0, 0, 0
	ts, nonBlank := true, false
	for i < len(a) && j < len(b) && j < maxPrefixBytes {
		ca, cb := a[i], b[j]
		if ca != cb || isDigit(cb) {
			if !isDigit(ca) || !isDigit(cb) {
				break
			}
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
				digits++
			}
			nonBlank = true
			continue
		}
		e := 0
		switch cb {
		case ':', '|', ']', '>':
			// `: `, `| `, `] `, `> `; alone at the start (a bare `| `
			// prefix) except `> `, which is Markdown's.
			if j+1 < len(b) && b[j+1] == ' ' && i+1 < len(a) && a[i+1] == ' ' && (nonBlank || j == 0 && cb != '>') {
				e = j + 2
			}
		case '\t':
			if nonBlank {
				e = j + 1
			}
		case ' ':
			if ts && digits >= 4 {
				e = j + 1
			}
		}
		if e > 0 {
			if n < len(ends) {
				ends[n] = e
				n++
			}
			last = e
		}
		if !timestampChar[cb] {
			ts = false
		}
		if cb != ' ' && cb != '\t' {
			nonBlank = true
		}
		i++
		j++
	}
	if last == 0 || i == len(a) && j == len(b) {
		return 0
	}
	for _, e := range ends[:n] {
		if contentStarts(b[e:]) {
			return e
		}
	}
	return last
}

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
