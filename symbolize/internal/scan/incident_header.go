// How an incident takes its header lines: signal lines, check failures,
// sanitizer starts, kernel lines, systemd-coredump headers, events, and the
// process and time checks that decide whether a header belongs to it.

package scan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

func (in *incident) event(ln lineInfo, kind, text string) {
	if len(in.c.Events) < maxEvents {
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
			if c.Signal == "SIGSEGV" && c.HasFaultAddress && c.FaultAddress == 0 {
				// Doris names SEGV_MAPERR and SEGV_ACCERR; a kernel
				// SIGSEGV with another si_code and si_addr 0 is a general
				// protection fault (SI_KERNEL: a non-canonical address,
				// such as a freed or corrupted pointer), for which the
				// kernel gives no fault address: @0x0 is no null access.
				c.HasFaultAddress = false
				in.note("SIGSEGV with neither SEGV_MAPERR nor SEGV_ACCERR (Doris prints `unknown detail explain`) and si_addr 0: a general protection fault (SI_KERNEL), without a fault address")
			}
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

// glogSite returns the source location of a glog line's prefix
// (`F0611 08:02:41.118230 90211 olap_utils.h:157] msg` → olap_utils.h,
// 157): the last word before the first `]`, split at its last colon.
// glogLine has checked the prefix. A location that is not `name:N` with
// N > 0 gives "", 0.
func glogSite(line string) (string, int) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return "", 0
	}
	loc := line[strings.LastIndexByte(line[:end], ' ')+1 : end]
	i := strings.LastIndexByte(loc, ':')
	if i <= 0 || len(loc)-i-1 > 9 || digitRunEnd(loc, i+1) != len(loc) {
		return "", 0 // not a line number of at most nine digits
	}
	n, err := strconv.Atoi(loc[i+1:])
	if err != nil || n <= 0 {
		return "", 0
	}
	return loc[:i], n
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
		switch {
		case len(m) > 4 && strings.HasPrefix(m[3], "CHECK failed: "):
			// F6.check_failed: the runtime's own check, m[4] its condition.
			c.SanitizerBug = "CHECK failed: " + m[4]
			c.Kind = KindSanitizer
		case len(m) > 5 && strings.HasPrefix(m[3], "failed to "):
			// F6.mmap_failed: the verb and what the runtime mapped.
			c.SanitizerBug = "failed to " + m[4] + " " + m[5]
			c.Kind = KindSanitizer
		case m[2] == "LeakSanitizer":
			c.Kind = KindLeak
			c.SanitizerBug = "memory-leak"
		case c.Kind == KindUnknown || c.Kind == KindAssert:
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
		if c.SiteFile == "" {
			c.SiteFile = m[1]
			c.SiteLine, _ = strconv.Atoi(m[2])
		}
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
// A colon inside a quoted type (`member call on null pointer of type
// 'doris::IColumn'`) is the type's scope, not the end of the words.
func ubsanBug(msg string) string {
	if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsRune(msg[:i], '\'') {
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

// sameMoment reports whether two glog times are the same second or one
// second apart (two threads' FATAL lines of one death).
func (t glogTime) sameMoment(u glogTime) bool {
	if !t.ok || !u.ok || t.year != u.year || t.month != u.month || t.day != u.day {
		return false
	}
	d := (t.hour*60+t.min)*60 + t.second - ((u.hour*60+u.min)*60 + u.second)
	return d >= -1 && d <= 1
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
