package scan

import "strings"

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
