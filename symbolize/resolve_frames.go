package symbolize

import (
	"context"
	"debug/elf"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Module is a binary offered to Frames, with what is known of where it
// was loaded in the crashed process.
type Module struct {
	// Binary is the opened ELF file (the caller keeps ownership).
	Binary *Binary
	// Name is the basename frames are matched by (`doris_be`,
	// `starrocks_be`, `libc.so.6`); "" means the basename of Binary.Path().
	Name string
	// Bias is the load bias (load address minus link address) for
	// absolute PCs of a PIE or shared object; valid when HasBias. Without
	// it Frames recovers the bias from the crash (see RecoverBias).
	Bias    uint64
	HasBias bool
	// Main marks the module that frames printing no module belong to
	// (glog `@ 0x… name` frames); by default the first module is.
	Main bool
}

// Unresolved is a frame Frames could not symbolize, and why.
type Unresolved struct {
	Thread int    `json:"thread"` // index into Crash.Threads
	Frame  int    `json:"frame"`  // Frame.Index
	PC     Addr   `json:"pc,omitempty"`
	Module string `json:"module,omitempty"`
	Reason string `json:"reason"`
}

// FramesReport says what Frames did.
type FramesReport struct {
	// Symbolized counts the physical frames that got symbolized; Inlined
	// counts the inline frames inserted.
	Symbolized int `json:"symbolized"`
	Inlined    int `json:"inlined"`
	// Biases holds, per module name, the bias used for absolute PCs and
	// where it came from.
	Biases map[string]BiasEstimate `json:"biases,omitempty"`
	// Unresolved lists the frames left as they were, in thread/frame order.
	Unresolved []Unresolved `json:"unresolved,omitempty"`
}

// SymbolizeInPlace symbolizes the native frames of crash in place with the given
// modules: it fills File/Line/Column, sets Symbolized, and inserts the
// inline frames (Inlined=true, the Index of their physical frame) before
// each physical frame, innermost first. A printed Function is never
// overwritten: the symbolized name goes to Demangled when Function was
// empty, an address or `(unknown)`, and Function gets the raw name only if
// it was empty. Frames already marked Symbolized are left alone, so
// calling it twice is harmless. A module whose Binary is closed is an
// error (ErrClosed), the crash left untouched. Frames are matched to modules by
// basename; frames printing no module belong to the main module. Absolute
// PCs of a non-PIE executable are file addresses; those of a PIE need the
// module's bias, which is taken from Module.Bias, else from frames that
// print both an absolute PC and a module offset, else from the mapping a
// kernel `segfault … in mod[base+size]` line names (KernelMappings), else
// recovered from frames printing an address and a function name
// (RecoverBias).
//
// Frames the printer itself gave as an inline group (gdb prints every
// frame of one with the physical frame's address; sanitizers too) are
// kept as printed and marked Inlined; the physical frame of the group is
// symbolized without adding the chain again, so a gdb backtrace keeps its
// frames and its signature with or without the binary.
//
// The faulting frame (the successor of the signal frame: the frame after
// gdb's `<signal handler called>`, the frame after the trampoline that
// follows a signal handler's frames, or the frame at the dump's fault PC)
// is looked up at its exact PC; the others are return addresses and are
// looked up at PC-1, in every source. glog's `(module+0x…)` offsets are
// already taken from PC-1 and are read that way.
func SymbolizeInPlace(ctx context.Context, crash *Crash, mods ...Module) (FramesReport, error) {
	var rep FramesReport
	if crash == nil || len(mods) == 0 {
		return rep, nil
	}
	byName := map[string]*Module{}
	var main *Module
	for i := range mods {
		m := &mods[i]
		if m.Binary == nil {
			continue
		}
		name := m.Name
		if name == "" {
			name = path.Base(m.Binary.Path())
		}
		if m.Binary.closed.Load() {
			// Every frame would come out "unresolved" for a wrong reason.
			return rep, fmt.Errorf("symbolize: module %s: %w", name, ErrClosed)
		}
		byName[name] = m
		if m.Main || main == nil && i == 0 {
			main = m
		}
	}
	if main == nil {
		for i := range mods {
			if mods[i].Binary != nil {
				main = &mods[i]
				break
			}
		}
	}
	modOf := func(f *Frame) *Module {
		if f.Module == "" {
			return main
		}
		return byName[path.Base(f.Module)]
	}
	// Biases of PIE modules that need one.
	rep.Biases = map[string]BiasEstimate{}
	biasOf := map[*Module]BiasEstimate{}
	for name, m := range byName {
		if !m.Binary.IsPIE() {
			continue
		}
		est := BiasEstimate{Bias: m.Bias, Source: "caller"}
		if !m.HasBias {
			est = BiasEstimate{}
		}
		if !m.HasBias && !hasDirectBias(crash, m, modOf) {
			est = kernelLineBias(m.Binary, name, KernelMappings(crash))
		}
		if !m.HasBias && est.Source == "" {
			var frames []Frame
			for ti := range crash.Threads {
				for _, f := range crash.Threads[ti].Frames {
					if !f.Java && !f.Inlined && modOf(&f) == m {
						frames = append(frames, f)
					}
				}
			}
			est = RecoverBias(m.Binary, frames)
		}
		biasOf[m] = est
		if est.Source != "" {
			rep.Biases[name] = est
		}
	}
	var locs []Location
	for ti := range crash.Threads {
		th := &crash.Threads[ti]
		fault := faultFrame(crash, th)
		out := make([]Frame, 0, len(th.Frames))
		changed := false
		for fi := range th.Frames {
			if fi&255 == 0 && ctx.Err() != nil {
				return rep, ctx.Err()
			}
			f := th.Frames[fi]
			if f.Java || f.Symbolized || f.Inlined {
				out = append(out, f)
				continue
			}
			if printedInline(th.Frames, fi) {
				// The printer gave this frame as an inlined frame of the
				// physical frame below it (the same address under another
				// name: gdb's inline groups, sanitizers): it is that, and
				// the physical frame's lookup must not add the chain again.
				f.Inlined = true
				changed = true
				out = append(out, f)
				continue
			}
			grouped := fi > 0 && printedInline(th.Frames, fi-1)
			unres := func(reason string) {
				rep.Unresolved = append(rep.Unresolved, Unresolved{Thread: ti, Frame: f.Index, PC: f.PC, Module: f.Module, Reason: reason})
				out = append(out, f)
			}
			if f.PC == 0 && !f.HasOffset {
				unres("no address printed")
				continue
			}
			m := modOf(&f)
			if m == nil {
				unres("no binary for module " + f.Module)
				continue
			}
			var addr uint64
			switch {
			case f.HasOffset && glogOffset(&f):
				// glog prints the offset of PC-1: the PC is one further.
				addr = uint64(f.Offset) + 1
			case f.HasOffset:
				addr = uint64(f.Offset)
			case !m.Binary.IsPIE():
				addr = uint64(f.PC)
			default:
				est := biasOf[m]
				if est.Source == "" {
					unres("PIE module without a known load bias: " + est.Reason)
					continue
				}
				if uint64(f.PC) < est.Bias {
					unres(fmt.Sprintf("address below load bias %#x", est.Bias))
					continue
				}
				addr = uint64(f.PC) - est.Bias
			}
			exact := fi == fault
			var err error
			locs, err = m.Binary.AppendLookup(locs[:0], addr, LookupOptions{Exact: exact})
			if err != nil && len(locs) == 0 {
				unres(err.Error())
				continue
			}
			// With an error (ErrBadDWARF: a damaged part of the debug
			// info) a result is the symbol table's name: kept.
			if len(locs) == 0 {
				unres(fmt.Sprintf("no symbol or debug info at file address %#x", addr))
				continue
			}
			for _, l := range locs[:len(locs)-1] {
				if grouped {
					break // the printer listed the inline chain itself
				}
				out = append(out, Frame{Index: f.Index, PC: f.PC, Function: l.Linkage, Demangled: l.Function,
					Module: f.Module, Offset: f.Offset, HasOffset: f.HasOffset,
					File: l.File, Line: l.Line, Column: l.Column, Inlined: true, Symbolized: true})
				rep.Inlined++
			}
			phys := locs[len(locs)-1]
			switch {
			case f.Function == "":
				f.Function = phys.Linkage
				if phys.Function != phys.Linkage {
					f.Demangled = phys.Function
				}
			case isPlaceholderName(f.Function) || looksLikeAddress(f.Function):
				f.Demangled = phys.Function
			}
			if f.File == "" {
				f.File, f.Line, f.Column = phys.File, phys.Line, phys.Column
			}
			f.Symbolized = true
			rep.Symbolized++
			changed = true
			out = append(out, f)
		}
		if changed {
			th.Frames = out
		}
	}
	sort.SliceStable(rep.Unresolved, func(i, j int) bool {
		a, b := rep.Unresolved[i], rep.Unresolved[j]
		if a.Thread != b.Thread {
			return a.Thread < b.Thread
		}
		return a.Frame < b.Frame
	})
	return rep, nil
}

// printedInline reports whether frame i of fs is an inlined frame the
// printer itself listed: it prints the same address (or module offset) as
// the next frame under another name, as gdb does for the frames of an
// inline group and sanitizers for every frame of an inline chain. The
// physical frame is the last of such a run. (package signature reads the
// grouping the same way: physical.go, sameTextPC.)
func printedInline(fs []Frame, i int) bool {
	if i+1 >= len(fs) {
		return false
	}
	a, b := &fs[i], &fs[i+1]
	same := a.PC != 0 && a.PC == b.PC ||
		a.PC == 0 && b.PC == 0 && a.HasOffset && b.HasOffset && a.Offset != 0 && a.Offset == b.Offset && a.Module == b.Module
	return same && !a.Symbolized && !b.Symbolized && !a.Java && !b.Java &&
		a.Function != "" && b.Function != "" && a.Name() != b.Name() &&
		a.Function != "<signal handler called>" && b.Function != "<signal handler called>"
}

// isPlaceholderName reports the texts printers use for "no symbol".
func isPlaceholderName(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "(unknown)", "??", "<null>", "?", "<unknown>":
		return true
	}
	return false
}

// looksLikeAddress reports names that are really addresses (`0x7f…`).
func looksLikeAddress(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "0x") || len(s) < 3 {
		return false
	}
	_, ok := parseHexDigits(s[2:])
	return ok
}

func parseHexDigits(s string) (uint64, bool) {
	var v uint64
	if s == "" || len(s) > 16 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// KernelMapping is the mapping a kernel `segfault at … ip … in
// mod[base+size]` line names: the VMA that holds the faulting PC.
type KernelMapping struct {
	// Module is the mapped file's base name as the kernel printed it.
	Module string
	// Base is the VMA's start address and Size its length.
	Base, Size Addr
}

// kernelMappingRE reads the mapping of a kernel segfault line.
var kernelMappingRE = regexp.MustCompile(`segfault at [0-9a-f]+ ip [0-9a-f]+ .*? in ([^\[ ]+)\[([0-9a-f]+)\+([0-9a-f]+)\]`)

// KernelMappings returns the mappings named by kernel segfault lines that
// the incident carries (its message or its events). A base far above
// 4 GiB says the module is position independent; 0x400000 says it is a
// fixed-address executable.
func KernelMappings(c *Crash) []KernelMapping {
	if c == nil {
		return nil
	}
	var out []KernelMapping
	add := func(s string) {
		if len(out) >= 8 || !strings.Contains(s, "segfault at ") {
			return
		}
		m := kernelMappingRE.FindStringSubmatch(s)
		if m == nil {
			return
		}
		base, err1 := strconv.ParseUint(m[2], 16, 64)
		size, err2 := strconv.ParseUint(m[3], 16, 64)
		if err1 != nil || err2 != nil {
			return
		}
		out = append(out, KernelMapping{Module: path.Base(m[1]), Base: Addr(base), Size: Addr(size)})
	}
	add(c.Message)
	for i := range c.Events {
		add(c.Events[i].Text)
	}
	return out
}

// hasDirectBias reports frames of m that print both an absolute PC and a
// module offset (the strongest evidence, used by RecoverBias).
func hasDirectBias(crash *Crash, m *Module, modOf func(*Frame) *Module) bool {
	for ti := range crash.Threads {
		for fi := range crash.Threads[ti].Frames {
			f := &crash.Threads[ti].Frames[fi]
			if f.PC != 0 && f.HasOffset && modOf(f) == m {
				return true
			}
		}
	}
	return false
}

// kernelLineBias derives the load bias of a PIE module from a kernel
// line's mapping: the VMA is one executable PT_LOAD segment of the
// binary, identified by its page-rounded size (or as the only one).
func kernelLineBias(b *Binary, name string, maps []KernelMapping) BiasEstimate {
	var est BiasEstimate
	if b == nil || b.main == nil || b.main.File == nil {
		return est
	}
	for _, km := range maps {
		if km.Module != name {
			continue
		}
		var cands []uint64
		var exec []uint64
		for _, p := range b.main.File.Progs {
			if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 {
				continue
			}
			start := p.Vaddr &^ (pageSize - 1)
			end := (p.Vaddr + p.Memsz + pageSize - 1) &^ (pageSize - 1)
			exec = append(exec, start)
			if end-start == uint64(km.Size) {
				cands = append(cands, start)
			}
		}
		if len(cands) != 1 && len(exec) == 1 {
			cands = exec
		}
		if len(cands) == 1 && uint64(km.Base) >= cands[0] {
			return BiasEstimate{Bias: uint64(km.Base) - cands[0], Source: "kernel-line", Votes: 1, Frames: 1}
		}
	}
	return est
}

// glogOffset: a `(module+0x…)` frame printed by glog's symbolizer, whose
// offset is that of PC-1.
func glogOffset(f *Frame) bool {
	t := strings.TrimLeft(f.Raw, " \t")
	return len(t) > 1 && t[0] == '@' && t[1] == ' '
}

// signalHandlerFrames are parts of the names of the frames of signal
// handlers that print a dump (Doris' and glog's FailureSignalHandler, the
// JVM's chained handler); after the last of them comes the kernel's
// signal trampoline and then the faulting frame.
var signalHandlerFrames = []string{
	"doris::signal::", "FailureSignalHandler", "chained_handler", "JVM_handle_linux_signal",
	"signalHandler(", "pd_hotspot_signal_handler", "HandleSignal",
}

// signalTrampolines are the names the kernel's signal trampoline gets when
// it is symbolized at all.
var signalTrampolines = []string{"__restore_rt", "__kernel_rt_sigreturn", "<signal handler called>"}

// faultFrame returns the index in th.Frames of the faulting frame, the
// signal frame's successor, or -1: the frame after gdb's `<signal handler
// called>` (or a symbolized __restore_rt); else, in the crashing thread,
// the frame at the dump's fault PC, or the frame after the trampoline that
// follows the last signal-handler frame among the top 64.
func faultFrame(c *Crash, th *Thread) int {
	fs := th.Frames
	for i := 0; i+1 < len(fs) && i < 64; i++ {
		if isTrampolineName(fs[i].Name()) {
			return i + 1
		}
	}
	if !th.Crashed {
		return -1
	}
	if c.FaultPC != 0 {
		for i := range fs {
			if fs[i].PC == c.FaultPC && !fs[i].Inlined {
				return i
			}
		}
	}
	last := -1
	for i := 0; i < len(fs) && i < 64; i++ {
		if isSignalHandlerName(fs[i].Name()) {
			last = i
		}
	}
	if last < 0 || last+2 >= len(fs) {
		return -1
	}
	tr := &fs[last+1]
	if n := tr.Name(); n != "" && !isPlaceholderName(n) && !looksLikeAddress(n) && !isTrampolineName(n) {
		return -1 // not a trampoline: no fault frame can be told
	}
	return last + 2
}

func isTrampolineName(n string) bool {
	for _, s := range signalTrampolines {
		if strings.HasPrefix(n, s) {
			return true
		}
	}
	return false
}

func isSignalHandlerName(n string) bool {
	for _, s := range signalHandlerFrames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Frames is the former name of SymbolizeInPlace.
//
// Deprecated: use SymbolizeInPlace, whose name says that it changes the crash.
func Frames(ctx context.Context, crash *Crash, mods ...Module) (FramesReport, error) {
	return SymbolizeInPlace(ctx, crash, mods...)
}
