package symbolize

import (
	"fmt"
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
		dst, err = b.dw.lookup(dst, pc, b.dem, opts.NoDemangle, symName != "")
		err = publicErr(err)
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

// lookup appends the DWARF inline chain of pc, innermost first.
//
// noDem leaves names undemangled; noDemOuter does so for the outermost
// frame only (the caller names it from the symbol table).
func (d *dwData) lookup(dst []Location, pc uint64, dem *Demangler, noDem, noDemOuter bool) ([]Location, error) {
	u := d.unitFor(pc)
	if u == nil {
		return dst, nil
	}
	d, u = d.splitOf(u) // a skeleton's split unit in its .dwo (dwarf_split.go)
	t, err := d.tables(u)
	if err != nil {
		return dst, err
	}
	var chainBuf [32]uint32
	chain := chainBuf[:0]
	tops := t.tops
	lo, hi := 0, len(tops)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if tops[h].lo <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	for i := lo - 1; i >= 0 && i >= lo-8; i-- {
		if pc < tops[i].hi && t.nodes[tops[i].node].contains(t, pc) {
			chain = append(chain, tops[i].node)
			break
		}
	}
	for len(chain) > 0 && len(chain) < 256 {
		n := chain[len(chain)-1]
		found := false
		for j := n + 1; j < t.nodes[n].end; j = t.nodes[j].end {
			if t.nodes[j].contains(t, pc) {
				if t.nodes[j].sub {
					// A nested subprogram (not inlined) starts its own chain.
					chain = chain[:0]
				}
				chain = append(chain, j)
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	var file string
	var line, col int
	row, okLine := lineRow{}, false
	if t.lines != nil {
		row, okLine = t.lines.lookup(pc)
	}
	if okLine {
		file, line, col = t.lines.fileName(uint64(row.file)), int(row.line), int(row.col)
	}
	if len(chain) == 0 {
		if !okLine {
			return dst, nil
		}
		return append(dst, Location{File: file, Line: line, Column: col}), nil
	}
	for k := len(chain) - 1; k >= 0; k-- {
		ni := chain[k]
		fn := d.nodeName(t, ni)
		pretty := fn.undemangled()
		if !noDem && !(noDemOuter && k == 0) {
			pretty = fn.demangled(dem)
		}
		dst = append(dst, Location{Function: pretty, Linkage: fn.raw, File: file, Line: line, Column: col})
		n := &t.nodes[ni]
		file, line, col = t.lines.fileName(uint64(n.callFile)), int(n.callLine), int(n.callCol)
	}
	return dst, nil
}

var unknownName = &funcName{}

// nodeName returns the resolved name of node i of t.
func (d *dwData) nodeName(t *cuTables, i uint32) *funcName {
	if p := t.names[i].Load(); p != nil {
		return p
	}
	fn := d.dieName(t.nodes[i].die)
	t.names[i].Store(fn)
	return fn
}

// dieName resolves the name of the DIE at off the way llvm-symbolizer
// does: the linkage name found through DW_AT_specification and
// DW_AT_abstract_origin chains, else DW_AT_name through the same chains.
func (d *dwData) dieName(off uint64) *funcName { return d.dieNameDepth(off, 0) }

func (d *dwData) dieNameDepth(off uint64, depth int) *funcName {
	fn, ok := d.cachedName(off)
	if ok {
		return fn
	}
	first := d.dieAttrs(off)
	if depth < 8 && first.linkage == nil && first.name == nil && first.spec == 0 && first.origin != 0 && first.origin != off {
		// A concrete instance (inlined copy, out-of-line body) that only
		// points at its abstract origin has the origin's name: resolve and
		// cache that once for all instances.
		fn = d.dieNameDepth(first.origin, depth+1)
		d.cacheName(off, fn)
		return fn
	}
	var linkage, name []byte
	var nameOff uint64
	var work [16]uint64
	var seen [16]uint64
	nw, ns := 1, 0
	work[0] = off
	for nw > 0 && ns < len(seen) {
		nw--
		o := work[nw]
		dup := false
		for _, s := range seen[:ns] {
			dup = dup || s == o
		}
		if dup {
			continue
		}
		seen[ns] = o
		ns++
		a := first
		if o != off {
			a = d.dieAttrs(o)
		}
		if linkage == nil && a.linkage != nil {
			linkage = a.linkage
		}
		if name == nil && a.name != nil {
			name, nameOff = a.name, o
		}
		if linkage != nil {
			break
		}
		if a.origin != 0 && nw < len(work) {
			work[nw] = a.origin
			nw++
		}
		if a.spec != 0 && nw < len(work) {
			work[nw] = a.spec
			nw++
		}
	}
	raw := linkage
	if raw == nil {
		raw = name
	}
	if raw == nil {
		fn = unknownName
	} else {
		if linkage != nil {
			fn = d.linkageName(linkage)
		} else {
			// DW_AT_name only (internal linkage): qualify it with its
			// namespaces for Function; Linkage keeps the bare name.
			fn = &funcName{raw: string(raw)}
			if scope := d.scopeOf(nameOff); scope != "" {
				fn.scoped = scope + "::" + fn.raw
			}
		}
	}
	d.cacheName(off, fn)
	return fn
}

type nameAttrs struct {
	linkage, name []byte
	origin, spec  uint64
}

// dieAttrs decodes the naming attributes of the DIE at off.
func (d *dwData) dieAttrs(off uint64) (na nameAttrs) {
	u := d.unitAt(off)
	if u == nil || d.prepare(u) != nil {
		return na
	}
	r := dwReader{b: d.info[:u.end], pos: int(off), order: d.order}
	a := u.abbr.get(r.uleb())
	if a == nil {
		return na
	}
	for i := range a.attrs {
		s := &a.attrs[i]
		k, v := readForm(&r, s.form, u, s.implicit)
		if r.bad {
			return na
		}
		switch s.at {
		case dwAtLinkageName, dwAtMIPSLinkageName:
			if na.linkage == nil {
				na.linkage = d.strValue(u, k, v)
			}
		case dwAtName:
			na.name = d.strValue(u, k, v)
		case dwAtAbstractOrigin:
			if k == vkRef {
				na.origin = v
			}
		case dwAtSpecification:
			if k == vkRef {
				na.spec = v
			}
		}
	}
	return na
}
