package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/go-delve/delve/pkg/dwarf/op"
)

// Process is the memory and the modules of the process whose threads are
// unwound (package symbolize's Core).
type Process interface {
	// ReadMemory reads len(b) bytes at addr; an error if fewer were read.
	ReadMemory(b []byte, addr uint64) (int, error)
	// IsExec reports whether addr lies in an executable mapping.
	IsExec(addr uint64) bool
	// Module returns the module containing pc: an index the caller
	// understands (< 0: none), its load bias and its CFI (nil: none, the
	// frame-pointer chain is followed).
	Module(pc uint64) (index int, bias uint64, cfi *CFI)
	// Label names module index (or pc, when index < 0) in messages.
	Label(index int, pc uint64) string
}

// Method says how a frame was recovered from its callee.
type Method uint8

// Frame recovery methods (symbolize.FrameMethod is their public name).
const (
	Context  Method = iota // the thread's registers (innermost frame)
	CFIRule                // .eh_frame / .debug_frame call frame information
	FP                     // frame-pointer (rbp) chain, where no FDE exists
	StackTop               // return address at [rsp] after a call to a bad address
	Signal                 // the registers saved in a signal frame (ucontext)
)

// String returns the method's name ("cfi", "fp", ...).
func (m Method) String() string {
	return [...]string{"context", "cfi", "fp", "stack-top", "signal"}[m]
}

// Frame is one physical frame.
type Frame struct {
	// PC is the frame's program counter: the faulting or current
	// instruction for the innermost frame and for a frame interrupted by
	// a signal (Exact), a return address otherwise.
	PC, SP uint64
	Exact  bool
	// SignalTrampoline marks the __restore_rt frame.
	SignalTrampoline bool
	Method           Method
	// Module is the Process's index of the module containing PC (< 0: none).
	Module int
}

// SignalFrame is the kernel rt_sigframe found at a __restore_rt frame.
type SignalFrame struct {
	// Frame is the index of the trampoline frame in the thread.
	Frame int
	// SigInfo is the raw siginfo_t that follows the ucontext.
	SigInfo [128]byte
	// PC and SP are the interrupted rip and rsp.
	PC, SP uint64
	// CR2, TrapNo and Err are the x86 fault registers of the sigcontext.
	CR2, TrapNo, Err uint64
}

// Thread is the result of unwinding one thread.
type Thread struct {
	// Frames is the stack, innermost first.
	Frames []Frame
	// SignalFrames are the signal frames found, innermost first.
	SignalFrames []SignalFrame
	// Truncated is set when unwinding stopped before the outermost frame;
	// Reason says why.
	Truncated bool
	Reason    string
}

// x86-64 DWARF register numbers.
const (
	dwRBP = 6
	dwRSP = 7
	dwRIP = 16
	nDw   = 17
)

// Regs is a register set by x86-64 DWARF register number (0-16: rax,
// rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip), each known or not.
type Regs struct {
	v  [nDw]uint64
	ok [nDw]bool
}

// Set makes DWARF register dw known with value v; other numbers are ignored.
func (r *Regs) Set(dw int, v uint64) {
	if dw >= 0 && dw < nDw {
		r.v[dw], r.ok[dw] = v, true
	}
}

func (r *Regs) dwarfRegs() op.DwarfRegisters {
	rs := make([]*op.DwarfRegister, nDw)
	for i := range rs {
		if r.ok[i] {
			rs[i] = op.DwarfRegisterFromUint64(r.v[i])
		}
	}
	return *op.NewDwarfRegisters(0, rs, binary.LittleEndian, dwRIP, dwRSP, dwRBP, 0)
}

var errEndOfStack = errors.New("end of stack")

// walker unwinds one thread of p.
type walker struct {
	p Process
}

func (w walker) readU64(addr uint64) (uint64, bool) {
	var b [8]byte
	if _, err := w.p.ReadMemory(b[:], addr); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// evalExpr evaluates a DWARF expression, recovering from interpreter panics.
func (w walker) evalExpr(regs *Regs, cfa uint64, expr []byte) (v uint64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed DWARF expression: %v", p)
		}
	}()
	dr := regs.dwarfRegs()
	dr.CFA = int64(cfa)
	x, _, err := op.ExecuteStackProgram(dr, expr, 8, w.p.ReadMemory)
	return uint64(x), err
}

// stepCFI computes the caller's registers with the FDE covering pc.
func (w walker) stepCFI(fde *frame.FrameDescriptionEntry, lookupPC uint64, regs *Regs) (Regs, error) {
	fc, err := establish(fde, lookupPC)
	if err != nil {
		return Regs{}, err
	}
	var cfa uint64
	switch fc.CFA.Rule {
	case frame.RuleCFA:
		if fc.CFA.Reg >= nDw || !regs.ok[fc.CFA.Reg] {
			return Regs{}, fmt.Errorf("CFA register %d unknown", fc.CFA.Reg)
		}
		cfa = uint64(int64(regs.v[fc.CFA.Reg]) + fc.CFA.Offset)
	case frame.RuleExpression:
		cfa, err = w.evalExpr(regs, 0, fc.CFA.Expression)
		if err != nil {
			return Regs{}, fmt.Errorf("CFA expression: %w", err)
		}
	default:
		return Regs{}, fmt.Errorf("unsupported CFA rule %d", fc.CFA.Rule)
	}
	next := *regs
	next.v[dwRSP], next.ok[dwRSP] = cfa, true
	raReg := fc.RetAddrReg
	if raReg >= nDw {
		return Regs{}, fmt.Errorf("return address register %d", raReg)
	}
	if _, ok := fc.Regs[raReg]; !ok {
		// no rule for the return address column: treat as undefined
		return Regs{}, errEndOfStack
	}
	for reg, rule := range fc.Regs {
		if reg >= nDw {
			continue
		}
		switch rule.Rule {
		case frame.RuleUndefined:
			next.ok[reg] = false
		case frame.RuleSameVal:
		case frame.RuleOffset:
			v, ok := w.readU64(uint64(int64(cfa) + rule.Offset))
			next.v[reg], next.ok[reg] = v, ok
		case frame.RuleValOffset:
			next.v[reg], next.ok[reg] = uint64(int64(cfa)+rule.Offset), true
		case frame.RuleRegister:
			if rule.Reg < nDw {
				next.v[reg], next.ok[reg] = regs.v[rule.Reg], regs.ok[rule.Reg]
			} else {
				next.ok[reg] = false
			}
		case frame.RuleExpression:
			a, err := w.evalExpr(regs, cfa, rule.Expression)
			if err != nil {
				next.ok[reg] = false
				continue
			}
			v, ok := w.readU64(a)
			next.v[reg], next.ok[reg] = v, ok
		case frame.RuleValExpression:
			a, err := w.evalExpr(regs, cfa, rule.Expression)
			next.v[reg], next.ok[reg] = a, err == nil
		default:
			next.ok[reg] = false
		}
	}
	if raReg != dwRIP {
		next.v[dwRIP], next.ok[dwRIP] = next.v[raReg], next.ok[raReg]
	}
	if !next.ok[dwRIP] {
		if fc.Regs[raReg].Rule == frame.RuleUndefined {
			return Regs{}, errEndOfStack
		}
		return Regs{}, fmt.Errorf("return address at CFA %#x not readable", cfa)
	}
	return next, nil
}

// stepFP walks one link of the rbp chain.
func (w walker) stepFP(regs *Regs) (Regs, error) {
	if !regs.ok[dwRBP] || regs.v[dwRBP] == 0 {
		return Regs{}, errEndOfStack
	}
	bp := regs.v[dwRBP]
	if regs.ok[dwRSP] && bp < regs.v[dwRSP] {
		return Regs{}, fmt.Errorf("frame pointer %#x below the stack pointer", bp)
	}
	nbp, ok1 := w.readU64(bp)
	ret, ok2 := w.readU64(bp + 8)
	if !ok1 || !ok2 {
		return Regs{}, fmt.Errorf("frame pointer %#x not readable", bp)
	}
	next := *regs
	next.v[dwRBP], next.ok[dwRBP] = nbp, true
	next.v[dwRSP], next.ok[dwRSP] = bp+16, true
	next.v[dwRIP], next.ok[dwRIP] = ret, true
	return next, nil
}

// restoreRT is the code of glibc's x86-64 __restore_rt: mov $15,%rax; syscall.
var restoreRT = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}

func (w walker) isSigTrampoline(pc uint64, fde *frame.FrameDescriptionEntry) bool {
	if fde != nil && strings.Contains(fde.CIE.Augmentation, "S") {
		return true
	}
	var b [9]byte
	if _, err := w.p.ReadMemory(b[:], pc); err != nil {
		return false
	}
	return bytes.Equal(b[:], restoreRT)
}

const ucontextSize = 304 // kernel struct ucontext on x86-64

// decodeSigframe reads the ucontext at sp (the stack pointer of the
// __restore_rt frame) and the siginfo after it.
func (w walker) decodeSigframe(sp uint64) (Regs, SignalFrame, error) {
	var b [ucontextSize + 128]byte
	if _, err := w.p.ReadMemory(b[:], sp); err != nil {
		return Regs{}, SignalFrame{}, fmt.Errorf("signal frame at %#x: %w", sp, err)
	}
	le := binary.LittleEndian
	g := func(off int) uint64 { return le.Uint64(b[40+off:]) }
	var r Regs
	order := [...]int{8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16} // r8..r15 rdi rsi rbp rbx rdx rax rcx rsp rip
	for i, dw := range order {
		r.v[dw], r.ok[dw] = g(8*i), true
	}
	sf := SignalFrame{
		SigInfo: [128]byte(b[ucontextSize:]),
		PC:      r.v[dwRIP],
		SP:      r.v[dwRSP],
		Err:     g(152),
		TrapNo:  g(160),
		CR2:     g(176),
	}
	return r, sf, nil
}

// maxSignalFrames bounds the signal frames followed per thread.
const maxSignalFrames = 16

// Walk unwinds one thread of p from its registers, at most maxFrames
// frames (at least the innermost one is always returned).
//
// Guards: the stack pointer must grow (except across a signal frame),
// every return address must lie in executable memory, at most 16 signal
// frames are followed. Where a module has no FDE the rbp chain is
// followed; a walk that ends there is Truncated (only CFI can say
// "outermost"). A first frame outside executable memory continues from
// the return address at [rsp].
func Walk(p Process, regs Regs, maxFrames int) Thread {
	w := walker{p}
	var t Thread
	exact, method := true, Context
	stop := func(reason string) {
		t.Truncated, t.Reason = true, reason
	}
	for {
		if len(t.Frames) >= maxFrames {
			stop(fmt.Sprintf("depth limit of %d frames", maxFrames))
			return t
		}
		pc, sp := regs.v[dwRIP], regs.v[dwRSP]
		mi, bias, cfi := p.Module(pc)
		f := Frame{PC: pc, SP: sp, Exact: exact, Method: method, Module: mi}
		lookup := pc
		if !exact && lookup > 0 {
			lookup--
		}
		var fde *frame.FrameDescriptionEntry
		if mi >= 0 {
			fde = cfi.fdeFor(lookup - bias)
		}
		// signal trampoline: continue in the interrupted context
		if len(t.SignalFrames) < maxSignalFrames && w.isSigTrampoline(pc, fde) {
			f.SignalTrampoline = true
			t.Frames = append(t.Frames, f)
			next, sf, err := w.decodeSigframe(sp)
			if err != nil {
				stop(err.Error())
				return t
			}
			sf.Frame = len(t.Frames) - 1
			t.SignalFrames = append(t.SignalFrames, sf)
			if next.v[dwRIP] == pc && next.v[dwRSP] == sp {
				stop("signal frame loops")
				return t
			}
			regs, exact, method = next, true, Signal
			continue
		}
		if exact && !p.IsExec(pc) {
			// a call through a bad pointer: the caller's return address is at [rsp]
			t.Frames = append(t.Frames, f)
			if !w.stackTop(&regs) {
				stop(fmt.Sprintf("PC %#x outside executable mappings", pc))
				return t
			}
			exact, method = false, StackTop
			continue
		}
		t.Frames = append(t.Frames, f)
		var next Regs
		var err error
		how := CFIRule
		if fde != nil {
			next, err = w.stepCFI(fde, lookup-bias, &regs)
		} else {
			how = FP
			next, err = w.stepFP(&regs)
		}
		if errors.Is(err, errEndOfStack) {
			if how == FP {
				// only CFI can say a stack ends; a frame-pointer walk that
				// stops has merely lost the chain
				stop(fmt.Sprintf("no unwind information for %s at frame %d and the frame-pointer chain ends", p.Label(mi, pc), len(t.Frames)-1))
			}
			return t
		}
		if err != nil {
			stop(fmt.Sprintf("%s at frame %d: %v", how, len(t.Frames)-1, err))
			return t
		}
		npc, nsp := next.v[dwRIP], next.v[dwRSP]
		if npc == 0 {
			return t // outermost frame
		}
		if !next.ok[dwRSP] || nsp <= sp {
			stop(fmt.Sprintf("stack pointer did not grow at frame %d (%#x -> %#x)", len(t.Frames)-1, sp, nsp))
			return t
		}
		if !p.IsExec(npc) {
			stop(fmt.Sprintf("return address %#x outside executable mappings at frame %d", npc, len(t.Frames)-1))
			return t
		}
		regs, exact, method = next, false, how
	}
}

// stackTop replaces rip with the return address at [rsp] if that lies in
// executable memory (the innermost frame called a bad address).
func (w walker) stackTop(regs *Regs) bool {
	sp := regs.v[dwRSP]
	ret, ok := w.readU64(sp)
	if !ok || !w.p.IsExec(ret) {
		return false
	}
	regs.v[dwRIP], regs.v[dwRSP] = ret, sp+8
	return true
}
