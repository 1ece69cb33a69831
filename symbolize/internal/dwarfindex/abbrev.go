package dwarfindex

import (
	"fmt"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

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

// abbrevTable returns the parsed abbreviation table for u.
func (d *Data) abbrevTable(u *dwUnit) (*dwAbbrevTable, error) {
	key := abbrevKey{u.abbrevOff, u.addrSize, u.dwarf64, u.version}
	d.abbrevMu.Lock()
	defer d.abbrevMu.Unlock()
	if t, ok := d.abbrevs[key]; ok {
		return t, nil
	}
	if u.abbrevOff >= uint64(len(d.abbrev)) {
		return nil, fmt.Errorf("%w: abbrev offset %#x out of range", elfimage.ErrBadDWARF, u.abbrevOff)
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
				return nil, fmt.Errorf("%w: truncated abbrev table at %#x", elfimage.ErrBadDWARF, u.abbrevOff)
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
