package scan

import (
	"fmt"
	"strconv"
	"strings"
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
	secMinidump          // Breakpad minidump_stackwalk threads
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
	sigLine                     int  // line of the signal line
	sawPrefix, sawRuntimeLogger bool // notes made once per incident
	// prefixedAt is the first line the incident took after a paste
	// prefix was removed from it, used or not (a foreign line of its gap,
	// one made blank): when the incident's span ends up holding it, the
	// removal shaped how that line was read, and finish notes it as used
	// does for the lines it uses.
	prefixedAt    int
	pcFrame       Frame // the glog `PC: @` line as a frame (the faulting frame)
	notes         []string
	split         *split // where a dump header followed an abort cause
	assertLine    bool   // a C assert() message was seen
	lastKind      lineKind
	lastLine      lineKind   // kind of the last line taken that was not blank
	boostAborted  *split     // an `Aborted at` line right after F1 header lines (format_boost.go)
	twinAborted   bool       // two `Aborted at` lines in a row: two dumps interleaved (format_glog.go glogPCNext)
	cutBy         string     // what closed the incident, when not its own end (EOF, a start marker, the next incident)
	fatalAt       glogTime   // time of the FATAL line (F3), for the abort dump's `Aborted at`
	fatalTID      string     // its thread field, as printed
	twinTID       string     // a second failing thread's, read after the first's stack (twinFatal)
	framePrefixed bool       // the last frame line carried a paste prefix
	abort         *abortMark // where the dump after an abort cause began
	gdbOrphan     int        // line of a gdb argument-list continuation without its frame
	gdbPartial    int        // line of a gdb frame number whose frame line is not whole
	fragment      int        // index of the first frame when opened by a headerless fragment (fragment.go)
	sanSummary    Frame      // the frame a sanitizer SUMMARY line names (format_sanitizer.go)
	sanFrag       int        // sanFragBare or sanFragAttested: a sanitizer report's middle without its ERROR line (format_sanitizer.go)
	sanNoStack    bool       // the sanitizer runtime died in its own mmap before printing any stack (F6.mmap_die)
	glogNoHeader  bool       // glog `@` frames opened the stack without the dump's header lines (checkDamage)
	complete      bool       // the process printed its last line for this incident: the parser closes it at once
	sanAccessCut  *stack     // headerless stack followed by ASAN's address description (format_sanitizer.go)
	shellOnly     bool       // opened by a shell's report of the crash alone (format_misc.go shellCrash)
	shell         *incident  // a shell's report alone just before this gdb session on a core (parser.go closeCurrent)
	sanLog        int        // foreign lines in a row inside a sanitizer report since a log line (format_sanitizer.go sanInterleaved)
	sanLogAt      int        // line of the first of them (> 0 once any foreign line was seen)
	sanDump       bool       // a signal dump ended a sanitizer report before its stack (format_sanitizer.go sanitizerDeath)
	boostBare     int        // line of a boost frame number alone (`4#`), whose text is on the next line (format_boost.go)
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
	case secGDB, secCoredump, secMinidump:
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
	took, done := false, false
	if in.sanReportOpen() {
		took, done = in.sanInterleaved(p, ln, k, m) // format_sanitizer.go
	}
	if !done {
		took = in.acceptLine(p, ln, k, m)
	}
	if took && ln.prefixed && in.prefixedAt == 0 {
		in.prefixedAt = ln.no
	}
	return took
}

// acceptLine is accept without the log lines a sanitizer report may
// have interleaved in it.
func (in *incident) acceptLine(p *parser, ln lineInfo, k lineKind, m []string) bool {
	in.lines++
	if in.lines > p.opts.MaxIncidentLines {
		in.c.Corrupted = true
		in.c.CorruptedReason = fmt.Sprintf("incident longer than %d lines: cut", p.opts.MaxIncidentLines)
		p.closeCurrent()
		return true
	}
	if in.twinPreamble(k, m) {
		// A second crashing thread's copy of the preamble the incident
		// already holds: the same death (one crash, one incident).
		in.event(ln, "interleaved", ln.text)
		return true
	}
	if in.closedBy(k, ln.no) {
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
		if in.sanitizerDeath(ln, m) { // format_sanitizer.go
			in.note("the signal dump at line %d ends the sanitizer report begun at line %d before its stack: one death", ln.no, c.StartLine)
			in.split, in.sanDump, in.sigLine = nil, true, ln.no
			in.signal(p, m)
			in.versionOnly = false
			in.used(ln)
			return true
		}
		if isAbortSignal(m[1]) && in.sanDeathOpen(ln.no) {
			// The sanitizer's abort, its dump header printed in the
			// middle of the report (before its stack): the report's
			// frames that follow are still its stack
			// (sanitizerFramesAfterDump); the abort-cause path below
			// goes on as for any abort after a cause.
			in.sanDump = true
			in.note("the abort dump at line %d interrupts the sanitizer report begun at line %d before its stack", ln.no, c.StartLine)
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
		if len(c.Trackers) < maxTrackers {
			b, _ := strconv.ParseInt(m[2], 10, 64)
			c.Trackers = append(c.Trackers, Tracker{Name: m[1], Bytes: b})
		}
		in.sec = secHeader
		in.versionOnly = false
		in.used(ln)
		return true

	case kFatal:
		if glogRawCheck(m[1]) && !in.hasFrames() && (in.hasSig || c.Message != "") {
			// glog's RAW_CHECK of a second thread's FATAL: the same death.
			in.event(ln, "interleaved", text)
			return true
		}
		if in.hasSig && in.sec == secBoost && (in.cur == nil || len(in.cur.th.Frames) == 0) {
			// Another thread's FATAL line inside a dump, before its frames.
			in.event(ln, "interleaved", text)
			return true
		}
		if in.twinFatal(m) {
			// Another thread's FATAL line in the same second, before the
			// signal dump of this one: both threads failed at once and
			// the first to reach glog's fatal path dies for both (one
			// death, one incident).
			in.event(ln, "interleaved", text)
			if in.hasFrames() {
				in.twinTID = m[2]
			}
			return true
		}
		if in.hasSig || c.Message != "" || in.isThreadDump() || in.hasFrames() {
			return false // a FATAL line comes before its frames
		}
		in.fatal(m[1])
		in.fatalAt, in.fatalTID = parseGlogTime(m[0]), m[2]
		c.SiteFile, c.SiteLine = glogSite(m[0])
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
		if in.twinTID != "" && !in.opened(twinStack) {
			// The second failing thread's stack (twinFatal): a thread of
			// this incident, not its crashing one.
			s := in.newStack(twinStack, 0)
			s.th.ID, _ = strconv.ParseInt(in.twinTID, 10, 64)
			in.sec = secCheck
			in.event(ln, "interleaved", text)
			return true
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

	case kSanStack:
		if in.sanStackStart(ln) { // format_sanitizer.go
			return true
		}
	case kSanAccess:
		if in.sec == secSanitizer {
			if m[4] != "" {
				// `thread T789 (alter_tablet)`: T789 is the sanitizer's
				// own thread number, the parenthesized text the thread's
				// name. A thread printed without a name (`thread T0`, the
				// main thread) is named by its number. The number is not
				// the thread's ID: a dump after the report may print the
				// kernel TID, which finish gives to a thread without one.
				in.cur.th.Name = m[4]
				if name := strings.TrimSpace(m[5]); name != "" {
					in.cur.th.Name = name
				}
			}
			in.used(ln)
			return true
		}
	case kSanEnd:
		if m != nil && m[0] == "ERROR: Failed to mmap" {
			if in.sec != secSanitizer || !strings.HasPrefix(c.SanitizerBug, "failed to ") {
				return false
			}
			// F6.mmap_die: the runtime's mmap failed again while it
			// reported the first failure; it dies without a stack, so
			// nothing after this line is the report's (no frames, no
			// signal dump of its death).
			in.sanNoStack, in.complete = true, true
			in.note("the sanitizer runtime died in its own mmap (ERROR: Failed to mmap): it prints no stack")
		}
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

	case kMinidumpReason:
		if in.hasSig || in.hasDumpFrames() || in.c.Kind != KindUnknown && in.sec != secMinidump {
			return false
		}
		in.minidumpStart(m[2] == "DUMP_REQUESTED")
		if m[1] != "" {
			c.Signal = m[1]
		}
		in.used(ln)
		return true

	case kMinidumpThread:
		if in.sec != secMinidump {
			if in.hasSig || in.hasDumpFrames() || in.c.Kind != KindUnknown {
				return false
			}
			in.minidumpStart(m[2] != "crashed")
		}
		in.minidumpThread(p, ln, 2)
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

// maxUnixTime is the last second of year 9999: a later `Aborted at` time
// is junk, and a Crash holding it could not be written as JSON (RFC 3339
// has four-digit years; FuzzPrefilter crasher 4238cb5e73b7b826).
const maxUnixTime = 253402300799
