package symbolize

import (
	"fmt"
	"unsafe"

	"github.com/crashsig/crashsig/symbolize/internal/dwarfindex"
)

// LookupOptions tune one lookup.
type LookupOptions struct {
	// Exact says pc is the faulting instruction itself (a signal frame's
	// PC, a core's first frame). By default pc is a return address and
	// pc-1 is looked up, so that a call at the end of an inline range or
	// function is attributed to the caller's call site, as debuggers do.
	Exact bool
	// NoDemangle leaves Function undemangled (the raw linkage name, or the
	// namespace-qualified name of an internal function), saving the
	// demangler's cost (~1 µs per new C++ name, paid once per name) for
	// callers that only need raw names or demangle later.
	NoDemangle bool
}

// Location is one frame of the inline chain at a PC.
type Location struct {
	// Function is the demangled function name (c++filt style; for the
	// outermost frame the ELF symbol's name, clone suffix included).
	Function string `json:"function,omitempty"`
	// Linkage is the raw name: the mangled linkage name, or DW_AT_name for
	// functions without one (C, internal linkage). llvm-symbolizer
	// --no-demangle prints this.
	Linkage string `json:"linkage,omitempty"`
	// File, Line and Column are the source position; empty/zero if unknown.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Inlined is true for every frame but the outermost (physical) one.
	Inlined bool `json:"inlined"`
	// Symbol is the ELF symbol containing the PC (raw) and SymbolOffset
	// the PC's offset into it; the same for every frame of one chain.
	Symbol       string `json:"symbol,omitempty"`
	SymbolOffset uint64 `json:"symbol_offset,omitempty"`
}

// Lookup symbolizes one link-time (file) virtual address and returns its
// inline chain, innermost frame first. An address nothing is known about
// gives an empty result and a nil error. Safe for concurrent use.
func (b *Binary) Lookup(pc uint64, opts LookupOptions) ([]Location, error) {
	return b.AppendLookup(nil, pc, opts)
}

// AppendLookup is Lookup appending to dst; with a dst of enough capacity
// it does not allocate once the compile unit has been parsed.
func (b *Binary) AppendLookup(dst []Location, pc uint64, opts LookupOptions) (out []Location, err error) {
	if b.closed.Load() {
		return dst, ErrClosed
	}
	b.life.RLock()
	defer b.life.RUnlock()
	if b.closed.Load() {
		return dst, ErrClosed
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = dst, fmt.Errorf("%w: lookup %#x: %v", ErrBadDWARF, pc, p)
		}
	}()
	if !opts.Exact && pc > 0 {
		pc--
	}
	var symName string
	var symOff uint64
	si := b.syms.Find(pc)
	if si >= 0 {
		symName, symOff = b.syms.NameAt(si), pc-b.syms.Addr[si]
	}
	start := len(dst)
	if b.dw != nil {
		// The outermost frame is renamed from the symbol table below, so
		// its DWARF name need not be demangled.
		var frames []dwarfindex.Frame
		frames, err = b.dw.Lookup(asFrames(dst), pc, b.demangle, opts.NoDemangle, symName != "")
		dst = asLocations(frames)
		if err != nil {
			err = publicErr(err)
		}
	}
	if len(dst) == start {
		if symName == "" {
			return dst, err
		}
		dst = append(dst, Location{})
	}
	for i := start; i < len(dst); i++ {
		dst[i].Symbol, dst[i].SymbolOffset = symName, symOff
		dst[i].Inlined = i < len(dst)-1
	}
	if symName != "" {
		// Like llvm-symbolizer (--use-symbol-table): the outermost frame is
		// named by the symbol table, which keeps .cold/.isra/.part suffixes
		// and the linkage names of internal functions.
		last := &dst[len(dst)-1]
		last.Linkage = symName
		last.Function = symName
		if !opts.NoDemangle {
			last.Function = b.syms.DemangledAt(si, b.demangle)
		}
		if last.File == "" {
			// No line information (crtstuff.c, assembly, stripped
			// units): llvm-symbolizer's file of a local symbol.
			last.File = b.syms.FileAt(si)
		}
	}
	return dst, err
}

// Location and dwarfindex.Frame have the same fields in the same order
// (the conversion below does not compile otherwise), hence the same
// layout: the DWARF index appends to the caller's []Location in place.
var _ = dwarfindex.Frame(Location{})

// asFrames is dst seen as dwarfindex frames (same memory).
func asFrames(dst []Location) []dwarfindex.Frame {
	if dst == nil {
		return nil
	}
	return unsafe.Slice((*dwarfindex.Frame)(unsafe.Pointer(unsafe.SliceData(dst))), cap(dst))[:len(dst)]
}

// asLocations is the inverse of asFrames.
func asLocations(f []dwarfindex.Frame) []Location {
	if f == nil {
		return nil
	}
	return unsafe.Slice((*Location)(unsafe.Pointer(unsafe.SliceData(f))), cap(f))[:len(f)]
}
