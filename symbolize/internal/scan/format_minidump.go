package scan

import "strings"

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
	// `SIGSEGV /SEGV_MAPERR` gives the signal (m[1]); a Windows exception
	// or DUMP_REQUESTED (a dump written on request, SIGUSR1) none (m[2]).
	{id: "F7.minidump_reason", kind: kMinidumpReason, prefix: "Crash reason:",
		re: mustCompile(`^Crash reason:\s+(?:(SIG[A-Z0-9]+)\b|(\S+))`)},
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
		in.minidumpThread(p, ln, 1)
		return true
	}
	if minidumpContext.MatchString(t) {
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
	f := Frame{Raw: s, Index: atoi(m[1])} // at most 5 digits
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
		f.Line = atoi(m[6])
	}
	if m[4] == "" && m[8] != "" {
		if off, ok := parseHex(m[8]); ok {
			f.Offset, f.HasOffset = Addr(off), true // from the module's start
		}
	}
	return f, true
}

// minidumpContext matches the lines minidump_stackwalk prints around a
// thread's frames (trimmed): `Found by:`, registers (`rax = 0x…   rdx =
// 0x…`), with -s `Stack contents:` and its rows and `Possible instruction
// pointers:` with `*(0x…) = 0x… <f>` lines, then `Loaded modules:` and
// one `0x… - 0x…  module  version` line per module.
var minidumpContext = mustCompile(`^(?:Found by: .*|Stack contents:|Possible instruction pointers:|Loaded modules:|<no frames>|` +
	`\*\(0x[0-9a-f]+\) = .*|0x[0-9a-f]+ - 0x[0-9a-f]+ .*|(?:[a-z][a-z0-9]{0,5} = 0x[0-9a-f]+\s*)+|[0-9a-f]{8,16}(?: .*)?)$`)

// minidumpStart enters a minidump_stackwalk report; requested says the
// dump was written on request, without a crash (a thread dump).
func (in *incident) minidumpStart(requested bool) {
	in.addFormat("F7")
	in.sec = secMinidump
	in.cur = nil
	if in.c.Kind == KindUnknown {
		in.c.Kind = KindSignal
		if requested {
			in.c.Kind = KindThreadDump
		}
	}
}

// minidumpThread starts the stack of a thread header; prio 2 marks the
// thread printed first, the crashing or dump-requesting one
// (chooseThreads).
func (in *incident) minidumpThread(p *parser, ln lineInfo, prio int) {
	if len(in.stacks) >= p.opts.MaxThreads {
		in.note("thread dump cut at %d threads", p.opts.MaxThreads)
		in.cur = &stack{}
	} else {
		in.newStack("minidump", prio)
	}
	in.used(ln)
}
