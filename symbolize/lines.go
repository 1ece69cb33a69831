package symbolize

import (
	"bytes"
	"strings"
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

var htmlReplacer = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&#39;", "'")

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
// is long and holds frame or header markers.
func splitCandidate(s string) bool {
	return len(s) >= 160 && (strings.IndexByte(s, '#') >= 0 || strings.Contains(s, "*** ") || strings.Contains(s, "@ 0x"))
}
