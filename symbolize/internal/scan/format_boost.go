package scan

import (
	"slices"
	"strconv"
	"strings"
)

// Doris boost::stacktrace signal dumps (F1, Doris 1.1 → 4.x), formats spec
// §4 F1. Frames (` 4# name at file:line`, ` 3# 0x00007F… in /lib64/libc.so.6`)
// are parsed by parseBoostFrame; the header lines are below. The signal line
// is shared with glog dumps (F2) and lives in glogRules: the reason text
// ("address not mapped to object") is what makes it F1.
var boostRules = []lineRule{
	{id: "F1.h_query", kind: kQueryID, prefix: "*** Query id: ",
		re: mustCompile(`^(?:\*\*\* )?Query id: ([0-9a-fA-F]+-[0-9a-fA-F]+)`)},
	{id: "F1.h_nereids", kind: kNereids, prefix: "*** is nereids: ",
		re: mustCompile(`^(?:\*\*\* )?is nereids: (-?\d+)`)},
	{id: "F1.h_tablet", kind: kTablet, prefix: "*** tablet id: ",
		re: mustCompile(`^(?:\*\*\* )?tablet id: (-?\d+)`)},
	{id: "F1.h_commit", kind: kCommit, prefix: "*** Current BE git commitID: ",
		re: mustCompile(`^(?:\*\*\* )?Current BE git commitID: (\S*)`)},
	// Shared by F1 and F2: the only timestamp inside a dump. Pastes replace
	// the straight quotes with curly ones or drop the suffix.
	{id: "X.aborted_at", kind: kAbortedAt, prefix: "*** Aborted at ",
		re: mustCompile(`^(?:\*\*\* )?Aborted at (\d+)`)},
}

// boostHeaderNext lists, for each F1 header line printed before `Aborted
// at` (H1 Query id, H2 is nereids, H3 tablet id), the lines that may come
// next. The handler prints H1–H5 with one write, in this order, and H4
// (`Aborted at`) always (formats spec §4 F1.1): the next line that is not
// blank is a later header line (H5, the commit line, is let pass before
// H4 too, as the generated variants of testdata/defects print it; no check
// follows it). Any other line a rule recognizes, or a
// frame, means the text was cut inside the header (corpus doris/163, a
// 2.0.7 header cut right before `*** Aborted at`): the header is a dump
// of its own, cut, and that line is the next text's. An unrecognized line
// passes (a retyped or mangled header line, corpus doris/056 `Abort at`).
var boostHeaderNext = map[lineKind][]lineKind{
	kQueryID: {kNereids, kTablet, kAbortedAt, kCommit},
	kNereids: {kTablet, kAbortedAt, kCommit},
	kTablet:  {kAbortedAt, kCommit},
}

// glogAfterAborted are the lines by which a glog dump (F2) goes on after
// its `Aborted at` line and an F1 dump never does: the `PC:` line, and a
// signal line without a reason (F2's; F1's carries one). After H1–H3 they
// tell that the `Aborted at` line before them opened the next text's F2
// dump: the F1 header before it was cut.
var glogAfterAborted = map[lineKind]func(m []string) bool{
	kPC:     func([]string) bool { return true },
	kSignal: func(m []string) bool { return m[2] == "" },
}

// boostHeaderCut applies boostHeaderNext and glogAfterAborted to line ln
// (of kind k, submatches m). cut says that the F1 header ends before the
// line; then accept returns took: false when the incident ends there (the
// caller opens the next one with the line), or what the next incident,
// opened at the `Aborted at` line, answers.
func (in *incident) boostHeaderCut(p *parser, ln lineInfo, k lineKind, m []string) (cut, took bool) {
	if in.hasSig || k == kBlank {
		return false, false
	}
	if k == kAbortedAt && in.lastKind == kAbortedAt {
		in.twinAborted = true // see glogPCNext
	}
	if in.glogHeaderCut(p, ln, k, m) { // format_glog.go
		return true, false
	}
	if at := in.boostAborted; at != nil && in.lastLine == kAbortedAt {
		if f := glogAfterAborted[k]; f != nil && f(m) {
			in.note("dump header cut before line %d: the %s line at %d is another dump's", at.line, map[lineKind]string{kPC: "PC:", kSignal: "signal"}[k], ln.no)
			in.split = at
			return true, in.splitAt(p, ln, k, m)
		}
		return false, false
	}
	next, ok := boostHeaderNext[in.lastLine]
	if !ok || k == kOther && !startsIncident(k, ln.text, p) {
		return false, false
	}
	if slices.Contains(next, k) {
		if k == kAbortedAt && in.split == nil && !in.isCause() && !in.kernelOpened() {
			in.boostAborted = in.splitPoint(ln.no)
			in.boostAborted.own = true
		}
		return false, false
	}
	in.note("dump header cut after line %d: line %d is not the rest of it", in.c.EndLine, ln.no)
	return true, false
}

// bareBoostNumber reports the number of a line that is only a boost
// frame's number (`4#`): a paste re-wrapped right after it.
func bareBoostNumber(t string) (int, bool) {
	n, ok := strings.CutSuffix(t, "#")
	if !ok || n == "" || len(n) > 4 || !allDigits(n) {
		return 0, false
	}
	return atoi(n), true
}

// boostWrap is a way a boost frame line is hard-wrapped inside its name by
// a terminal, a browser or the poster: the frame leaves a bracket open and
// the next line, indented, continues it (corpus doris/157:
// ` 4# bvar::Reducer<long, bvar::detail::AddTo<long>,` then
// `   bvar::detail::MinusFrom<long>>::SeriesSampler::take_sample()`).
type boostWrap struct {
	id            string
	open, close   byte
	needsIndent   bool // the continuation starts with a blank
	maxJoinedLine int  // the joined frame line is at most this long
}

// boostWraps are the continuation-line rules of F1 frames.
var boostWraps = []boostWrap{
	{id: "F1.wrap_template", open: '<', close: '>', needsIndent: true, maxJoinedLine: 8 << 10},
	{id: "F1.wrap_args", open: '(', close: ')', needsIndent: true, maxJoinedLine: 8 << 10},
}

// bracketDepth is how many of open s leaves unclosed (never below 0 on the
// way: `->` and `operator>` before any `<` do not count).
func bracketDepth(s string, open, close byte) int {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			d++
		case close:
			if d > 0 && !(close == '>' && i > 0 && s[i-1] == '-') {
				d--
			}
		}
	}
	return d
}

// boostContinuation joins a continuation line to the boost frame before
// it by the first boostWraps rule that applies: the frame line leaves the
// rule's bracket open, the line right after it is indented, is no frame of
// its own, and the joined line parses as the same frame with the bracket
// closed at least as far as before. It reports whether it joined.
func (in *incident) boostContinuation(p *parser, ln lineInfo) bool {
	if in.sec != secBoost || in.cur == nil || in.cur.origin != "F1" || len(in.cur.th.Frames) == 0 || ln.no != in.prevNo+1 {
		return false
	}
	last := &in.cur.th.Frames[len(in.cur.th.Frames)-1]
	text := ln.text
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	if _, ok := p.parseBoostFrame(t); ok {
		return false
	}
	if n, ok := bareBoostNumber(t); ok && n == last.Index+1 {
		// `4#` alone: the frame's text is on the next line.
		in.boostBare = ln.no
		in.prevNo = ln.no
		in.used(ln)
		return true
	}
	if in.boostBare == ln.no-1 && in.boostBare > 0 {
		in.boostBare = 0
		if f, ok := p.parseBoostFrame(strconv.Itoa(last.Index+1) + "# " + t); ok {
			in.addFrame(p, f, ln)
			in.note("joined frame %d's number, alone on line %d, to its text", f.Index, ln.no-1)
			return true
		}
	}
	if raw := strings.TrimRight(last.Raw, " \t"); last.File == "" && last.Module == "" && (strings.HasSuffix(raw, " in") || strings.HasSuffix(raw, " at")) && !strings.ContainsAny(t, " \t") && strings.ContainsAny(t, "/.") {
		// ` in` / ` at` at the end of the frame line, the module or
		// source path alone on the next line (a paste re-wrapped at a
		// blank).
		if f, ok := p.parseBoostFrame(raw + " " + t); ok && f.Index == last.Index && (f.File != "" || f.Module != "") {
			in.replaceLastFrame(last, f, raw+" "+t, ln, "joined the location of boost frame %d, wrapped onto line %d", f.Index, ln.no)
			return true
		}
	}
	for _, w := range boostWraps {
		before := bracketDepth(last.Raw, w.open, w.close)
		if before == 0 || w.needsIndent && text[0] != ' ' && text[0] != '\t' {
			continue
		}
		joined := strings.TrimRight(last.Raw, " \t") + " " + t
		if len(joined) > w.maxJoinedLine {
			continue
		}
		if bracketDepth(joined, w.open, w.close) >= before {
			continue
		}
		f, ok := p.parseBoostFrame(joined)
		if !ok || f.Index != last.Index {
			continue
		}
		in.replaceLastFrame(last, f, joined, ln, "joined the hard-wrapped continuation of a boost frame at line %d (%s)", ln.no, w.id)
		return true
	}
	return false
}

// replaceLastFrame makes f, parsed from the frame line joined with line ln
// (raw), the stack's last frame, notes how, and takes the line.
func (in *incident) replaceLastFrame(last *Frame, f Frame, raw string, ln lineInfo, format string, args ...any) {
	f.Raw = raw
	*last = f
	in.prevText = raw
	in.prevNo = ln.no
	in.note(format, args...)
	in.used(ln)
}
