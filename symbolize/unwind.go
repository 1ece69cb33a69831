package symbolize

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/go-delve/delve/pkg/dwarf/op"
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

// cfiTable holds the call frame information of one module at link-time
// addresses: .eh_frame through its .eh_frame_hdr index (FDEs parsed on
// demand), or fully parsed when there is no usable index; .debug_frame
// (own or from the debug file) is parsed on the first PC .eh_frame misses.
type cfiTable struct {
	hdr         *ehHdrIndex
	eh          frame.FrameDescriptionEntries
	debug       frame.FrameDescriptionEntries
	debugLoaded bool
	loadDebug   func() frame.FrameDescriptionEntries
}

// parseFDEs runs delve's CFI parser, turning its panics on malformed input
// into errors.
func parseFDEs(data []byte, ehAddr uint64) (fdes frame.FrameDescriptionEntries, err error) {
	defer func() {
		if p := recover(); p != nil {
			fdes, err = nil, fmt.Errorf("malformed CFI: %v", p)
		}
	}()
	fdes, err = frame.Parse(data, binary.LittleEndian, 0, 8, ehAddr)
	if err != nil {
		return nil, err
	}
	// Parse keeps section order; FDEForPC needs them sorted (Append sorts).
	return frame.FrameDescriptionEntries(nil).Append(fdes), nil
}

const maxCFISection = 512 << 20

func sectionData(ef *elf.File, name string) ([]byte, uint64, bool) {
	s := ef.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 || s.Size > maxCFISection {
		return nil, 0, false
	}
	b, err := s.Data()
	if err != nil {
		return nil, 0, false
	}
	return b, s.Addr, true
}

// loadCFI prepares the module's CFI. Failures leave the table empty
// (frame-pointer fallback).
func (c *Core) loadCFI(m *CoreModule) *cfiTable {
	if m.cfiLoaded {
		return m.cfi
	}
	m.cfiLoaded = true
	if m.elf == nil {
		return nil
	}
	t := &cfiTable{hdr: newEHHdrIndex(m.elf)}
	if t.hdr == nil {
		if b, addr, ok := sectionData(m.elf, ".eh_frame"); ok && addr != 0 {
			fdes, err := parseFDEs(b, addr)
			if err != nil {
				c.note("%s: .eh_frame: %v", m.Name(), err)
			}
			t.eh = fdes
		}
	}
	t.loadDebug = func() frame.FrameDescriptionEntries {
		ef := m.elf
		if ef.Section(".debug_frame") == nil {
			ef = nil
			if r := c.resolver(m); r != nil {
				ef = r.debugELF()
			}
		}
		if ef == nil {
			return nil
		}
		if b, _, ok := sectionData(ef, ".debug_frame"); ok {
			if fdes, err := parseFDEs(b, 0); err == nil {
				return fdes
			}
		}
		return nil
	}
	m.cfi = t
	return t
}

func (t *cfiTable) fdeFor(pc uint64) *frame.FrameDescriptionEntry {
	if t == nil {
		return nil
	}
	if t.hdr != nil {
		if f := t.hdr.fdeFor(pc); f != nil {
			return f
		}
	} else if f, err := t.eh.FDEForPC(pc); err == nil {
		return f
	}
	if !t.debugLoaded {
		t.debugLoaded = true
		t.debug = t.loadDebug()
	}
	if f, err := t.debug.FDEForPC(pc); err == nil {
		return f
	}
	return nil
}

// establish runs the FDE's CFA program up to pc, recovering from panics of
// the CFA interpreter on malformed programs.
func establish(fde *frame.FrameDescriptionEntry, pc uint64) (fc *frame.FrameContext, err error) {
	defer func() {
		if p := recover(); p != nil {
			fc, err = nil, fmt.Errorf("malformed CFA program: %v", p)
		}
	}()
	return fde.EstablishFrame(pc)
}

// x86-64 DWARF register numbers.
const (
	dwRBP = 6
	dwRSP = 7
	dwRIP = 16
	nDw   = 17
)

type regSet struct {
	v  [nDw]uint64
	ok [nDw]bool
}

func regsFromPrstatus(pr *[xNumRegs]uint64) regSet {
	var r regSet
	for _, m := range amd64DwarfOfPrReg {
		r.v[m.dw], r.ok[m.dw] = pr[m.pr], true
	}
	return r
}

func (r *regSet) dwarfRegs() op.DwarfRegisters {
	rs := make([]*op.DwarfRegister, nDw)
	for i := range rs {
		if r.ok[i] {
			rs[i] = op.DwarfRegisterFromUint64(r.v[i])
		}
	}
	return *op.NewDwarfRegisters(0, rs, binary.LittleEndian, dwRIP, dwRSP, dwRBP, 0)
}

var errEndOfStack = errors.New("end of stack")

// evalExpr evaluates a DWARF expression, recovering from interpreter panics.
func (c *Core) evalExpr(regs *regSet, cfa uint64, expr []byte) (v uint64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed DWARF expression: %v", p)
		}
	}()
	dr := regs.dwarfRegs()
	dr.CFA = int64(cfa)
	x, _, err := op.ExecuteStackProgram(dr, expr, 8, c.ReadMemory)
	return uint64(x), err
}

// stepCFI computes the caller's registers with the FDE covering pc.
func (c *Core) stepCFI(fde *frame.FrameDescriptionEntry, lookupPC uint64, regs *regSet) (regSet, error) {
	fc, err := establish(fde, lookupPC)
	if err != nil {
		return regSet{}, err
	}
	var cfa uint64
	switch fc.CFA.Rule {
	case frame.RuleCFA:
		if fc.CFA.Reg >= nDw || !regs.ok[fc.CFA.Reg] {
			return regSet{}, fmt.Errorf("CFA register %d unknown", fc.CFA.Reg)
		}
		cfa = uint64(int64(regs.v[fc.CFA.Reg]) + fc.CFA.Offset)
	case frame.RuleExpression:
		cfa, err = c.evalExpr(regs, 0, fc.CFA.Expression)
		if err != nil {
			return regSet{}, fmt.Errorf("CFA expression: %w", err)
		}
	default:
		return regSet{}, fmt.Errorf("unsupported CFA rule %d", fc.CFA.Rule)
	}
	next := *regs
	next.v[dwRSP], next.ok[dwRSP] = cfa, true
	raReg := fc.RetAddrReg
	if raReg >= nDw {
		return regSet{}, fmt.Errorf("return address register %d", raReg)
	}
	if _, ok := fc.Regs[raReg]; !ok {
		// no rule for the return address column: treat as undefined
		return regSet{}, errEndOfStack
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
			v, ok := c.readU64(uint64(int64(cfa) + rule.Offset))
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
			a, err := c.evalExpr(regs, cfa, rule.Expression)
			if err != nil {
				next.ok[reg] = false
				continue
			}
			v, ok := c.readU64(a)
			next.v[reg], next.ok[reg] = v, ok
		case frame.RuleValExpression:
			a, err := c.evalExpr(regs, cfa, rule.Expression)
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
			return regSet{}, errEndOfStack
		}
		return regSet{}, fmt.Errorf("return address at CFA %#x not readable", cfa)
	}
	return next, nil
}

// stepFP walks one link of the rbp chain.
func (c *Core) stepFP(regs *regSet) (regSet, error) {
	if !regs.ok[dwRBP] || regs.v[dwRBP] == 0 {
		return regSet{}, errEndOfStack
	}
	bp := regs.v[dwRBP]
	if regs.ok[dwRSP] && bp < regs.v[dwRSP] {
		return regSet{}, fmt.Errorf("frame pointer %#x below the stack pointer", bp)
	}
	nbp, ok1 := c.readU64(bp)
	ret, ok2 := c.readU64(bp + 8)
	if !ok1 || !ok2 {
		return regSet{}, fmt.Errorf("frame pointer %#x not readable", bp)
	}
	next := *regs
	next.v[dwRBP], next.ok[dwRBP] = nbp, true
	next.v[dwRSP], next.ok[dwRSP] = bp+16, true
	next.v[dwRIP], next.ok[dwRIP] = ret, true
	return next, nil
}

// restoreRT is the code of glibc's x86-64 __restore_rt: mov $15,%rax; syscall.
var restoreRT = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}

func (c *Core) isSigTrampoline(pc uint64, fde *frame.FrameDescriptionEntry) bool {
	if fde != nil && strings.Contains(fde.CIE.Augmentation, "S") {
		return true
	}
	var b [9]byte
	if _, err := c.ReadMemory(b[:], pc); err != nil {
		return false
	}
	return bytes.Equal(b[:], restoreRT)
}

const ucontextSize = 304 // kernel struct ucontext on x86-64

// decodeSigframe reads the ucontext at sp (the stack pointer of the
// __restore_rt frame) and the siginfo after it.
func (c *Core) decodeSigframe(sp uint64) (regSet, SignalFrame, error) {
	var b [ucontextSize + 128]byte
	if _, err := c.ReadMemory(b[:], sp); err != nil {
		return regSet{}, SignalFrame{}, fmt.Errorf("signal frame at %#x: %w", sp, err)
	}
	le := binary.LittleEndian
	g := func(off int) uint64 { return le.Uint64(b[40+off:]) }
	var r regSet
	order := [...]int{8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16} // r8..r15 rdi rsi rbp rbx rdx rax rcx rsp rip
	for i, dw := range order {
		r.v[dw], r.ok[dw] = g(8*i), true
	}
	sf := SignalFrame{
		SigInfo: parseSigInfo(b[ucontextSize:]),
		PC:      Addr(r.v[dwRIP]),
		SP:      Addr(r.v[dwRSP]),
		Err:     g(152),
		TrapNo:  g(160),
		CR2:     Addr(g(176)),
	}
	return r, sf, nil
}

const maxSignalFrames = 16

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

func (c *Core) unwind(t *CoreThread, maxFrames int) {
	regs := regsFromPrstatus(&t.regs)
	exact, method := true, MethodContext
	stop := func(reason string) {
		t.Truncated, t.TruncatedReason = true, reason
	}
	for {
		if len(t.Frames) >= maxFrames {
			stop(fmt.Sprintf("depth limit of %d frames", maxFrames))
			return
		}
		pc, sp := regs.v[dwRIP], regs.v[dwRSP]
		m := c.moduleFor(pc)
		f := CoreFrame{PC: Addr(pc), SP: Addr(sp), Exact: exact, Method: method, Module: m}
		lookup := pc
		if !exact && lookup > 0 {
			lookup--
		}
		var fde *frame.FrameDescriptionEntry
		if m != nil {
			fde = c.loadCFI(m).fdeFor(lookup - uint64(m.Bias))
		}
		// signal trampoline: continue in the interrupted context
		if len(t.SignalFrames) < maxSignalFrames && c.isSigTrampoline(pc, fde) {
			f.SignalTrampoline = true
			t.Frames = append(t.Frames, f)
			next, sf, err := c.decodeSigframe(sp)
			if err != nil {
				stop(err.Error())
				return
			}
			sf.Frame = len(t.Frames) - 1
			t.SignalFrames = append(t.SignalFrames, sf)
			if next.v[dwRIP] == pc && next.v[dwRSP] == sp {
				stop("signal frame loops")
				return
			}
			regs, exact, method = next, true, MethodSignal
			continue
		}
		if exact && !c.isExec(pc) {
			// a call through a bad pointer: the caller's return address is at [rsp]
			t.Frames = append(t.Frames, f)
			if !c.stackTop(&regs) {
				stop(fmt.Sprintf("PC %#x outside executable mappings", pc))
				return
			}
			exact, method = false, MethodStackTop
			continue
		}
		t.Frames = append(t.Frames, f)
		var next regSet
		var err error
		how := MethodCFI
		if fde != nil {
			next, err = c.stepCFI(fde, lookup-uint64(m.Bias), &regs)
		} else {
			how = MethodFP
			next, err = c.stepFP(&regs)
		}
		if errors.Is(err, errEndOfStack) {
			if how == MethodFP {
				// only CFI can say a stack ends; a frame-pointer walk that
				// stops has merely lost the chain
				stop(fmt.Sprintf("no unwind information for %s at frame %d and the frame-pointer chain ends", moduleLabel(m, pc), len(t.Frames)-1))
			}
			return
		}
		if err != nil {
			stop(fmt.Sprintf("%s at frame %d: %v", how, len(t.Frames)-1, err))
			return
		}
		npc, nsp := next.v[dwRIP], next.v[dwRSP]
		if npc == 0 {
			return // outermost frame
		}
		if !next.ok[dwRSP] || nsp <= sp {
			stop(fmt.Sprintf("stack pointer did not grow at frame %d (%#x -> %#x)", len(t.Frames)-1, sp, nsp))
			return
		}
		if !c.isExec(npc) {
			stop(fmt.Sprintf("return address %#x outside executable mappings at frame %d", npc, len(t.Frames)-1))
			return
		}
		regs, exact, method = next, false, how
	}
}

// stackTop replaces rip with the return address at [rsp] if that lies in
// executable memory (the innermost frame called a bad address).
func (c *Core) stackTop(regs *regSet) bool {
	sp := regs.v[dwRSP]
	ret, ok := c.readU64(sp)
	if !ok || !c.isExec(ret) {
		return false
	}
	regs.v[dwRIP], regs.v[dwRSP] = ret, sp+8
	return true
}

// moduleLabel names the module of pc for messages.
func moduleLabel(m *CoreModule, pc uint64) string {
	if m == nil {
		return fmt.Sprintf("%#x (no module)", pc)
	}
	if m.elf == nil {
		id := m.BuildID
		if id == "" {
			id = "unknown"
		}
		return fmt.Sprintf("%s (file not available, build-id %s)", m.Name(), id)
	}
	return m.Name()
}
