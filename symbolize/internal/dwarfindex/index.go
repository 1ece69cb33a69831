package dwarfindex

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// Data copies), the unit list, the address → CU index, and caches.
type Data struct {
	order                            binary.ByteOrder
	info, abbrev, str, lineStr, line []byte
	ranges, rnglists, addr, strOffs  []byte
	// units lists every unit, sorted by offset, once scanned is set;
	// before that, known holds the units created on demand (unitMu).
	units    []*dwUnit
	maxUnits int // the most units scanAll indexes; 0: maxUnits
	scanned  atomic.Bool
	scanOnce sync.Once
	scanErr  error
	unitMu   sync.Mutex
	known    []*dwUnit
	covered  map[uint64]bool         // units with .debug_aranges entries (read-only after open)
	index    atomic.Pointer[[]Range] // sorted by lo
	infoProg *elfimage.Progressive   // non-nil while .debug_info may still be inflating
	bg       sync.WaitGroup          // the background scanAll
	abbrevMu sync.Mutex
	abbrevs  map[abbrevKey]*dwAbbrevTable
	// Split DWARF (split.go): the .dwo files opened for skeleton
	// units; parent is the skeleton's dwData when this one is a .dwo.
	split splitState
	// Resolved names and the namespaces of internal-linkage functions, by
	// DIE offset, sharded so that concurrent lookups and unit parses
	// rarely wait for each other (one RWMutex over one map serialized
	// the CLI's two workers).
	shards [nameShards]nameShard
}

// Range is one entry of the address index: [Lo, Hi) lies in the unit
// whose header is at unit.
type Range struct {
	Lo, Hi uint64
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

// New indexes the DWARF of img: it reads (or inflates; .debug_info
// progressively, in the background) the debug sections and builds the
// address → unit index from .debug_aranges, then from the units' own
// ranges. Units are parsed later, on the first lookup that needs them.
// It returns an error wrapping elfimage.ErrNoDebugInfo when img has no
// .debug_info and elfimage.ErrBadDWARF for malformed data. Close stops the
// background work; it must be called before img is closed.
func New(img *elfimage.Image, opts Options) (d *Data, err error) {
	var prog *elfimage.Progressive
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, fmt.Errorf("%w: %v", elfimage.ErrBadDWARF, p)
		}
		if err != nil && prog != nil {
			prog.Stop() // the caller unmaps the file
		}
	}()
	d = &Data{order: img.Order, abbrevs: map[abbrevKey]*dwAbbrevTable{}}
	d.split.maxSec, d.split.follow, d.split.dirs = opts.MaxSection, opts.FollowDWO, opts.DWODirs
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
		return nil, elfimage.ErrNoDebugInfo
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

// Ranges returns the address → unit index (sorted by lo), for tests and
// fuzz targets that want PCs the index covers.
func (d *Data) Ranges() []Range {
	if p := d.index.Load(); p != nil {
		return *p
	}
	return nil
}

// Close stops a background inflation before the file is unmapped.
func (d *Data) Close() {
	if d.infoProg != nil {
		d.infoProg.Stop()
	}
	d.bg.Wait()
	d.closeSplit()
}

// parseUnitHeader decodes the unit header at start. It returns nil (and
// the end of the unit, to skip it) for units this reader does not use,
// and an error when the header is malformed.
func (d *Data) parseUnitHeader(start uint64) (*dwUnit, uint64, error) {
	r := dwReader{b: d.info, pos: int(start), order: d.order}
	l, d64 := r.unitLength()
	if r.bad {
		return nil, 0, fmt.Errorf("%w: unit at %#x: truncated length", elfimage.ErrBadDWARF, start)
	}
	body := uint64(r.pos)
	if l > uint64(len(r.b))-body {
		return nil, 0, fmt.Errorf("%w: unit at %#x: length %d past end of .debug_info", elfimage.ErrBadDWARF, start, l)
	}
	end := body + l
	if !d.waitInfo(min(end, body+64)) {
		return nil, 0, fmt.Errorf("%w: unit at %#x: .debug_info not available", elfimage.ErrBadDWARF, start)
	}
	// The header is decoded into locals and a unit allocated only when it
	// is returned: a skipped unit (zero padding, a section of zeros) must
	// cost no allocation.
	var (
		unitType, addrSize uint8
		abbrevOff, dwoID   uint64
		hasDwoID           bool
	)
	version := r.u16()
	osz := 4
	if d64 {
		osz = 8
	}
	switch {
	case version >= 2 && version <= 4:
		abbrevOff = r.uN(osz)
		addrSize = r.u8()
		unitType = 1
	case version == 5:
		unitType = r.u8()
		addrSize = r.u8()
		abbrevOff = r.uN(osz)
		switch unitType {
		case 4, 5: // skeleton, split_compile: dwo_id
			dwoID, hasDwoID = r.u64(), true
		case 2, 6: // type, split_type: signature + type offset
			r.skip(8)
			r.skip(uint64(osz))
		}
	default:
		return nil, end, nil // unknown version: skip the unit
	}
	if r.bad || uint64(r.pos) > end {
		return nil, 0, fmt.Errorf("%w: unit header at %#x", elfimage.ErrBadDWARF, start)
	}
	if addrSize != 4 && addrSize != 8 {
		return nil, end, nil
	}
	return &dwUnit{off: start, end: end, dwarf64: d64, version: version, unitType: unitType,
		addrSize: addrSize, abbrevOff: abbrevOff, dwoID: dwoID, hasDwoID: hasDwoID,
		dieOff: uint64(r.pos)}, end, nil
}

// maxUnits bounds the units of one .debug_info that scanAll indexes. Real
// backends have a few thousand compile units, and type units in the tens
// of thousands; two million units cost about 500 MB.
const maxUnits = 2 << 20

// waitInfo waits until .debug_info is available up to offset n (it may
// still be inflating in the background); false if it never will be.
func (d *Data) waitInfo(n uint64) bool {
	if d.infoProg == nil {
		return n <= uint64(len(d.info))
	}
	return d.infoProg.Wait(n)
}

// scanAll walks every unit header of .debug_info once (waiting for all of
// it), reusing the units already created on demand, and adds the ranges of
// units .debug_aranges does not cover to the index.
func (d *Data) scanAll() error {
	d.scanOnce.Do(func() {
		if !d.waitInfo(uint64(len(d.info))) {
			d.scanErr = fmt.Errorf("%w: .debug_info could not be inflated", elfimage.ErrBadDWARF)
			return
		}
		d.unitMu.Lock()
		known := map[uint64]*dwUnit{}
		for _, u := range d.known {
			known[u.off] = u
		}
		d.unitMu.Unlock()
		var units []*dwUnit
		limit := d.maxUnits
		if limit <= 0 {
			limit = maxUnits
		}
		for pos := uint64(0); pos < uint64(len(d.info)); {
			u, end, err := d.parseUnitHeader(pos)
			if err != nil {
				d.scanErr = err
				break
			}
			if u != nil && len(units) == limit {
				// Memory follows the number of units (a unit costs about
				// 250 bytes, its header 11): a hostile section of tiny
				// units, which compresses a thousandfold, would cost
				// gigabytes. The units so far stay indexed.
				d.scanErr = fmt.Errorf("%w: more than %d units in .debug_info (at %#x): the rest is not indexed", elfimage.ErrBadDWARF, limit, pos)
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
		idx := append([]Range(nil), *d.index.Load()...)
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
				idx = append(idx, Range{rg[0], rg[1], u.off})
				added = true
			}
		}
		if added {
			slices.SortStableFunc(idx, func(a, b Range) int { return cmp.Compare(a.Lo, b.Lo) })
			d.index.Store(&idx)
		}
		d.scanned.Store(true)
	})
	return d.scanErr
}

// unitByHeader returns the unit whose header is at off, creating it on
// demand (before scanAll has run) so that a lookup only needs the part of
// a compressed .debug_info up to its own unit.
func (d *Data) unitByHeader(off uint64) *dwUnit {
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
func (d *Data) unitAt(off uint64) *dwUnit {
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
func (d *Data) buildIndex(aranges []byte) {
	d.covered = map[uint64]bool{}
	idx := make([]Range, 0, len(aranges)/16)
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
			idx = append(idx, Range{lo, lo + ln, cuOff})
			any = true
		}
		if any {
			d.covered[cuOff] = true
		}
		r.pos = end
	}
	idx = elfimage.SortByAddr(idx, func(r *Range) uint64 { return r.Lo })
	d.index.Store(&idx)
}

// unitFor returns the unit whose ranges contain pc, or nil; err is
// ErrBadDWARF when an index range (from .debug_aranges) covers pc but
// names an offset where .debug_info holds no unit this reader can use.
func (d *Data) unitFor(pc uint64) (*dwUnit, error) {
	for {
		// bad is the first range's unit offset that names no usable unit.
		bad, hasBad := uint64(0), false
		x := *d.index.Load()
		lo, hi := 0, len(x)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if x[h].Lo <= pc {
				lo = h + 1
			} else {
				hi = h
			}
		}
		// Ranges may nest or overlap slightly; look back a few entries.
		for i := lo - 1; i >= 0 && i >= lo-4; i-- {
			if pc < x[i].Hi {
				if u := d.unitByHeader(x[i].unit); u != nil {
					return u, nil
				}
				if !hasBad {
					bad, hasBad = x[i].unit, true
				}
			}
		}
		if d.scanned.Load() {
			if hasBad {
				return nil, fmt.Errorf("%w: .debug_aranges names the unit at %#x for %#x, where .debug_info has none", elfimage.ErrBadDWARF, bad, pc)
			}
			return nil, nil
		}
		// Not in .debug_aranges: the full scan indexes the other units.
		d.scanAll()
	}
}
