package symbolize

import (
	"context"
	"fmt"
	"path"
	"sort"
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

// Frames symbolizes the native frames of crash in place with the given
// modules: it fills File/Line/Column, sets Symbolized, and inserts the
// inline frames (Inlined=true, the Index of their physical frame) before
// each physical frame, innermost first. A printed Function is never
// overwritten: the symbolized name goes to Demangled when Function was
// empty, an address or `(unknown)`, and Function gets the raw name only if
// it was empty. Frames already marked Symbolized are left alone, so
// calling Frames twice is harmless. Frames are matched to modules by
// basename; frames printing no module belong to the main module. Absolute
// PCs of a non-PIE executable are file addresses; those of a PIE need the
// module's bias, which is taken from Module.Bias, else from frames that
// print both an absolute PC and a module offset, else recovered from
// frames printing an address and a function name (RecoverBias).
func Frames(ctx context.Context, crash *Crash, mods ...Module) (FramesReport, error) {
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
			exact := crash.FaultPC != 0 && f.PC == crash.FaultPC
			var err error
			locs, err = m.Binary.AppendLookup(locs[:0], addr, LookupOptions{Exact: exact})
			if err != nil {
				unres(err.Error())
				continue
			}
			if len(locs) == 0 {
				unres(fmt.Sprintf("no symbol or debug info at file address %#x", addr))
				continue
			}
			for _, l := range locs[:len(locs)-1] {
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
