package dwarfindex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// Split DWARF (-gsplit-dwarf): the binary keeps skeleton units (address
// ranges, line table, .debug_addr) and each compile unit's DIE tree lives
// in a .dwo file named by DW_AT_dwo_name (DWARF 5) or DW_AT_GNU_dwo_name
// (the DWARF 4 GNU extension). A skeleton unit is resolved to its split
// unit once, on the first lookup that lands in it; the .dwo is looked for
// like llvm-symbolizer does (DW_AT_comp_dir/DW_AT_dwo_name, or the name
// itself when absolute) and also beside the binary and its debug file.
// Without it, the unit still gives the line table's file:line and the
// symbol table's name (what llvm-symbolizer prints), and MissingDWO says so.
// .dwp packages are not read. Like separate debug files, .dwo files are
// not looked for on disk for a Binary made by NewBinary; only regular
// files are opened.

// splitState is the split-DWARF part of a dwData.
type splitState struct {
	parent *Data    // the skeleton's DWARF, when this dwData is a .dwo
	follow bool     // look for .dwo files on disk (OpenBinary, not NewBinary)
	dirs   []string // directories searched for .dwo files besides comp_dir
	maxSec int64    // Options.MaxSection for the .dwo files
	mu     sync.Mutex
	imgs   []*elfimage.Image // opened .dwo files, closed with the binary
	miss   []string          // skeletons met whose .dwo was not found, and why
}

// dwoLink is what a skeleton unit resolves to: the split unit and the
// DWARF of its .dwo, or nothing (d == nil) when it is not a skeleton or
// its .dwo was not found; missing then says why.
type dwoLink struct {
	d       *Data
	u       *dwUnit
	missing string
}

var noSplit = &dwoLink{}

// splitOf returns the DWARF and unit that describe u's code: u's split
// unit in its .dwo when u is a skeleton whose .dwo was found, else u.
// Warm calls do one atomic load.
func (d *Data) splitOf(u *dwUnit) (*Data, *dwUnit) {
	l := u.split.Load()
	if l == nil {
		l = d.loadSplit(u)
	}
	if l.d == nil {
		return d, u
	}
	return l.d, l.u
}

// loadSplit resolves the skeleton unit u once.
func (d *Data) loadSplit(u *dwUnit) *dwoLink {
	u.splitOnce.Do(func() {
		l := noSplit
		if d.split.parent == nil && d.prepare(u) == nil && u.dwoName != "" {
			l = d.openSplit(u)
			if l.d == nil {
				d.split.mu.Lock()
				d.split.miss = append(d.split.miss, l.missing)
				d.split.mu.Unlock()
			}
		}
		u.split.Store(l)
	})
	return u.split.Load()
}

// dwoCandidates lists where the .dwo of u may be, in order.
func (d *Data) dwoCandidates(u *dwUnit) []string {
	var c []string
	if filepath.IsAbs(u.dwoName) {
		c = append(c, u.dwoName)
	} else if u.compDir != "" {
		c = append(c, filepath.Join(u.compDir, u.dwoName))
	}
	for _, dir := range d.split.dirs {
		c = append(c, filepath.Join(dir, u.dwoName), filepath.Join(dir, filepath.Base(u.dwoName)))
	}
	out := c[:0]
	for _, p := range c {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// openSplit finds, opens and indexes the .dwo of the skeleton unit u.
func (d *Data) openSplit(u *dwUnit) *dwoLink {
	if !d.split.follow {
		return &dwoLink{missing: u.dwoName + " (not looked for: NewBinary)"}
	}
	var why []string
	for _, p := range d.dwoCandidates(u) {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		img, err := elfimage.Open(p, elfimage.Options{MaxSection: d.split.maxSec})
		if err != nil {
			continue
		}
		dd, su, err := d.splitUnitIn(img, u)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", p, err))
			img.Close()
			continue
		}
		d.split.mu.Lock()
		d.split.imgs = append(d.split.imgs, img)
		d.split.mu.Unlock()
		return &dwoLink{d: dd, u: su}
	}
	if len(why) == 0 {
		why = append(why, "not found")
	}
	return &dwoLink{missing: u.dwoName + " (" + strings.Join(why, "; ") + ")"}
}

// splitUnitIn reads the .dwo img and returns its DWARF and the split unit
// of the skeleton u (matched by dwo id), set up to use the skeleton's
// .debug_addr, .debug_line and .debug_ranges.
func (d *Data) splitUnitIn(img *elfimage.Image, u *dwUnit) (dd *Data, su *dwUnit, err error) {
	defer func() {
		if p := recover(); p != nil {
			dd, su, err = nil, nil, fmt.Errorf("%w: %v", elfimage.ErrBadDWARF, p)
		}
	}()
	dd = &Data{order: d.order, abbrevs: map[abbrevKey]*dwAbbrevTable{}}
	dd.split.parent = d
	for _, sec := range []struct {
		dst  *[]byte
		name string
	}{{&dd.info, ".debug_info.dwo"}, {&dd.abbrev, ".debug_abbrev.dwo"}, {&dd.str, ".debug_str.dwo"},
		{&dd.strOffs, ".debug_str_offsets.dwo"}, {&dd.rnglists, ".debug_rnglists.dwo"}} {
		if *sec.dst, err = img.Section(sec.name); err != nil {
			return nil, nil, err
		}
	}
	if len(dd.info) == 0 {
		return nil, nil, elfimage.ErrNoDebugInfo
	}
	dd.addr, dd.line, dd.lineStr, dd.ranges = d.addr, d.line, d.lineStr, d.ranges
	for pos := uint64(0); pos < uint64(len(dd.info)); {
		x, end, err := dd.parseUnitHeader(pos)
		if err != nil {
			return nil, nil, err
		}
		if x != nil {
			dd.units = append(dd.units, x)
		}
		pos = end
	}
	sort.Slice(dd.units, func(i, j int) bool { return dd.units[i].off < dd.units[j].off })
	empty := []Range{}
	dd.index.Store(&empty)
	dd.scanned.Store(true)
	for _, x := range dd.units {
		if x.unitType == 2 || x.unitType == 6 {
			continue
		}
		// The skeleton's bases, before the split unit's DIE is read.
		x.addrBase, x.lowPC, x.compDir = u.addrBase, u.lowPC, u.compDir
		if u.version < 5 {
			x.rngBase, x.hasRngBase = u.gnuRngBase, true
		}
		if err := dd.prepare(x); err != nil {
			return nil, nil, err
		}
		if x.tag != dwTagCompileUnit || !x.hasDwoID || !u.hasDwoID || x.dwoID != u.dwoID {
			continue
		}
		x.stmt, x.hasStmt = u.stmt, u.hasStmt
		if x.compDir == "" {
			x.compDir = u.compDir
		}
		return dd, x, nil
	}
	return nil, nil, fmt.Errorf("no split unit with dwo id %#x", u.dwoID)
}

// closeSplit closes the .dwo files.
func (d *Data) closeSplit() {
	d.split.mu.Lock()
	defer d.split.mu.Unlock()
	for _, img := range d.split.imgs {
		img.Close()
	}
	d.split.imgs = nil
}

// SplitWarning returns one warning naming the skeleton units met by
// lookups so far whose .dwo was not found (sorted, so that the same
// lookups give the same text), or nil.
func (d *Data) SplitWarning() error {
	d.split.mu.Lock()
	missing := slices.Clone(d.split.miss)
	d.split.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	n := len(missing)
	if n > 3 {
		missing = append(missing[:3], "...")
	}
	return fmt.Errorf("symbolize: split DWARF: %d skeleton units met without their .dwo file, so without inline frames and DWARF function names: %s",
		n, strings.Join(missing, ", "))
}

// DWOIDAt returns the dwo id of the unit covering pc (a skeleton's id
// names its split unit), for tests that build a .dwo of another build.
func (d *Data) DWOIDAt(pc uint64) (uint64, bool) {
	u, _ := d.unitFor(pc)
	if u == nil {
		return 0, false
	}
	return u.dwoID, true
}
