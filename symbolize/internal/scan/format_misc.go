package scan

import (
	"regexp"
	"strconv"
	"strings"
)

// Everything that is not a dump of its own: process start markers (F0),
// allocator and assert messages that precede an abort (F8), memory-limit
// messages, kernel and shell lines (F9), the Doris BE stack-trace endpoint
// (F7.3) and the startup version banner; formats spec §1.2, §4 F7–F9.
var miscRules = []lineRule{
	{id: "F0.start", kind: kStart, prefix: "start time: "},
	{id: "F0.start_doris", kind: kStart, prefix: "StdoutLogger ",
		re: mustCompile(`^StdoutLogger \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} Start time: `)},
	{id: "F8.jemalloc", kind: kJemalloc, prefix: "<jemalloc>: "},
	{id: "F8.tcmalloc_invalid", kind: kTcmalloc, prefix: "", contains: "Attempt to free invalid pointer"},
	{id: "F8.tcmalloc", kind: kTcmalloc, prefix: "", contains: "tcmalloc: "},
	{id: "F8.assert", kind: kAssert, contains: ": Assertion `",
		re: mustCompile("^(\\S+): (.+?):(\\d+): (.*): Assertion [`'‘](.*)['’] failed\\.?")},
	{id: "F9.kernel_segv", kind: kKernelSegv, contains: "segfault at ",
		re: mustCompile(`(\S.{0,15})\[(\d+)\]: segfault at ([0-9a-f]+) ip ([0-9a-f]+) sp ([0-9a-f]+) error ([0-9a-f]+)(?: in ([^\[ ]+)\[([0-9a-f]+)\+([0-9a-f]+)\])?`)},
	{id: "F9.kernel_trap", kind: kKernelTrap, contains: "traps: ",
		re: mustCompile(`traps: (\S.{0,15})\[(\d+)\] (general protection fault|trap divide error|trap invalid opcode)[^\n]*?ip:? ?([0-9a-f]+)`)},
	{id: "F8.oom_kernel", kind: kOOMKill, contains: "Killed process ",
		re: mustCompile(`(?:Out of memory|Memory cgroup out of memory): Killed process (\d+) \(([^)]+)\)`)},
	{id: "F8.doris_mem", kind: kMemLimit, contains: "MEM_LIMIT_EXCEEDED"},
	{id: "F8.sr_mem", kind: kMemLimit, contains: "Memory of process exceed limit"},
	{id: "F8.sr_mem2", kind: kMemLimit, contains: "Mem usage has exceed the limit"},
	{id: "F9.shell_segv", kind: kShell, contains: "Segmentation fault"},
	{id: "F9.shell_abort", kind: kShell, contains: "Aborted (core dumped)"},
	{id: "F9.shell_segv_zh", kind: kShell, contains: "段错误"},
	// The other fatal signals in glibc's strsignal words (bash prints them for
	// a job killed by a signal), in English and zh_CN: an AVX2 build started
	// on a CPU without AVX2 dies of SIGILL before any handler is installed.
	{id: "F9.shell_ill", kind: kShell, contains: "Illegal instruction"},
	{id: "F9.shell_bus", kind: kShell, contains: "Bus error"},
	{id: "F9.shell_fpe", kind: kShell, contains: "Floating point exception"},
	{id: "F9.shell_ill_zh", kind: kShell, contains: "非法指令"},
	{id: "F9.shell_bus_zh", kind: kShell, contains: "总线错误"},
	{id: "F9.shell_fpe_zh", kind: kShell, contains: "浮点数例外"},
	// supervisord (StarRocks' allin1 images run the BE as program
	// `beservice`): `exited: beservice (terminated by SIGILL (core dumped); not expected)`.
	{id: "F9.supervisord", kind: kShell, contains: " (terminated by SIG"},
	// bash's job message pads the signal text to a column:
	// `line 210:  4567 Aborted                 (core dumped) nohup …`.
	{id: "F9.shell_core", kind: kShell, contains: "(core dumped)"},
	{id: "F9.instr", kind: kInstrCheck, prefix: "Instruction check fail. "},
	{id: "F7.doris_api_start", kind: kDorisAPIStart, prefix: "BE thread stack traces"},
	{id: "F7.doris_api_thread", kind: kDorisAPIThread, prefix: "----- thread ",
		re: mustCompile(`^----- thread (\d+) \((.*)\) status=(\S+)`)},
	// be.INFO startup banner: ` version doris-2.1.6-rc04(AVX2) RELEASE (build git://…@4f5a6b7)`,
	// StarRocks ` version 3.3.5-6d81f75`. Matched inside glog messages too.
	{id: "banner", kind: kBanner, contains: "version ",
		re: mustCompile(`(?:^|\s)version ((?:doris-|palo-)?\d+\.\d+(?:\.\d+)*(?:-[0-9A-Za-z.]+)*(?:\([A-Za-z0-9.]+\))?)(?: ([A-Z]+)(?: with [A-Z]+)? \(build ([^)]*)\))?\s*$`)},
}

// StarRocks all-threads dumps (F7.4) as the diagnose daemon logs them to
// be.INFO: every line is a glog INFO line whose message starts with
// `DIAGNOSE <id> - `, then a group header (`tid: 34593` or
// `17 tids: 34600,34601,…`, threads with identical stacks grouped), frames
// (`  %16p  symbol`) and a final `total N threads, …` summary.
var (
	diagPrefix = mustCompile(`^DIAGNOSE \d+ - ?`)
	diagGroup  = mustCompile(`^(?:tid: (\d+)|(\d+) tids: ([\d,]+))\s*$`)
	diagFrame  = mustCompile(`^\s*(0x[0-9a-f]+|\(nil\))  (.*)$`)
	diagTotal  = mustCompile(`^total \d+ threads`)
)

// classifyDiagnose classifies the message of a DIAGNOSE glog line.
func (p *parser) classifyDiagnose(msg string) (lineKind, []string) {
	loc := diagPrefix.FindStringIndex(msg)
	if loc == nil {
		return kGlog, []string{msg, msg}
	}
	body := msg[loc[1]:]
	if m := diagGroup.FindStringSubmatch(body); m != nil {
		return kDiagGroup, m
	}
	if m := diagFrame.FindStringSubmatch(body); m != nil {
		return kDiagFrame, m
	}
	if diagTotal.MatchString(body) {
		return kDiagEnd, []string{body}
	}
	return kGlog, []string{msg, msg}
}

// threadRoots are the functions printed at the bottom of a thread's stack:
// a dump whose last frame is one of them was not cut short.
var threadRoots = map[string]bool{
	"clone": true, "__clone": true, "clone3": true, "__clone3": true,
	"start_thread": true, "_start": true, "__libc_start_main": true, "main": true,
}

// outermostFrames are the functions no frame follows (the thread's clone,
// the process's _start): a frame after one of them belongs to another stack.
var outermostFrames = map[string]bool{"clone": true, "__clone": true, "clone3": true, "__clone3": true, "_start": true}

// handlerFrameNames are parts of the names of signal-handler frames that
// print a dump (glog's and Doris' FailureSignalHandler, the JVM's chained
// handler): a dump that shows one but not the faulting frame was cut.
var handlerFrameNames = []string{"FailureSignalHandler", "chained_handler", "JVM_handle_linux_signal"}

func isHandlerFrame(name string) bool {
	for _, h := range handlerFrameNames {
		if strings.Contains(name, h) {
			return true
		}
	}
	return false
}

// memLimitRules are the memory-limit rules of miscRules; glog WARNING and
// ERROR messages are checked against them too.
var memLimitRules = func() []lineRule {
	var out []lineRule
	for _, r := range miscRules {
		if r.kind == kMemLimit {
			out = append(out, r)
		}
	}
	return out
}()

// fatalAllocatorText marks tcmalloc lines that precede an abort; other
// tcmalloc lines (`large alloc … == 0x…`) are informational.
var fatalAllocatorText = []string{"Attempt to free invalid pointer", "allocation failed"}

func isFatalAllocatorLine(s string) bool {
	for _, t := range fatalAllocatorText {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// dorisAPISummary is the last line of a Doris /api/stack_trace response.
const dorisAPISummary = "summary: "

// pasteShape is a prefix a paste puts before every line that the
// separators learnPrefix looks for (`: `, `| `, `] `, a tab, a long
// timestamp) do not find. A shape is learned from two consecutive lines
// that both carry it (digit runs free, as every learned prefix).
type pasteShape struct {
	id string
	re *regexp.Regexp // the prefix, anchored; group 1, if any, is a line number
	// may is a byte test every line carrying the shape passes: the
	// expression runs only on lines it accepts (the learner tries the
	// shapes on every pair of digit-led lines: Java logger and jvm
	// timestamps, issue 11's hot path).
	may func(b []byte) bool
	// numbered: group 1 must count up by one from the line before to this
	// one (a line-numbered paste, `cat -n`, an editor's gutter), so that
	// two lines that merely start with numbers teach nothing.
	numbered bool
}

// pasteShapes are the line prefixes of pastes that the learned-prefix
// separators miss (issue 14; corpus doris/159).
var pasteShapes = []pasteShape{
	// `105 Minidump created at …`, `109     @     0x7f39… doris::…`: a
	// line number and blanks, nothing else.
	{id: "P.line_number", re: mustCompile(`^(\d{1,7})[ \t]+`), may: digitsThenBlank, numbered: true},
}

// digitsThenBlank reports whether b starts with 1 to 7 digits and a blank
// or tab (the shape of P.line_number, without the expression).
func digitsThenBlank(b []byte) bool {
	i := 0
	for i < len(b) && i < 8 && isDigit(b[i]) {
		i++
	}
	return i > 0 && i <= 7 && i < len(b) && (b[i] == ' ' || b[i] == '\t')
}

// markdownLinkPrefix is a CI console's line link pasted as Markdown before
// every line (TeamCity, corpus doris/160):
// `[16:54:50 ](http://…&focusLine=48797&…)   0# doris::…`. normalizeLine
// removes it as it removes the other known prefix families, so that it
// stacks with them and needs no second line to be learned from.
var markdownLinkPrefix = mustCompile(`^\[[^\[\]\n]{0,64}\]\([a-z]{2,10}://[^()\s]{1,1000}\)[ \t]+`)

// markdownLink returns the length of a markdownLinkPrefix at the start of
// b (with something after it), or 0.
func markdownLink(b []byte) int {
	if len(b) < 12 || b[0] != '[' {
		return 0
	}
	if m := markdownLinkPrefix.FindIndex(b); m != nil && m[1] < len(b) {
		return m[1]
	}
	return 0
}

// lineNumberAnchor reports whether the text before a dump header on its
// line is a line number and one blank (`106 *** Aborted at …`): a
// line-numbered paste, whose number is the prefix of the lines after it.
func lineNumberAnchor(pre string) bool {
	n := len(pre) - 1
	if n < 1 || n > 7 || pre[n] != ' ' && pre[n] != '\t' {
		return false
	}
	for i := 0; i < n; i++ {
		if !isDigit(pre[i]) {
			return false
		}
	}
	return true
}

// numberedStart reports whether an unrecognized line is a line of a
// line-numbered paste (a numbered pasteShapes prefix) whose rest starts a
// stack (`14  0# doris::…`, `215     @     0x7f39… google::…`). Its prefix
// is learned only from the line after it; until then an open incident
// would take it as a foreign line and the stack would lose its first
// frame: the incident ends before it, and the scanner replays it once
// the prefix is known (lines.go relearnPrev).
func numberedStart(p *parser, text string) bool {
	if text == "" || !isDigit(text[0]) {
		return false
	}
	for i := range pasteShapes {
		sh := &pasteShapes[i]
		if !sh.numbered || !sh.may([]byte(text[:min(len(text), 8)])) {
			continue
		}
		if m := sh.re.FindStringIndex(text); m != nil && m[1] < len(text) && startsIncident(kOther, text[m[1]:], p) {
			return true
		}
	}
	return false
}

// pastePrefix returns the length of a pasteShapes prefix that line b
// carries and line a, the one before it, carries too, or 0.
func pastePrefix(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 || !isDigit(b[0]) || !isDigit(a[0]) {
		return 0
	}
	for i := range pasteShapes {
		sh := &pasteShapes[i]
		if !sh.may(b) || !sh.may(a) {
			continue
		}
		mb := sh.re.FindSubmatchIndex(b)
		if mb == nil || mb[1] >= len(b) {
			continue // a prefix with nothing after it teaches nothing
		}
		ma := sh.re.FindSubmatchIndex(a)
		if ma == nil {
			continue
		}
		if sh.numbered {
			na, errA := strconv.Atoi(string(a[ma[2]:ma[3]]))
			nb, errB := strconv.Atoi(string(b[mb[2]:mb[3]]))
			if errA != nil || errB != nil || nb != na+1 {
				continue
			}
		} else if matchPrefix(a, string(b[:mb[1]])) == 0 {
			continue
		}
		return mb[1]
	}
	return 0
}

// shellCrashLine is a shell's report of the backend's death (F9): the
// start script's job message `…/start_be.sh: line 234: 12345 Segmentation
// fault      (core dumped) ${START_BE_CMD} …` or an interactive shell's
// `Segmentation fault (core dumped)` alone on its line. It is all some
// crashes leave (no handler ran, or its output went elsewhere): an
// incident of its own, flagged corrupted with the reason, whose signal the
// message names. Groups: 1 the PID, 2 the message.
var shellCrashLine = mustCompile(`^(?:\S*(?:start_be|start_cn|start_backend|be|cn)\.sh: (?:line|行) \d+: +(\d+) +)?(Segmentation fault|Aborted|Illegal instruction|Bus error|Floating point exception|段错误|非法指令|总线错误|浮点数例外)(?: +\((?:core dumped|核心已转储|吐核)\))?(?:\s|$)`)

// supervisordCrashLine is supervisord's report that the backend's program
// died of a signal: `… INFO exited: beservice (terminated by SIGILL (core
// dumped); not expected)`. Only the backend's program names count (the
// allin1 images also run the FE, a proxy and a director). Groups: 1 the
// program, 2 the signal.
var supervisordCrashLine = mustCompile(`\bexited: (beservice|cnservice|be|cn|backend|starrocks_be|doris_be|palo_be) \(terminated by (SIG[A-Z0-9]+)(?: \(core dumped\))?; not expected\)`)

// shellSignals maps the shell's message (glibc's strsignal words, English
// and zh_CN) to the signal it reports.
var shellSignals = map[string]string{
	"Segmentation fault": "SIGSEGV", "段错误": "SIGSEGV", "Aborted": "SIGABRT",
	"Illegal instruction": "SIGILL", "非法指令": "SIGILL", "Bus error": "SIGBUS", "总线错误": "SIGBUS",
	"Floating point exception": "SIGFPE", "浮点数例外": "SIGFPE",
}

// shellCrash returns the submatches of shellCrashLine when the line is a
// whole-line shell report of a crash: with the script's prefix, or with
// `(core dumped)`, else nil. A bare `Segmentation fault` or `Aborted` line
// may be anything's (a test's output, a tool's): it stays a context event
// of the next incident.
func shellCrash(text string) []string {
	t := strings.TrimSpace(text)
	if strings.Contains(t, "(terminated by SIG") {
		if s := supervisordCrashLine.FindStringSubmatch(t); s != nil {
			// no PID; the signal is named already (shellStart)
			return []string{s[0], "", s[2]}
		}
		return nil
	}
	m := shellCrashLine.FindStringSubmatch(t)
	if m == nil {
		return nil
	}
	if m[1] == "" && !strings.Contains(t, "core dumped") && !strings.Contains(t, "核心已转储") && !strings.Contains(t, "吐核") {
		return nil
	}
	return m
}

// shellStart makes the incident the shell's report of a crash with no
// stack (shellCrash's submatches m).
func (in *incident) shellStart(m []string, ln lineInfo) {
	c := in.c
	in.addFormat("F9")
	c.Kind = KindSignal
	who := "the shell's"
	if c.Signal = shellSignals[m[2]]; c.Signal == "" {
		c.Signal, who = m[2], "supervisord's" // supervisord names the signal
	}
	if m[1] != "" {
		c.PID, _ = strconv.ParseInt(m[1], 10, 64)
	}
	in.shellOnly = true
	in.sec = secDone
	in.event(ln, "shell", ln.text)
	in.corrupt("only " + who + " report of the crash (" + m[2] + "): no stack was printed")
}

// adoptShell makes the shell's report of the crash (an incident that is
// only that: shellStart) part of this incident, a gdb session on a core
// that starts right after it (`Core was generated by …`, `Program
// terminated with signal …`): a ticket shows the death as the shell saw it
// and then the backtrace of the core it dumped. One crash, one incident:
// the span starts at the shell's line, its event and PID are kept.
func (in *incident) adoptShell(sh *incident) {
	c, sc := in.c, sh.c
	c.StartLine = sc.StartLine
	if c.PID == 0 {
		c.PID = sc.PID
	}
	if c.Signal == "" { // gdb printed no `Program terminated with signal` line
		c.Kind, c.Signal = sc.Kind, sc.Signal
	}
	if len(in.stacks) == 0 && !c.Corrupted { // nor a backtrace: still no stack
		c.Corrupted, c.CorruptedReason = sc.Corrupted, sc.CorruptedReason
	}
	c.Events = prependBounded(sc.Events, c.Events, maxEvents)
	in.note("the shell's report of the crash (line %d) and the gdb backtrace of its core after it are one crash", sc.StartLine)
}
