package dwarfindex

import (
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// dwNode is a subprogram or inlined subroutine with code, in DIE preorder.
// Its subtree is nodes[i+1:end].
type dwNode struct {
	lo, hi   uint64 // the only range, or the bounding box when nrng > 0
	die      uint64 // .debug_info offset of the DIE that names it (itself, or its only origin/specification when it has no name)
	rng      uint32 // first of nrng ranges in cuTables.ranges
	nrng     uint32
	end      uint32
	callFile uint32
	callLine uint32
	callCol  uint32
	sub      bool // DW_TAG_subprogram
}

func (n *dwNode) contains(t *cuTables, pc uint64) bool {
	if pc < n.lo || pc >= n.hi {
		return false
	}
	if n.nrng == 0 {
		return true
	}
	for _, r := range t.ranges[n.rng : n.rng+n.nrng] {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

type topRange struct {
	lo, hi uint64
	node   uint32
}

// cuTables is what one compile unit contributes to lookups. It is built
// once, on the first lookup that lands in the unit, and never changes.
type cuTables struct {
	nodes  []dwNode
	ranges [][2]uint64
	tops   []topRange // sorted by lo
	names  []atomic.Pointer[funcName]
	lines  *lineTable
	lerr   error
}

// funcName is the resolved name of a subprogram DIE: the raw linkage name
// (or DW_AT_name when there is none) and its demangled form.
type funcName struct {
	raw    string
	scoped string                 // namespace-qualified DW_AT_name of an internal function, else ""
	pretty atomic.Pointer[string] // demangled form, computed on first use
}

// demangled returns the name as Location.Function shows it.
func (f *funcName) demangled(demangle func(string) string) string {
	if p := f.pretty.Load(); p != nil {
		return *p
	}
	s := f.scoped
	if s == "" {
		s = demangle(f.raw)
	}
	f.pretty.Store(&s)
	return s
}

// undemangled is Location.Function under LookupOptions.NoDemangle.
func (f *funcName) undemangled() string {
	if f.scoped != "" {
		return f.scoped
	}
	return f.raw
}

// tables returns u's parsed tables, building them on first use.
func (d *Data) tables(u *dwUnit) (*cuTables, error) {
	u.tabOnce.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				u.tab, u.tabErr = nil, fmt.Errorf("%w: unit %#x: %v", elfimage.ErrBadDWARF, u.off, p)
			}
		}()
		if err := d.prepare(u); err != nil {
			u.tabErr = err
			return
		}
		u.tab, u.tabErr = d.buildTables(u)
	})
	return u.tab, u.tabErr
}

func (d *Data) buildTables(u *dwUnit) (*cuTables, error) {
	// Typical GCC -O2 output has one subprogram or inlined-subroutine DIE
	// per ~150 bytes of .debug_info; reserving for it avoids regrowing.
	t := &cuTables{nodes: make([]dwNode, 0, (u.end-u.dieOff)/150+16)}
	r := dwReader{b: d.info[:u.end], pos: int(u.dieOff), order: d.order}
	ab := u.abbr
	// CU DIE.
	cu := ab.get(r.uleb())
	if cu == nil {
		return nil, fmt.Errorf("%w: unit %#x: bad abbrev", elfimage.ErrBadDWARF, u.off)
	}
	skipAttrs(&r, cu, u)
	if cu.children {
		if err := d.walkDIEs(u, &r, t); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(t.tops, func(i, j int) bool { return t.tops[i].lo < t.tops[j].lo })
	t.names = make([]atomic.Pointer[funcName], len(t.nodes))
	if u.hasStmt {
		t.lines, t.lerr = d.parseLineTable(u, u.stmt)
	}
	return t, nil
}

// isTypeTag reports tags whose children never hold code (GCC and clang
// emit out-of-line member function bodies at namespace or CU level).
func isTypeTag(tag uint16) bool {
	switch tag {
	case 0x02, 0x13, 0x17, 0x04, 0x01, 0x15, 0x16: // class, struct, union, enum, array, subroutine type, typedef
		return true
	}
	return false
}

// walkDIEs walks the children of the CU DIE and records subprograms and
// inlined subroutines with code.
func (d *Data) walkDIEs(u *dwUnit, r *dwReader, t *cuTables) error {
	const maxDepth = 4096
	type level struct {
		parent int32  // innermost enclosing node (-1: none)
		own    bool   // the level was opened by that node itself
		fn     bool   // inside a subprogram DIE (with code or not)
		scope  string // enclosing namespaces, "ns1::ns2"
	}
	var stackBuf [64]level
	stack := append(stackBuf[:0], level{-1, false, false, ""})
	var rngBuf [][2]uint64
	for len(stack) > 0 {
		if r.bad {
			return fmt.Errorf("%w: unit %#x: truncated DIE tree", elfimage.ErrBadDWARF, u.off)
		}
		dieOff := uint64(r.pos)
		code := r.uleb()
		if code == 0 {
			if top := stack[len(stack)-1]; top.own {
				t.nodes[top.parent].end = uint32(len(t.nodes))
			}
			stack = stack[:len(stack)-1]
			if r.pos >= len(r.b) {
				break
			}
			continue
		}
		a := u.abbr.get(code)
		if a == nil {
			return fmt.Errorf("%w: unit %#x: bad abbrev code %d at %#x", elfimage.ErrBadDWARF, u.off, code, dieOff)
		}
		parent, scope, inFn := stack[len(stack)-1].parent, stack[len(stack)-1].scope, stack[len(stack)-1].fn
		if a.tag == dwTagNamespace {
			// Namespaces open a scope for the names of internal functions.
			var nm []byte
			for i := range a.attrs {
				s := &a.attrs[i]
				k, v := readForm(r, s.form, u, s.implicit)
				if s.at == dwAtName {
					nm = d.strValue(u, k, v)
				}
			}
			if a.children {
				if len(stack) >= maxDepth {
					return fmt.Errorf("%w: unit %#x: DIE tree too deep", elfimage.ErrBadDWARF, u.off)
				}
				ns := "(anonymous namespace)"
				if len(nm) > 0 {
					ns = string(nm)
				}
				if scope != "" {
					ns = scope + "::" + ns
				}
				stack = append(stack, level{parent, false, inFn, ns})
			}
			continue
		}
		if a.tag != dwTagSubprogram && a.tag != dwTagInlined {
			if a.sibling >= 0 && a.children && isTypeTag(a.tag) && !inFn {
				// Jump over the type's members. Not inside a function:
				// there a type can hold code, e.g. GCC's static invoker
				// `_FUN` of a captureless lambda lives in the closure
				// type, and local classes hold their methods.
				sib := uint64(0)
				for i := range a.attrs {
					s := &a.attrs[i]
					k, v := readForm(r, s.form, u, s.implicit)
					if i == a.sibling && k == vkRef {
						sib = v
					}
				}
				if sib > dieOff && sib < u.end {
					r.pos = int(sib)
					continue
				}
				stack = append(stack, level{parent, false, inFn, scope})
				continue
			}
			skipAttrs(r, a, u)
			if a.children {
				if len(stack) >= maxDepth {
					return fmt.Errorf("%w: unit %#x: DIE tree too deep", elfimage.ErrBadDWARF, u.off)
				}
				stack = append(stack, level{parent, false, inFn, scope})
			}
			continue
		}
		// Subprogram or inlined subroutine: decode what matters.
		var lo, hi, rv uint64
		var lk, rk uint8
		var hasLink bool
		var hasLo, hasHi, hiOff, hasRng bool
		var cf, cl, cc uint64
		var plainName bool // DW_AT_name, no linkage name, no link to another DIE
		var ownName bool   // DW_AT_name or a linkage name
		var nlinks int     // DW_AT_specification, DW_AT_abstract_origin
		var link uint64    // the DIE the last one points at
		for i := range a.attrs {
			s := &a.attrs[i]
			k, v := readForm(r, s.form, u, s.implicit)
			switch s.at {
			case dwAtName:
				plainName, ownName = true, true
			case dwAtLinkageName, dwAtMIPSLinkageName:
				plainName, hasLink, ownName = false, true, true
			case dwAtSpecification, dwAtAbstractOrigin:
				plainName, hasLink = false, true
				nlinks++
				if k == vkRef {
					link = v
				}
			case dwAtLowPC:
				lk, lo, hasLo = k, v, true
			case dwAtHighPC:
				hi, hasHi, hiOff = v, true, k == vkConst
			case dwAtRanges:
				rk, rv, hasRng = k, v, true
			case dwAtCallFile:
				cf = v
			case dwAtCallLine:
				cl = v
			case dwAtCallColumn:
				cc = v
			}
		}
		rngBuf = rngBuf[:0]
		if hasRng {
			rngBuf = d.rangeList(u, rk, rv, rngBuf)
		} else if hasLo && hasHi {
			lo = d.addrValue(u, lk, lo)
			if hiOff {
				hi += lo
			} else {
				hi = d.addrValue(u, vkAddr, hi)
			}
			if lo != 0 && lo < hi {
				rngBuf = append(rngBuf, [2]uint64{lo, hi})
			}
		}
		if plainName && !hasLink && scope != "" && a.tag == dwTagSubprogram {
			// An internal-linkage function (no linkage name): remember its
			// namespace so that its inlined copies get a qualified name.
			d.setScope(dieOff, scope)
		}
		if len(rngBuf) == 0 {
			if a.children && a.tag == dwTagSubprogram {
				// Declaration or abstract instance: its inlined
				// subroutines have no code, but a type declared in it can
				// hold a subprogram that has (the `_FUN` of a lambda in
				// an always-inlined function, a local class's method).
				if len(stack) >= maxDepth {
					return fmt.Errorf("%w: unit %#x: DIE tree too deep", elfimage.ErrBadDWARF, u.off)
				}
				stack = append(stack, level{parent, false, true, scope})
			} else if a.children {
				// Discarded inlined copy: nothing below it is code.
				if err := skipChildren(r, u); err != nil {
					return err
				}
			}
			continue
		}
		idx := uint32(len(t.nodes))
		nameDie := dieOff
		if !ownName && nlinks == 1 && link != 0 && link != dieOff {
			// The DIE has no name of its own: its name is that of the
			// DIE it points at (resolved and cached once for all the
			// inlined copies), so the lookup need not read it again.
			nameDie = link
		}
		n := dwNode{die: nameDie, sub: a.tag == dwTagSubprogram,
			callFile: uint32(cf), callLine: uint32(cl), callCol: uint32(cc), end: idx + 1}
		n.lo, n.hi = rngBuf[0][0], rngBuf[0][1]
		if len(rngBuf) > 1 {
			n.rng, n.nrng = uint32(len(t.ranges)), uint32(len(rngBuf))
			for _, rg := range rngBuf {
				n.lo = min(n.lo, rg[0])
				n.hi = max(n.hi, rg[1])
				t.ranges = append(t.ranges, rg)
			}
		}
		t.nodes = append(t.nodes, n)
		if parent < 0 || n.sub {
			// Top-level functions, and subprograms nested in another
			// one (lambda invokers, local classes' methods: their code
			// lies outside the enclosing function's ranges; a lookup
			// that lands in them starts its chain there, like LLVM).
			for _, rg := range rngBuf {
				t.tops = append(t.tops, topRange{rg[0], rg[1], idx})
			}
		}
		if a.children {
			if len(stack) >= maxDepth {
				return fmt.Errorf("%w: unit %#x: DIE tree too deep", elfimage.ErrBadDWARF, u.off)
			}
			stack = append(stack, level{int32(idx), true, true, scope})
		}
	}
	// Levels left open by a truncated tree end at the last node.
	for _, l := range stack {
		if l.own {
			t.nodes[l.parent].end = uint32(len(t.nodes))
		}
	}
	return nil
}

// skipChildren skips the children of the DIE just read, up to and
// including their terminating null entry.
func skipChildren(r *dwReader, u *dwUnit) error {
	depth := 1
	for depth > 0 {
		if r.bad || r.pos >= len(r.b) {
			return fmt.Errorf("%w: unit %#x: truncated DIE tree", elfimage.ErrBadDWARF, u.off)
		}
		code := r.uleb()
		if code == 0 {
			depth--
			continue
		}
		a := u.abbr.get(code)
		if a == nil {
			return fmt.Errorf("%w: unit %#x: bad abbrev code %d", elfimage.ErrBadDWARF, u.off, code)
		}
		if a.sibling >= 0 && a.children {
			sib := uint64(0)
			start := r.pos
			for i := range a.attrs {
				s := &a.attrs[i]
				k, v := readForm(r, s.form, u, s.implicit)
				if i == a.sibling && k == vkRef {
					sib = v
				}
			}
			if sib > uint64(start) && sib < u.end {
				r.pos = int(sib)
				continue
			}
			depth++
			continue
		}
		skipAttrs(r, a, u)
		if a.children {
			depth++
		}
	}
	return nil
}
