package dwarfindex

import (
	"fmt"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// prepare parses u's abbreviation table and CU DIE attributes once.
func (d *Data) prepare(u *dwUnit) error {
	u.hdrOnce.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				u.hdrErr = fmt.Errorf("%w: unit %#x: %v", elfimage.ErrBadDWARF, u.off, p)
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
			u.hdrErr = fmt.Errorf("%w: unit %#x: bad abbrev code %d", elfimage.ErrBadDWARF, u.off, code)
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
			u.hdrErr = fmt.Errorf("%w: unit %#x: truncated CU DIE", elfimage.ErrBadDWARF, u.off)
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
func (d *Data) addrValue(u *dwUnit, kind uint8, v uint64) uint64 {
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
func (d *Data) strValue(u *dwUnit, kind uint8, v uint64) []byte {
	switch kind {
	case vkStrp:
		return elfimage.CStringAt(d.str, v)
	case vkLineStrp:
		return elfimage.CStringAt(d.lineStr, v)
	case vkStrInl:
		return elfimage.CStringAt(d.info, v)
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
		return elfimage.CStringAt(d.str, r.uN(int(osz)))
	}
	return nil
}

// cuDIERanges returns the address ranges of u's CU DIE.
func (d *Data) cuDIERanges(u *dwUnit) [][2]uint64 {
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
func (d *Data) rangeList(u *dwUnit, kind uint8, v uint64, dst [][2]uint64) [][2]uint64 {
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
