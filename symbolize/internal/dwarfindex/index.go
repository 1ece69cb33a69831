package symbolize

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DWARF constants used by the reader (DWARF 4 and 5, GNU extensions).
const (
	dwTagCompileUnit  = 0x11
	dwTagPartialUnit  = 0x3c
	dwTagSkeletonUnit = 0x4a
	dwTagSubprogram   = 0x2e
	dwTagInlined      = 0x1d
	dwTagNamespace    = 0x39

	dwAtSibling         = 0x01
	dwAtName            = 0x03
	dwAtStmtList        = 0x10
	dwAtLowPC           = 0x11
	dwAtHighPC          = 0x12
	dwAtCompDir         = 0x1b
	dwAtAbstractOrigin  = 0x31
	dwAtDeclaration     = 0x3c
	dwAtSpecification   = 0x47
	dwAtRanges          = 0x55
	dwAtCallColumn      = 0x57
	dwAtCallFile        = 0x58
	dwAtCallLine        = 0x59
	dwAtLinkageName     = 0x6e
	dwAtStrOffsetsBase  = 0x72
	dwAtAddrBase        = 0x73
	dwAtRnglistsBase    = 0x74
	dwAtDwoName         = 0x76
	dwAtMIPSLinkageName = 0x2007
	dwAtGNUDwoName      = 0x2130
	dwAtGNUDwoID        = 0x2131
	dwAtGNURangesBase   = 0x2132
	dwAtGNUAddrBase     = 0x2133

	dwFormAddr          = 0x01
	dwFormBlock2        = 0x03
	dwFormBlock4        = 0x04
	dwFormData2         = 0x05
	dwFormData4         = 0x06
	dwFormData8         = 0x07
	dwFormString        = 0x08
	dwFormBlock         = 0x09
	dwFormBlock1        = 0x0a
	dwFormData1         = 0x0b
	dwFormFlag          = 0x0c
	dwFormSdata         = 0x0d
	dwFormStrp          = 0x0e
	dwFormUdata         = 0x0f
	dwFormRefAddr       = 0x10
	dwFormRef1          = 0x11
	dwFormRef2          = 0x12
	dwFormRef4          = 0x13
	dwFormRef8          = 0x14
	dwFormRefUdata      = 0x15
	dwFormIndirect      = 0x16
	dwFormSecOffset     = 0x17
	dwFormExprloc       = 0x18
	dwFormFlagPresent   = 0x19
	dwFormStrx          = 0x1a
	dwFormAddrx         = 0x1b
	dwFormRefSup4       = 0x1c
	dwFormStrpSup       = 0x1d
	dwFormData16        = 0x1e
	dwFormLineStrp      = 0x1f
	dwFormRefSig8       = 0x20
	dwFormImplicitConst = 0x21
	dwFormLoclistx      = 0x22
	dwFormRnglistx      = 0x23
	dwFormRefSup8       = 0x24
	dwFormStrx1         = 0x25
	dwFormStrx2         = 0x26
	dwFormStrx3         = 0x27
	dwFormStrx4         = 0x28
	dwFormAddrx1        = 0x29
	dwFormAddrx2        = 0x2a
	dwFormAddrx3        = 0x2b
	dwFormAddrx4        = 0x2c
	dwFormGNUAddrIndex  = 0x1f01
	dwFormGNUStrIndex   = 0x1f02
	dwFormGNURefAlt     = 0x1f20
	dwFormGNUStrpAlt    = 0x1f21
)

// dwData is the DWARF of one ELF image: section bytes (mmap slices or
// decompressed copies), the unit list, the address → CU index, and caches.
type dwData struct {
	order                            binary.ByteOrder
	info, abbrev, str, lineStr, line []byte
	ranges, rnglists, addr, strOffs  []byte
	// units lists every unit, sorted by offset, once scanned is set;
	// before that, known holds the units created on demand (unitMu).
	units    []*dwUnit
	scanned  atomic.Bool
	scanOnce sync.Once
	scanErr  error
	unitMu   sync.Mutex
	known    []*dwUnit
	covered  map[uint64]bool           // units with .debug_aranges entries (read-only after open)
	index    atomic.Pointer[[]cuRange] // sorted by lo
	infoProg *elfimage.Progressive     // non-nil while .debug_info may still be inflating
	bg       sync.WaitGroup            // the background scanAll
	abbrevMu sync.Mutex
	abbrevs  map[abbrevKey]*dwAbbrevTable
	// Split DWARF (dwarf_split.go): the .dwo files opened for skeleton
	// units; parent is the skeleton's dwData when this one is a .dwo.
	split splitState
	// Resolved names and the namespaces of internal-linkage functions, by
	// DIE offset, sharded so that concurrent lookups and unit parses
	// rarely wait for each other (one RWMutex over one map serialized
	// the CLI's two workers).
	shards [nameShards]nameShard
}

const nameShards = 64

type nameShard struct {
	mu     sync.Mutex
	names  map[uint64]*funcName // by DIE offset
	scopes map[uint64]string    // namespace of internal-linkage functions, by DIE offset
	byStr  map[uint64]*funcName // by .debug_str offset of the linkage name
	_      [32]byte             // keep shards on separate cache lines
}

// shard returns the name shard of the DIE at off.
func (d *dwData) shard(off uint64) *nameShard {
	return &d.shards[(off*0x9E3779B97F4A7C15)>>58]
}

// cachedName returns the resolved name of the DIE at off, if any.
func (d *dwData) cachedName(off uint64) (*funcName, bool) {
	sh := d.shard(off)
	sh.mu.Lock()
	fn, ok := sh.names[off]
	sh.mu.Unlock()
	return fn, ok
}

// cacheName records the resolved name of the DIE at off.
func (d *dwData) cacheName(off uint64, fn *funcName) {
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
func (d *dwData) linkageName(raw []byte) *funcName {
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
func (d *dwData) strOffset(b []byte) (uint64, bool) {
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
func (d *dwData) scopeOf(off uint64) string {
	sh := d.shard(off)
	sh.mu.Lock()
	s := sh.scopes[off]
	sh.mu.Unlock()
	return s
}

// setScope records the namespaces of the internal-linkage function whose
// DIE is at off.
func (d *dwData) setScope(off uint64, scope string) {
	sh := d.shard(off)
	sh.mu.Lock()
	if sh.scopes == nil {
		sh.scopes = make(map[uint64]string)
	}
	sh.scopes[off] = scope
	sh.mu.Unlock()
}

type cuRange struct {
	lo, hi uint64
	unit   uint64 // .debug_info offset of the unit header
}

// dwUnit is one unit header of .debug_info plus, lazily, its CU DIE
// attributes and its parsed tables.
type dwUnit struct {
	off, dieOff, end uint64
	version          uint16
	unitType         uint8
	addrSize         uint8
	dwarf64          bool
	abbrevOff        uint64

	hdrOnce                        sync.Once
	hdrErr                         error
	abbr                           *dwAbbrevTable
	tag                            uint16
	lowPC                          uint64
	compDir                        string
	name                           string
	stmt                           uint64
	hasStmt                        bool
	strOffsBase, addrBase, rngBase uint64
	hasRngBase                     bool
	// Split DWARF: the .dwo a skeleton unit names, its id (DWARF 5 unit
	// header, or DW_AT_GNU_dwo_id) and DW_AT_GNU_ranges_base, which
	// applies to the split unit's DW_AT_ranges only (as in LLVM).
	dwoName    string
	dwoID      uint64
	hasDwoID   bool
	gnuRngBase uint64
	splitOnce  sync.Once
	split      atomic.Pointer[dwoLink]

	tabOnce sync.Once
	tab     *cuTables
	tabErr  error
}

func (u *dwUnit) offSize() int {
	if u.dwarf64 {
		return 8
	}
	return 4
}

type abbrevKey struct {
	off      uint64
	addrSize uint8
	dwarf64  bool
	version  uint16
}

type dwAttrSpec struct {
	at, form uint16
	implicit int64
}

type dwAbbrev struct {
	tag      uint16
	children bool
	attrs    []dwAttrSpec
	// fixed is the byte size of all attribute values when every form has a
	// fixed size for this unit format, else -1.
	fixed   int
	sibling int // index of DW_AT_sibling in attrs, -1 if none
}

type dwAbbrevTable struct {
	dense  []*dwAbbrev // by code, for small codes
	sparse map[uint64]*dwAbbrev
}

func (t *dwAbbrevTable) get(code uint64) *dwAbbrev {
	if code < uint64(len(t.dense)) {
		return t.dense[code]
	}
	return t.sparse[code]
}

func newDWData(img *elfimage.Image, opts BinaryOptions) (d *dwData, err error) {
	var prog *elfimage.Progressive
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, fmt.Errorf("%w: %v", ErrBadDWARF, p)
		}
		if err != nil && prog != nil {
			prog.Stop() // the caller unmaps the file
		}
	}()
	d = &dwData{order: img.Order, abbrevs: map[abbrevKey]*dwAbbrevTable{}}
	names := []string{".debug_info", ".debug_abbrev", ".debug_str", ".debug_line_str", ".debug_line",
		".debug_ranges", ".debug_rnglists", ".debug_addr", ".debug_str_offsets", ".debug_aranges"}
	// Compressed sections are inflated in parallel (the large ones
	// dominate the open time of a -gz binary); mapped ones cost nothing.
	var wg sync.WaitGroup
	// .debug_info, the largest, is inflated progressively in the
	// background: a lookup waits only for the prefix up to its unit.
	if p, perr := img.StartProgressive(".debug_info"); perr != nil {
		return nil, perr
	} else if p != nil {
		d.infoProg, d.info, prog = p, p.Buf, p
	}
	for _, n := range names {
		if n == ".debug_info" && d.infoProg != nil {
			continue
		}
		if s := img.FindSection(n); s != nil && (s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug")) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { recover() }() // errors are reported by the sequential pass below
				img.SectionParallel(n)
			}()
		}
	}
	wg.Wait()
	get := func(name string) []byte {
		if err != nil {
			return nil
		}
		var b []byte
		b, err = img.Section(name)
		return b
	}
	if d.infoProg == nil {
		d.info = get(".debug_info")
	}
	d.abbrev = get(".debug_abbrev")
	d.str = get(".debug_str")
	d.lineStr = get(".debug_line_str")
	d.line = get(".debug_line")
	d.ranges = get(".debug_ranges")
	d.rnglists = get(".debug_rnglists")
	d.addr = get(".debug_addr")
	d.strOffs = get(".debug_str_offsets")
	aranges := get(".debug_aranges")
	if err != nil {
		return nil, err
	}
	if len(d.info) == 0 {
		return nil, ErrNoDebugInfo
	}
	d.buildIndex(aranges)
	if d.infoProg == nil {
		if err := d.scanAll(); err != nil {
			return nil, err
		}
	} else {
		// Index the units .debug_aranges misses once .debug_info is in.
		d.bg.Add(1)
		go func() {
			defer d.bg.Done()
			d.scanAll()
		}()
	}
	return d, nil
}

// closeAll stops a background inflation before the file is unmapped.
func (d *dwData) closeAll() {
	if d.infoProg != nil {
		d.infoProg.Stop()
	}
	d.bg.Wait()
	d.closeSplit()
}

// parseUnitHeader decodes the unit header at start. It returns nil (and
// the end of the unit, to skip it) for units this reader does not use,
// and an error when the header is malformed.
func (d *dwData) parseUnitHeader(start uint64) (*dwUnit, uint64, error) {
	r := dwReader{b: d.info, pos: int(start), order: d.order}
	l, d64 := r.unitLength()
	if r.bad {
		return nil, 0, fmt.Errorf("%w: unit at %#x: truncated length", ErrBadDWARF, start)
	}
	body := uint64(r.pos)
	if l > uint64(len(r.b))-body {
		return nil, 0, fmt.Errorf("%w: unit at %#x: length %d past end of .debug_info", ErrBadDWARF, start, l)
	}
	end := body + l
	if !d.waitInfo(min(end, body+64)) {
		return nil, 0, fmt.Errorf("%w: unit at %#x: .debug_info not available", ErrBadDWARF, start)
	}
	u := &dwUnit{off: start, end: end, dwarf64: d64}
	u.version = r.u16()
	osz := 4
	if d64 {
		osz = 8
	}
	switch {
	case u.version >= 2 && u.version <= 4:
		u.abbrevOff = r.uN(osz)
		u.addrSize = r.u8()
		u.unitType = 1
	case u.version == 5:
		u.unitType = r.u8()
		u.addrSize = r.u8()
		u.abbrevOff = r.uN(osz)
		switch u.unitType {
		case 4, 5: // skeleton, split_compile: dwo_id
			u.dwoID, u.hasDwoID = r.u64(), true
		case 2, 6: // type, split_type: signature + type offset
			r.skip(8)
			r.skip(uint64(osz))
		}
	default:
		return nil, end, nil // unknown version: skip the unit
	}
	if r.bad || uint64(r.pos) > end {
		return nil, 0, fmt.Errorf("%w: unit header at %#x", ErrBadDWARF, start)
	}
	u.dieOff = uint64(r.pos)
	if u.addrSize != 4 && u.addrSize != 8 {
		return nil, end, nil
	}
	return u, end, nil
}

// waitInfo waits until .debug_info is available up to offset n (it may
// still be inflating in the background); false if it never will be.
func (d *dwData) waitInfo(n uint64) bool {
	if d.infoProg == nil {
		return n <= uint64(len(d.info))
	}
	return d.infoProg.Wait(n)
}

// scanAll walks every unit header of .debug_info once (waiting for all of
// it), reusing the units already created on demand, and adds the ranges of
// units .debug_aranges does not cover to the index.
func (d *dwData) scanAll() error {
	d.scanOnce.Do(func() {
		if !d.waitInfo(uint64(len(d.info))) {
			d.scanErr = fmt.Errorf("%w: .debug_info could not be inflated", ErrBadDWARF)
			return
		}
		d.unitMu.Lock()
		known := map[uint64]*dwUnit{}
		for _, u := range d.known {
			known[u.off] = u
		}
		d.unitMu.Unlock()
		var units []*dwUnit
		for pos := uint64(0); pos < uint64(len(d.info)); {
			u, end, err := d.parseUnitHeader(pos)
			if err != nil {
				d.scanErr = err
				break
			}
			if u != nil {
				if k := known[u.off]; k != nil {
					u = k
				}
				units = append(units, u)
			}
			pos = end
		}
		d.units = units
		// Units without .debug_aranges entries: index their CU DIE ranges.
		idx := append([]cuRange(nil), *d.index.Load()...)
		added := false
		for _, u := range units {
			if d.covered[u.off] || u.unitType == 2 || u.unitType == 6 {
				continue
			}
			if err := d.prepare(u); err != nil {
				continue
			}
			if u.tag != dwTagCompileUnit && u.tag != dwTagPartialUnit && u.tag != dwTagSkeletonUnit {
				continue
			}
			for _, rg := range d.cuDIERanges(u) {
				idx = append(idx, cuRange{rg[0], rg[1], u.off})
				added = true
			}
		}
		if added {
			slices.SortStableFunc(idx, func(a, b cuRange) int { return cmp.Compare(a.lo, b.lo) })
			d.index.Store(&idx)
		}
		d.scanned.Store(true)
	})
	return d.scanErr
}

// unitByHeader returns the unit whose header is at off, creating it on
// demand (before scanAll has run) so that a lookup only needs the part of
// a compressed .debug_info up to its own unit.
func (d *dwData) unitByHeader(off uint64) *dwUnit {
	if d.scanned.Load() {
		i := sort.Search(len(d.units), func(i int) bool { return d.units[i].off >= off })
		if i < len(d.units) && d.units[i].off == off {
			return d.units[i]
		}
		return nil
	}
	d.unitMu.Lock()
	defer d.unitMu.Unlock()
	for _, u := range d.known {
		if u.off == off {
			return u
		}
	}
	if off >= uint64(len(d.info)) || !d.waitInfo(off+16) {
		return nil
	}
	u, _, err := d.parseUnitHeader(off)
	if err != nil || u == nil || !d.waitInfo(u.end) {
		return nil
	}
	d.known = append(d.known, u)
	return u
}

// unitAt returns the unit containing the .debug_info offset off.
func (d *dwData) unitAt(off uint64) *dwUnit {
	if !d.scanned.Load() {
		d.unitMu.Lock()
		for _, u := range d.known {
			if u.dieOff <= off && off < u.end {
				d.unitMu.Unlock()
				return u
			}
		}
		d.unitMu.Unlock()
		d.scanAll()
	}
	i := sort.Search(len(d.units), func(i int) bool { return d.units[i].end > off })
	if i < len(d.units) && d.units[i].dieOff <= off {
		return d.units[i]
	}
	return nil
}

// buildIndex builds the address → unit index from .debug_aranges; scanAll
// adds the units it does not cover.
func (d *dwData) buildIndex(aranges []byte) {
	d.covered = map[uint64]bool{}
	idx := make([]cuRange, 0, len(aranges)/16)
	r := dwReader{b: aranges, order: d.order}
	for r.pos < len(r.b) && !r.bad {
		l, d64 := r.unitLength()
		start := r.pos
		if r.bad || l > uint64(len(r.b)-start) || l < 8 {
			break
		}
		end := start + int(l)
		ver := r.u16()
		var cuOff uint64
		if d64 {
			cuOff = r.u64()
		} else {
			cuOff = uint64(r.u32())
		}
		asz := int(r.u8())
		ssz := int(r.u8())
		if ver != 2 || (asz != 4 && asz != 8) || ssz != 0 || cuOff >= uint64(len(d.info)) {
			r.pos = end
			continue
		}
		// tuples are aligned to 2*address size from the start of the set
		tup := 2 * asz
		hdr := r.pos - (start - 4)
		if d64 {
			hdr = r.pos - (start - 12)
		}
		if pad := hdr % tup; pad != 0 {
			r.skip(uint64(tup - pad))
		}
		any := false
		for r.pos+tup <= end {
			lo := r.uN(asz)
			ln := r.uN(asz)
			if lo == 0 && ln == 0 {
				break
			}
			if lo == 0 || ln == 0 || lo+ln < lo {
				continue
			}
			idx = append(idx, cuRange{lo, lo + ln, cuOff})
			any = true
		}
		if any {
			d.covered[cuOff] = true
		}
		r.pos = end
	}
	idx = elfimage.SortByAddr(idx, func(r *cuRange) uint64 { return r.lo })
	d.index.Store(&idx)
}

// unitFor returns the unit whose ranges contain pc.
func (d *dwData) unitFor(pc uint64) *dwUnit {
	for {
		x := *d.index.Load()
		lo, hi := 0, len(x)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if x[h].lo <= pc {
				lo = h + 1
			} else {
				hi = h
			}
		}
		// Ranges may nest or overlap slightly; look back a few entries.
		for i := lo - 1; i >= 0 && i >= lo-4; i-- {
			if pc < x[i].hi {
				if u := d.unitByHeader(x[i].unit); u != nil {
					return u
				}
			}
		}
		if d.scanned.Load() {
			return nil
		}
		// Not in .debug_aranges: the full scan indexes the other units.
		d.scanAll()
	}
}

// abbrevTable returns the parsed abbreviation table for u.
func (d *dwData) abbrevTable(u *dwUnit) (*dwAbbrevTable, error) {
	key := abbrevKey{u.abbrevOff, u.addrSize, u.dwarf64, u.version}
	d.abbrevMu.Lock()
	defer d.abbrevMu.Unlock()
	if t, ok := d.abbrevs[key]; ok {
		return t, nil
	}
	if u.abbrevOff >= uint64(len(d.abbrev)) {
		return nil, fmt.Errorf("%w: abbrev offset %#x out of range", ErrBadDWARF, u.abbrevOff)
	}
	r := dwReader{b: d.abbrev, pos: int(u.abbrevOff), order: d.order}
	t := &dwAbbrevTable{sparse: map[uint64]*dwAbbrev{}}
	for {
		code := r.uleb()
		if code == 0 || r.bad {
			break
		}
		a := &dwAbbrev{tag: uint16(r.uleb()), children: r.u8() != 0, sibling: -1}
		for {
			at := r.uleb()
			form := r.uleb()
			if r.bad {
				return nil, fmt.Errorf("%w: truncated abbrev table at %#x", ErrBadDWARF, u.abbrevOff)
			}
			if at == 0 && form == 0 {
				break
			}
			var imp int64
			if form == dwFormImplicitConst {
				imp = r.sleb()
			}
			if at == dwAtSibling {
				a.sibling = len(a.attrs)
			}
			a.attrs = append(a.attrs, dwAttrSpec{uint16(at), uint16(form), imp})
		}
		a.fixed = 0
		for _, s := range a.attrs {
			n := fixedFormSize(s.form, u)
			if n < 0 {
				a.fixed = -1
				break
			}
			a.fixed += n
		}
		if code < 4096 {
			for uint64(len(t.dense)) <= code {
				t.dense = append(t.dense, nil)
			}
			t.dense[code] = a
		} else {
			t.sparse[code] = a
		}
	}
	d.abbrevs[key] = t
	return t, nil
}

// fixedFormSize returns the size of a form's value, or -1 when it varies.
func fixedFormSize(form uint16, u *dwUnit) int {
	switch form {
	case dwFormAddr:
		return int(u.addrSize)
	case dwFormData1, dwFormRef1, dwFormFlag, dwFormStrx1, dwFormAddrx1:
		return 1
	case dwFormData2, dwFormRef2, dwFormStrx2, dwFormAddrx2:
		return 2
	case dwFormStrx3, dwFormAddrx3:
		return 3
	case dwFormData4, dwFormRef4, dwFormStrx4, dwFormAddrx4, dwFormRefSup4:
		return 4
	case dwFormData8, dwFormRef8, dwFormRefSig8, dwFormRefSup8:
		return 8
	case dwFormData16:
		return 16
	case dwFormStrp, dwFormSecOffset, dwFormLineStrp, dwFormStrpSup, dwFormGNURefAlt, dwFormGNUStrpAlt:
		return u.offSize()
	case dwFormRefAddr:
		if u.version <= 2 {
			return int(u.addrSize)
		}
		return u.offSize()
	case dwFormFlagPresent, dwFormImplicitConst:
		return 0
	}
	return -1
}

// Value classes of a decoded attribute.
const (
	vkNone     = iota
	vkConst    // constant (data, udata, sdata, flag, implicit_const)
	vkAddr     // address
	vkAddrx    // index into .debug_addr
	vkRef      // absolute .debug_info offset
	vkStrp     // .debug_str offset
	vkLineStrp // .debug_line_str offset
	vkStrInl   // inline string: .debug_info offset of its first byte
	vkStrx     // index into .debug_str_offsets
	vkSecOff   // section offset (ranges, stmt_list, ...)
	vkRnglistx // index into the rnglists offsets table
	vkOther    // blocks, expressions, signatures, alt refs: ignored
)

// readForm decodes one attribute value of u at r.
func readForm(r *dwReader, form uint16, u *dwUnit, implicit int64) (uint8, uint64) {
	switch form {
	case dwFormAddr:
		return vkAddr, r.uN(int(u.addrSize))
	case dwFormData1, dwFormFlag:
		return vkConst, uint64(r.u8())
	case dwFormData2:
		return vkConst, uint64(r.u16())
	case dwFormData4:
		return vkConst, uint64(r.u32())
	case dwFormData8:
		return vkConst, r.u64()
	case dwFormData16:
		r.skip(16)
		return vkOther, 0
	case dwFormSdata:
		return vkConst, uint64(r.sleb())
	case dwFormUdata:
		return vkConst, r.uleb()
	case dwFormImplicitConst:
		return vkConst, uint64(implicit)
	case dwFormFlagPresent:
		return vkConst, 1
	case dwFormString:
		p := r.pos
		r.cstr()
		return vkStrInl, uint64(p)
	case dwFormStrp:
		return vkStrp, r.uN(u.offSize())
	case dwFormLineStrp:
		return vkLineStrp, r.uN(u.offSize())
	case dwFormStrx, dwFormGNUStrIndex:
		return vkStrx, r.uleb()
	case dwFormStrx1:
		return vkStrx, uint64(r.u8())
	case dwFormStrx2:
		return vkStrx, uint64(r.u16())
	case dwFormStrx3:
		return vkStrx, uint64(r.u24())
	case dwFormStrx4:
		return vkStrx, uint64(r.u32())
	case dwFormAddrx, dwFormGNUAddrIndex:
		return vkAddrx, r.uleb()
	case dwFormAddrx1:
		return vkAddrx, uint64(r.u8())
	case dwFormAddrx2:
		return vkAddrx, uint64(r.u16())
	case dwFormAddrx3:
		return vkAddrx, uint64(r.u24())
	case dwFormAddrx4:
		return vkAddrx, uint64(r.u32())
	case dwFormRef1:
		return vkRef, u.off + uint64(r.u8())
	case dwFormRef2:
		return vkRef, u.off + uint64(r.u16())
	case dwFormRef4:
		return vkRef, u.off + uint64(r.u32())
	case dwFormRef8:
		return vkRef, u.off + r.u64()
	case dwFormRefUdata:
		return vkRef, u.off + r.uleb()
	case dwFormRefAddr:
		if u.version <= 2 {
			return vkRef, r.uN(int(u.addrSize))
		}
		return vkRef, r.uN(u.offSize())
	case dwFormSecOffset:
		return vkSecOff, r.uN(u.offSize())
	case dwFormRnglistx:
		return vkRnglistx, r.uleb()
	case dwFormLoclistx:
		r.skipLEB()
		return vkOther, 0
	case dwFormRefSig8, dwFormRefSup8:
		r.skip(8)
		return vkOther, 0
	case dwFormRefSup4:
		r.skip(4)
		return vkOther, 0
	case dwFormStrpSup, dwFormGNURefAlt, dwFormGNUStrpAlt:
		r.skip(uint64(u.offSize()))
		return vkOther, 0
	case dwFormBlock1:
		r.skip(uint64(r.u8()))
		return vkOther, 0
	case dwFormBlock2:
		r.skip(uint64(r.u16()))
		return vkOther, 0
	case dwFormBlock4:
		r.skip(uint64(r.u32()))
		return vkOther, 0
	case dwFormBlock, dwFormExprloc:
		r.skip(r.uleb())
		return vkOther, 0
	case dwFormIndirect:
		f := r.uleb()
		if f == dwFormIndirect || f > 0xffff {
			r.fail()
			return vkNone, 0
		}
		var imp int64
		if f == dwFormImplicitConst {
			imp = r.sleb()
		}
		return readForm(r, uint16(f), u, imp)
	}
	r.fail()
	return vkNone, 0
}

// skipAttrs skips the attribute values of a DIE with abbrev a.
func skipAttrs(r *dwReader, a *dwAbbrev, u *dwUnit) {
	if a.fixed >= 0 {
		r.skip(uint64(a.fixed))
		return
	}
	for i := range a.attrs {
		s := &a.attrs[i]
		switch s.form {
		case dwFormUdata, dwFormSdata, dwFormStrx, dwFormAddrx, dwFormRefUdata, dwFormLoclistx, dwFormRnglistx, dwFormGNUAddrIndex, dwFormGNUStrIndex:
			r.skipLEB()
		case dwFormString:
			r.cstr()
		default:
			if n := fixedFormSize(s.form, u); n >= 0 {
				r.skip(uint64(n))
			} else {
				readForm(r, s.form, u, s.implicit)
			}
		}
		if r.bad {
			return
		}
	}
}

// prepare parses u's abbreviation table and CU DIE attributes once.
func (d *dwData) prepare(u *dwUnit) error {
	u.hdrOnce.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				u.hdrErr = fmt.Errorf("%w: unit %#x: %v", ErrBadDWARF, u.off, p)
			}
		}()
		t, err := d.abbrevTable(u)
		if err != nil {
			u.hdrErr = err
			return
		}
		u.abbr = t
		r := dwReader{b: d.info[:u.end], pos: int(u.dieOff), order: d.order}
		code := r.uleb()
		a := t.get(code)
		if a == nil {
			u.hdrErr = fmt.Errorf("%w: unit %#x: bad abbrev code %d", ErrBadDWARF, u.off, code)
			return
		}
		u.tag = a.tag
		type pend struct {
			at   uint16
			kind uint8
			v    uint64
		}
		var ps [24]pend
		n := 0
		for _, s := range a.attrs {
			k, v := readForm(&r, s.form, u, s.implicit)
			switch s.at {
			case dwAtStrOffsetsBase:
				u.strOffsBase = v
			case dwAtAddrBase, dwAtGNUAddrBase:
				u.addrBase = v
			case dwAtRnglistsBase:
				u.rngBase, u.hasRngBase = v, true
			case dwAtGNURangesBase:
				u.gnuRngBase = v
			case dwAtGNUDwoID:
				u.dwoID, u.hasDwoID = v, true
			case dwAtStmtList:
				u.stmt, u.hasStmt = v, true
			case dwAtLowPC, dwAtName, dwAtCompDir, dwAtDwoName, dwAtGNUDwoName:
				if n < len(ps) {
					ps[n] = pend{s.at, k, v}
					n++
				}
			}
		}
		if r.bad {
			u.hdrErr = fmt.Errorf("%w: unit %#x: truncated CU DIE", ErrBadDWARF, u.off)
			return
		}
		for _, p := range ps[:n] {
			switch p.at {
			case dwAtLowPC:
				u.lowPC = d.addrValue(u, p.kind, p.v)
			case dwAtName:
				u.name = string(d.strValue(u, p.kind, p.v))
			case dwAtCompDir:
				u.compDir = string(d.strValue(u, p.kind, p.v))
			case dwAtDwoName, dwAtGNUDwoName:
				u.dwoName = string(d.strValue(u, p.kind, p.v))
			}
		}
	})
	return u.hdrErr
}

// addrValue resolves an address-class value (addr or addrx).
func (d *dwData) addrValue(u *dwUnit, kind uint8, v uint64) uint64 {
	switch kind {
	case vkAddr, vkConst:
		return v
	case vkAddrx:
		off := u.addrBase + v*uint64(u.addrSize)
		if off < u.addrBase || off+uint64(u.addrSize) > uint64(len(d.addr)) {
			return 0
		}
		r := dwReader{b: d.addr, pos: int(off), order: d.order}
		return r.uN(int(u.addrSize))
	}
	return 0
}

// strValue resolves a string-class value; the result aliases section data.
func (d *dwData) strValue(u *dwUnit, kind uint8, v uint64) []byte {
	switch kind {
	case vkStrp:
		return cstrAt(d.str, v)
	case vkLineStrp:
		return cstrAt(d.lineStr, v)
	case vkStrInl:
		return cstrAt(d.info, v)
	case vkStrx:
		osz := uint64(u.offSize())
		base := u.strOffsBase
		if base == 0 && u.version >= 5 {
			base = 8 // first table's header (DWARF 5 §7.26) when the base is absent
			if u.dwarf64 {
				base = 16
			}
		}
		off := base + v*osz
		if off < base || off+osz > uint64(len(d.strOffs)) {
			return nil
		}
		r := dwReader{b: d.strOffs, pos: int(off), order: d.order}
		return cstrAt(d.str, r.uN(int(osz)))
	}
	return nil
}

// cuDIERanges returns the address ranges of u's CU DIE.
func (d *dwData) cuDIERanges(u *dwUnit) [][2]uint64 {
	r := dwReader{b: d.info[:u.end], pos: int(u.dieOff), order: d.order}
	a := u.abbr.get(r.uleb())
	if a == nil {
		return nil
	}
	var lo, hi uint64
	var hasLo, hasHi, hiOff, hasRng bool
	var rk uint8
	var rv uint64
	var lk uint8
	for _, s := range a.attrs {
		k, v := readForm(&r, s.form, u, s.implicit)
		switch s.at {
		case dwAtLowPC:
			lk, lo, hasLo = k, v, true
		case dwAtHighPC:
			hi, hasHi, hiOff = v, true, k == vkConst
		case dwAtRanges:
			rk, rv, hasRng = k, v, true
		}
	}
	if hasLo {
		lo = d.addrValue(u, lk, lo)
	}
	if hasRng {
		return d.rangeList(u, rk, rv, nil)
	}
	if hasLo && hasHi {
		if hiOff {
			hi += lo
		}
		if lo != 0 && lo < hi {
			return [][2]uint64{{lo, hi}}
		}
	}
	return nil
}

// rangeList decodes a DW_AT_ranges value and appends the non-empty ranges
// (dropping ranges that start at 0: discarded COMDAT code) to dst.
func (d *dwData) rangeList(u *dwUnit, kind uint8, v uint64, dst [][2]uint64) [][2]uint64 {
	base := u.lowPC
	if u.version < 5 {
		if kind != vkSecOff && kind != vkConst {
			return dst
		}
		if u.hasRngBase {
			v += u.rngBase
		}
		r := dwReader{b: d.ranges, order: d.order}
		if v >= uint64(len(d.ranges)) {
			return dst
		}
		r.pos = int(v)
		asz := int(u.addrSize)
		maxA := ^uint64(0)
		if asz == 4 {
			maxA = 0xffffffff
		}
		for n := 0; n < 1<<20 && !r.bad; n++ {
			a, b := r.uN(asz), r.uN(asz)
			if r.bad || (a == 0 && b == 0) {
				break
			}
			if a == maxA {
				base = b
				continue
			}
			lo, hi := base+a, base+b
			if lo != 0 && lo < hi {
				dst = append(dst, [2]uint64{lo, hi})
			}
		}
		return dst
	}
	off := v
	if kind == vkRnglistx {
		osz := uint64(u.offSize())
		rb := u.rngBase
		if !u.hasRngBase {
			rb = 12
			if u.dwarf64 {
				rb = 20
			}
		}
		p := rb + v*osz
		if p < rb || p+osz > uint64(len(d.rnglists)) {
			return dst
		}
		rr := dwReader{b: d.rnglists, pos: int(p), order: d.order}
		off = rb + rr.uN(int(osz))
	} else if kind != vkSecOff {
		return dst
	}
	if off >= uint64(len(d.rnglists)) {
		return dst
	}
	r := dwReader{b: d.rnglists, pos: int(off), order: d.order}
	asz := int(u.addrSize)
	for n := 0; n < 1<<20 && !r.bad; n++ {
		var lo, hi uint64
		switch r.u8() {
		case 0: // end_of_list
			return dst
		case 1: // base_addressx
			base = d.addrValue(u, vkAddrx, r.uleb())
			continue
		case 2: // startx_endx
			lo = d.addrValue(u, vkAddrx, r.uleb())
			hi = d.addrValue(u, vkAddrx, r.uleb())
		case 3: // startx_length
			lo = d.addrValue(u, vkAddrx, r.uleb())
			hi = lo + r.uleb()
		case 4: // offset_pair
			a := r.uleb()
			b := r.uleb()
			lo, hi = base+a, base+b
		case 5: // base_address
			base = r.uN(asz)
			continue
		case 6: // start_end
			lo = r.uN(asz)
			hi = r.uN(asz)
		case 7: // start_length
			lo = r.uN(asz)
			hi = lo + r.uleb()
		default:
			return dst
		}
		if !r.bad && lo != 0 && lo < hi {
			dst = append(dst, [2]uint64{lo, hi})
		}
	}
	return dst
}
