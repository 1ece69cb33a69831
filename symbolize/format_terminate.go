package symbolize

import "strings"

// std::terminate (F4): the libstdc++ verbose terminate handler, followed by
// the SIGABRT dump of abort(); formats spec §4 F4. The what() message may
// span several lines (a doris::Exception embeds its own stack trace).
var terminateRules = []lineRule{
	{id: "F4.start", kind: kTerminate, prefix: "terminate called ",
		re: mustCompile(`^terminate called (?:after throwing an instance of '(.+)'|(recursively)|(without an active exception))`)},
	{id: "F4.what", kind: kWhat, prefix: "what():",
		re: mustCompile(`^what\(\):\s*(.*)$`)},
}

// A doris::Exception embeds its own stack trace in its message (formats
// spec F7.6 (c), Doris ≥ 2.1): under `what():` come lines
// `\t0#  doris::Exception::Exception(int, …) at …/exception.cpp:0`, a tab,
// the index and `#`, two spaces below frame 10. They are the stack where
// the exception was thrown, part of the terminate message, and the
// SIGABRT dump of abort() follows them: one incident, whose cause stack
// (origin "F4") stands in for the dump's when the dump holds no frame of
// the failing code (keepCauseStack).

// exceptionFrame takes a boost-shaped frame line of the exception's stack
// trace inside an open terminate message. It reports whether it took it.
func (in *incident) exceptionFrame(p *parser, f Frame, ln lineInfo) bool {
	if in.c.Kind != KindTerminate || in.hasSig || in.c.Message == "" || in.sec != secCause {
		return false
	}
	text := ln.text
	t := trimBlanks(text)
	tabbed := len(text) > 0 && text[0] == '\t'
	if !tabbed {
		// Indentation stripped by the paste: the two blanks after a
		// one-digit index are still F7.6's (F1 prints one).
		i := strings.IndexByte(t, '#')
		if i != 1 || !strings.HasPrefix(t[i+1:], "  ") {
			return false
		}
	}
	if in.cur == nil || in.cur.origin != "F4" || f.Index == 0 && len(in.cur.th.Frames) > 0 {
		if in.hasStack("F4") {
			return false // one exception stack per message
		}
		in.newStack("F4", 2)
	}
	if n := len(in.cur.th.Frames); n > 0 && f.Index != in.cur.th.Frames[n-1].Index+1 {
		return false
	}
	in.addFormat("F4")
	in.addFrame(p, f, ln)
	return true
}
