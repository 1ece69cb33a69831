// JVM and gdb thread lines of an incident: jstack and hs_err threads and
// frames, hs_err siginfo, gdb thread headers.

package scan

import (
	"strconv"
	"strings"
)

// javaThread starts a thread of a Java thread dump:
// `"name" #N daemon prio=5 os_prio=0 … tid=0x… nid=0x1f2e waiting on condition  [0x…]`.
func (in *incident) javaThread(p *parser, m []string) {
	if len(in.stacks) >= p.opts.MaxThreads {
		in.note("thread dump cut at %d threads", p.opts.MaxThreads)
		in.cur = &stack{} // frames of the extra threads go nowhere
		return
	}
	s := in.newStack("jstack", 0)
	s.th.Name = m[1]
	s.th.Handle = m[3]
	nid := m[4]
	if strings.HasPrefix(nid, "0x") {
		if v, ok := parseHex(nid); ok {
			s.th.ID = int64(v)
		}
	} else {
		s.th.ID, _ = strconv.ParseInt(nid, 10, 64)
	}
	s.th.State = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[5]), "]"))
	if i := strings.Index(s.th.State, "  ["); i >= 0 {
		s.th.State = s.th.State[:i]
	}
}

// gdb handles gdb's header lines.
func (in *incident) gdb(p *parser, k lineKind, m []string) {
	c := in.c
	in.addFormat("F7")
	if in.sec != secGDB {
		in.sec = secGDB
		in.cur = nil
	}
	if c.Kind == KindUnknown {
		c.Kind = KindThreadDump
	}
	switch k {
	case kGDBCore:
		exe := m[1]
		if f := strings.Fields(exe); len(f) > 0 {
			exe = f[0]
		}
		switch {
		case strings.Contains(exe, "starrocks_be"):
			c.Product = ProductStarRocks
		case strings.Contains(exe, "doris_be"), strings.Contains(exe, "palo_be"):
			c.Product = ProductDoris
		}
	case kGDBTerminated:
		in.gdbSig = true
		c.Kind = KindSignal
		c.Signal = m[1]
		if n, err := strconv.Atoi(m[1]); err == nil {
			c.Signal = signalName(n)
		}
		c.SignalReason = strings.TrimSuffix(m[2], ".")
		if len(m) > 4 {
			// crashsig's core text (F7.crashsig_signal) gives the fault
			// address the core's siginfo holds and the crashing thread's
			// LWP on its signal line.
			if v, ok := parseHex(m[3]); ok {
				c.FaultAddress, c.HasFaultAddress = Addr(v), true
			}
			in.gdbCur, _ = strconv.ParseInt(m[4], 10, 64)
		}
	case kGDBCurrent:
		in.gdbCur, _ = strconv.ParseInt(m[3], 10, 64)
	case kGDBThread:
		in.dropEmptyCause()
		s := in.newStack("gdb", 1)
		s.th.ID, _ = strconv.ParseInt(m[3], 10, 64)
		if m[2] != "" {
			s.th.Handle = "0x" + m[2]
		}
		s.th.Name = m[4]
	}
}

// signalName maps the Linux x86-64 signal numbers old gdb prints.
func signalName(n int) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
	if s, ok := names[n]; ok {
		return s
	}
	return "SIG" + strconv.Itoa(n)
}

// jvmLine reads the '#' lines of a JVM fatal-error summary (F5.2).
func (in *incident) jvmLine(p *parser, ln lineInfo) {
	c := in.c
	t := strings.TrimSpace(strings.TrimPrefix(ln.text, "#"))
	switch {
	case jvmSignal.MatchString(t):
		m := jvmSignal.FindStringSubmatch(t)
		c.Signal = m[1]
		if v, ok := parseHex(m[2]); ok {
			c.FaultPC = Addr(v)
		}
		c.PID, _ = strconv.ParseInt(m[3], 10, 64)
		if strings.HasPrefix(m[4], "0x") {
			in.note("JDK 8 tid is a pthread handle")
		} else {
			c.TID, _ = strconv.ParseInt(m[4], 10, 64)
		}
	case strings.HasPrefix(t, "Internal Error ("), strings.HasPrefix(t, "guarantee("), strings.HasPrefix(t, "Error: "),
		strings.HasPrefix(t, "Native memory allocation"), strings.HasPrefix(t, "Out of Memory Error"):
		if c.Message == "" || strings.HasPrefix(c.Message, "There is insufficient") {
			if c.Message != "" {
				c.Message += " "
			}
			c.Message += t
		}
	case strings.HasPrefix(t, "JRE version:"):
		in.note("%s", t)
	case len(t) > 3 && (t[0] == 'C' || t[0] == 'V' || t[0] == 'j' || t[0] == 'J') && t[1] == ' ':
		// The problematic frame.
		if f, ok := p.parseHsErrFrame(t); ok {
			if in.cur == nil || in.cur.origin != "F5" {
				s := in.newStack("F5", 1)
				s.th.Crashed = true
			}
			f.Index = len(in.cur.th.Frames)
			in.addFrame(p, f, ln)
			if c.Message == "" {
				c.Message = "problematic frame: " + t
			}
		}
	}
}

var jvmSignal = mustCompile(`^(SIG[A-Z]+) \(0x[0-9a-f]+\) at pc=0x([0-9a-f]+), pid=(\d+), tid=(0x[0-9a-f]+|\d+)`)

// parseHsErrFrame parses hs_err native/Java frames (F5.3):
//
//	C  [libc.so.6+0x18b2d5]  __memmove_avx_unaligned_erms+0x35
//	V  [libjvm.so+0x8c1f2a]  jni_GetStaticMethodID+0x1aa
//	j  org.apache.doris.common.jni.JniScanner.getNextBatchMeta()J+12
//	J 1234 c2 java.util.HashMap.get(Ljava/lang/Object;)Ljava/lang/Object; java.base@17.0.9 (23 bytes) @ 0x… [0x…+0x…]
//	v  ~StubRoutines::call_stub
//	C  0x00007f3a4c5d6e7f
func (p *parser) parseHsErrFrame(s string) (Frame, bool) {
	if len(s) < 4 || s[1] != ' ' || !strings.ContainsRune("CJjVvA", rune(s[0])) {
		return Frame{}, false
	}
	typ := s[0]
	rest := strings.TrimLeft(s[1:], " ")
	f := Frame{Raw: s}
	switch typ {
	case 'C', 'V':
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return Frame{}, false
			}
			if m, off, ok := parseModuleOffset(rest[:end+1]); ok {
				f.Module, f.Offset, f.HasOffset = m, Addr(off), true
			}
			sym := strings.TrimSpace(rest[end+1:])
			if k := strings.LastIndex(sym, "+0x"); k > 0 {
				sym = sym[:k]
			}
			if sym != "" {
				p.setFunction(&f, sym)
			}
			return f, true
		}
		if v, ok := parseHex(strings.TrimSpace(rest)); ok {
			f.PC = Addr(v)
			return f, true
		}
		return Frame{}, false
	case 'j':
		f.Java = true
		name := rest
		if i := strings.IndexByte(name, '('); i > 0 {
			name = name[:i]
		}
		f.Function = name
		return f, true
	case 'J':
		f.Java = true
		fields := strings.Fields(rest)
		for _, fl := range fields {
			if i := strings.IndexByte(fl, '('); i > 0 && strings.Contains(fl[:i], ".") {
				f.Function = fl[:i]
				return f, true
			}
		}
		return f, len(fields) > 0
	case 'v', 'A':
		f.Function = strings.TrimSpace(rest)
		return f, true
	}
	return Frame{}, false
}

func (in *incident) hsErrSiginfo(t string) {
	c := in.c
	if m := hsErrSiginfo.FindStringSubmatch(t); m != nil {
		if c.Signal == "" {
			c.Signal = m[1]
		}
		if v, ok := parseHex(m[3]); ok {
			c.FaultAddress, c.HasFaultAddress = Addr(v), true
		}
	}
}

var hsErrSiginfo = mustCompile(`si_signo: \d+ \((SIG[A-Z]+)\), si_code: \d+ \(([A-Z_]+)\)(?:, si_addr: (0x[0-9a-f]+))?`)
