// How an incident takes frame lines: boost, glog @ and gdb frames, hard-wrap
// rejoining, gdb inline groups, and the foreign lines it tolerates between them.

package scan

import (
	"fmt"
	"strconv"
	"strings"
)

// frameOrNoise handles frame lines, message continuations and foreign lines.
func (in *incident) frameOrNoise(p *parser, ln lineInfo, k lineKind) bool {
	text := ln.text
	if k == kOther && numberedStart(p, text) { // format_misc.go
		return false
	}
	switch in.sec {
	case secNone, secHeader, secBoost, secGlog, secCheck, secCause, secDone:
		if in.sanDump && in.sanitizerFramesAfterDump(p, ln) { // format_sanitizer.go
			return true
		}
		if f, ok := p.parseBoostFrame(text); ok {
			if in.exceptionFrame(p, f, ln) { // format_terminate.go
				return true
			}
			return in.boostFrame(p, f, ln)
		}
		if k == kOther || k == kGlog {
			if f, sp, ok := p.parseAtFrame(text); ok {
				return in.atFrame(p, f, sp, ln)
			}
		}
	case secSanitizer:
		if len(text) > 0 && text[0] == '#' && in.hasFrames() {
			// Sanitizer frames are indented; a `#0` at the start of the
			// line after a report is a gdb backtrace, the next incident.
			if f, ok := p.parseGDBFrame(text); ok && f.Index == 0 {
				return false
			}
		}
		if f, ok := p.parseSanitizerFrame(text); ok {
			if in.cur == nil || (f.Index == 0 && len(in.cur.th.Frames) > 0) {
				in.newStack("F6-aux", 0)
			}
			in.addFrame(p, f, ln)
			return true
		}
		if t := strings.TrimSpace(text); isSanitizerStackHeader(t) {
			s := in.newStack("F6-aux", 0)
			s.th.State = strings.TrimSuffix(t, ":")
			in.used(ln)
			return true
		}
		if k == kOther && in.hasFrames() && in.startsOtherStack(p, text) {
			return false // a boost or glog dump after a report cut before ABORTING
		}
		if in.sanLog > 0 && !sanReportText(strings.TrimSpace(text)) {
			return true // after a log line: not the report's (format_sanitizer.go sanInterleaved)
		}
		in.used(ln)
		return true // sanitizer reports have many descriptive lines
	case secSanTail:
		if k == kOther && (in.startsOtherStack(p, text) || !sanTailLine(text)) {
			return false
		}
		in.used(ln)
		return true
	case secJVM:
		if k == kHash {
			in.jvmLine(p, ln)
			in.used(ln)
			return true
		}
	case secHsErr:
		if f, ok := p.parseHsErrFrame(text); ok {
			if in.cur != nil {
				f.Index = len(in.cur.th.Frames)
			}
			in.addFrame(p, f, ln)
			return true
		}
		if m := hsErrCurrent.FindStringSubmatch(text); m != nil && in.cur != nil {
			in.cur.th.Name = m[1]
			in.cur.th.ID, _ = strconv.ParseInt(m[2], 10, 64)
			in.used(ln)
			return true
		}
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "siginfo: ") {
			in.hsErrSiginfo(t)
			in.used(ln)
			return true
		}
		if strings.HasPrefix(text, hsErrEndBanner) {
			in.sec = secDone
			in.used(ln)
			return true
		}
		in.used(ln)
		return true
	case secGDB:
		if t := p.sanitizerText(text); isSanitizerOnly(t) && in.sanitizerFragment(p) {
			in.sanitizerLine(p, t, ln) // `Thread T455 (…) created by T0 here:` after cut frames
			return true
		}
		if in.cur != nil && len(in.cur.th.Frames) > 0 {
			if f, ok := p.gdbLocation(in.cur.th.Frames[len(in.cur.th.Frames)-1], text); ok {
				in.cur.th.Frames[len(in.cur.th.Frames)-1] = f // `    at file:line` on its own line
				in.used(ln)
				return true
			}
		}
		if in.fragment > 0 && in.cur != nil && len(in.cur.th.Frames) == 1 {
			if f0 := in.cur.th.Frames[0]; f0.PC == 0 && f0.File == "" && f0.Module == "" {
				// An addressless opener (gdbAddresslessOpener) whose
				// location line did not follow: not a frame after all;
				// this line is read afresh.
				return false
			}
		}
		if in.cur != nil && len(in.cur.th.Frames) > 0 && (text[0] == ' ' || text[0] == '\t') && openParens(in.cur.th.Frames[len(in.cur.th.Frames)-1].Raw) > 0 {
			// gdb wraps long argument lists onto indented lines.
			last := &in.cur.th.Frames[len(in.cur.th.Frames)-1]
			if f, ok := p.parseGDBFrame(last.Raw + " " + strings.TrimSpace(text)); ok {
				f.Raw = last.Raw + " " + strings.TrimSpace(text)
				*last = f
				in.used(ln)
				return true
			}
		}
		if f, ok := p.parseGDBFrame(text); ok {
			if in.cur != nil && len(in.cur.th.Frames) > 0 && f.Index > 0 && in.gdbOrphan > in.prevNo && f.Index != in.cur.th.Frames[len(in.cur.th.Frames)-1].Index+1 {
				// gdb numbers the frames of a backtrace one by one and
				// prints an argument list's continuation only after its
				// frame: a frame that does not follow, after the
				// continuation of a frame that is not there, starts
				// another paste (cut inside a frame).
				return false
			}
			switch {
			case in.cur != nil && len(in.cur.th.Frames) > 1 && gdbEcho(in.cur.th.Frames, f):
				// `frame N` (`f N`), `up` and `down` after a backtrace
				// print the selected frame again, as `bt` printed it
				// (GDB manual, "Selecting a Frame"): not a new stack.
				in.used(ln)
				in.note("gdb printed frame #%d again after the backtrace (frame, up, down): kept the backtrace", f.Index)
				return true
			case in.cur != nil && f.Index == 0 && len(in.cur.th.Frames) > 0 && in.cur.th.ID == 0 && in.cur.th.Name == "" && (sameGDBFrame(in.cur.th.Frames[0], f) || sameGDBFunction(in.cur.th.Frames[0], f)):
				// gdb prints the stop location (#0) when it loads the core,
				// and the user then typed `bt`: the same thread again.
				in.cur.th.Frames = in.cur.th.Frames[:0]
				in.note("gdb printed frame #0 before `bt`: kept the backtrace")
			case in.cur != nil && f.Index == 0 && len(in.cur.th.Frames) > 0 && in.cur.th.ID == 0 && in.cur.th.Name == "":
				// A second `bt` with no thread header between: the next
				// session's (thread apply all bt prints a header per thread).
				return false
			case in.cur != nil && len(in.cur.th.Frames) > 0 && coreTextInlineGroup(in.cur.th.Frames[len(in.cur.th.Frames)-1], f):
				// crashsig's core text: the frames of one address repeat
				// its number, all but the last marked inline.
			case in.cur == nil || (f.Index == 0 && len(in.cur.th.Frames) > 0):
				in.newStack("gdb", 1)
			}
			in.gdbInline(f)
			in.addFrame(p, f, ln)
			return true
		}
	case secJstack:
		if f, ok := parseJavaFrame(text); ok && in.cur != nil {
			f.Index = len(in.cur.th.Frames)
			in.addFrame(p, f, ln)
			return true
		}
		if isJstackContext(strings.TrimLeft(text, " \t")) {
			in.used(ln)
			return true
		}
	case secCoredump:
		if f, ok := p.parseCoredumpFrame(text); ok {
			if in.cur == nil || in.cur.origin != "coredump" || f.Index == 0 && len(in.cur.th.Frames) > 0 {
				in.newStack("coredump", 1) // a thread whose header line is missing
			}
			in.addFrame(p, f, ln)
			return true
		}
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "Module ") || strings.HasPrefix(t, "Metadata for module ") ||
			strings.HasPrefix(t, "ELF object binary architecture:") {
			in.used(ln) // the module list after the traces
			return true
		}
	case secMinidump:
		if in.minidumpLine(p, ln, text) {
			return true
		}
	case secDorisAPI:
		if f, ok := p.parseBoostFrame(text); ok && in.cur != nil {
			in.addFrame(p, f, ln)
			return true
		}
		if strings.HasPrefix(text, dorisAPISummary) {
			in.used(ln)
			in.sec = secDone
			return true
		}
		in.used(ln)
		return true
	}
	// systemd-coredump frames without their `Stack trace of thread` line,
	// alone or after the kernel line.
	if (in.sec == secNone || in.kernelOpened() && !in.hasDumpFrames()) && !in.hasSig && (in.c.Kind == KindUnknown || in.kernelOpened()) {
		if f, ok := p.parseCoredumpFrame(text); ok && f.Index == 0 {
			in.coredumpStart(nil)
			in.newStack("coredump", 1)
			in.addFrame(p, f, ln)
			return true
		}
	}
	// gdb frames may also start a gdb section inside a paste without
	// headers, or follow an abort cause (a check failure, a terminate
	// message) whose stack the user printed with gdb instead of the dump.
	if in.sec == secNone || in.sec == secCause || in.sec == secHeader || in.sec == secCheck {
		if t := strings.TrimLeft(text, " \t"); strings.HasPrefix(t, "#") && !in.hasSig && (in.c.Kind == KindUnknown || in.gdbAfterCause()) {
			if f, ok := p.parseGDBFrame(t); ok && (f.Index == 0 || f.PC != 0 || in.sec == secNone && f.Index == in.fragment && gdbAddresslessOpener(f)) {
				if in.sec == secHeader && in.lastKind != kOther {
					// gdb prints no signal dump header: a backtrace right
					// after one (or after a gdb command) is the next
					// incident. After an unrecognized line, which may be
					// the dump's own signal line in a shape no table
					// knows, the frames are kept.
					return false
				}
				if f.Index != 0 {
					in.note(noteGDBStartsAt+"%d", f.Index)
				}
				if in.c.Kind != KindUnknown {
					in.dropEmptyCause()
				}
				in.addFormat("F7")
				in.sec = secGDB
				in.newStack("gdb", 1)
				in.addFrame(p, f, ln)
				return true
			}
		}
	}
	// A Doris exception's stack trace in its what() (format_terminate.go).
	if k == kOther && in.exceptionTraceLine(p, ln) {
		return true
	}
	// Message continuation (multi-line FATAL text or what()).
	if in.msgOpen && (k == kOther) && (in.sec == secCheck || in.sec == secCause) && in.cur == nil || in.msgOpen && k == kOther && in.sec == secCheck && len(in.cur.th.Frames) == 0 {
		if len(in.c.Message) < 4096 {
			in.c.Message += "\n" + text
		}
		in.used(ln)
		return true
	}
	if k == kOther && in.hasFrames() && in.startsOtherStack(p, text) {
		return false
	}
	// A boost frame wrapped inside its name (format_boost.go).
	if k == kOther && in.boostContinuation(p, ln) {
		return true
	}
	// Hard wrap inside a token: join to the previous frame line.
	if k == kOther && len(in.prevText) >= 120 && ln.no == in.prevNo+1 && in.cur != nil && len(in.cur.th.Frames) > 0 && mayContinue(in.prevText, text) {
		if in.rejoin(p, ln) {
			return true
		}
	}
	// Abbreviated StarRocks dumps: `  starrocks::Foo::bar()` without addresses,
	// after the signal line or, in a stack quoted by hand, right after the
	// `PC:` line (`PC: starrocks::BinaryColumnBase<…>::append_selective` then
	// `    starrocks::MemTable::insert`).
	if (in.sec == secGlog || in.sec == secHeader && (in.hasSig || in.pcFrame.Raw != "")) && k == kOther {
		if t := strings.TrimSpace(text); strings.HasPrefix(text, "  ") && strings.Contains(t, "::") && !strings.Contains(t, " ") || strings.HasPrefix(text, "  ") && strings.HasSuffix(t, ")") && strings.Contains(t, "::") {
			if in.sec == secHeader {
				in.sec = secGlog
				in.newStack(in.family, 3)
			}
			f := Frame{Raw: text, Index: len(in.cur.th.Frames)}
			p.setFunction(&f, t)
			in.addFrame(p, f, ln)
			in.note("abbreviated frames without addresses")
			return true
		}
	}
	// Foreign line, unless it starts a stack of another family after this
	// incident's own frames: a gdb `bt` after a boost dump keeps its #0.
	if k == kBlank {
		return true
	}
	if k == kOther && in.hasFrames() && in.startsOtherStack(p, text) {
		return false
	}
	if in.shellOnly && k == kOther && gdbSessionLine(text) {
		return true // gdb opening the core the shell said was dumped (format_gdb.go)
	}
	in.gap++
	if t := strings.TrimLeft(text, " \t"); in.sec == secGDB && k == kOther && len(t) > 1 && t[0] == '#' && isDigit(t[1]) {
		in.gdbPartial = ln.no // a frame line cut before gdb's frame shape
	}
	if in.sec == secGDB && k == kOther && (text[0] == ' ' || text[0] == '\t') && openParens(text) < 0 {
		in.gdbOrphan = ln.no // the end of an argument list whose frame is not here
	}
	if in.sec == secBoost || in.sec == secGlog || in.sec == secCheck {
		in.interleaved++
	}
	if in.gap > in.gapLimit() {
		return false
	}
	return true
}

// rejoin glues a hard-wrapped continuation to the previous frame line and
// parses the whole again.
func (in *incident) rejoin(p *parser, ln lineInfo) bool {
	th := &in.cur.th
	last := &th.Frames[len(th.Frames)-1]
	joined := last.Raw + ln.text
	var f Frame
	var ok bool
	switch in.cur.origin {
	case "F1":
		f, ok = p.parseBoostFrame(joined)
	case "F2", "F3":
		f, _, ok = p.parseAtFrame(joined)
	case "gdb":
		f, ok = p.parseGDBFrame(joined)
	case "F6", "F6-aux":
		f, ok = p.parseSanitizerFrame(joined)
	}
	if !ok {
		return false
	}
	f.Index = last.Index
	f.Raw = joined
	*last = f
	in.prevText = ""
	in.note("joined hard-wrapped line %d to the frame before it", ln.no)
	in.used(ln)
	return true
}

// boostFrame takes an F1 frame, checking that indices run consecutively.
func (in *incident) boostFrame(p *parser, f Frame, ln lineInfo) bool {
	if in.otherPaste(ln) {
		return false
	}
	if in.sec != secBoost {
		if !in.hasSig && in.hasFrames() {
			return false // a headerless boost dump after another stack: the next incident
		}
		if in.hasSig && in.family == "F2" && in.cur != nil && in.cur.origin == "F2" && len(in.cur.th.Frames) == 0 && in.sec == secGlog {
			// A signal line without reason text followed by boost frames:
			// one Doris dump whose handler printed no reason, not a glog
			// dump and a second, headerless one.
			in.family = "F1"
			in.cur.origin = "F1"
			in.sec = secBoost
			in.addFormat("F1")
			in.note("signal line without reason text followed by boost frames")
		}
		if in.hasSig && in.family != "F1" {
			return false
		}
		if in.sec == secDone {
			return false
		}
		if !in.hasSig && (in.pcFrame.Raw != "" || len(in.c.Trackers) > 0 || in.c.FragmentID != "") {
			return false // boost frames after a glog dump's header (PC:, StarRocks preamble): the next dump
		}
		// Headerless boost dump (the paste starts at the frames).
		if f.Index != 0 && in.cur == nil {
			in.note("dump starts at frame %d", f.Index)
		}
		if in.isCause() && !in.hasSig {
			in.markAbortDump(ln.no)
		}
		in.sec = secBoost
		in.family = "F1"
		in.addFormat("F1")
		in.newStack("F1", 3)
		in.cur.th.Crashed = true
	}
	switch {
	case in.blank && f.Index != in.lastIdx+1:
		// The blank line was the end of the dump; whether the dump was
		// whole is told by its last frame (a thread root), as at the end
		// of the input: boost prints every frame down to the root.
		return false
	case in.lastIdx >= 0 && f.Index == 0:
		// A second dump or a duplicated paste.
		return false
	case in.lastIdx >= 0 && f.Index <= in.lastIdx:
		in.note("frame index %d repeats after %d (duplicated lines)", f.Index, in.lastIdx)
		in.used(ln)
		return true
	case in.lastIdx >= 0 && f.Index != in.lastIdx+1:
		in.corrupt(fmt.Sprintf("frame indices jump from %d to %d", in.lastIdx, f.Index))
	}
	in.lastIdx = f.Index
	in.addFrame(p, f, ln)
	return true
}

// atFrame takes a glog `@` frame; the spaces before the symbol tell F2
// (one) from F3 (two).
func (in *incident) atFrame(p *parser, f Frame, spaces int, ln lineInfo) bool {
	if in.otherPaste(ln) {
		return false
	}
	switch in.sec {
	case secBoost:
		return false
	case secDone:
		return false
	case secCheck:
		if in.cur == nil || in.cur.origin != "F3" && in.cur.origin != twinStack {
			in.newStack("F3", 2)
		}
	case secGlog:
	default:
		if in.hasSig {
			in.sec = secGlog
		} else if spaces >= 2 {
			// Check-failure frames without their header (cut paste).
			in.sec = secCheck
			in.addFormat("F3")
			in.newStack("F3", 2)
		} else {
			in.sec = secGlog
			in.addFormat("F2")
			in.newStack("F2", 3)
			in.cur.th.Crashed = true
			in.note("glog frames without a signal line")
			in.glogNoHeader = true
			in.takeCarried(p, ln)
		}
	}
	if len(in.cur.th.Frames) > 0 && !in.c.Corrupted && endsAtOutermost(in.cur.th.Frames) && !(f.PC == 0 && f.Function == "" && !f.HasOffset) {
		return false // the stack already reached its thread's root: the next dump's frames
	}
	if isHandlerFrame(f.Name()) && !in.c.Corrupted && len(in.cur.th.Frames)-lastHandlerFrame(in.cur.th.Frames) > 4 {
		// A signal handler's frame deep in a stack without one: the
		// frames of the next dump, which begin at the handler, or at the
		// nameless libc frame printed on the line just before it (the
		// frame a paste cut at the top starts with).
		th := &in.cur.th
		if last := th.Frames[len(th.Frames)-1]; in.prevNo == ln.no-1 && last.Function == "" && len(th.Frames) > 1 {
			th.Frames = th.Frames[:len(th.Frames)-1]
			// The parser hands context lines to the next incident
			// (parser.pending); the frame line goes the same way.
			p.pending = append(p.pending, Event{Line: in.prevNo, Kind: carriedFrame, Text: last.Raw})
			if in.c.EndLine == in.prevNo {
				in.c.EndLine = in.prevNo - 1
			}
		}
		return false
	}
	f.Index = len(in.cur.th.Frames)
	in.addFrame(p, f, ln)
	return true
}

// gdbEcho says whether f repeats a frame of the backtrace frames, with
// its number, address, function and location: gdb's echo of a frame the
// user selected after `bt`.
func gdbEcho(frames []Frame, f Frame) bool {
	if f.Index > frames[len(frames)-1].Index {
		return false
	}
	for _, fr := range frames {
		if fr.Index == f.Index && fr.Function != "" && sameGDBFrame(fr, f) {
			return true
		}
	}
	return false
}

// sameGDBFrame reports whether two gdb frame lines describe the same frame.
func sameGDBFrame(a, b Frame) bool {
	return a.PC == b.PC && a.Function == b.Function && a.File == b.File && a.Line == b.Line
}

// gdbInline marks inline frames of a gdb backtrace as frame f arrives. gdb
// prints `0xADDR in` on the innermost frame of each inline group (and may
// omit it on #0) and no address on the other frames of the group, the
// callers the innermost one was inlined into; the last frame of a group is
// the physical function. So a frame without an address after frame #0
// continues the group of the frame before it, which is therefore inlined.
func (in *incident) gdbInline(f Frame) {
	if in.cur == nil || len(in.cur.th.Frames) == 0 || f.Index == 0 || f.PC != 0 || f.Function == "<signal handler called>" {
		return
	}
	prev := &in.cur.th.Frames[len(in.cur.th.Frames)-1]
	if prev.Index == f.Index-1 && prev.Function != "<signal handler called>" {
		prev.Inlined = true
	}
}

// coreTextInlineGroup reports whether f continues the inline group of
// last in crashsig's core text (symbolize.WriteCoreText): the same number
// and address after a frame marked `(inlined)`. gdb numbers every frame of
// an inline group on its own.
func coreTextInlineGroup(last, f Frame) bool {
	return last.Inlined && f.Index == last.Index && f.PC == last.PC && f.PC != 0
}

// lastHandlerFrame returns the index of the last signal handler's frame in
// a frame list, or -1.
func lastHandlerFrame(frames []Frame) int {
	for i := len(frames) - 1; i >= 0; i-- {
		if isHandlerFrame(frames[i].Name()) {
			return i
		}
	}
	return -1
}

// sameGDBFrame's looser twin: the same PC, or the same function when no PC
// was printed (a stop location whose argument list gdb wrapped differently).
func sameGDBFunction(a, b Frame) bool {
	if a.PC != 0 || b.PC != 0 {
		return a.PC == b.PC
	}
	an, _, _ := strings.Cut(a.Function, " (")
	bn, _, _ := strings.Cut(b.Function, " (")
	return an != "" && an == bn
}

// mayContinue says whether next can be the rest of prev, hard-wrapped by a
// chat tool at a fixed column: not when prev already ends in a complete
// `file:line` location, and not for indented lines or gdb's echo of a
// source line (`4701\t/path/file.h: No such file or directory.`).
func mayContinue(prev, next string) bool {
	if next == "" || next[0] == ' ' || next[0] == '\t' || strings.IndexByte(next, '\t') >= 0 {
		return false
	}
	if c := strings.LastIndexByte(prev, ':'); c > 0 && c+1 < len(prev) && allDigits(prev[c+1:]) && strings.Contains(prev, " at ") {
		return false
	}
	return true
}
