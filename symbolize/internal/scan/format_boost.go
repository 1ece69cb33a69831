package scan

import "strings"

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
		f.Raw = joined
		*last = f
		in.prevText = joined
		in.prevNo = ln.no
		in.note("joined the hard-wrapped continuation of a boost frame at line %d (%s)", ln.no, w.id)
		in.used(ln)
		return true
	}
	return false
}
