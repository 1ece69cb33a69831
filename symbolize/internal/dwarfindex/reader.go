package dwarfindex

import (
	"encoding/binary"
)

// dwReader is a bounds-checked little cursor over a DWARF section. Reads
// past the end set bad and return zero instead of panicking.
type dwReader struct {
	b     []byte
	pos   int
	bad   bool
	order binary.ByteOrder
}

func (r *dwReader) fail() { r.bad = true; r.pos = len(r.b) }

func (r *dwReader) u8() uint8 {
	if r.pos >= len(r.b) {
		r.fail()
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *dwReader) u16() uint16 {
	if len(r.b)-r.pos < 2 {
		r.fail()
		return 0
	}
	v := r.order.Uint16(r.b[r.pos:])
	r.pos += 2
	return v
}

func (r *dwReader) u24() uint32 {
	if len(r.b)-r.pos < 3 {
		r.fail()
		return 0
	}
	p := r.b[r.pos:]
	r.pos += 3
	if r.order == binary.BigEndian {
		return uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
	}
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16
}

func (r *dwReader) u32() uint32 {
	if len(r.b)-r.pos < 4 {
		r.fail()
		return 0
	}
	v := r.order.Uint32(r.b[r.pos:])
	r.pos += 4
	return v
}

func (r *dwReader) u64() uint64 {
	if len(r.b)-r.pos < 8 {
		r.fail()
		return 0
	}
	v := r.order.Uint64(r.b[r.pos:])
	r.pos += 8
	return v
}

// uN reads an n-byte unsigned value (n = 1, 2, 4 or 8).
func (r *dwReader) uN(n int) uint64 {
	switch n {
	case 1:
		return uint64(r.u8())
	case 2:
		return uint64(r.u16())
	case 4:
		return uint64(r.u32())
	case 8:
		return r.u64()
	}
	r.fail()
	return 0
}

func (r *dwReader) uleb() uint64 {
	// Fast path: most values (abbrev codes, small constants) take one byte.
	if r.pos < len(r.b) {
		if c := r.b[r.pos]; c < 0x80 {
			r.pos++
			return uint64(c)
		}
	}
	return r.ulebSlow()
}

func (r *dwReader) ulebSlow() uint64 {
	var v uint64
	var shift uint
	for {
		if r.pos >= len(r.b) {
			r.fail()
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			return v
		}
	}
}

func (r *dwReader) sleb() int64 {
	var v int64
	var shift uint
	var c byte
	for {
		if r.pos >= len(r.b) {
			r.fail()
			return 0
		}
		c = r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			break
		}
	}
	if shift < 64 && c&0x40 != 0 {
		v |= -1 << shift
	}
	return v
}

// skipULEB skips a LEB128 number.
func (r *dwReader) skipLEB() {
	for r.pos < len(r.b) {
		c := r.b[r.pos]
		r.pos++
		if c < 0x80 {
			return
		}
	}
	r.fail()
}

// cstr returns the bytes of a NUL-terminated string (without the NUL).
func (r *dwReader) cstr() []byte {
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := r.b[r.pos:i]
			r.pos = i + 1
			return s
		}
	}
	r.fail()
	return nil
}

func (r *dwReader) skip(n uint64) {
	if uint64(len(r.b)-r.pos) < n {
		r.fail()
		return
	}
	r.pos += int(n)
}

// unitLength reads an initial length; it returns the length and whether
// the 64-bit DWARF format is used.
func (r *dwReader) unitLength() (uint64, bool) {
	l := r.u32()
	if l == 0xffffffff {
		return r.u64(), true
	}
	if l >= 0xfffffff0 {
		r.fail()
		return 0, false
	}
	return uint64(l), false
}
