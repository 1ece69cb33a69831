package dwarfindex

import (
	"sync"
	"unsafe"
)

const nameShards = 64

type nameShard struct {
	mu     sync.Mutex
	names  map[uint64]*funcName // by DIE offset
	scopes map[uint64]string    // namespace of internal-linkage functions, by DIE offset
	byStr  map[uint64]*funcName // by .debug_str offset of the linkage name
	_      [32]byte             // keep shards on separate cache lines
}

// shard returns the name shard of the DIE at off.
func (d *Data) shard(off uint64) *nameShard {
	return &d.shards[(off*0x9E3779B97F4A7C15)>>58]
}

// cachedName returns the resolved name of the DIE at off, if any.
func (d *Data) cachedName(off uint64) (*funcName, bool) {
	sh := d.shard(off)
	sh.mu.Lock()
	fn, ok := sh.names[off]
	sh.mu.Unlock()
	return fn, ok
}

// cacheName records the resolved name of the DIE at off.
func (d *Data) cacheName(off uint64, fn *funcName) {
	sh := d.shard(off)
	sh.mu.Lock()
	if sh.names == nil {
		sh.names = make(map[uint64]*funcName)
	}
	sh.names[off] = fn
	sh.mu.Unlock()
}

// linkageName returns the one funcName of the linkage name raw, which
// lies in .debug_str: every unit that declares the same function points
// at the same merged string, so keying by its offset shares the name, and
// its demangling, among them (on the symbench binary 93k names resolved
// in 100k lookups were 42k distinct linkage names). Names elsewhere (in
// .debug_info, .debug_line_str) get a funcName of their own.
func (d *Data) linkageName(raw []byte) *funcName {
	off, ok := d.strOffset(raw)
	if !ok {
		return &funcName{raw: string(raw)}
	}
	sh := d.shard(off)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if fn := sh.byStr[off]; fn != nil {
		return fn
	}
	if sh.byStr == nil {
		sh.byStr = make(map[uint64]*funcName)
	}
	fn := &funcName{raw: string(raw)}
	sh.byStr[off] = fn
	return fn
}

// strOffset returns the offset in .debug_str of b, a non-empty slice of
// it, and false when b lies elsewhere.
func (d *Data) strOffset(b []byte) (uint64, bool) {
	if len(b) == 0 || len(d.str) == 0 {
		return 0, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(d.str)))
	if p < base || p-base >= uintptr(len(d.str)) {
		return 0, false
	}
	return uint64(p - base), true
}

// scopeOf returns the namespaces recorded for the internal-linkage
// function whose DIE is at off ("" if none).
func (d *Data) scopeOf(off uint64) string {
	sh := d.shard(off)
	sh.mu.Lock()
	s := sh.scopes[off]
	sh.mu.Unlock()
	return s
}

// setScope records the namespaces of the internal-linkage function whose
// DIE is at off.
func (d *Data) setScope(off uint64, scope string) {
	sh := d.shard(off)
	sh.mu.Lock()
	if sh.scopes == nil {
		sh.scopes = make(map[uint64]string)
	}
	sh.scopes[off] = scope
	sh.mu.Unlock()
}

var unknownName = &funcName{}

// nodeName returns the resolved name of node i of t.
func (d *Data) nodeName(t *cuTables, i uint32) *funcName {
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
func (d *Data) dieName(off uint64) *funcName { return d.dieNameDepth(off, 0) }

func (d *Data) dieNameDepth(off uint64, depth int) *funcName {
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
func (d *Data) dieAttrs(off uint64) (na nameAttrs) {
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
