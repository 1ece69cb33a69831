package scan

import (
	"strconv"
	"strings"
)

// systemd-coredump's stack traces (F7.5), as the journal, syslog and
// `coredumpctl info` print them (systemd's stack trace of a core, made with
// elfutils when the core is written):
//
//	Sep 13 18:05:38 be01 systemd-coredump[15698]: Process 15696 (doris_be) of user 0 dumped core.
//
//	                                              Stack trace of thread 15696:
//	                                              #0  0x00000000020f0685 _Z27check_required_instructionsv (doris_be)
//	                                              #1  0x000014a504f5973e __libc_start_main (libc.so.6 + 0x2173e)
//
// One `Stack trace of thread N:` block per thread (at most 64 threads of 64
// frames), the thread that dumped first (elfutils walks the core's thread
// notes in order, and the kernel writes the dumping thread's first). A
// frame is `#%-2u 0x%016x SYMBOL (MODULE + 0xOFFSET)`: SYMBOL is `n/a` when
// elfutils found none (looked up at PC-1 for return addresses, but the PC
// printed is the frame's own), `+ 0xOFFSET` (PC minus the module's start)
// is absent in systemd before 247. Newer versions add `Module … with
// build-id …` and package-metadata lines after the traces, and may print
// `Process N (comm) of user U terminated abnormally with signal 11/SEGV`
// before the stack. The journal continues the message on lines indented
// without the syslog prefix. The kernel's segfault/trap line (F9) that
// precedes it in the journal belongs to the same incident.
var coredumpRules = []lineRule{
	{id: "F7.coredump_process", kind: kCoredumpStart, prefix: "Process ",
		re: mustCompile(`^Process (\d+) \((.*)\) of user (\d+) (?:dumped core|terminated abnormally with signal (\d+)/([A-Z0-9]+))`)},
	// `coredumpctl info` prints the journal message after a field name.
	{id: "F7.coredump_message", kind: kCoredumpStart, prefix: "Message: Process ",
		re: mustCompile(`^Message: Process (\d+) \((.*)\) of user (\d+) (?:dumped core|terminated abnormally with signal (\d+)/([A-Z0-9]+))`)},
	// `coredumpctl info` starts with the process and the signal.
	{id: "F7.coredump_pid", kind: kCoredumpStart, prefix: "PID: ",
		re: mustCompile(`^PID: (\d+) \(([^()]*)\)()()()\s*$`)},
	{id: "F7.coredump_signal", kind: kCoredumpSignal, prefix: "Signal: ",
		re: mustCompile(`^Signal: (\d+) \(([A-Z0-9]+)\)\s*$`)},
	{id: "F7.coredump_thread", kind: kCoredumpThread, prefix: "Stack trace of thread ",
		re: mustCompile(`^Stack trace of thread (\d+):`)},
}

// coredumpFrame is one frame line of a systemd-coredump stack trace.
var coredumpFrame = mustCompile(`^#(\d+)\s+0x([0-9a-fA-F]+) (.+?) \(([^()]+?)(?: \+ 0x([0-9a-fA-F]+))?\)$`)

// coredumpUnknown is the symbol elfutils prints when it found none.
const coredumpUnknown = "n/a"

// parseCoredumpFrame parses `#3  0x00005a03100f669a args_process (fs-cli + 0xb69a)`.
func (p *parser) parseCoredumpFrame(s string) (Frame, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 6 || t[0] != '#' || !strings.Contains(t, " 0x") {
		return Frame{}, false
	}
	m := coredumpFrame.FindStringSubmatch(t)
	if m == nil || strings.Contains(m[3], " in ") || strings.HasPrefix(m[3], "in ") {
		return Frame{}, false // gdb's `#1  0x… in f (args)`
	}
	f := Frame{Raw: s}
	var err error
	if f.Index, err = strconv.Atoi(m[1]); err != nil || f.Index > 1<<20 {
		return Frame{}, false
	}
	v, ok := parseHex(m[2])
	if !ok {
		return Frame{}, false
	}
	f.PC = Addr(v)
	f.Module = m[4]
	if m[5] != "" {
		if off, ok := parseHex(m[5]); ok {
			f.Offset, f.HasOffset = Addr(off), true
		}
	}
	if sym := m[3]; sym != coredumpUnknown {
		p.setFunction(&f, sym)
	}
	return f, true
}

// coredumpSignal maps the signal name systemd prints (`SEGV`) to ours.
func coredumpSignal(num, name string) string {
	if name != "" {
		return "SIG" + name
	}
	if n, err := strconv.Atoi(num); err == nil {
		return signalName(n)
	}
	return ""
}
