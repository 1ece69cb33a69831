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
// a UTF-8 byte order mark, trailing CR, Markdown quote markers, code
// fences, K8s/CI/syslog/dmesg timestamp prefixes and the Doris console
// `RuntimeLogger ` prefix. It keeps leading whitespace (it carries meaning
// in frame lines).
func normalizeLine(b []byte) (text []byte, runtimeLogger, prefixed bool) {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		// A byte order mark: Windows editors write one at the start of
		// a file saved as UTF-8, and `cat` of such files puts one at the
		// start of a line. It is no text and no paste prefix.
		b = b[3:]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == 'm' {
		b = trimSGRSuffix(b)
	}
	if len(b) == 0 {
		return b, false, false
	}
	for range 4 { // prefixes can stack: "> 2025-…Z RuntimeLogger F…"
		if len(b) == 0 {
			break
		}
		switch c := b[0]; {
		case c == 0x1b:
			// Terminal colours: glog with --colorlogtostderr (and other
			// loggers) starts a WARNING/ERROR/FATAL line with `ESC[0;3Nm`
			// and writes the reset `ESC[m` after the newline, at the start
			// of the next line. They are no text.
			if n := sgrPrefix(b); n > 0 {
				b = b[n:]
				continue
			}
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
			// Markdown inline code around the whole line (a one-line paste
			// in an issue: "`Illegal instruction (core dumped)`"): the text
			// inside the backticks, which hold no other backtick.
			if n := len(b); n > 2 && b[n-1] == '`' && bytes.IndexByte(b[1:n-1], '`') < 0 {
				b = b[1 : n-1]
				prefixed = true
				continue
			}
			// The opening backtick of an inline code span that runs over
			// several lines ("`*** Query id: 0-0 ***" … "…0x3f`"): a
			// line that holds no other backtick starts inside it. Only
			// the first line of the span carries it, so it is no paste
			// prefix: the line is not marked prefixed (otherPaste).
			if n := len(b); n > 1 && bytes.IndexByte(b[1:], '`') < 0 {
				b = b[1:]
				continue
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
			if n := gluedNotice(b); n > 0 {
				b = b[n:]
				continue
			}
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

// gluedNotices are notices a backend writes to stderr without a newline,
// so the next line of stderr (a glog F line, the build line of a crash
// preamble) is glued to them: StarRocks' CpuInfo::init prints one of the
// two sched_getcpu notices with `std::cerr <<` and no endl
// (be/src/util/cpu_info.cpp).
var gluedNotices = [...]string{
	"Built on a system without sched_getcpu() support. Performance may be impacted.",
	"Kernel does not support sched_getcpu(). Performance may be impacted.",
}

// gluedNotice returns the length of a glued notice b starts with when more
// text follows it (the line that was glued to it), else 0. Only the
// notice is dropped; it is no paste prefix (the lines around it do not
// carry it).
func gluedNotice(b []byte) int {
	if len(b) < 60 || b[0] != 'B' && b[0] != 'K' {
		return 0
	}
	for _, n := range gluedNotices {
		if len(b) > len(n) && string(b[:len(n)]) == n {
			return len(n)
		}
	}
	return 0
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

// sgrPrefix returns the length of the terminal colour sequences (ANSI
// SGR: ESC [ parameters m, parameters digits and `;`) b starts with, or 0.
func sgrPrefix(b []byte) int {
	n := 0
	for n+2 < len(b) && b[n] == 0x1b && b[n+1] == '[' {
		i := n + 2
		for i < len(b) && (isDigit(b[i]) || b[i] == ';') && i-n < 32 {
			i++
		}
		if i >= len(b) || b[i] != 'm' {
			break
		}
		n = i + 1
	}
	return n
}

// trimSGRSuffix removes the terminal colour sequences b ends with (a
// logger that resets the colour before the newline).
func trimSGRSuffix(b []byte) []byte {
	for len(b) >= 3 && b[len(b)-1] == 'm' {
		i := len(b) - 2
		for i >= 0 && len(b)-i < 34 && (isDigit(b[i]) || b[i] == ';') {
			i--
		}
		if i < 1 || b[i] != '[' || b[i-1] != 0x1b {
			break
		}
		b = b[:i-1]
	}
	return b
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

// sameAsPrevCmp is sameAsPrev that also says whether the lines were
// compared and found to differ (then learnPrefix's first test fails too).
func (l *prefixLearner) sameAsPrevCmp(t []byte, no int) (same, differs bool) {
	if !l.hasPrev || !l.prevScanned || l.prevCut || l.prevNo != no-1 || len(t) > maxPrefixBytes {
		return false, false
	}
	if len(t) > 0 && len(l.prev) > 0 && !mayShare(l.prev, t) {
		// Their first bytes differ, not both digits: not equal but for
		// their digits (equalModDigits stops there), without a call.
		return false, true
	}
	same = equalModDigits(l.prev, t)
	return same, !same
}

// learnCmp is learn for a line that sameAsPrevCmp found to differ from
// the previous one, when differs.
func (l *prefixLearner) learnCmp(t []byte, no int, idle, differs, stable bool) int {
	if l.hasPrev && l.prevNo == no-1 && mayShare(l.prev, t) {
		if e := learnPrefixCmp(l.prev, t, differs); e > 0 {
			l.shape = string(t[:e])
			return e
		}
	}
	l.setPrevFrom(t[:min(len(t), maxPrefixBytes+2)], stable)
	l.hasPrev, l.prevNo, l.prevIdle, l.prevCut, l.prevScanned = true, no, idle, len(t) > maxPrefixBytes+2, false
	return 0
}

// mayShare is learnPrefixCmp's first test: two lines that begin with
// different bytes, not both digits, share no prefix (its walk stops at
// their first bytes, and pastePrefix wants a digit in both), nor do two
// lines one of which is empty. Lines of JVM chatter of several shapes
// mostly differ from their first byte on (issue 11): they cost no call.
func mayShare(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && (a[0] == b[0] || isDigit(a[0]) && isDigit(b[0]))
}

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
	var ends, endsA [8]int
	n, last, lastA := 0, 0, 0
	i, j, digits := 0, 0, 0
	ts, nonBlank := true, false
	for i < len(a) && j < len(b) && j < maxPrefixBytes {
		if !ts {
			// Past a timestamp's characters, equal words without a digit,
			// a separator or a blank change nothing but nonBlank: skipped
			// eight bytes at a time (issue 11).
			k := plainRun(a[i:], b[j:min(len(b), maxPrefixBytes)], nonBlank)
			if k > 0 {
				i, j, nonBlank = i+k, j+k, true
				if i >= len(a) || j >= len(b) || j >= maxPrefixBytes {
					break
				}
			}
		}
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
				ends[n], endsA[n] = e, i+e-j
				n++
			}
			last, lastA = e, i+e-j
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
	for k, e := range ends[:n] {
		if contentStarts(b[e:]) {
			return recognizedOnly(a, b, e, endsA[k])
		}
	}
	return recognizedOnly(a, b, last, lastA)
}

// recognizedOnly returns e, the end of the prefix learned from a and b
// (ea in a), or 0 when one of the lines is only that prefix and the
// prefix is itself a line a rule recognizes: `tcmalloc: ` after
// `tcmalloc: @ )` is a blank tcmalloc line, not a shipper's prefix on a
// blank line, and learning it would turn the other line into a stripped
// line of another family (FUZZING.md). A blank line behind a shipper's
// prefix still teaches it.
func recognizedOnly(a, b []byte, e, ea int) int {
	if e < len(bytes.TrimRight(b, " \t")) && ea < len(bytes.TrimRight(a, " \t")) {
		return e
	}
	v := unsafe.String(&b[0], e)
	if r, _ := allRules.match(v, v, true); r != nil {
		return 0
	}
	return e
}

// plainRun returns how many bytes at the start of a and b are equal and
// hold no byte learnPrefix's walk stops or decides at, eight bytes at a
// time (the last of them up to the first byte that is not so; fewer than
// eight bytes at the end are left to the walk). It runs where the walk is
// past a timestamp (its ts false), so:
//
//   - a blank decides nothing once a non-blank byte was seen (nonBlank):
//     then blanks are plain too, so that the run does not stop at every
//     word of a log message (issue 11: JVM chatter);
//   - a run of digits equal in both lines and ending where both have the
//     same other byte is stepped over as the walk would (both runs to
//     their ends; their count matters only in a timestamp): digits are
//     plain, and the run never ends inside a run of digits (it backs off
//     to the run's start, so the walk takes that run whole, as it would).
func plainRun(a, b []byte, nonBlank bool) int {
	var low uint64 = 0x21 // bytes below it stop the run
	if nonBlank {
		low = 0x20
	}
	k := 0
	for k+8 <= len(a) && k+8 <= len(b) {
		y := binary.LittleEndian.Uint64(b[k:])
		// The high bit of each byte that differs or stops the walk.
		m := walkStopBytes(y, low) | ^bytesBelow(binary.LittleEndian.Uint64(a[k:])^y, 1)&swarHigh
		if m != 0 {
			k += bits.TrailingZeros64(m) >> 3
			break
		}
		k += 8
	}
	for k > 0 && isDigit(b[k-1]) {
		k--
	}
	return k
}

// walkStopBytes sets the high bit of each byte of x that learnPrefix's
// walk stops or decides at past a timestamp: a separator (`:`, `|`, `]`,
// `>`; the test takes 0x3a-0x3e whole) or a byte below low (0x21, or 0x20
// once a non-blank byte was seen: plainRun). Digits are not marked (plainRun
// steps over equal digit runs); exact per byte (bytesBelow).
func walkStopBytes(x, low uint64) uint64 {
	return bytesBelow(x, low) | bytesBelow(x, 0x3f)&^bytesBelow(x, 0x3a) |
		bytesBelow(x^0x7c7c7c7c7c7c7c7c, 1) | bytesBelow(x^0x5d5d5d5d5d5d5d5d, 1)
}
