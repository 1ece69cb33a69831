// Where an incident ends, splits or hands frames on: abort dumps after a
// check failure, carried frames, the headers that close or split an incident.

package scan

import (
	"fmt"
	"strings"
)

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
		if s.origin != "F3" && s.origin != "F6" && s.origin != twinStack {
			continue // the abort dump may be either failing thread's
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

// dumpHeaders are the line kinds that open a dump of a family other than
// gdb's: once a gdb session is under way, any of them starts a new incident.
var dumpHeaders = map[lineKind]bool{
	kQueryID: true, kNereids: true, kTablet: true, kCommit: true, kAbortedAt: true, kSignal: true,
	kPC: true, kVersion: true, kSRQuery: true, kTracker: true, kFatal: true, kCheckHeader: true,
	kTerminate: true, kWhat: true, kJVMStart: true, kJVMOOM: true, kHsErrThread: true,
	kJstackStart: true, kAsanStart: true, kAsanDeadly: true, kTsanStart: true, kUbsanStart: true,
	kDorisAPIStart: true, kDiagGroup: true, kJemalloc: true, kAssert: true,
}

// ubsanGoesOn reports whether a line of kind k after the SUMMARY of a
// UBSAN report that printed no stack is the start of the signal dump the
// undefined behaviour led to: UBSAN reports and lets the process go on
// (halt_on_error is off by default), and the null call or wild read it
// reported faults the next instant (a `member call on null pointer`, then
// the SIGSEGV of that call). Only a signal dump's header lines and signal
// line qualify, while the report is still open to its death
// (sanDeathOpen); sanitizerDeath then takes the dump into the report.
func (in *incident) ubsanGoesOn(k lineKind, no int) bool {
	return (splitHeaders[k] || k == kSignal) && !in.hasSig && strings.HasPrefix(in.c.Message, "runtime error: ") && in.sanDeathOpen(no)
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
func (in *incident) closedBy(k lineKind, no int) bool {
	if dumpHeaders[k] && in.sec == secGDB {
		return true
	}
	if in.sec == secSanTail && sanTailEnds(k) && !in.ubsanGoesOn(k, no) {
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
	case kMinidumpReason:
		return in.sec == secHeader || in.sec == secMinidump && in.hasDumpFrames()
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

// twinPreamble reports whether a StarRocks preamble line (the build line,
// the query_id line) repeats the values of the one the incident holds
// while no signal dump and no frame has followed: dump_trace_info prints
// the preamble once per crashing thread, so two threads failing at once
// print it twice before the one `Aborted at` (testdata/defects/starrocks/
// clone-expr-nullable-sum-check-non-numeric-column.txt). A fragment
// instance id is unique to one execution (a retried query gets new ids),
// so the same non-zero ids twice are one death; other ids, or all-zero
// ones, start the next crash's preamble.
func (in *incident) twinPreamble(k lineKind, m []string) bool {
	if k != kVersion && k != kSRQuery {
		return false // every line of an incident comes here: the kind first
	}
	c := in.c
	if in.hasSig || c.Product != ProductStarRocks || strings.Trim(c.QueryID, "0-") == "" || in.hasFrames() {
		// All-zero ids (no task attached) are the same for any two
		// crashes of background threads: they say nothing about one death.
		return false
	}
	if k == kVersion {
		return len(m) > 3 && c.Version != "" && c.Version == m[1] && c.BuildType == m[2] && c.Build == firstField(m[3])
	}
	return len(m) >= 3 && c.QueryID == m[1] && c.FragmentID == m[2] && (len(m) < 4 || c.PlanNodeID == m[3])
}

// twinFatal reports whether a glog FATAL line (m from classify: the line,
// its message, its thread) is another thread's, printed in the same or
// the next second as the check failure the incident holds, before its
// signal dump: before any frame, or after the check failure's own stack
// (then the second thread's `Check failure stack trace` and frames that
// may follow are read into a stack of its own, twinStack).
func (in *incident) twinFatal(m []string) bool {
	c := in.c
	if c.Kind != KindCheck || c.Message == "" || in.hasSig || !in.fatalAt.ok || len(m) < 3 {
		return false
	}
	if in.hasFrames() && (!in.hasStack("F3") || in.opened(twinStack)) {
		// After frames only the check failure's own stack may have been
		// read (the second thread prints its FATAL line while the first
		// prints its stack), and one second thread is read at most.
		return false
	}
	if m[2] == in.fatalTID {
		return false // one thread dies once: its next FATAL is another crash
	}
	return in.fatalAt.sameMoment(parseGlogTime(m[0]))
}

// twinStack is the origin of a second failing thread's check-failure
// stack: kept as a thread of the incident that is not the crashing one.
const twinStack = "F3-twin"
