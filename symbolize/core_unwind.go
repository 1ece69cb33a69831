package symbolize

import (
	"context"
	"debug/elf"
	"fmt"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
	"github.com/crashsig/crashsig/symbolize/internal/unwind"
)

// FrameMethod says how a frame of a core was recovered from its callee.
type FrameMethod string

// Frame recovery methods.
const (
	MethodContext  FrameMethod = "context"   // the thread's registers (innermost frame)
	MethodCFI      FrameMethod = "cfi"       // .eh_frame / .debug_frame call frame information
	MethodFP       FrameMethod = "fp"        // frame-pointer (rbp) chain, where no FDE exists
	MethodStackTop FrameMethod = "stack-top" // return address at [rsp] after a call to a bad address
	MethodSignal   FrameMethod = "signal"    // the registers saved in a signal frame (ucontext)
)

// CoreFrame is one physical frame of an unwound core thread.
type CoreFrame struct {
	// PC is the frame's program counter: the faulting or current
	// instruction for the innermost frame and for a frame interrupted by a
	// signal (Exact), a return address otherwise.
	PC    Addr `json:"pc"`
	SP    Addr `json:"sp"`
	Exact bool `json:"exact,omitempty"`
	// SignalTrampoline marks the __restore_rt frame ("<signal handler called>").
	SignalTrampoline bool        `json:"signal_trampoline,omitempty"`
	Method           FrameMethod `json:"method"`
	// Module is the module containing PC (nil when PC is in no known module).
	Module *CoreModule `json:"-"`
}

// SignalFrame is the kernel rt_sigframe found at a __restore_rt frame: the
// context the signal interrupted and the siginfo the handler received.
// This is where the original fault survives when a handler re-raises or
// aborts.
type SignalFrame struct {
	// Frame is the index of the trampoline frame in the thread.
	Frame   int     `json:"frame"`
	SigInfo SigInfo `json:"siginfo"`
	// PC and SP are the interrupted rip and rsp.
	PC Addr `json:"pc"`
	SP Addr `json:"sp"`
	// CR2, TrapNo and Err are the x86 fault registers saved in the sigcontext.
	CR2    Addr   `json:"cr2"`
	TrapNo uint64 `json:"trapno"`
	Err    uint64 `json:"err"`
}

// frameMethods are the public names of the unwinder's methods.
var frameMethods = [...]FrameMethod{
	unwind.Context:  MethodContext,
	unwind.CFIRule:  MethodCFI,
	unwind.FP:       MethodFP,
	unwind.StackTop: MethodStackTop,
	unwind.Signal:   MethodSignal,
}

// loadCFI prepares the module's CFI once. Failures leave the table empty
// (frame-pointer fallback).
func (c *Core) loadCFI(m *CoreModule) *unwind.CFI {
	if m.cfiLoaded {
		return m.cfi
	}
	m.cfiLoaded = true
	if m.elf == nil {
		return nil
	}
	m.cfi = unwind.NewCFI(m.elf, func() *elf.File {
		if r := c.resolver(m); r != nil {
			return r.debugELF()
		}
		return nil
	}, func(err error) { c.note("%s: .eh_frame: %v", m.Name(), err) })
	return m.cfi
}

// coreProcess is the Core as the unwinder sees it.
type coreProcess struct{ c *Core }

func (p coreProcess) ReadMemory(b []byte, addr uint64) (int, error) { return p.c.ReadMemory(b, addr) }
func (p coreProcess) IsExec(addr uint64) bool                       { return p.c.isExec(addr) }

func (p coreProcess) Module(pc uint64) (int, uint64, *unwind.CFI) {
	i := p.c.moduleIndex(pc)
	if i < 0 {
		return -1, 0, nil
	}
	m := p.c.Modules[i]
	return i, uint64(m.Bias), p.c.loadCFI(m)
}

// Label names the module of pc for messages.
func (p coreProcess) Label(i int, pc uint64) string {
	if i < 0 {
		return fmt.Sprintf("%#x (no module)", pc)
	}
	m := p.c.Modules[i]
	if m.elf == nil {
		id := m.BuildID
		if id == "" {
			id = "unknown"
		}
		return fmt.Sprintf("%s (file not available, build-id %s)", m.Name(), id)
	}
	return m.Name()
}

// unwindAll unwinds every thread (without symbolizing). The frames of all
// threads share a budget (CoreOptions.MaxTotalFrames); once it is spent the
// remaining threads keep only their innermost frame.
func (c *Core) unwindAll(ctx context.Context) error {
	budget := c.opts.maxTotalFrames()
	exhausted := 0
	for _, t := range c.Threads {
		if err := ctx.Err(); err != nil {
			return err
		}
		limit := min(c.opts.maxFrames(), budget)
		if limit < 1 {
			limit = 1
			exhausted++
		}
		c.unwind(t, limit)
		budget -= len(t.Frames)
	}
	if exhausted > 0 {
		c.note("frame budget of %d exhausted: %d threads keep only their innermost frame", c.opts.maxTotalFrames(), exhausted)
	}
	return nil
}

// unwind unwinds thread t (internal/unwind) into its Frames, SignalFrames
// and truncation.
func (c *Core) unwind(t *CoreThread, maxFrames int) {
	var regs unwind.Regs
	for _, m := range corefile.DwarfOfPrReg {
		regs.Set(m.DWARFReg, t.regs[m.PrReg])
	}
	u := unwind.Walk(coreProcess{c}, regs, maxFrames)
	t.Frames = make([]CoreFrame, 0, len(u.Frames))
	for _, f := range u.Frames {
		cf := CoreFrame{PC: Addr(f.PC), SP: Addr(f.SP), Exact: f.Exact, SignalTrampoline: f.SignalTrampoline, Method: frameMethods[f.Method]}
		if f.Module >= 0 {
			cf.Module = c.Modules[f.Module]
		}
		t.Frames = append(t.Frames, cf)
	}
	for _, s := range u.SignalFrames {
		t.SignalFrames = append(t.SignalFrames, SignalFrame{Frame: s.Frame, SigInfo: parseSigInfo(s.SigInfo[:]),
			PC: Addr(s.PC), SP: Addr(s.SP), CR2: Addr(s.CR2), TrapNo: s.TrapNo, Err: s.Err})
	}
	t.Truncated, t.TruncatedReason = u.Truncated, u.Reason
}
