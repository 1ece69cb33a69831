package scan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// section is the part of an incident the assembler is in.
type section uint8

const (
	secNone      section = iota
	secHeader            // dump header lines, waiting for the signal line
	secBoost             // F1 frames
	secGlog              // F2 frames (one space before the symbol)
	secCheck             // F3: FATAL line seen; message continuation and two-space frames
	secCause             // F4/F8/after a sanitizer report: waiting for the abort dump
	secSanitizer         // inside a sanitizer report
	secSanTail           // after SUMMARY: shadow bytes until ABORTING
	secJVM               // JVM summary '#' lines
	secHsErr             // hs_err frame lines
	secGDB               // gdb/pstack threads
	secJstack            // Java thread dump
	secDorisAPI          // Doris /api/stack_trace
	secDiag              // StarRocks DIAGNOSE all-threads dump
	secCoredump          // systemd-coredump stack traces
	secDone              // dump complete: only trailing extras are accepted
)

// stack is one candidate stack of an incident and where it came from.
type stack struct {
	origin string // "F1", "F2", "F3", "F6", "F5", "gdb", ...
	th     Thread
	prio   int     // higher is a better source for the crashing thread
	ids    []int64 // thread ids sharing this stack (StarRocks `N tids:` groups)
}

// incident is a Crash under construction.
type incident struct {
	c                           *Crash
	sec                         section
	stacks                      []*stack
	cur                         *stack // receiving frames
	lastIdx                     int
	gap                         int
	blank                       bool // a blank line followed the last frame
	prevText                    string
	prevNo                      int // line number of the last frame line
	hasSig                      bool
	family                      string // family of the signal dump: F1 or F2
	eof                         bool
	ended                       bool  // the dump's own end marker was seen
	gdbCur                      int64 // LWP of gdb's current thread
	gdbSig                      bool  // gdb said "Program terminated with signal"
	msgOpen                     bool  // FATAL / what() message may continue on the next lines
	lines                       int
	versionOnly                 bool // opened by a build line alone: weak until confirmed
	interleaved                 int
	sigLine                     int   // line of the signal line
	sawPrefix, sawRuntimeLogger bool  // notes made once per incident
	pcFrame                     Frame // the glog `PC: @` line as a frame (the faulting frame)
	notes                       []string
	split                       *split // where a dump header followed an abort cause
	assertLine                  bool   // a C assert() message was seen
	lastKind                    lineKind
	lastLine                    lineKind   // kind of the last line taken that was not blank
	boostAborted                *split     // an `Aborted at` line right after F1 header lines (format_boost.go)
	twinAborted                 bool       // two `Aborted at` lines in a row: two dumps interleaved (format_glog.go glogPCNext)
	cutBy                       string     // what closed the incident, when not its own end (EOF, a start marker, the next incident)
	fatalAt                     glogTime   // time of the FATAL line (F3), for the abort dump's `Aborted at`
	framePrefixed               bool       // the last frame line carried a paste prefix
	abort                       *abortMark // where the dump after an abort cause began
	gdbOrphan                   int        // line of a gdb argument-list continuation without its frame
	gdbPartial                  int        // line of a gdb frame number whose frame line is not whole
	fragment                    int        // index of the first frame when opened by a headerless fragment (fragment.go)
	sanSummary                  Frame      // the frame a sanitizer SUMMARY line names (format_sanitizer.go)
	sanFrag                     int        // sanFragBare or sanFragAttested: a sanitizer report's middle without its ERROR line (format_sanitizer.go)
	sanAccessCut                *stack     // headerless stack followed by ASAN's address description (format_sanitizer.go)
	shellOnly                   bool       // opened by a shell's report of the crash alone (format_misc.go shellCrash)
}

// abortMark is where the dump that follows an abort cause began (its
// first header line, or its first frame when it has none), with what the
// incident held then, so that the dump can be made an incident of its own
// when its frames show it is another crash's (splitAbortDump).
type abortMark struct {
	line   int // first line of the dump
	saved  Crash
	stacks int // stacks of the cause
	notes  int
	family string
	pc     Frame
	split  bool // line is the split point of the dump's header lines
}

// markAbortDump records where the dump after an abort cause begins: at
// the split point of its header lines, if any, else at line.
func (in *incident) markAbortDump(line int) {
	if in.abort != nil {
		return
	}
	m := &abortMark{line: line, saved: *in.c, stacks: len(in.stacks), notes: len(in.notes), family: in.family, pc: in.pcFrame}
	if sp := in.split; sp != nil && sp.line < line {
		m.line, m.saved, m.pc, m.split = sp.line, sp.saved, sp.pcFrame, true
		m.saved.Formats = in.c.Formats[:sp.formats:sp.formats]
	}
	m.saved.Formats = m.saved.Formats[:len(m.saved.Formats):len(m.saved.Formats)]
	in.abort = m
}

// abortStackConflict reports whether the dump after an abort cause shows
// another crash: the cause's stack (a check failure's, a sanitizer's) and
// the dump's name functions, and none of the cause's is in the dump. The
// abort dump of a check failure or a sanitizer report repeats the frames
// of the code that failed; frames of the logging, the handler and libc
// are not compared, and a dump cut before any other frame tells nothing.
func (in *incident) abortStackConflict() bool {
	m := in.abort
	if m == nil || m.stacks >= len(in.stacks) {
		return false
	}
	cause := map[string]bool{}
	for _, s := range in.stacks[:m.stacks] {
		if s.origin != "F3" && s.origin != "F6" {
			continue
		}
		for i := range s.th.Frames {
			if k := comparableName(&s.th.Frames[i]); k != "" {
				cause[k] = true
			}
		}
	}
	if len(cause) == 0 {
		return false
	}
	named := false
	for _, s := range in.stacks[m.stacks:] {
		for i := range s.th.Frames {
			k := comparableName(&s.th.Frames[i])
			if k == "" {
				continue
			}
			if cause[k] {
				return false
			}
			named = true
		}
	}
	return named
}

// comparableName is the qualified name of a frame's function for
// comparing two stacks of one crash, or "" for frames that every abort
// shares (logging, handlers, libc, runtime) or that print no name.
func comparableName(f *Frame) string {
	n := f.Name()
	if n == "" || isHandlerFrame(n) || strings.HasPrefix(n, "0x") || strings.HasPrefix(n, "?") || strings.HasPrefix(n, "<") {
		return ""
	}
	k := NameKey(n)
	if k == "" || !strings.Contains(k, "::") || strings.HasPrefix(k, "google::") || strings.HasPrefix(k, "std::") ||
		strings.HasPrefix(k, "__") || strings.HasPrefix(k, "boost::") || strings.HasPrefix(k, "os::") {
		return ""
	}
	return k
}

// splitAbortDump makes the dump after an abort cause an incident of its
// own and returns it; the incident keeps the cause as it was before the
// dump began.
func (in *incident) splitAbortDump(p *parser) *incident {
	m := in.abort
	c := in.c
	n := newIncident(p, lineInfo{no: m.line})
	nc := n.c
	*nc = *c
	nc.StartLine = m.line
	nc.Kind, nc.Message, nc.CheckExpr, nc.ExceptionType, nc.SanitizerBug = KindUnknown, "", "", "", ""
	nc.Formats = append([]string(nil), c.Formats[len(m.saved.Formats):]...)
	nc.Trackers = append([]Tracker(nil), c.Trackers[min(len(m.saved.Trackers), len(c.Trackers)):]...)
	nc.Events = nil
	var kept []Event
	for _, e := range c.Events {
		if e.Line >= m.line {
			nc.Events = append(nc.Events, e)
		} else {
			kept = append(kept, e)
		}
	}
	if m.saved.Corrupted {
		nc.Corrupted, nc.CorruptedReason = false, ""
	}
	n.stacks = in.stacks[m.stacks:]
	n.cur = n.stacks[len(n.stacks)-1]
	n.hasSig, n.family, n.sec, n.ended, n.eof, n.cutBy = in.hasSig, in.family, in.sec, in.ended, in.eof, in.cutBy
	n.pcFrame, n.sigLine, n.interleaved, n.lastIdx = in.pcFrame, in.sigLine, in.interleaved, in.lastIdx
	n.notes = append([]string(nil), in.notes[m.notes:]...)
	n.note("the dump after the abort cause at line %d shares no frame with it: another crash", c.StartLine)

	saved := m.saved
	saved.Events = kept
	saved.Source, saved.StartLine = c.Source, c.StartLine
	saved.EndLine = max(c.StartLine, m.line-1)
	*c = saved
	in.stacks = in.stacks[:m.stacks]
	in.cur = nil
	if len(in.stacks) > 0 {
		in.cur = in.stacks[len(in.stacks)-1]
	}
	in.hasSig, in.family, in.pcFrame, in.ended, in.eof = false, m.family, m.pc, false, false
	in.notes = in.notes[:m.notes]
	in.abort = nil
	in.cutBy = fmt.Sprintf("the dump at line %d, which shares no frame with it", m.line)
	return n
}

// carriedFrame is the kind of the Event by which a closed incident hands
// a frame line to the next one (the first frame of the next dump, taken
// for the last of the previous); the next incident takes it back out of
// its events (takeCarried, finish).
const carriedFrame = "carried-frame"

// takeCarried puts the frame line a closed incident handed over, on the
// line just before ln, first in the new stack.
func (in *incident) takeCarried(p *parser, ln lineInfo) {
	for i, e := range in.c.Events {
		if e.Kind != carriedFrame {
			continue
		}
		in.c.Events = append(in.c.Events[:i:i], in.c.Events[i+1:]...)
		if e.Line != ln.no-1 || in.c.StartLine != ln.no {
			return
		}
		if f, _, ok := p.parseAtFrame(e.Text); ok {
			in.c.StartLine = e.Line
			in.addFrame(p, f, lineInfo{no: e.Line, text: e.Text, prefixed: ln.prefixed})
		}
		return
	}
}

// otherPaste reports whether a frame line comes from another paste than
// the frames before it: the lines of one dump carry the same kind of
// paste prefix (a K8s or syslog timestamp, a Markdown quote) or none.
func (in *incident) otherPaste(ln lineInfo) bool {
	return in.hasDumpFrames() && ln.prefixed != in.framePrefixed
}

func newIncident(p *parser, ln lineInfo) *incident {
	return &incident{c: &Crash{Source: p.opts.Source, StartLine: ln.no, EndLine: ln.no}, lastIdx: -1}
}

func (in *incident) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, n := range in.notes {
		if n == msg {
			return
		}
	}
	if len(in.notes) < 32 {
		in.notes = append(in.notes, msg)
	}
}

func (in *incident) addFormat(f string) {
	for _, x := range in.c.Formats {
		if x == f {
			return
		}
	}
	in.c.Formats = append(in.c.Formats, f)
}

// newStack starts a candidate stack.
func (in *incident) newStack(origin string, prio int) *stack {
	s := &stack{origin: origin, prio: prio}
	in.stacks = append(in.stacks, s)
	in.cur = s
	in.lastIdx = -1
	in.blank = false
	return s
}

// addFrame appends a frame to the receiving stack, within the limits.
func (in *incident) addFrame(p *parser, f Frame, ln lineInfo) {
	if in.cur == nil {
		in.newStack("?", 0)
	}
	th := &in.cur.th
	if len(th.Frames) >= p.opts.MaxFrames {
		th.Truncated = true
		in.note("thread cut at %d frames", p.opts.MaxFrames)
		return
	}
	if f.Raw == "" {
		f.Raw = ln.text
	}
	th.Frames = append(th.Frames, f)
	in.framePrefixed = ln.prefixed
	in.prevText = ln.text
	in.prevNo = ln.no
	in.gap = 0
	in.blank = false
	in.used(ln)
}

func (in *incident) used(ln lineInfo) {
	if ln.no > in.c.EndLine {
		in.c.EndLine = ln.no
	}
	if ln.truncated {
		in.note("line %d longer than the line limit was cut", ln.no)
	}
	if ln.prefixed && !in.sawPrefix {
		in.sawPrefix = true
		in.note("removed paste prefixes (quote markers, fences, K8s/CI/syslog/dmesg timestamps)")
	}
	if ln.runtimeLogger && !in.sawRuntimeLogger {
		in.sawRuntimeLogger = true
		in.note("removed the Doris console prefix RuntimeLogger")
	}
}

// gapLimit is how many foreign lines a section tolerates before it ends.
func (in *incident) gapLimit() int {
	switch in.sec {
	case secBoost:
		return 20
	case secGlog, secCheck:
		if in.cur == nil || len(in.cur.th.Frames) == 0 {
			return 30
		}
		return 3
	case secHeader, secCause:
		return 50
	case secSanitizer:
		return 400
	case secSanTail:
		return 60
	case secGDB, secCoredump:
		return 40
	case secJstack:
		return 60
	case secHsErr, secJVM, secDorisAPI:
		return 30
	case secDiag:
		return 10
	case secDone:
		return 2
	}
	return 10
}

// accept takes one logical line. It returns false when the line does not
// belong to this incident (the caller may then close it and start anew).
func (in *incident) accept(p *parser, ln lineInfo, k lineKind, m []string) bool {
	in.lines++
	if in.lines > p.opts.MaxIncidentLines {
		in.c.Corrupted = true
		in.c.CorruptedReason = fmt.Sprintf("incident longer than %d lines: cut", p.opts.MaxIncidentLines)
		p.closeCurrent()
		return true
	}
	if in.closedBy(k) {
		return false
	}
	if in.shellOnly && k != kBlank && (k != kOther || startsIncident(k, ln.text, p)) {
		return false // the shell's report stands alone: a dump after it is another crash's
	}
	if cut, took := in.boostHeaderCut(p, ln, k, m); cut { // format_boost.go
		return took
	}
	defer func() {
		in.lastKind = k
		if k != kBlank {
			in.lastLine = k
		}
	}()
	if in.split == nil && splitHeaders[k] && !in.hasSig && (in.isCause() || in.kernelOpened()) {
		// A dump header after an abort cause: the abort's own dump, or the
		// next crash's; the signal line will tell (see kSignal).
		in.split = in.splitPoint(ln.no)
	}
	c := in.c
	text := ln.text
	switch k {
	case kBlank:
		if in.sec == secBoost && in.cur != nil && len(in.cur.th.Frames) > 0 {
			in.blank = true
		}
		if in.sec == secJstack || in.sec == secGDB || in.sec == secSanitizer {
			return true
		}
		in.msgOpen = false
		return true

	case kQueryID, kNereids, kTablet, kCommit, kAbortedAt:
		if k == kAbortedAt && in.hasSig && in.family == "F2" && in.cur != nil && len(in.cur.th.Frames) == 0 {
			in.used(ln) // interleaved twin dump, see kSignal
			return true
		}
		if in.hasSig || in.sec == secBoost || in.sec == secGlog && in.cur != nil && len(in.cur.th.Frames) > 0 || in.isThreadDump() {
			return false
		}
		in.header(k, m)
		in.sec = secHeader
		in.versionOnly = false
		in.used(ln)
		return true

	case kSignal:
		if in.hasSig && in.cur != nil && len(in.cur.th.Frames) == 0 && (in.family == "F2") == (m[2] == "") {
			// A second signal line before any frame: two threads crashed at
			// once and their one-write-per-line dumps are interleaved.
			in.corrupt("two dumps interleaved (signal lines at " + strconv.Itoa(in.sigLine) + " and " + strconv.Itoa(ln.no) + "): frames cannot be attributed to one thread")
			in.used(ln)
			return true
		}
		if in.hasSig || in.isThreadDump() {
			return false
		}
		if in.isCause() && !isAbortSignal(m[1]) {
			// An abort cause is followed by a SIGABRT dump; any other
			// signal is the next crash, with the header lines since the
			// split point.
			return in.splitAt(p, ln, k, m)
		}
		if why := in.signalConflict(m); why != "" {
			// The dump contradicts what the incident already holds (a
			// kernel line's or an abort cause's thread, time, address):
			// it is the next crash's.
			in.note("%s: the signal dump at line %d is another crash", why, ln.no)
			return in.splitAt(p, ln, k, m)
		}
		in.sigLine = ln.no
		if in.isCause() {
			in.markAbortDump(ln.no)
		}
		in.signal(p, m)
		in.versionOnly = false
		in.used(ln)
		return true

	case kPC:
		if in.hasSig && in.family == "F2" && in.cur != nil && len(in.cur.th.Frames) == 0 {
			in.used(ln) // interleaved twin dump, see kSignal
			return true
		}
		if in.hasSig || in.isThreadDump() {
			return false
		}
		if v, ok := parseHex(m[1]); ok && m[1] != "" && in.kernelOpened() && c.FaultPC != 0 && Addr(v) != c.FaultPC {
			// glog's PC is the kernel line's ip when both report one crash.
			in.note("PC: line at %d differs from the kernel line's ip: another crash", ln.no)
			return in.splitAt(p, ln, k, m)
		}
		if m[1] != "" {
			if v, ok := parseHex(m[1]); ok {
				c.FaultPC = Addr(v)
			}
		}
		in.pcFrame = Frame{PC: c.FaultPC, Raw: text}
		p.setSymbol(&in.pcFrame, strings.TrimSpace(m[2]))
		in.addFormat("F2")
		in.sec = secHeader
		in.versionOnly = false
		in.used(ln)
		return true

	case kVersion:
		if in.hasSig || in.isThreadDump() {
			return false
		}
		c.Product = ProductStarRocks
		c.Version, c.BuildType = m[1], m[2]
		c.Build = firstField(m[3])
		in.sec = secHeader
		if in.lines == 1 {
			in.versionOnly = true
		}
		in.used(ln)
		return true

	case kSRQuery:
		if in.hasSig || in.isThreadDump() {
			return false
		}
		c.Product = ProductStarRocks
		c.QueryID, c.FragmentID = m[1], m[2]
		if len(m) > 3 {
			c.PlanNodeID = m[3]
		}
		in.sec = secHeader
		in.versionOnly = false
		in.used(ln)
		return true

	case kSRFile:
		return in.srFile(p, ln, k)

	case kTracker:
		if in.hasSig || in.isThreadDump() {
			return false
		}
		c.Product = ProductStarRocks
		if len(c.Trackers) < 64 {
			b, _ := strconv.ParseInt(m[2], 10, 64)
			c.Trackers = append(c.Trackers, Tracker{Name: m[1], Bytes: b})
		}
		in.sec = secHeader
		in.versionOnly = false
		in.used(ln)
		return true

	case kFatal:
		if in.hasSig && in.sec == secBoost && (in.cur == nil || len(in.cur.th.Frames) == 0) {
			// Another thread's FATAL line inside a dump, before its frames.
			in.event(ln, "interleaved", text)
			return true
		}
		if in.hasSig || c.Message != "" || in.isThreadDump() || in.hasFrames() {
			return false // a FATAL line comes before its frames
		}
		in.fatal(m[1])
		in.fatalAt = parseGlogTime(m[0])
		if tid, err := strconv.ParseInt(m[2], 10, 64); err == nil && tid > 0 && tid <= maxKernelTID {
			c.TID = tid // glog ≤ 0.6 prints the kernel TID; 0.7 a pthread_t
		}
		in.used(ln)
		return true

	case kCheckHeader:
		if in.hasSig {
			if in.sec == secBoost && (in.cur == nil || len(in.cur.th.Frames) == 0) {
				in.event(ln, "interleaved", text)
				return true
			}
			return false
		}
		if in.isThreadDump() || in.hasStack("F3") {
			return false // a second check failure
		}
		in.addFormat("F3")
		if c.Kind == KindUnknown {
			c.Kind = KindCheck
		}
		in.sec = secCheck
		in.newStack("F3", 2)
		in.msgOpen = false
		in.used(ln)
		return true

	case kTerminate:
		if in.hasSig || in.isThreadDump() {
			if m[2] != "" && !in.isThreadDump() { // "terminate called recursively" from a second thread
				in.event(ln, "terminate", text)
				return true
			}
			return false
		}
		if c.ExceptionType != "" || c.Kind == KindTerminate {
			if m[2] != "" {
				in.event(ln, "terminate", text)
				return true
			}
			return false
		}
		in.addFormat("F4")
		c.Kind = KindTerminate
		switch {
		case m[1] != "":
			c.ExceptionType = m[1]
		case m[2] != "":
			c.Message = "terminate called recursively"
		default:
			c.Message = "terminate called without an active exception"
		}
		in.sec = secCause
		in.used(ln)
		return true

	case kWhat:
		if in.hasSig || in.isThreadDump() {
			return false
		}
		in.addFormat("F4")
		if c.Kind == KindUnknown {
			c.Kind = KindTerminate
			in.note("what() line without its `terminate called` line")
		}
		c.Message = strings.TrimSpace(m[1])
		in.msgOpen = true
		in.sec = secCause
		in.used(ln)
		return true

	case kJemalloc, kAssert, kTcmalloc:
		if in.hasSig || in.isThreadDump() {
			if in.sec == secDone || in.isThreadDump() {
				return false
			}
			in.event(ln, "allocator", text)
			return true
		}
		in.addFormat("F8")
		if c.Kind == KindUnknown {
			c.Kind = KindAssert
			in.assertLine = k == kAssert
		}
		if c.Message == "" {
			if k == kAssert && len(m) > 5 {
				c.Message = "Assertion `" + m[5] + "' failed in " + m[4]
			} else {
				c.Message = strings.TrimSpace(text)
			}
		}
		in.event(ln, "allocator", text)
		if in.sec == secNone {
			in.sec = secCause
		}
		return true

	case kMemLimit, kOOMKill, kShell, kInstrCheck, kMinidump:
		if k == kShell && in.lines == 1 && len(in.stacks) == 0 && in.c.Kind == KindUnknown {
			if m := shellCrash(text); m != nil {
				in.shellStart(m, ln)
				return true
			}
		}
		if in.sec == secDone && k != kShell || in.isThreadDump() {
			return false
		}
		in.event(ln, eventKind(k), text)
		return true

	case kAfterDump:
		// StarRocks' failure function purges jemalloc (je_mallctl lines)
		// before it calls abort(): between a check failure and its dump.
		if in.hasSig || in.isCause() && !in.hasDumpFrames() && in.sec != secNone {
			in.event(ln, "after-dump", text)
			return true
		}
		return false

	case kAsanStart, kAsanDeadly, kTsanStart, kUbsanStart:
		if in.hasSig || in.isThreadDump() || c.SanitizerBug != "" {
			return false
		}
		if k == kAsanDeadly {
			in.used(ln)
			in.sec = secSanitizer
			return true
		}
		in.sanitizerStart(k, m)
		in.used(ln)
		return true

	case kSanAccess:
		if in.sec == secSanitizer {
			if m[4] != "" {
				in.cur.th.Name = strings.TrimSpace(m[4] + " " + m[5])
			}
			in.used(ln)
			return true
		}
	case kSanEnd:
		if strings.HasPrefix(text, "SUMMARY:") {
			in.sanitizerFragment(p)
		}
		if in.sec == secSanitizer || in.sec == secSanTail {
			if strings.HasPrefix(text, "SUMMARY:") {
				in.sanitizerEnd(p, text)
				in.sec = secSanTail
				in.used(ln)
				return true
			}
			// ABORTING or the closing ===== of TSAN.
			in.sec = secCause
			in.ended = true
			in.used(ln)
			return true
		}
		if strings.HasPrefix(strings.TrimSpace(text), "=====") && !in.hasSig && in.sec == secNone {
			return true
		}

	case kJVMStart, kJVMOOM:
		if in.hasSig || in.isThreadDump() || in.hasFormat("F5") {
			return false
		}
		in.addFormat("F5")
		c.Kind = KindJVM
		if k == kJVMOOM {
			c.Message = "There is insufficient memory for the Java Runtime Environment to continue."
		}
		in.sec = secJVM
		in.used(ln)
		return true

	case kHsErrThread:
		if in.hasSig || in.isThreadDump() {
			return false
		}
		in.addFormat("F5")
		c.Kind = KindJVM
		in.sec = secHsErr
		in.newStack("F5", 1)
		in.used(ln)
		return true

	case kJstackStart:
		if in.c.Kind != KindUnknown || in.hasSig {
			return false
		}
		in.addFormat("F7")
		c.Kind = KindThreadDump
		in.sec = secJstack
		in.used(ln)
		return true

	case kJavaThread:
		if in.sec != secJstack {
			if in.c.Kind != KindUnknown || in.hasSig {
				return false
			}
			in.addFormat("F7")
			c.Kind = KindThreadDump
			in.sec = secJstack
		}
		in.javaThread(p, m)
		in.used(ln)
		return true

	case kJavaState:
		if in.sec == secJstack && in.cur != nil {
			in.cur.th.State = m[1]
			in.used(ln)
			return true
		}

	case kGDBCore, kGDBTerminated, kGDBCurrent, kGDBThread:
		if in.hasSig || (in.c.Kind != KindUnknown && in.sec != secGDB && !(k == kGDBThread && in.gdbAfterCause())) {
			return false
		}
		if (k == kGDBCore || k == kGDBTerminated) && (in.gdbSig || in.hasFrames()) {
			return false // a second core's session
		}
		in.gdb(p, k, m)
		in.used(ln)
		return true

	case kKernelSegv, kKernelTrap:
		if in.c.Kind != KindUnknown || in.hasSig {
			if in.sec == secDone {
				return false
			}
			if !in.kernelOwn(m) {
				break // another process's line: noise, its mapping is not the dump's
			}
			in.event(ln, "kernel", text)
			return true
		}
		in.kernel(k, m)
		// The line itself is an event too, as when it follows a dump: its
		// mapping (`in starrocks_be[55d0c0a00000+4000]`) gives the load
		// bias of a PIE (KernelMappings).
		in.event(ln, "kernel", text)
		in.sec = secDone
		return true

	case kDiagGroup:
		if in.sec != secDiag {
			if in.c.Kind != KindUnknown || in.hasSig {
				return false
			}
			in.addFormat("F7")
			c.Kind = KindThreadDump
			c.Product = ProductStarRocks
			in.sec = secDiag
		}
		s := in.newStack("diag", 0)
		if m[1] != "" {
			s.th.ID, _ = strconv.ParseInt(m[1], 10, 64)
		} else {
			for _, f := range strings.Split(m[3], ",") {
				if id, err := strconv.ParseInt(f, 10, 64); err == nil {
					s.ids = append(s.ids, id)
				}
			}
			if n, _ := strconv.Atoi(m[2]); n > len(s.ids) {
				in.note("group of %s threads lists %d ids", m[2], len(s.ids))
			}
			if len(s.ids) > 0 {
				s.th.ID = s.ids[0]
			}
		}
		in.used(ln)
		return true

	case kDiagFrame:
		if in.sec == secDiag && in.cur != nil {
			f := Frame{Index: len(in.cur.th.Frames), Raw: text}
			if v, ok := parseHex(m[1]); ok {
				f.PC = Addr(v)
			}
			p.setSymbol(&f, strings.TrimSpace(m[2]))
			in.addFrame(p, f, ln)
			return true
		}
		return false

	case kDiagEnd:
		if in.sec == secDiag {
			in.sec = secDone
			in.used(ln)
			return true
		}
		return false

	case kCoredumpStart:
		if in.hasSig || in.hasDumpFrames() || in.c.Kind != KindUnknown && !in.kernelOpened() && in.sec != secCoredump {
			return false
		}
		if in.kernelOpened() && !in.sameProcess(m) {
			return false // another process's kernel line
		}
		if sig := coredumpSignal(m[4], m[5]); sig != "" {
			if in.kernelOpened() && c.Signal != "" && c.Signal != sig {
				return false // not the crash the kernel line reported
			}
			c.Signal = sig
		}
		in.coredumpStart(m)
		in.used(ln)
		return true

	case kCoredumpSignal:
		if in.sec != secCoredump || in.hasDumpFrames() {
			return false
		}
		c.Signal = coredumpSignal(m[1], m[2])
		in.used(ln)
		return true

	case kCoredumpThread:
		if in.sec != secCoredump {
			if in.hasSig || in.hasDumpFrames() || in.c.Kind != KindUnknown && !in.kernelOpened() {
				return false
			}
			in.coredumpStart(nil)
		}
		if len(in.stacks) >= p.opts.MaxThreads {
			in.note("thread dump cut at %d threads", p.opts.MaxThreads)
			in.cur = &stack{}
			in.used(ln)
			return true
		}
		s := in.newStack("coredump", 1)
		s.th.ID, _ = strconv.ParseInt(m[1], 10, 64)
		if in.kernelOpened() && len(in.stacks) == 2 && in.stacks[0].th.ID != 0 && in.stacks[0].th.ID != s.th.ID {
			// The report prints the thread that dumped first: the kernel
			// line (taken by sameProcess for a thread of the process)
			// named another one.
			in.note("the kernel line names thread %d, the core dump's first thread is %d", in.stacks[0].th.ID, s.th.ID)
		}
		in.used(ln)
		return true

	case kDorisAPIStart:
		if in.c.Kind != KindUnknown || in.hasSig {
			return false
		}
		in.addFormat("F7")
		c.Kind = KindThreadDump
		c.Product = ProductDoris
		in.sec = secDorisAPI
		in.used(ln)
		return true

	case kDorisAPIThread:
		if in.sec == secDorisAPI {
			s := in.newStack("api", 0)
			s.th.ID, _ = strconv.ParseInt(m[1], 10, 64)
			s.th.Name, s.th.State = m[2], m[3]
			in.used(ln)
			return true
		}
	}
	return in.frameOrNoise(p, ln, k)
}

// dumpHeaders are the line kinds that open a dump of a family other than
// gdb's: once a gdb session is under way, any of them starts a new incident.
var dumpHeaders = map[lineKind]bool{
	kQueryID: true, kNereids: true, kTablet: true, kCommit: true, kAbortedAt: true, kSignal: true,
	kPC: true, kVersion: true, kSRQuery: true, kTracker: true, kFatal: true, kCheckHeader: true,
	kTerminate: true, kWhat: true, kJVMStart: true, kJVMOOM: true, kHsErrThread: true,
	kJstackStart: true, kAsanStart: true, kAsanDeadly: true, kTsanStart: true, kUbsanStart: true,
	kDorisAPIStart: true, kDiagGroup: true, kJemalloc: true, kAssert: true,
}

// closedBy reports whether a line of kind k ends the incident before it is
// looked at: any dump header of another family closes a gdb session (gdb
// prints no such line inside one).
//
// Within a signal dump's header (the F1 `***` lines, the StarRocks
// preamble, `Aborted at`, `PC:`), a header the dump already has, or the
// start of an abort cause (which comes before its dump, never inside it),
// begins the next incident. A kernel segfault line after a stack is the
// next crash's (before one, it joins the dump that follows).
func (in *incident) closedBy(k lineKind) bool {
	if dumpHeaders[k] && in.sec == secGDB {
		return true
	}
	if in.sec == secSanTail && sanTailEnds(k) {
		return true // after a sanitizer's SUMMARY only shadow bytes and ABORTING follow
	}
	if splitHeaders[k] && !in.hasSig && !in.isCause() && in.hasDumpFrames() {
		// Header lines come before their dump's frames: after frames
		// without a signal line (a headerless paste), they are the next
		// dump's, unless an abort cause waits for its abort dump.
		return true
	}
	if _, ok := causeKinds[k]; ok && !in.hasSig && !in.isCause() && in.hasDumpFrames() {
		// An abort cause (a check failure, a sanitizer report, terminate,
		// an assert) is printed before its dump: after a dump's frames it
		// is the next crash's.
		return true
	}
	if ck, ok := causeKinds[k]; ok && !in.hasSig && in.isCause() && ck != in.c.Kind {
		// An abort cause is followed by its SIGABRT dump only; the start
		// of another kind of cause is the next crash.
		return true
	}
	c := in.c
	switch k {
	case kQueryID:
		return c.QueryID != ""
	case kNereids:
		return c.IsNereids != ""
	case kTablet:
		return c.TabletID != ""
	case kAbortedAt:
		// Right after its twin, it is the interleaved dump of a second
		// crashing thread (see kSignal), not the next incident.
		return !c.Time.IsZero() && !in.hasSig && in.lastKind != kAbortedAt
	case kPC:
		return in.pcFrame.Raw != "" && !in.hasSig && in.lastKind != kPC
	case kVersion:
		return c.Version != "" && c.Product == ProductStarRocks
	case kSRQuery:
		return c.QueryID != "" || c.FragmentID != ""
	case kFatal, kTerminate, kAsanStart, kTsanStart, kUbsanStart, kJemalloc, kAssert, kJVMStart:
		return in.sec == secHeader && !in.isCause() && (c.Kind == KindUnknown || c.Kind == KindSignal)
	case kKernelSegv, kKernelTrap:
		return in.hasFrames()
	case kCheckHeader:
		// glog prints the check failure's header before its frames and
		// before the SIGABRT dump: after a dump's frames it is the next
		// crash's. It prints it once per check failure: past the one this
		// incident holds (even one cut before its frames, corpus
		// starrocks/078), it is the next check failure's.
		return in.sec == secHeader && !in.isCause() && (c.Kind == KindUnknown || c.Kind == KindSignal) ||
			!in.hasStack("F3") && in.hasDumpFrames() || in.sec != secCheck && in.opened("F3")
	case kGDBCore, kGDBTerminated, kJstackStart, kDorisAPIStart, kDiagGroup:
		return in.sec == secHeader // a signal dump's header, cut before its frames
	case kCoredumpStart:
		return in.sec == secHeader || in.sec == secCoredump && in.hasDumpFrames()
	case kSignal:
		// A signal line comes before its frames: after another dump's
		// frames it starts the next incident, unless it is the abort dump
		// of a cause (a check failure's frames, then its SIGABRT dump).
		return !in.hasSig && !in.isCause() && in.hasDumpFrames()
	}
	return false
}

// hasDumpFrames reports whether a stack other than a kernel line's holds a
// frame.
func (in *incident) hasDumpFrames() bool {
	for _, s := range in.stacks {
		if s.origin != "kernel" && len(s.th.Frames) > 0 {
			return true
		}
	}
	return false
}

// startsOtherStack reports whether a line no section of the incident took
// is the first frame of a stack of another family (a gdb `#0`, a boost
// `0#`, a glog `@ 0x…`): the next incident begins there.
func (in *incident) startsOtherStack(p *parser, text string) bool {
	t := strings.TrimLeft(text, " \t")
	if len(t) < 3 {
		return false
	}
	switch {
	case t[0] == '#' && isDigit(t[1]):
		if in.sec == secGDB || in.sec == secSanitizer {
			return false // after a SUMMARY (secSanTail) no frame is the report's
		}
		f, ok := p.parseGDBFrame(t)
		return ok && (f.Index == 0 || f.PC != 0)
	case t[0] == '0' && t[1] == '#':
		_, ok := p.parseBoostFrame(t)
		return ok
	case t[0] == '@' && t[1] == ' ':
		_, _, ok := p.parseAtFrame(t)
		return ok
	}
	return false
}

// opened reports whether the incident opened a stack of this origin, with
// frames or not.
func (in *incident) opened(origin string) bool {
	for _, s := range in.stacks {
		if s.origin == origin {
			return true
		}
	}
	return false
}

// hasStack reports whether the incident holds a stack of this origin with
// frames.
func (in *incident) hasStack(origin string) bool {
	for _, s := range in.stacks {
		if s.origin == origin && len(s.th.Frames) > 0 {
			return true
		}
	}
	return false
}

// splitHeaders are the header lines that may start the abort dump after an
// abort cause (a check failure, a terminate message, a sanitizer report,
// an assert or allocator message), or the next crash.
var splitHeaders = map[lineKind]bool{
	kQueryID: true, kNereids: true, kTablet: true, kCommit: true, kAbortedAt: true,
	kPC: true, kVersion: true, kSRQuery: true, kTracker: true,
}

// isCause reports whether the incident so far is an abort cause, which only
// a SIGABRT dump continues: a check failure, a terminate message, a
// sanitizer report, a C assert. Allocator messages are not: a failed
// allocation is often followed by the SIGSEGV of its null result.
func (in *incident) isCause() bool {
	switch in.c.Kind {
	case KindCheck, KindTerminate, KindSanitizer:
		return true
	case KindAssert:
		return in.assertLine
	}
	return false
}

func isAbortSignal(sig string) bool { return sig == "SIGABRT" || sig == "SIGIOT" || sig == "Signal 6" }

// split is where the header lines after an abort cause began, with what
// the incident held then, so that they can be moved to an incident of
// their own.
type split struct {
	line     int
	saved    Crash // header fields before the split point
	formats  int
	pcFrame  Frame
	versOnly bool
	own      bool // the header lines before the split point are the closed incident's alone (a cut F1 header, format_boost.go): the next one takes none of their fields
}

func (in *incident) splitPoint(line int) *split {
	return &split{line: line, saved: *in.c, formats: len(in.c.Formats), pcFrame: in.pcFrame}
}

// splitAt closes the incident at its split point and starts a new one
// there, holding the header lines since, which then takes the signal line.
func (in *incident) splitAt(p *parser, ln lineInfo, k lineKind, m []string) bool {
	sp := in.split
	if sp == nil {
		sp = in.splitPoint(ln.no)
	}
	c := in.c
	n := newIncident(p, lineInfo{no: sp.line})
	nc := n.c
	if !sp.own {
		nc.Product, nc.Version, nc.Build, nc.BuildType = c.Product, c.Version, c.Build, c.BuildType
		nc.QueryID, nc.FragmentID, nc.PlanNodeID, nc.TabletID, nc.IsNereids = c.QueryID, c.FragmentID, c.PlanNodeID, c.TabletID, c.IsNereids
	}
	nc.Trackers, nc.Time, nc.FaultPC = c.Trackers[len(sp.saved.Trackers):], c.Time, c.FaultPC
	nc.Formats = append([]string(nil), c.Formats[sp.formats:]...)
	n.pcFrame = in.pcFrame
	if sp.line > ln.no {
		nc.StartLine = ln.no
	}
	old := sp.saved
	c.Product, c.Version, c.Build, c.BuildType = old.Product, old.Version, old.Build, old.BuildType
	c.QueryID, c.FragmentID, c.PlanNodeID, c.TabletID, c.IsNereids = old.QueryID, old.FragmentID, old.PlanNodeID, old.TabletID, old.IsNereids
	c.Trackers, c.Time, c.FaultPC = old.Trackers, old.Time, old.FaultPC
	c.Formats = c.Formats[:sp.formats]
	in.pcFrame = sp.pcFrame
	if c.EndLine >= sp.line {
		c.EndLine = max(c.StartLine, sp.line-1)
	}
	in.cutBy = fmt.Sprintf("the dump header at line %d, which starts the next incident", sp.line)
	if done := in.finish(p); done != nil {
		p.out = append(p.out, done)
	}
	p.cur = n
	return n.accept(p, ln, k, m)
}

// hasFrames reports whether any stack of the incident holds a frame.
func (in *incident) hasFrames() bool {
	for _, s := range in.stacks {
		if len(s.th.Frames) > 0 {
			return true
		}
	}
	return false
}

func (in *incident) hasFormat(f string) bool {
	for _, x := range in.c.Formats {
		if x == f {
			return true
		}
	}
	return false
}

func (in *incident) isThreadDump() bool { return in.c.Kind == KindThreadDump }

// frameOrNoise handles frame lines, message continuations and foreign lines.
func (in *incident) frameOrNoise(p *parser, ln lineInfo, k lineKind) bool {
	text := ln.text
	if k == kOther && numberedStart(p, text) { // format_misc.go
		return false
	}
	switch in.sec {
	case secNone, secHeader, secBoost, secGlog, secCheck, secCause, secDone:
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
			case in.cur != nil && f.Index == 0 && len(in.cur.th.Frames) > 0 && in.cur.th.ID == 0 && in.cur.th.Name == "" && (sameGDBFrame(in.cur.th.Frames[0], f) || sameGDBFunction(in.cur.th.Frames[0], f)):
				// gdb prints the stop location (#0) when it loads the core,
				// and the user then typed `bt`: the same thread again.
				in.cur.th.Frames = in.cur.th.Frames[:0]
				in.note("gdb printed frame #0 before `bt`: kept the backtrace")
			case in.cur != nil && f.Index == 0 && len(in.cur.th.Frames) > 0 && in.cur.th.ID == 0 && in.cur.th.Name == "":
				// A second `bt` with no thread header between: the next
				// session's (thread apply all bt prints a header per thread).
				return false
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
			if f, ok := p.parseGDBFrame(t); ok && (f.Index == 0 || f.PC != 0) {
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
	// Abbreviated StarRocks dumps: `  starrocks::Foo::bar()` without addresses.
	if (in.sec == secGlog || in.sec == secHeader && in.hasSig) && k == kOther {
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

func (in *incident) event(ln lineInfo, kind, text string) {
	if len(in.c.Events) < 64 {
		in.c.Events = append(in.c.Events, Event{Line: ln.no, Kind: kind, Text: strings.TrimSpace(text)})
	}
	in.used(ln)
}

func firstField(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

func (in *incident) header(k lineKind, m []string) {
	c := in.c
	switch k {
	case kQueryID:
		c.QueryID = strings.ToLower(m[1])
		in.addFormat("F1")
	case kNereids:
		c.IsNereids = m[1]
		in.addFormat("F1")
	case kTablet:
		c.TabletID = m[1]
		in.addFormat("F1")
	case kCommit:
		c.Build = m[1]
		in.addFormat("F1")
	case kAbortedAt:
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil && sec > 0 && sec <= maxUnixTime {
			c.Time = time.Unix(sec, 0).UTC()
		}
	}
}

// maxUnixTime is the last second of year 9999: a later `Aborted at` time
// is junk, and a Crash holding it could not be written as JSON (RFC 3339
// has four-digit years; FuzzPrefilter crasher 4238cb5e73b7b826).
const maxUnixTime = 253402300799

// signal handles the F1/F2 signal line; the reason text makes it F1.
func (in *incident) signal(p *parser, m []string) {
	c := in.c
	in.hasSig = true
	c.Signal = m[1]
	if strings.HasPrefix(m[1], "Signal ") {
		c.Signal = "SIG" + strings.TrimPrefix(m[1], "Signal ")
	}
	if v, ok := parseHex(m[3]); ok {
		c.FaultAddress, c.HasFaultAddress = Addr(v), true
	}
	c.PID, _ = strconv.ParseInt(m[4], 10, 64)
	th := Thread{Crashed: true}
	if m[6] != "" {
		th.Handle = "0x" + strings.ToLower(m[6])
	}
	for _, lwp := range []string{m[5], m[7], m[8], m[9]} {
		if lwp != "" {
			th.ID, _ = strconv.ParseInt(lwp, 10, 64)
			break
		}
	}
	if th.ID == 0 && th.Handle != "" {
		if v, ok := parseHex(th.Handle); ok && v < 1<<62 {
			th.ID = int64(v)
		}
	}
	c.TID = th.ID
	if m[2] != "" {
		in.family = "F1"
		c.SignalReason = m[2]
		if c.SignalReason == "unkown detail explain" || c.SignalReason == "unknown detail explain" {
			c.SignalReason = ""
		}
		in.sec = secBoost
		in.addFormat("F1")
	} else {
		in.family = "F2"
		in.sec = secGlog
		in.addFormat("F2")
	}
	if m[10] == "" && !strings.Contains(m[0], "stack trace") {
		in.note("signal line cut short")
	}
	s := in.newStack(in.family, 3)
	s.th = th
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
		if in.cur == nil || in.cur.origin != "F3" {
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

func (in *incident) corrupt(reason string) {
	if !in.c.Corrupted {
		in.c.Corrupted = true
		in.c.CorruptedReason = reason
	} else if !strings.Contains(in.c.CorruptedReason, reason) && len(in.c.CorruptedReason) < 512 {
		in.c.CorruptedReason += "; " + reason
	}
}

// fatal handles the glog FATAL line of F3.
func (in *incident) fatal(msg string) {
	c := in.c
	in.addFormat("F3")
	c.Kind = KindCheck
	c.Message = strings.TrimSpace(msg)
	c.CheckExpr = checkExpr(c.Message)
	in.sec = secCheck
	in.msgOpen = true
}

// checkExpr extracts the expression of a `Check failed:` message without
// the values glog prints: `a == b (1 vs. 3) text` → `a == b`.
func checkExpr(msg string) string {
	rest, ok := strings.CutPrefix(msg, "Check failed: ")
	if !ok {
		if i := strings.Index(msg, "' Must be non NULL"); i > 0 && strings.HasPrefix(msg, "'") {
			return msg[1:i] + " != nullptr"
		}
		return ""
	}
	if i := strings.Index(rest, " vs. "); i > 0 {
		if j := strings.LastIndex(rest[:i], " ("); j > 0 {
			return strings.TrimSpace(rest[:j])
		}
	}
	if i := strings.Index(rest, " vs "); i > 0 { // DORIS_CHECK: "(x vs y)"
		if j := strings.LastIndex(rest[:i], " ("); j > 0 {
			return strings.TrimSpace(rest[:j])
		}
	}
	if i := strings.Index(rest, " : "); i > 0 { // PCHECK: "expr : strerror [errno]"
		return strings.TrimSpace(rest[:i])
	}
	return strings.TrimSpace(rest)
}

func (in *incident) sanitizerStart(k lineKind, m []string) {
	c := in.c
	in.addFormat("F6")
	in.sec = secSanitizer
	switch k {
	case kAsanStart:
		c.PID, _ = strconv.ParseInt(m[1], 10, 64)
		c.Message = m[2] + ": " + m[3]
		c.SanitizerBug = sanitizerBug(m[3])
		if m[2] == "LeakSanitizer" {
			c.Kind = KindLeak
			c.SanitizerBug = "memory-leak"
		} else if c.Kind == KindUnknown || c.Kind == KindAssert {
			c.Kind = KindSanitizer
		}
	case kTsanStart:
		c.Message = "ThreadSanitizer: " + m[1]
		c.SanitizerBug = m[1]
		c.PID, _ = strconv.ParseInt(m[2], 10, 64)
		c.Kind = KindSanitizer
	case kUbsanStart:
		c.Message = "runtime error: " + m[4]
		c.SanitizerBug = ubsanBug(m[4])
		c.Kind = KindSanitizer
		s := in.newStack("F6", 4)
		s.th.Crashed = true
		s.th.Frames = nil
		// The location line itself is the best frame when no stack follows.
		s.th.State = m[1] + ":" + m[2] + ":" + m[3]
		return
	}
	s := in.newStack("F6", 4)
	s.th.Crashed = true
}

// sanitizerBug reduces the ASAN description to its bug type:
// `heap-use-after-free on address 0x… at pc …` → `heap-use-after-free`.
func sanitizerBug(desc string) string {
	for _, cut := range []string{" on address ", " on unknown address", " on 0x", " at pc ", " (pc ", " for "} {
		if i := strings.Index(desc, cut); i > 0 {
			if cut == " on unknown address" {
				return desc[:i] + cut
			}
			desc = desc[:i]
		}
	}
	return strings.TrimSpace(desc)
}

// ubsanBug keeps the words of a UBSAN message before its values:
// `signed integer overflow: 9223372036854775807 + 1 cannot …` → `signed integer overflow`.
func ubsanBug(msg string) string {
	if i := strings.IndexByte(msg, ':'); i > 0 {
		return msg[:i]
	}
	words := strings.Fields(msg)
	var keep []string
	for _, w := range words {
		if strings.ContainsAny(w, "0123456789'") {
			break
		}
		keep = append(keep, w)
	}
	return strings.Join(keep, " ")
}

func (in *incident) kernel(k lineKind, m []string) {
	c := in.c
	in.addFormat("F9")
	c.Kind = KindSignal
	th := Thread{Crashed: true, Name: strings.TrimSpace(m[1])}
	th.ID, _ = strconv.ParseInt(m[2], 10, 64)
	c.TID = th.ID
	if k == kKernelSegv {
		c.Signal = "SIGSEGV"
		if v, ok := parseHex(m[3]); ok {
			c.FaultAddress, c.HasFaultAddress = Addr(v), true
		}
		if v, ok := parseHex(m[4]); ok {
			c.FaultPC = Addr(v)
		}
		c.Message = "segfault at " + m[3] + " ip " + m[4] + " error " + m[6]
		// The VMA start in `in starrocks_be[400000+9c35000]` is not the load
		// base for modern linkers (§7): keep the PC and the module, no offset.
		f := Frame{PC: c.FaultPC, Module: m[7]}
		th.Frames = append(th.Frames, f)
	} else {
		switch m[3] {
		case "trap divide error":
			c.Signal = "SIGFPE"
		case "trap invalid opcode":
			c.Signal = "SIGILL"
		default:
			c.Signal = "SIGSEGV"
		}
		c.Message = m[3]
		if v, ok := parseHex(m[4]); ok {
			c.FaultPC = Addr(v)
			th.Frames = append(th.Frames, Frame{PC: c.FaultPC})
		}
	}
	s := in.newStack("kernel", 1)
	s.th = th
}

// openParens counts '(' minus ')' in s.
func openParens(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			n++
		case ')':
			n--
		}
	}
	return n
}

// maxKernelTID is the largest kernel thread id (pid_max on 64-bit Linux).
const maxKernelTID = 1 << 22

// hsErrCurrent reads the crashing thread of an hs_err file:
// `Current thread (0x…):  JavaThread "Thread-12" [_thread_in_native, id=41890, stack(…)]`.
var hsErrCurrent = mustCompile(`^Current thread \(0x[0-9a-f]+\):\s+\w+ "(.*)" \[\w+, id=(\d+)`)

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

// causeKinds are the lines that start an abort cause, with the kind of
// crash they start.
var causeKinds = map[lineKind]Kind{
	kFatal: KindCheck, kCheckHeader: KindCheck, kTerminate: KindTerminate, kWhat: KindTerminate,
	kAsanStart: KindSanitizer, kTsanStart: KindSanitizer, kUbsanStart: KindSanitizer,
	kAssert: KindAssert, kJVMStart: KindJVM, kJVMOOM: KindJVM,
}

// kernelOpened reports whether the incident began with a kernel
// segfault or trap line (F9), which a dump of the same crash may follow.
func (in *incident) kernelOpened() bool {
	return len(in.stacks) > 0 && in.stacks[0].origin == "kernel"
}

// kernelOwn says whether a kernel line inside a dump (kKernelSegv or
// kKernelTrap submatches: comm, TID) can be about the dump's process: when
// the dump printed its PID, the kernel's `comm[TID]` must name the PID
// (the main thread) or the dump's thread. Another process's line would
// give the dump its mapping (KernelMappings, the load bias of a PIE).
func (in *incident) kernelOwn(m []string) bool {
	t, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || t == 0 || in.c.PID == 0 {
		return true
	}
	return t == in.c.PID || t == in.c.TID
}

// sameProcess says whether the kernel line that opened the incident can be
// about the process of a systemd-coredump report (kCoredumpStart
// submatches: PID, comm). The kernel prints the crashing thread,
// `comm[TID]`: the main thread when TID is the PID, and then its comm is
// the process's; another thread's TID was allocated after the PID (and its
// name may differ), so a TID below the PID is another process's (a PID
// counter that wrapped around in between gives two incidents, not a wrong
// one).
func (in *incident) sameProcess(m []string) bool {
	pid, err := strconv.ParseInt(m[1], 10, 64)
	ks := in.stacks[0].th
	if err != nil || pid == 0 || ks.ID == 0 {
		return true
	}
	if ks.ID == pid {
		return ks.Name == "" || m[2] == "" || ks.Name == m[2]
	}
	return ks.ID > pid
}

// signalConflict says why a signal line (the kSignal submatches) cannot
// be the dump of the crash the incident holds so far, or "". Facts that
// two reports of one crash share: the kernel line's signal, fault address
// and thread id (`comm[TID]`) are those of the dump; an abort cause runs
// in the thread the SIGABRT dump names, in the process a sanitizer report
// names, and the dump's `Aborted at` follows the FATAL line's time within
// a minute (in the local time zone, a whole number of quarter hours from
// UTC).
func (in *incident) signalConflict(m []string) string {
	c := in.c
	tid := int64(0)
	for _, s := range []string{m[5], m[7], m[8], m[9]} {
		if s != "" {
			tid, _ = strconv.ParseInt(s, 10, 64)
			break
		}
	}
	pid, _ := strconv.ParseInt(m[4], 10, 64)
	sig := m[1]
	if strings.HasPrefix(sig, "Signal ") {
		sig = "SIG" + strings.TrimPrefix(sig, "Signal ")
	}
	if in.kernelOpened() {
		ks := in.stacks[0].th
		switch {
		case c.Signal != "" && sig != c.Signal:
			return "the kernel line reports " + c.Signal + ", the dump " + sig
		case ks.ID != 0 && tid != 0 && ks.ID != tid:
			return fmt.Sprintf("the kernel line names thread %d, the dump thread %d", ks.ID, tid)
		case c.HasFaultAddress && sig == "SIGSEGV" && m[3] != "":
			if v, ok := parseHex(m[3]); ok && Addr(v) != c.FaultAddress {
				return fmt.Sprintf("the kernel line's fault address %s differs from the dump's %s", c.FaultAddress, Addr(v))
			}
		}
		return ""
	}
	if !in.isCause() {
		return ""
	}
	switch {
	case c.Kind == KindCheck && c.TID != 0 && tid != 0 && c.TID != tid:
		return fmt.Sprintf("the FATAL line's thread %d is not the dump's %d", c.TID, tid)
	case c.Kind == KindSanitizer && c.PID != 0 && pid != 0 && c.PID != pid:
		return fmt.Sprintf("the sanitizer report's process %d is not the dump's %d", c.PID, pid)
	case c.Kind == KindCheck && in.fatalAt.ok && !c.Time.IsZero() && !in.fatalAt.near(c.Time):
		return "the dump's Aborted at time does not follow the FATAL line's"
	}
	return ""
}

// glogTime is the local time a glog line prints (`F0611 08:02:41.118`:
// no year, no zone; `F20240611 …` with the year).
type glogTime struct {
	ok                bool
	year, month, day  int // year 0: not printed
	hour, min, second int
}

// parseGlogTime reads the time of a glog line.
func parseGlogTime(s string) glogTime {
	var t glogTime
	if len(s) < 2 {
		return t
	}
	i := 1
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	d := s[1:i]
	switch len(d) {
	case 4:
	case 8:
		t.year, _ = strconv.Atoi(d[:4])
		d = d[4:]
	default:
		return t
	}
	t.month, _ = strconv.Atoi(d[:2])
	t.day, _ = strconv.Atoi(d[2:])
	r := s[i:]
	if len(r) < 9 || r[0] != ' ' || r[3] != ':' || r[6] != ':' {
		return t
	}
	var err1, err2, err3 error
	t.hour, err1 = strconv.Atoi(r[1:3])
	t.min, err2 = strconv.Atoi(r[4:6])
	t.second, err3 = strconv.Atoi(r[7:9])
	t.ok = err1 == nil && err2 == nil && err3 == nil && t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= 31
	return t
}

// near reports whether an abort at (UTC, whole seconds) can follow the
// FATAL line printed at local time t: at most two minutes later, in a
// zone a whole number of quarter hours away from UTC, at most 14 hours.
func (t glogTime) near(at time.Time) bool {
	years := []int{t.year}
	if t.year == 0 {
		years = []int{at.Year() - 1, at.Year(), at.Year() + 1}
	}
	for _, y := range years {
		local := time.Date(y, time.Month(t.month), t.day, t.hour, t.min, t.second, 0, time.UTC)
		diff := int64(at.Sub(local) / time.Second) // = delay - zone offset
		for off := int64(-14 * 3600); off <= 14*3600; off += 900 {
			if delay := diff + off; delay >= -2 && delay <= 120 {
				return true
			}
		}
	}
	return false
}

// coredumpStart enters a systemd-coredump report; m are the submatches of
// its `Process N (comm) … dumped core` line, or nil when the report starts
// at a thread's stack.
func (in *incident) coredumpStart(m []string) {
	c := in.c
	in.addFormat("F7")
	in.sec = secCoredump
	in.cur = nil
	if c.Kind == KindUnknown {
		c.Kind = KindSignal // systemd-coredump runs for a signal that dumps core
	}
	if m != nil && m[1] != "" {
		c.PID, _ = strconv.ParseInt(m[1], 10, 64)
		switch comm := m[2]; {
		case strings.Contains(comm, "starrocks_be"):
			c.Product = ProductStarRocks
		case strings.Contains(comm, "doris_be"), strings.Contains(comm, "palo_be"):
			c.Product = ProductDoris
		}
	}
}
