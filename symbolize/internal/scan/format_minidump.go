package scan

import (
	"strconv"
	"strings"
)

// Breakpad's minidump_stackwalk output (F7.7): what a user pastes after
// processing the .dmp that Doris 1.0-1.1 (be/src/util/minidump.cpp; the
// `Minidump created at: …` line of F2.6) and some StarRocks builds
// (`sys_minidump_*`) write on a crash or a SIGUSR1. PrintProcessState
// (breakpad src/processor/stackwalk_common.cc) prints
//
//	Operating system: Linux
//	                  0.0.0 Linux 3.10.0 …
//	CPU: amd64
//	Crash reason:  SIGSEGV /SEGV_MAPERR
//	Crash address: 0x0
//	Process uptime: not available
//
//	Thread 65 (crashed)
//	 0  palo_be!tcmalloc::CentralFreeList::FetchFromOneSpans(int, void**, void**) [central_freelist.cc : 299 + 0x0]
//	    rax = 0x0000000000000000   rdx = 0x00007f0c5b7fe6c8
//	    Found by: given as instruction pointer in context
//	 1  palo_be!bshuf_untrans_bit_elem_AVX_avx2 + 0x26
//	 2  libc.so.6 + 0x2173e
//	 3  0x7f0c5b7fe6c8
//
//	Thread 0
//	 …
//	Loaded modules:
//	0x00400000 - 0x0a1fffff  palo_be  ???  (main)
//
// The thread that crashed (or requested the dump: `Thread N (requested
// dump, did not crash)`) comes first; N is breakpad's index of the thread
// in the dump, not a kernel thread id. A frame is `%2d  ` and then
// `MODULE!FUNCTION [FILE : LINE + 0xOFF]`, `MODULE!FUNCTION + 0xOFF`,
// `MODULE + 0xOFF` or a bare `0xADDRESS`; registers (indented `reg =
// 0x…` lines), `Found by:` and, with -s, `Stack contents:` rows follow
// each frame. Source paths are stripped to their base name; the offsets
// are relative (to the line, the function or the module), so only a bare
// address is a PC.
var minidumpRules = []lineRule{
	{id: "F7.minidump_reason", kind: kMinidumpReason, prefix: "Crash reason:",
		re: mustCompile(`^Crash reason:\s+(\S+)`)},
	{id: "F7.minidump_thread", kind: kMinidumpThread, prefix: "Thread ",
		re: mustCompile(`^Thread (\d+) \((crashed|requested dump, did not crash)\)\s*$`)},
}

// The report's other lines are read only inside it (secMinidump), as
// ordinary lines: a bare `Thread N` or a `Crash address:` elsewhere is
// not a reason to end another incident.
var (
	minidumpAddress     = mustCompile(`^Crash address: 0x([0-9a-fA-F]{1,16})\s*$`)
	minidumpOtherThread = mustCompile(`^Thread (\d+)\s*$`)
)

// minidumpLine takes a line of a minidump_stackwalk report that no rule
// classifies: the crash address, a frame, another thread's header, or
// one of the lines around the frames.
func (in *incident) minidumpLine(p *parser, ln lineInfo, text string) bool {
	if f, ok := p.parseMinidumpFrame(text); ok {
		if in.cur == nil || in.cur.origin != "minidump" || f.Index == 0 && len(in.cur.th.Frames) > 0 {
			in.newStack("minidump", 1) // a thread whose header line is missing
		}
		in.addFrame(p, f, ln)
		return true
	}
	t := strings.TrimSpace(text)
	if m := minidumpAddress.FindStringSubmatch(t); m != nil && !in.hasDumpFrames() {
		if v, ok := parseHex(m[1]); ok {
			in.c.FaultAddress, in.c.HasFaultAddress = Addr(v), true
		}
		in.used(ln)
		return true
	}
	if minidumpOtherThread.MatchString(t) {
		if len(in.stacks) >= p.opts.MaxThreads {
			in.note("thread dump cut at %d threads", p.opts.MaxThreads)
			in.cur = &stack{}
		} else {
			in.newStack("minidump", 1)
		}
		in.used(ln)
		return true
	}
	if isMinidumpContext(text) {
		in.used(ln)
		return true
	}
	return false
}

// minidumpFrame is one frame line of minidump_stackwalk.
var minidumpFrame = mustCompile(`^\s{0,3}(\d{1,5})  (?:0x([0-9a-fA-F]{1,16})|([^\s!]+?)(?:!(.+?))?(?: \[([^\[\]]*?) : (\d+) \+ 0x([0-9a-fA-F]{1,16})\]| \+ 0x([0-9a-fA-F]{1,16})))\s*$`)

// parseMinidumpFrame parses a minidump_stackwalk frame line.
func (p *parser) parseMinidumpFrame(s string) (Frame, bool) {
	if len(s) < 4 {
		return Frame{}, false
	}
	m := minidumpFrame.FindStringSubmatch(s)
	if m == nil {
		return Frame{}, false
	}
	f := Frame{Raw: s}
	var err error
	if f.Index, err = strconv.Atoi(m[1]); err != nil || f.Index > 1<<20 {
		return Frame{}, false
	}
	if m[2] != "" {
		v, ok := parseHex(m[2])
		if !ok {
			return Frame{}, false
		}
		f.PC = Addr(v)
		return f, true
	}
	f.Module = m[3]
	if m[4] != "" {
		p.setFunction(&f, m[4])
	}
	if m[5] != "" {
		f.File = m[5]
		f.Line, _ = strconv.Atoi(m[6])
	}
	if m[4] == "" && m[8] != "" {
		if off, ok := parseHex(m[8]); ok {
			f.Offset, f.HasOffset = Addr(off), true // from the module's start
		}
	}
	return f, true
}

// isMinidumpContext says whether a line inside minidump_stackwalk's
// threads is one of the lines it prints around the frames: registers,
// `Found by:`, stack contents, the module list.
func isMinidumpContext(text string) bool {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return false
	case strings.HasPrefix(t, "Found by: "), t == "Stack contents:", t == "Possible instruction pointers:",
		t == "Loaded modules:", t == "<no frames>":
		return true
	case strings.HasPrefix(t, "*(0x"): // a possible instruction pointer
		return true
	case strings.HasPrefix(t, "0x") && strings.Contains(t, " - 0x"): // a module
		return true
	}
	// `rax = 0x…   rdx = 0x…`
	if i := strings.Index(t, " = 0x"); i > 0 && i <= 6 && isRegisterName(t[:i]) {
		return true
	}
	// A stack contents row: `00007ffd4f7d2f70 00 00 … `.
	if len(t) > 17 && t[16] == ' ' && isHexString(t[:16]) {
		return true
	}
	return false
}

func isRegisterName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// minidumpSignal is the signal of a `Crash reason:` value: `SIGSEGV
// /SEGV_MAPERR` gives SIGSEGV; a Windows exception or DUMP_REQUESTED none.
func minidumpSignal(reason string) string {
	if strings.HasPrefix(reason, "SIG") && len(reason) > 3 && isUpperAlnum(reason[3:]) {
		return reason
	}
	return ""
}

func isUpperAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// minidumpStart enters a minidump_stackwalk report.
func (in *incident) minidumpStart() {
	in.addFormat("F7")
	in.sec = secMinidump
	in.cur = nil
}
