package symbolize

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
	"github.com/crashsig/crashsig/symbolize/internal/scan"
)

// CrashCause says where the core reader found the crash signal.
type CrashCause string

// Where the crash signal came from.
const (
	// CauseSigInfo: the dumping thread's NT_SIGINFO is a kernel-generated
	// fault (si_code > 0): the usual core of a process without handler.
	CauseSigInfo CrashCause = "siginfo"
	// CauseSignalFrame: the fault was found in a signal frame on some
	// thread's stack, because a handler re-raised, killed the process or
	// aborted (study §4.6).
	CauseSignalFrame CrashCause = "signal-frame"
	// CauseDumpSignal: no fault information; the signal that dumped the core
	// (for example SIGABRT of abort(), or a SIGSEGV re-raised with raise()).
	CauseDumpSignal CrashCause = "dump-signal"
)

// CrashInfo is the core reader's verdict on the crash.
type CrashInfo struct {
	// Thread is the index in Core.Threads of the crashing thread.
	Thread int
	Cause  CrashCause
	// Signal is the crash signal with its code and (for faults) address.
	Signal SigInfo
	// DumpSignal is the signal that made the kernel dump the core (it
	// differs from Signal when a handler aborted or re-raised).
	DumpSignal SigInfo
	// FaultPC is the PC of the faulting (or current) instruction.
	FaultPC Addr
	// SignalFrame is the signal frame the crash was read from (CauseSignalFrame).
	SignalFrame *SignalFrame
}

// dumpSignal is the signal that dumped the core: NT_SIGINFO of the first
// thread, else its pr_cursig.
func (c *Core) dumpSignal() SigInfo {
	t := c.Threads[0]
	if t.SigInfo != nil {
		return *t.SigInfo
	}
	return SigInfo{Signo: int32(t.CurSig)}
}

// findCrashed applies the crashing-thread rule and returns the thread index.
func (c *Core) findCrashed() int { return c.CrashInfo().Thread }

// CrashInfo finds the crashing thread and the real signal:
//  1. if the dumping thread's siginfo is a kernel fault, that is the crash;
//  2. else the first thread with a signal frame holding a kernel fault
//     (handler that aborted, re-raised with kill or raise);
//  3. else, when the dump signal was sent with kill() (glog-style handler),
//     the first thread with any signal frame: it sits in the handler;
//  4. else the dumping thread with the dump signal.
func (c *Core) CrashInfo() CrashInfo {
	dump := c.dumpSignal()
	t0 := c.Threads[0]
	ci := CrashInfo{Thread: 0, Cause: CauseDumpSignal, Signal: dump, DumpSignal: dump, FaultPC: t0.PC}
	if dump.KernelGenerated() {
		ci.Cause = CauseSigInfo
		return ci
	}
	pick := func(want func(SignalFrame) bool) bool {
		for i, t := range c.Threads {
			for j := range t.SignalFrames {
				sf := t.SignalFrames[j]
				if want(sf) {
					ci.Thread, ci.Cause, ci.Signal, ci.FaultPC, ci.SignalFrame = i, CauseSignalFrame, sf.SigInfo, sf.PC, &t.SignalFrames[j]
					return true
				}
			}
		}
		return false
	}
	if pick(func(sf SignalFrame) bool { return sf.SigInfo.KernelGenerated() }) {
		return ci
	}
	if dump.Code == 0 && pick(func(sf SignalFrame) bool { return sf.SigInfo.Signo > 0 }) {
		return ci
	}
	return ci
}

// Crash returns the core as a Crash: Kind signal, the crashing thread first
// and marked Crashed, every thread's frames symbolized (inline frames
// expanded when DWARF is available). ctx bounds the symbolization work.
func (c *Core) Crash(ctx context.Context) (*Crash, error) {
	if c.closed {
		return nil, c.errClosed()
	}
	ci := c.CrashInfo()
	cr := &Crash{
		Source:  c.Path,
		Kind:    KindSignal,
		Formats: []string{"core"},
		Signal:  SignalName(ci.Signal.Signo),
		PID:     int64(c.PsInfo.PID),
		TID:     c.Threads[ci.Thread].TID,
		FaultPC: ci.FaultPC,
	}
	cr.SignalReason = SignalCodeName(ci.Signal.Signo, ci.Signal.Code)
	if ci.Signal.hasAddr() {
		cr.FaultAddress, cr.HasFaultAddress = ci.Signal.Addr, true
	}
	cr.Product = productOf(c)
	order := make([]int, 0, len(c.Threads))
	order = append(order, ci.Thread)
	for i := range c.Threads {
		if i != ci.Thread {
			order = append(order, i)
		}
	}
	cr.Threads = make([]Thread, 0, len(order))
	for k, i := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := c.Threads[i]
		th := Thread{ID: t.TID, Crashed: k == 0, Frames: c.symbolizeFrames(t), Truncated: t.Truncated}
		cr.Threads = append(cr.Threads, th)
	}
	if cr.Product == ProductUnknown {
		cr.Product = scan.ProductFromFrames(cr)
	}
	cr.Notes = c.crashNotes(ci)
	if reason := c.truncation(); reason != "" {
		// What the core still holds is reported; the incident says it is
		// incomplete (issue 10.4: a truncated core is corrupted).
		cr.Corrupted, cr.CorruptedReason = true, reason
	}
	return cr, nil
}

// truncation says how the core file is cut short ("" when it is whole):
// a segment or note that its program header places beyond the end of the
// file.
func (c *Core) truncation() string {
	if c.r == nil || c.size <= 0 {
		return ""
	}
	ef, err := elfimage.NewFile(io.NewSectionReader(c.r, 0, c.size))
	if err != nil {
		return ""
	}
	missing, segs := uint64(0), 0
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD && p.Type != elf.PT_NOTE {
			continue
		}
		end := p.Off + p.Filesz
		if p.Filesz == 0 || end <= uint64(c.size) {
			continue
		}
		segs++
		if p.Off >= uint64(c.size) {
			missing += p.Filesz
		} else {
			missing += end - uint64(c.size)
		}
	}
	if segs == 0 {
		return ""
	}
	return fmt.Sprintf("core file truncated: %d of its segments end beyond the file's %d bytes (%d bytes missing); stacks in the missing part are cut short", segs, c.size, missing)
}

// ThreadFrames symbolizes one thread's stack (the model's frames,
// innermost first, inline frames expanded); nil after Close.
func (c *Core) ThreadFrames(i int) []Frame {
	if c.closed || i < 0 || i >= len(c.Threads) {
		return nil
	}
	return c.symbolizeFrames(c.Threads[i])
}

func (c *Core) symbolizeFrames(t *CoreThread) []Frame {
	out := make([]Frame, 0, len(t.Frames))
	for i, f := range t.Frames {
		base := Frame{Index: i, PC: f.PC}
		if f.Module != nil {
			base.Module = f.Module.Name()
			base.Offset, base.HasOffset = f.PC-f.Module.Bias, true
		}
		if f.SignalTrampoline {
			base.Function = "<signal handler called>"
			out = append(out, base)
			continue
		}
		var locs []coreLoc
		if f.Module != nil {
			if r := c.resolver(f.Module); r != nil {
				locs = r.resolve(uint64(f.PC-f.Module.Bias), f.Exact)
			}
		}
		if len(locs) == 0 {
			out = append(out, base)
			continue
		}
		for _, l := range locs {
			fr := base
			fr.Function, fr.File, fr.Line, fr.Column, fr.Inlined, fr.Symbolized = l.Function, l.File, l.Line, l.Column, l.Inlined, true
			if l.Demangled != "" {
				fr.Demangled = l.Demangled
			} else if IsMangled(l.Function) {
				if d, ok := c.dem.Demangle(l.Function); ok {
					fr.Demangled = d
				}
			}
			out = append(out, fr)
		}
	}
	return out
}

func productOf(c *Core) Product {
	names := []string{c.PsInfo.Fname, c.ExecFn}
	for _, m := range c.Modules {
		if m.IsMain {
			names = append(names, filepath.Base(m.Path))
		}
	}
	for _, n := range names {
		n = strings.ToLower(n)
		switch {
		case strings.Contains(n, "starrocks"):
			return ProductStarRocks
		case strings.Contains(n, "doris") || strings.Contains(n, "palo_be"):
			return ProductDoris
		}
	}
	return ProductUnknown
}

func (c *Core) crashNotes(ci CrashInfo) []string {
	var notes []string
	if c.HasPsInfo {
		notes = append(notes, fmt.Sprintf("process %q pid %d, command line %q", c.PsInfo.Fname, c.PsInfo.PID, c.PsInfo.Args))
	}
	notes = append(notes, "thread names are not recorded in a core file; threads are identified by LWP only")
	t := c.Threads[ci.Thread]
	switch ci.Cause {
	case CauseSigInfo:
		notes = append(notes, fmt.Sprintf("crash: %s (%s) on the dumping thread LWP %d, from NT_SIGINFO", SignalName(ci.Signal.Signo), SignalCodeName(ci.Signal.Signo, ci.Signal.Code), t.TID))
		if ci.Signal.Signo == 11 && ci.Signal.Code == corefile.SIKernel {
			notes = append(notes, "SIGSEGV with SI_KERNEL is a general protection fault (a non-canonical address such as a corrupted or freed pointer, or a privileged instruction): the kernel gives no fault address")
		}
	case CauseSignalFrame:
		notes = append(notes, fmt.Sprintf("crash: %s (%s) read from the signal frame on LWP %d (frame %d); the core was dumped by %s %s on LWP %d: a signal handler re-raised, killed or aborted",
			SignalName(ci.Signal.Signo), SignalCodeName(ci.Signal.Signo, ci.Signal.Code), t.TID, ci.SignalFrame.Frame,
			SignalName(ci.DumpSignal.Signo), SignalCodeName(ci.DumpSignal.Signo, ci.DumpSignal.Code), c.Threads[0].TID))
		if ci.SignalFrame.CR2 != 0 {
			notes = append(notes, fmt.Sprintf("signal frame: cr2=%s trapno=%d err=%#x", ci.SignalFrame.CR2, ci.SignalFrame.TrapNo, ci.SignalFrame.Err))
		}
	default:
		s := fmt.Sprintf("crash: dump signal %s (%s) on LWP %d", SignalName(ci.Signal.Signo), SignalCodeName(ci.Signal.Signo, ci.Signal.Code), t.TID)
		if ci.Signal.Code <= 0 && (ci.Signal.Signo == 11 || ci.Signal.Signo == 7 || ci.Signal.Signo == 8 || ci.Signal.Signo == 4) {
			s += "; the signal was re-sent by a handler (raise/kill), the fault address is not in the core"
		}
		notes = append(notes, s)
	}
	for _, m := range c.Mismatches {
		notes = append(notes, "WARNING: "+m.Error())
	}
	notes = append(notes, c.Notes...)
	// modules on the stacks without line information: which debug files would help
	seen := map[*CoreModule]bool{}
	for _, t := range c.Threads {
		for _, f := range t.Frames {
			if f.Module != nil {
				seen[f.Module] = true
			}
		}
	}
	var missing []string
	for _, m := range c.Modules {
		if !seen[m] || m.IsVDSO {
			continue
		}
		c.resolver(m)
		if m.HasDebugInfo {
			continue
		}
		id := m.BuildID
		hint := "build-id unknown"
		if len(id) > 2 {
			hint = fmt.Sprintf("build-id %s, debug file .build-id/%s/%s.debug", id, id[:2], id[2:])
		}
		missing = append(missing, fmt.Sprintf("no debug info for %s (%s)", m.Path, hint))
	}
	sort.Strings(missing)
	return append(notes, missing...)
}
