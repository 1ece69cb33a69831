package scan

import (
	"fmt"
	"strconv"
	"strings"
)

// Sanitizer reports (F6): ASAN, LSAN, MSAN, UBSAN, TSAN; formats spec §4 F6.
// Frames (`    #0 0x… in f file:line:col`) are parsed by parseSanitizerFrame.
var sanitizerRules = []lineRule{
	{id: "F6.asan_start", kind: kAsanStart, prefix: "==",
		re: mustCompile(`^==(\d+)==ERROR: (AddressSanitizer|LeakSanitizer|MemorySanitizer|ThreadSanitizer): (.*)$`)},
	// A sanitizer runtime's own CHECK, then the stack of the check
	// (PRINT_CURRENT_STACK_CHECK: __asan::CheckUnwind,
	// __sanitizer::CheckFailed, the runtime's frames, then the program's).
	// compiler-rt sanitizer_termination.cpp prints `AddressSanitizer:
	// CHECK failed: asan_thread.cpp:369 "((ptr[0] == …)) != (0)" (0x0,
	// 0x0) (tid=13525)`; older runtimes printed it through Report:
	// `==PID==AddressSanitizer CHECK failed: file:line "cond" (0x…, 0x…)`.
	// The groups of F6.asan_start (pid, tool, description), the
	// description without the thread number (it differs from run to run),
	// then the check's condition (the same check fails at another line of
	// another runtime version).
	{id: "F6.check_failed", kind: kAsanStart, contains: "Sanitizer",
		re: mustCompile(`^(?:==(\d+)==)?((?:Address|HWAddress|Thread|Memory|Leak|UndefinedBehavior)Sanitizer):? (CHECK failed: \S+:\d+ "(.*)" \(0x[0-9a-f]+, 0x[0-9a-f]+\))(?: \(tid=\d+\))?$`)},
	// The runtime's own mmap failure (sanitizer_common
	// ReportMmapFailureAndDie: `==45593==ERROR: AddressSanitizer failed
	// to allocate 0x0 (0) bytes of ReadFileToBuffer (error code: 22)`,
	// then `ERROR: Failed to mmap`): no colon after the tool, no stack.
	// The groups of F6.asan_start, then the verb and what was being
	// mapped (the size and errno stay in the message).
	{id: "F6.mmap_failed", kind: kAsanStart, prefix: "==",
		re: mustCompile(`^==(\d+)==ERROR: ((?:Address|HWAddress|Thread|Memory|Leak|UndefinedBehavior)Sanitizer) (failed to (\w+) 0x[0-9a-f]+ \(\d+\) bytes of (.+?)(?: \((?:error code|errno): \d+\)|: \d+))$`)},
	// ReportMmapFailureAndDie when reporting fails again (the recursion
	// guard's RawWrite, then Die): the last line of such a report.
	{id: "F6.mmap_die", kind: kSanEnd, prefix: "ERROR: Failed to mmap",
		re: mustCompile(`^ERROR: Failed to mmap$`)},
	{id: "F6.asan_end", kind: kSanEnd, prefix: "==",
		re: mustCompile(`^==\d+==ABORTING`)},
	{id: "F6.tsan_delim", kind: kSanEnd, prefix: "==================",
		re: mustCompile(`^=+$`)},
	{id: "F6.deadly", kind: kAsanDeadly, prefix: "AddressSanitizer:DEADLYSIGNAL"},
	{id: "F6.tsan_start", kind: kTsanStart, prefix: "WARNING: ThreadSanitizer: ",
		re: mustCompile(`^WARNING: ThreadSanitizer: (.+?)(?: \(pid=(\d+)\))?$`)},
	{id: "F6.summary", kind: kSanEnd, prefix: "SUMMARY: ",
		re: mustCompile(`^SUMMARY: (?:AddressSanitizer|LeakSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer|MemorySanitizer): (.*)$`)},
	{id: "F6.access", kind: kSanAccess, prefix: "",
		contains: " of size ",
		re:       mustCompile(`^(READ|WRITE|Read|Write|Previous read|Previous write|Atomic read|Atomic write) of size (\d+) at (0x[0-9a-f]+) (?:thread (T\d+)(?: \((.*)\))?|by (?:thread (T\d+)|main thread))`)},
	{id: "F6.ubsan_start", kind: kUbsanStart, contains: ": runtime error: ",
		re: mustCompile(`^(\S+?):(\d+):(\d+): runtime error: (.*)$`)},
	// The headers of the stacks ASAN prints after the access stack
	// (compiler-rt asan_descriptions.cpp DescribeHeapAddress,
	// DescribeThread): `freed by thread T455 (FragmentMgrThre) here:`,
	// `previously allocated by thread T455 (…) here:`, `Thread T456 (…)
	// created by T0 here:` (TSAN: `… created by main thread at:`). Inside
	// a report they are what isSanitizerStackHeader says; at the start of
	// a paste they open a report fragment whose stack is auxiliary
	// (sanStackStart).
	{id: "F6.freed_by", kind: kSanStack, prefix: "freed by ",
		re: mustCompile(`^freed by (?:thread T\d+|main thread)(?: \(.*\))? here:$`)},
	{id: "F6.allocated_by", kind: kSanStack, prefix: "previously allocated by ",
		re: mustCompile(`^previously allocated by (?:thread T\d+|main thread)(?: \(.*\))? here:$`)},
	{id: "F6.created_by", kind: kSanStack, prefix: "Thread T",
		re: mustCompile(`^Thread T\d+(?: \(.*\))? created by (?:T\d+|main thread|unknown thread)(?: \(.*\))? (?:here|at):$`)},
}

// Lines that introduce the further stacks of a sanitizer report (ASAN
// `freed by thread T455 (…) here:`, `previously allocated by …`, `Thread
// T456 (…) created by T0 here:`, LSAN `Direct leak of … allocated from:`,
// TSAN `Previous read … by thread T3:`, `Location is heap block …`,
// `Mutex M77 … created at:`). Each must end with a colon.
var (
	sanitizerStackContains = []string{" here:", "allocated from:", " by thread ", " by main thread"}
	sanitizerStackPrefixes = []string{"Location is", "Thread T", "Mutex "}
)

func isSanitizerStackHeader(t string) bool {
	if !strings.HasSuffix(t, ":") {
		return false
	}
	for _, c := range sanitizerStackContains {
		if strings.Contains(t, c) {
			return true
		}
	}
	for _, p := range sanitizerStackPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// sanitizerSummary parses the last line of an ASAN/TSAN/UBSAN/MSAN report,
// `SUMMARY: AddressSanitizer: heap-use-after-free /path/file.cpp:331 in ns::f(int) const`
// (compiler-rt sanitizer_common ReportErrorSummary: the bug type, then the
// location of the first frame of the crash stack that is not the
// runtime's own, as `file:line[:col] in function`, or `(module+0xoff)`
// when the binary has no debug information). It returns the bug type and
// that location as a frame; ok is false for LSAN's byte counts and for
// lines that name no function.
func (p *parser) sanitizerSummary(text string) (bug string, f Frame, ok bool) {
	m := sanitizerSummaryRe.FindStringSubmatch(text)
	if m == nil {
		return "", Frame{}, false
	}
	bug, loc, fn := m[1], m[2], strings.TrimSpace(m[3])
	f = Frame{Raw: text}
	if file, line, col, ok := splitFileLine(loc); ok && !strings.ContainsAny(file, "()") {
		f.File, f.Line, f.Column = file, line, col
	} else if mod, off, ok := parseModuleOffset(loc); ok {
		f.Module, f.Offset, f.HasOffset = mod, Addr(off), true
	} else {
		return "", Frame{}, false // LSAN: `100 byte(s) leaked in 1 allocation(s).`
	}
	if isUnknownSymbol(fn) {
		return bug, Frame{}, false
	}
	p.setFunction(&f, fn)
	return bug, f, true
}

// sanitizerSummaryRe: `SUMMARY: <Tool>: <bug> <location> in <function>`;
// the bug type may have blanks (TSAN's `data race`), the location has
// none, the function may be empty (UBSAN without symbols).
var sanitizerSummaryRe = mustCompile(`^SUMMARY: (?:AddressSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer|MemorySanitizer|HWAddressSanitizer): (\S.*?) (\S+) in ?(.*)$`)

// sanitizerShaped reports whether a frame line has the sanitizer
// symbolizer's shape (`    #3 0x55d1… in f file:line:col` or
// `… (module+0xoff)`): one blank after the frame number, then an address
// printed without leading zeros. gdb left-aligns the frame number in two
// columns (`#3  0x… in f (…) at file:line`) and pads addresses to 16 hex
// digits; the sanitizers indent their frames (pastes may lose that).
func sanitizerShaped(raw string) bool {
	t := strings.TrimLeft(raw, " \t")
	idx, rest, ok := hashIndex(t)
	if !ok || !strings.HasPrefix(rest, "0x") {
		return false
	}
	i := strings.IndexByte(t, ' ')
	if i < 0 || i+1 >= len(t) || t[i+1] == ' ' {
		return false
	}
	addr := rest
	if j := strings.IndexByte(rest, ' '); j > 0 {
		addr = rest[:j]
	}
	return len(t) < len(raw) || idx < 10 || len(addr) != 18
}

// sanitizerFragment turns an incident opened by headerless frames (taken
// for a gdb backtrace) into the rest of a sanitizer report, when a line
// only a sanitizer report has follows them: a stack header (`Thread T455
// (…) created by T0 here:`, `freed by thread …`), an address description
// or its SUMMARY. Where a stack's header is cut, the stack may be any of
// the report's: the access stack, or the freed-by, allocated-by or
// thread-creation stacks that ASAN prints after it (compiler-rt
// asan_descriptions.cpp), which are not where it crashed. So the frames
// become auxiliary stacks, and chooseSanitizerCrash decides at the end.
// An incident opened by a SUMMARY line (a SUMMARY pasted alone,
// sanitizerSummaryStarts) becomes a sanitizer report with no stack yet.
func (in *incident) sanitizerFragment(p *parser) bool {
	if in.sec == secNone && len(in.stacks) == 0 && len(in.c.Formats) == 0 && !in.hasSig && in.c.Kind == KindUnknown && in.c.Message == "" {
		in.addFormat("F6")
		in.sec = secSanitizer
		in.c.Kind = KindSanitizer
		in.sanFrag = sanFragAttested
		in.note("sanitizer SUMMARY line without the report before it")
		return true
	}
	if !in.sanitizerShapedGDB() {
		return false
	}
	in.toSanitizer(p)
	if in.c.Kind == KindUnknown {
		in.c.Kind = KindSanitizer
	}
	in.sanFrag = sanFragAttested
	in.note("sanitizer frames without the report's first lines: stacks whose header is cut may be any of the report's")
	return true
}

// Kinds of sanitizer fragments (incident.sanFrag): a run of headerless
// sanitizer frames alone (sanitizerRun), or one that a line only a
// sanitizer report prints attests (a stack header, an address
// description, the SUMMARY: sanitizerFragment).
const (
	sanFragBare = 1 + iota
	sanFragAttested
)

// sanitizerShapedGDB says whether the incident so far is headerless frames
// read as a gdb backtrace that all have the sanitizer symbolizer's shape
// (sanitizerShaped), with no signal and no sanitizer report line.
func (in *incident) sanitizerShapedGDB() bool {
	if in.sec != secGDB || in.hasSig || len(in.stacks) == 0 || in.hasFormat("F6") {
		return false
	}
	for _, s := range in.stacks {
		if s.origin != "gdb" || s.th.ID != 0 || s.th.Name != "" {
			return false
		}
		for _, f := range s.th.Frames {
			if !sanitizerShaped(f.Raw) {
				return false
			}
		}
	}
	return true
}

// toSanitizer re-reads the gdb stacks of sanitizerShapedGDB as sanitizer
// stacks whose header is cut (F6-aux): format F6 instead of F7, frames
// parsed as `fn file:line:col` (not gdb's `fn (args) at file:line`), and
// the gdb notes and damage marks dropped (a sanitizer frame line is not a
// gdb frame line cut short).
func (in *incident) toSanitizer(p *parser) {
	fs := in.c.Formats[:0]
	for _, x := range in.c.Formats {
		if x != "F7" {
			fs = append(fs, x)
		}
	}
	in.c.Formats = fs
	in.addFormat("F6")
	for _, s := range in.stacks {
		s.origin = "F6-aux"
		for i, f := range s.th.Frames {
			if g, ok := p.parseSanitizerFrame(f.Raw); ok {
				s.th.Frames[i] = g
			}
		}
	}
	notes := in.notes[:0]
	for _, n := range in.notes {
		if !strings.HasPrefix(n, noteGDBStartsAt) {
			notes = append(notes, n)
		}
	}
	in.notes = notes
	in.sec = secSanitizer
	in.gdbOrphan, in.gdbPartial = 0, 0
}

// sanitizerRun makes a headerless run of sanitizer frames that nothing
// else in the text attests (no stack header, no SUMMARY) a sanitizer
// fragment (sanFragBare) before the crashing thread is chosen: `    #3
// 0x55d1c2a in doris::vectorized::Foo::bar(…) /root/doris/be/src/x.cpp:12:5`
// is not a gdb frame. Its stack is the crash stack, of a crash of unknown
// kind, unless its frame 0 is a thread-creation frame (sanitizerAuxTop):
// ASAN prints the stack of the call that created the thread, which is not
// where it crashed. finishSanitizerFragment then keeps it or drops it.
func (in *incident) sanitizerRun(p *parser) {
	if in.sanFrag != 0 || in.c.Kind != KindUnknown || in.c.Message != "" || !in.sanitizerShapedGDB() {
		return
	}
	in.toSanitizer(p)
	in.sanFrag = sanFragBare
	for _, s := range in.stacks {
		if len(s.th.Frames) == 0 {
			continue
		}
		if role := sanitizerAuxTop(s.th.Frames); role != "" {
			s.th.State = auxTopState(s.th.Frames, role)
			continue
		}
		s.origin = "F6"
		return
	}
}

// sanitizerAuxTops names the frames 0 of the stacks a sanitizer report
// prints besides the crash stack that can be told by that frame alone:
// the call that created a thread (`Thread T12 (…) created by T0 here:`,
// compiler-rt asan_thread.cpp / asan_descriptions.cpp DescribeThread).
// The stack of a freed or allocated block starts in the allocator's
// interceptors (free, operator delete, malloc, operator new), as do the
// crash stacks of a double free or a bad allocation size: those frames
// do not tell the stacks apart, so they are not listed.
var sanitizerAuxTops = []struct{ fn, role string }{
	{"pthread_create", "thread-creation"},
	{"pthread_create@@GLIBC_2.2.5", "thread-creation"},
	{"pthread_create@GLIBC_2.2.5", "thread-creation"},
}

// sanitizerCreationCallers are the functions of the backends and of the
// C++ library that create a thread, by the qualified name's end (no
// namespace, no template arguments): the frames of a thread-creation
// stack above pthread_create (Doris and StarRocks util/thread.cpp
// Thread::create -> Thread::start_thread -> pthread_create; their
// util/threadpool.cpp ThreadPoolBuilder::build -> ThreadPool::init ->
// ThreadPool::create_thread -> Thread::create; std::thread's
// constructor -> _M_start_thread).
var sanitizerCreationCallers = []string{
	"Thread::start_thread", "Thread::create", "ThreadPool::create_thread", "ThreadPool::init",
	"ThreadPoolBuilder::build", "std::thread::_M_start_thread", "std::thread::thread",
}

// sanitizerAuxTop returns the role of a stack told by its first frame,
// else "": a frame 0 of sanitizerAuxTops (the interceptor prefixes
// `__interceptor_`, `___interceptor_` and `__wrap_` ignored), or, in a
// stack cut above its frame 0, a first frame that creates a thread
// (sanitizerCreationCallers): the paste starts inside a `Thread T12 (…)
// created by T0 here:` stack whose pthread_create frame is cut. A crash
// stack (an access stack's frame 0 is where the access is) is never cut
// inside the thread-creation code but at its start: these frames are at
// the top of a stack only when pthread_create was above them.
func sanitizerAuxTop(frames []Frame) string {
	if len(frames) == 0 {
		return ""
	}
	if frames[0].Index > 0 {
		if creationCaller(frames[0].Name()) {
			return "thread-creation"
		}
		return ""
	}
	fn := frames[0].Name()
	if i := strings.IndexByte(fn, '('); i > 0 {
		fn = fn[:i]
	}
	fn = strings.TrimSpace(fn)
	for _, pre := range []string{"___interceptor_", "__interceptor_", "__wrap_"} {
		if strings.HasPrefix(fn, pre) {
			fn = fn[len(pre):]
			break
		}
	}
	for _, t := range sanitizerAuxTops {
		if fn == t.fn {
			return t.role
		}
	}
	return ""
}

// auxTopState is the State of a stack that sanitizerAuxTop recognized.
func auxTopState(frames []Frame, role string) string {
	if n := frames[0].Index; n > 0 {
		cut := "#0"
		if n > 1 {
			cut = fmt.Sprintf("#0-#%d", n-1)
		}
		return fmt.Sprintf("%s stack (header and frames %s cut; recognized by its frame #%d)", role, cut, n)
	}
	return role + " stack (header cut; recognized by its frame 0)"
}

// creationCaller says whether a function name is one of
// sanitizerCreationCallers: its qualified name without template
// arguments ends with one of them after a `::` or is one of them.
func creationCaller(name string) bool {
	k := stripTemplateArgs(NameKey(name))
	for _, c := range sanitizerCreationCallers {
		if k == c || strings.HasSuffix(k, "::"+c) {
			return true
		}
	}
	return false
}

// stripTemplateArgs removes the template argument lists from a qualified
// name (`doris::Thread::create<void (doris::ThreadPool::*)()>` ->
// `doris::Thread::create`).
func stripTemplateArgs(k string) string {
	if strings.IndexByte(k, '<') < 0 {
		return k
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c == '<':
			depth++
		case c == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sanStackStart opens a sanitizer report fragment at a stack header
// (kSanStack) that begins a paste, before any other line of the
// incident: the stack after it is one of the report's auxiliary stacks,
// never the crash stack, and the report's ERROR line and access stack
// are not in the text (chooseSanitizerCrash, finishSanitizerFragment).
// It reports false when the incident holds something already; the line
// is then what isSanitizerStackHeader makes of it inside a report.
func (in *incident) sanStackStart(ln lineInfo) bool {
	if in.sec != secNone || len(in.stacks) > 0 || len(in.c.Formats) > 0 || in.hasSig || in.c.Kind != KindUnknown || in.c.Message != "" {
		return false
	}
	in.addFormat("F6")
	in.sec = secSanitizer
	in.c.Kind = KindSanitizer
	in.sanFrag = sanFragAttested
	in.note("sanitizer report starting at a stack header: the report's first lines are cut")
	s := in.newStack("F6-aux", 0)
	s.th.State = strings.TrimSuffix(strings.TrimSpace(ln.text), ":")
	in.used(ln)
	return true
}

// sanitizerCrashPlaceholder gives a sanitizer report whose crash stack is
// not in the text (chooseSanitizerCrash found none) an empty crashing
// thread, first, so that none of the report's other stacks (freed by,
// allocated by, thread creation) is taken for the crash stack. LSAN's
// reports have no crash stack and get none.
func (in *incident) sanitizerCrashPlaceholder() {
	if c := in.c; in.hasFormat("F6") && c.Kind != KindLeak && c.CrashingThread() == nil && len(c.Threads) > 0 {
		c.Threads = append([]Thread{{Crashed: true, Truncated: true, Frames: []Frame{}}}, c.Threads...)
	}
}

// sanitizerSummaryStarts says whether a SUMMARY line seen outside an
// incident opens one: it does when it names a bug and a frame
// (sanitizerSummary), the crash site of a report pasted without the rest
// (LeakSanitizer's byte counts name no frame, and no crash).
func sanitizerSummaryStarts(p *parser, text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "SUMMARY: ") {
		return false
	}
	_, _, ok := p.sanitizerSummary(t)
	return ok
}

// sanitizerEnd records the SUMMARY line of a sanitizer report.
func (in *incident) sanitizerEnd(p *parser, text string) {
	bug, f, ok := p.sanitizerSummary(text)
	if bug != "" && in.c.SanitizerBug == "" {
		in.c.SanitizerBug = bug
		if in.c.Message == "" {
			in.c.Message = strings.TrimPrefix(text, "SUMMARY: ")
		}
	}
	if ok {
		in.sanSummary = f
	}
}

// chooseSanitizerCrash settles the crashing thread of a sanitizer report
// whose access stack (the one after the ERROR line) has no frames, before
// the other stacks are weighed: the freed-by, allocated-by and
// thread-creation stacks are never the crashing thread's. A signal dump's
// stack with frames in the same incident (the report's abort dump, or the
// dump that cut it: sanitizerDeath) is the crash stack. A stack whose
// header is cut is the access stack when it holds the SUMMARY's function
// (the summary names the access stack's first frame). Otherwise the
// SUMMARY's frame alone stands for the crash, and the incident says that
// the crash stack is missing. LeakSanitizer prints no access stack: its
// first allocation stack is what the report is about.
func (in *incident) chooseSanitizerCrash() {
	if !in.hasFormat("F6") || in.c.Kind == KindLeak || in.sanNoStack {
		return
	}
	for _, s := range in.stacks {
		if s.origin == "F6" && (len(s.th.Frames) > 0 || s.th.State != "") {
			return // a stack, or UBSAN's `file:line:col: runtime error` location
		}
	}
	for _, s := range in.stacks {
		if (s.origin == "F1" || s.origin == "F2") && len(s.th.Frames) > 0 {
			in.note("the sanitizer report's own stack is not in the text: the signal dump's stack is the crash stack")
			return
		}
	}
	// The access stack is empty (cut) or was never seen: drop it.
	kept := in.stacks[:0]
	for _, s := range in.stacks {
		if s.origin != "F6" {
			kept = append(kept, s)
		}
	}
	in.stacks = kept
	for _, s := range in.stacks {
		// A stack whose header is cut but whose frame 0 tells what it is
		// (a thread's creation) is never the crash stack.
		if s.origin == "F6-aux" && s.th.State == "" {
			if role := sanitizerAuxTop(s.th.Frames); role != "" {
				s.th.State = auxTopState(s.th.Frames, role)
			}
		}
	}
	want := in.sanSummary.Name()
	if want == "" {
		// No SUMMARY: a first stack whose header is cut is the access
		// stack when it is whole at the top (ASAN prints it first), or
		// when ASAN's address description follows it (the description
		// comes right after the access stack: asan_errors.cpp
		// ErrorGeneric::Print), then with its first frames cut.
		for _, s := range in.stacks {
			if s.origin != "F6-aux" || s.th.State != "" || len(s.th.Frames) == 0 || s != in.stacks[0] {
				continue
			}
			if s.th.Frames[0].Index == 0 {
				s.origin = "F6"
				s.th.Crashed = true
				in.note("the first stack, whose header is cut, taken as the crash stack: no SUMMARY line to check it against")
				return
			}
			if s == in.sanAccessCut {
				s.origin = "F6"
				s.th.Crashed = true
				s.th.Truncated = true
				in.note("the stack before ASAN's address description taken as the crash stack (the access stack), its first frames cut: no SUMMARY line to check it against")
				return
			}
		}
		// No stack can be the crash stack: keep the others as they are
		// and say that the crashing thread's stack is not in the text
		// (finishFragment gives the crash an empty crashing thread).
		in.corrupt("sanitizer report without its crash stack and without a SUMMARY line naming the crash site: " + in.auxStacksText())
		return
	}
	// The SUMMARY attests a sanitizer report: the incident is no bare
	// fragment of frames (fragment.go), whatever its stacks hold.
	in.fragment = 0
	for _, s := range in.stacks {
		if s.origin != "F6-aux" || s.th.State != "" {
			continue
		}
		for i := range s.th.Frames {
			if s.th.Frames[i].Name() == want {
				s.origin = "F6"
				s.th.Crashed = true
				return
			}
		}
	}
	crash := in.newStack("F6", 4)
	crash.th.Frames = []Frame{in.sanSummary}
	crash.th.Crashed = true
	crash.th.Truncated = true
	in.corrupt("sanitizer report without its crash stack: the SUMMARY line's frame stands for it")
}

// sanitizerText is a line of a sanitizer report as the report printed it.
// A paste prefix learned from indented frame lines (`10:00:01,013     #5
// 0x…`) takes the frames' indentation with it, so the report's own
// unindented lines (`10:00:06,078 SUMMARY: …`, `… Thread T455 (…) created
// by T0 here:`) keep their prefix: strip the prefix without its trailing
// blanks from them.
func (p *parser) sanitizerText(text string) string {
	t := strings.TrimSpace(text)
	shape := strings.TrimRight(p.pfx.shape, " \t")
	if shape == "" || len(shape) == len(p.pfx.shape) {
		return t
	}
	if n := matchPrefix([]byte(text), shape); n > 0 && n < len(text) && (text[n] == ' ' || text[n] == '\t') {
		return strings.TrimSpace(text[n:])
	}
	return t
}

// sanitizerDescriptionRe matches the lines ASAN prints between its stacks
// to describe the address (compiler-rt asan_descriptions.cpp): `0x60b0…
// is located 12 bytes inside of 100-byte region […)`, `Address 0x7f… is
// located in stack of thread T12 at offset 96 in frame`, `This frame has
// 2 object(s):`, and its `HINT: …` lines.
var sanitizerDescriptionRe = mustCompile(`^(?:Address )?0x[0-9a-fA-F]+ is located |^This frame has \d+ object|^HINT: `)

// isSanitizerOnly reports whether a line (without its paste prefix) is
// one only a sanitizer report prints: a stack header, an address
// description, the SUMMARY, or the shadow-byte dump's first line or its
// legend's (`Shadow bytes around the buggy address:`, `Shadow byte legend
// (one shadow byte represents 8 application bytes):`).
func isSanitizerOnly(t string) bool {
	return isSanitizerStackHeader(t) || strings.HasPrefix(t, "SUMMARY: ") || sanitizerDescriptionRe.MatchString(t) || isShadowHeader(t)
}

// isShadowHeader says whether t opens ASAN's shadow-byte dump or its
// legend (compiler-rt asan_errors.cpp PrintShadowMemoryForAddress,
// PrintLegend), which it prints after the SUMMARY.
func isShadowHeader(t string) bool {
	return strings.HasPrefix(t, "Shadow bytes around the buggy address:") || strings.HasPrefix(t, "Shadow byte legend (")
}

// sanitizerLine takes a line isSanitizerOnly accepted into an incident
// that sanitizerFragment has just made a sanitizer report's rest.
func (in *incident) sanitizerLine(p *parser, t string, ln lineInfo) {
	switch {
	case strings.HasPrefix(t, "SUMMARY: "):
		in.sanitizerEnd(p, t)
		in.sec = secSanTail
	case isSanitizerStackHeader(t):
		s := in.newStack("F6-aux", 0)
		s.th.State = strings.TrimSuffix(t, ":")
	case isShadowHeader(t):
		in.sec = secSanTail // the SUMMARY was cut: the report's tail
	default:
		// An address description: the frames after it are another stack,
		// and a first stack whose header is cut before it is the access
		// stack's tail (chooseSanitizerCrash).
		if len(in.stacks) == 1 && in.stacks[0].th.State == "" && in.sanAccessCut == nil && in.sanSummary.Raw == "" {
			in.sanAccessCut = in.stacks[0]
		}
		in.newStack("F6-aux", 0)
	}
	in.used(ln)
}

// sanTailEnds says whether a line of kind k ends a sanitizer report after
// its SUMMARY line: the report then prints only the shadow bytes around
// the address, their legend and `==PID==ABORTING` (all unrecognized lines
// but the last), so a recognized line of any other kind (a gdb session, a
// signal dump, a glog line) is the next text's.
func sanTailEnds(k lineKind) bool {
	return k != kOther && k != kBlank && k != kSanEnd
}

// sanTailLine says whether an unrecognized line can be part of what ASAN
// prints after its SUMMARY (compiler-rt asan_errors.cpp
// PrintShadowMemoryForAddress, PrintLegend): `Shadow bytes around the
// buggy address:`, rows `  0x0c0881d68e60: fa fa 00 …` and `=>0x…: …[fd]…`
// (a paste prefix may have taken a row's address), `Shadow byte legend
// (…):` and its `  Heap left redzone:       fa` entries. Any other line
// ends a report cut before its `==PID==ABORTING`.
func sanTailLine(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" || strings.HasPrefix(t, "Shadow byte") || strings.HasPrefix(t, "=>") {
		return true
	}
	if i := strings.IndexByte(t, ':'); i > 0 {
		head, rest := t[:i], strings.TrimSpace(t[i+1:])
		if strings.HasPrefix(head, "0x") {
			_, ok := parseHex(head)
			return ok
		}
		return rest != "" && shadowBytes(rest) && !strings.ContainsAny(head, "0123456789=#")
	}
	return shadowBytes(t)
}

// shadowBytes says whether s is a run of two-digit hex shadow bytes, one
// of them maybe bracketed (`fa fa[fd]fd`), or a legend entry's values.
func shadowBytes(s string) bool {
	n := 0
	for _, w := range strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(s)) {
		if len(w) != 2 {
			return false
		}
		if _, ok := parseHex(w); !ok {
			return false
		}
		n++
	}
	return n > 0
}

// auxStacksText says which stacks a sanitizer report without a crash stack
// holds, for its CorruptedReason.
func (in *incident) auxStacksText() string {
	var named []string
	n := 0
	for _, s := range in.stacks {
		if s.origin != "F6-aux" || len(s.th.Frames) == 0 {
			continue
		}
		n++
		if s.th.State != "" {
			named = append(named, "'"+s.th.State+"'")
		}
	}
	switch {
	case n == 0:
		return "no stack in the text"
	case len(named) == n:
		return "the text holds only auxiliary stacks (" + strings.Join(named, ", ") + "), no crashing stack"
	}
	return fmt.Sprintf("%d stack(s) whose header is cut, which may be any of the report's stacks (access, freed-by, allocated-by, thread-creation): none is taken for the crashing stack", n-len(named))
}

// Where a sanitizer report ends. A report has no end marker a cut paste
// keeps (`==PID==ABORTING`, TSAN's closing `=====` line), and the lines it
// prints between its stacks are not all known, so a report used to take
// every unrecognized line after it: in a be.out, the chatter up to the
// next crash (issue 11: such an incident stays open across the chunk
// borders of ScanParallel, whose in-order scan must then read it all).
// A report ends at the first log line after it — a glog line, a line that
// starts with a date and time (Java and Hadoop loggers, SLF4J), a startup
// banner, a lifecycle or memory-limit log line — or at a new crash header
// (the rules of accept). Its own sections (the stacks, `freed by thread`,
// `previously allocated by`, `Thread TN created by`, the address
// descriptions, SUMMARY, the shadow bytes and their legend, `==PID==`
// lines, blank lines) never end it.
//
// Log lines inside a report: the sanitizer runtime writes its report line
// by line to stderr (compiler-rt's Printf, one write per line) while the
// other threads of the process go on running — only other reports wait
// (ScopedErrorReportLock) — so a be.out can show another thread's log
// line between two lines of a report. Chosen: up to maxSanInterleave
// foreign lines in a row (log lines, and after one any line the report
// does not print) are held back; when the report goes on after them (a
// frame, a stack header, an address description, SUMMARY, a shadow row, a
// `==PID==` line, the abort dump after ABORTING) they were interleaved and
// the report keeps its sections together; when it does not, the report
// ended before the first of them (its EndLine is the line before) and the
// incident closes at the next one. Lines whose kind carries context for
// the next incident (banner, lifecycle, memory limit) end the report at
// once: held back, they would be lost to that incident.

// maxSanInterleave is how many foreign lines in a row a sanitizer report
// may hold between two of its own lines.
const maxSanInterleave = 3

// sanReportOpen says whether the incident is a sanitizer report that its
// abort dump has not followed yet: inside the report, after its SUMMARY,
// or after its ABORTING line.
func (in *incident) sanReportOpen() bool {
	if in.hasSig || !in.hasFormat("F6") {
		return false
	}
	return in.sec == secSanitizer || in.sec == secSanTail || in.sec == secCause && in.ended
}

// sanInterleaved applies the rules above to one line of an open
// sanitizer report. done says that it decided, took whether the report
// holds the line; otherwise the line goes the usual way (acceptLine).
func (in *incident) sanInterleaved(p *parser, ln lineInfo, k lineKind, m []string) (took, done bool) {
	if k == kBlank {
		return false, false
	}
	if isLogLine(k, ln.text) {
		if k != kGlog && k != kOther {
			return false, true // context for what follows
		}
		return in.sanForeign(ln), true
	}
	if in.sanLog == 0 {
		return false, false
	}
	if k == kSanEnd && strings.HasPrefix(ln.text, "=====") {
		// After other output, ASAN's opening `=====` line is the next
		// report's more likely than TSAN's closing one.
		return in.sanForeign(ln), true
	}
	end := in.c.EndLine
	took = in.acceptLine(p, ln, k, m)
	if !took || p.cur != in {
		return took, true
	}
	if in.c.EndLine > end {
		in.note("%d line(s) of other output from line %d interleaved in the sanitizer report", in.sanLog, in.sanLogAt)
		in.sanLog = 0
		return true, true
	}
	return in.sanForeign(ln), true
}

// sanForeign counts a foreign line of a sanitizer report's window and
// says whether the report may still go on after it.
func (in *incident) sanForeign(ln lineInfo) bool {
	if in.sanLog == 0 {
		in.sanLogAt = ln.no
	}
	in.sanLog++
	return in.sanLog <= maxSanInterleave
}

// isLogLine says whether a line of kind k is a log line of the process
// or of a logger beside it: a glog line of any kind but FATAL (kFatal is
// a crash header), or an unrecognized line that starts with a date and
// time or a logger's notice (timestampedLogRe).
func isLogLine(k lineKind, text string) bool {
	switch k {
	case kGlog, kLifecycleLog, kMemLimit, kBanner:
		return true
	case kOther:
		return timestampedLogRe.MatchString(trimBlanks(text))
	}
	return false
}

// timestampedLogRe: `2025-03-03 10:15:09,145 INFO [main] …` (log4j,
// Hadoop), `DEBUG   2025-03-03 10:15:09,145 …`, `[2025-03-03 10:15:09]
// …`, `2025/03/03 10:15:09 …`, and the notices SLF4J, log4j and glog
// print on stderr (`SLF4J: …`, `log4j:WARN …`, `WARNING: Logging before
// InitGoogleLogging() is written to STDERR`). A sanitizer report prints
// no line that starts so.
var timestampedLogRe = mustCompile(`^(?:(?:[A-Z]{4,7}\s+)?\[?\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}|SLF4J: |log4j:|WARNING: Logging before InitGoogleLogging)`)

// sanReportText says whether an unrecognized line is one a sanitizer
// report prints besides its frames: the lines of isSanitizerOnly, a
// `==PID==…` line, a line naming a sanitizer, a shadow-byte row.
func sanReportText(t string) bool {
	return t != "" && (isSanitizerOnly(t) || strings.HasPrefix(t, "==") || strings.Contains(t, "Sanitizer") || sanTailLine(t))
}

// maxSanDeathGap bounds the lines between a sanitizer report's first line
// and a signal dump that ends it (sanitizerDeath): the report's access
// line and a dump's header lines, no more.
const maxSanDeathGap = 12

// sanitizerDeath reports whether the signal dump whose signal line is ln
// ends the open sanitizer report rather than starting the next crash: the
// report has printed its opening lines only (an ASAN `ERROR:` and access
// line, a UBSAN `runtime error:` line) and no stack, nothing else was
// printed in between, and the dump names the report's process. A
// recoverable sanitizer (UBSAN, ASAN with halt_on_error=0) reports and
// goes on into the fault it reported, and a report being printed when a
// signal arrives is cut by glog's or Doris' handler, which prints the
// dump header in the middle of it; either way one process died once (one
// crash, one incident). The kind stays the sanitizer's, the dump adds the
// signal, and the report's frames, when they follow the dump's header,
// are its stack (sanitizerFramesAfterDump). An abort signal keeps the
// abort-cause path (markAbortDump); a report with a stack, a leak report
// and a dump of another process stay two crashes.
func (in *incident) sanitizerDeath(ln lineInfo, m []string) bool {
	if isAbortSignal(m[1]) || !in.sanDeathOpen(ln.no) {
		return false
	}
	pid, _ := strconv.ParseInt(m[4], 10, 64)
	return in.c.PID == 0 || pid == 0 || in.c.PID == pid
}

// sanDeathOpen reports whether a signal dump at line no may still be the
// death of the open sanitizer report (sanitizerDeath, ubsanGoesOn): the
// report printed no stack and no interleaved log line, and the line is
// within maxSanDeathGap lines of its start.
func (in *incident) sanDeathOpen(no int) bool {
	return in.c.Kind == KindSanitizer && !in.hasFrames() && in.sanLogAt == 0 && no-in.c.StartLine <= maxSanDeathGap
}

// sanitizerFramesAfterDump takes the first frame line after the signal
// dump that ended a sanitizer report (sanitizerDeath) when it is the
// report's own `#0 0x… in f` frame: the rest of the report continues
// after the handler's header, so its stack is the crashing one.
func (in *incident) sanitizerFramesAfterDump(p *parser, ln lineInfo) bool {
	if in.cur == nil || len(in.cur.th.Frames) > 0 || in.cur.origin == "F6" {
		return false
	}
	f, ok := p.parseSanitizerFrame(ln.text)
	if !ok || f.Index != 0 {
		return false
	}
	for _, s := range in.stacks {
		if s.origin == "F6" && len(s.th.Frames) == 0 {
			in.cur, in.lastIdx, in.blank = s, -1, false
			in.sec = secSanitizer
			in.addFrame(p, f, ln)
			return true
		}
	}
	return false
}
