package scan

import (
	"regexp"
	"strings"
)

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
	return in.addExceptionFrame(p, f, ln)
}

// addExceptionFrame adds f to the exception's stack (origin "F4"): a frame
// 0 after frames, or the first frame, opens it (one exception stack per
// message), and the frames must be numbered consecutively. It reports
// whether it took the frame.
func (in *incident) addExceptionFrame(p *parser, f Frame, ln lineInfo) bool {
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

// exceptionTraceShapes are the older shapes of the stack trace a Doris
// Status or doris::Exception embeds in its message (formats spec F7.6 (a),
// Doris 2.0, and (b), master Aug–Sep 2023); shape (c) is boost's and goes
// through exceptionFrame. The `@ 0x…` address is object-relative: it is
// the frame's Offset in Module, not a PC. Groups: index, file, line,
// symbol, offset, object.
var exceptionTraceShapes = []struct {
	id                                     string
	re                                     *regexp.Regexp
	index, file, line, sym, offset, object int
}{
	// `0. /home/build/doris-2.0/be/src/common/stack_trace.cpp:302: StackTrace::tryCapture() @ 0x000000000a1f2e3d in /opt/doris/be/lib/doris_be`
	{id: "F7.6a", re: mustCompile(`^\s*(\d{1,3})\. (?:(\S+):(\d+): )?(.+?) @ 0x([0-9a-fA-F]{4,16}) in (\S+)\s*$`),
		index: 1, file: 2, line: 3, sym: 4, offset: 5, object: 6},
	// `\t0.  @ 0x000000001c2d3e4f  doris::get_stack_trace[abi:cxx11]()  be/src/util/stack_util.cpp:63  in output/be/lib/doris_be`
	{id: "F7.6b", re: mustCompile(`^\s*(\d{1,3})\.\s+@ 0x([0-9a-fA-F]{4,16})  (.+?)(?:  (\S+):(\d+))?(?:  in (\S+))?\s*$`),
		index: 1, offset: 2, sym: 3, file: 4, line: 5, object: 6},
}

// exceptionTraceLine takes a line of an F7.6 (a)/(b) stack trace inside an
// open terminate message as a frame of the exception's stack (origin "F4",
// see exceptionFrame). An inlined-frame line (`\t0.1. inlined from …`)
// is kept in the message. It reports whether it took the line.
func (in *incident) exceptionTraceLine(p *parser, ln lineInfo) bool {
	if in.c.Kind != KindTerminate || in.hasSig || in.c.Message == "" || in.sec != secCause {
		return false
	}
	t := trimBlanks(ln.text)
	if t == "" || !isDigit(t[0]) || !strings.Contains(t, "@ 0x") {
		return false
	}
	for _, sh := range exceptionTraceShapes {
		m := sh.re.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		f := Frame{Index: atoi(m[sh.index]), Module: m[sh.object], Raw: ln.text}
		if v, ok := parseHex(m[sh.offset]); ok {
			f.Offset, f.HasOffset = Addr(v), true
		}
		if sym := strings.TrimSpace(m[sh.sym]); sym != "?" {
			p.setFunction(&f, sym)
		}
		if m[sh.file] != "" {
			f.File, f.Line = m[sh.file], atoi(m[sh.line])
		}
		return in.addExceptionFrame(p, f, ln)
	}
	return false
}
