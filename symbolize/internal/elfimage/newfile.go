package elfimage

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// Header table limits of NewFile. debug/elf allocates a Section or Prog
// for every header a file claims before reading any: a sparse 1.9 GB file
// claiming 30 million sections (extended numbering, e_shnum 0 and the
// count in section 0's sh_size) made it allocate until the runtime died.
// Linked executables, shared objects and debug files have tens of
// sections; cores one program header per mapping (vm.max_map_count, which
// Doris asks to raise to 2,000,000).
const (
	MaxSections = 1 << 18
	MaxProgs    = 1 << 22
	// MaxNameTable bounds the section name string table, which
	// elf.NewFile reads whole (a few hundred bytes in a linked file).
	MaxNameTable = 64 << 20
)

// NewFile is elf.NewFile for untrusted input: it first reads the ELF
// header (and section 0, which holds the counts of extended numbering) and
// refuses a file that claims more than MaxSections section headers or
// MaxProgs program headers, or a section name table larger than
// MaxNameTable, with an error naming the count or size.
func NewFile(r io.ReaderAt) (*elf.File, error) {
	if err := checkCounts(r); err != nil {
		return nil, err
	}
	return elf.NewFile(r)
}

// header is what NewFile and the truncation message read of an ELF header.
type header struct {
	order                     binary.ByteOrder
	is64                      bool
	phoff, shoff              uint64
	phentsize, phnum          uint64
	shentsize, shnum          uint64
	shstrndx                  uint64
	sizeOff, linkOff, infoOff uint64 // where sh_size, sh_link and sh_info lie in a section header
	sec0MinBytes              uint64
}

// readHeader decodes the ELF header of r; false when it is cut or of an
// unknown class or byte order.
func readHeader(r io.ReaderAt) (h header, ok bool) {
	var b [64]byte
	n, _ := r.ReadAt(b[:], 0)
	if n < 16 {
		return h, false
	}
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		h.order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		h.order = binary.BigEndian
	default:
		return h, false
	}
	o := h.order
	switch elf.Class(b[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		if n < 64 {
			return h, false
		}
		h.is64 = true
		h.phoff, h.shoff = o.Uint64(b[32:]), o.Uint64(b[40:])
		h.phentsize, h.phnum = uint64(o.Uint16(b[54:])), uint64(o.Uint16(b[56:]))
		h.shentsize, h.shnum = uint64(o.Uint16(b[58:])), uint64(o.Uint16(b[60:]))
		h.shstrndx = uint64(o.Uint16(b[62:]))
		h.sizeOff, h.linkOff, h.infoOff = 0x20, 0x28, 0x2c
	case elf.ELFCLASS32:
		if n < 52 {
			return h, false
		}
		h.phoff, h.shoff = uint64(o.Uint32(b[28:])), uint64(o.Uint32(b[32:]))
		h.phentsize, h.phnum = uint64(o.Uint16(b[42:])), uint64(o.Uint16(b[44:]))
		h.shentsize, h.shnum = uint64(o.Uint16(b[46:])), uint64(o.Uint16(b[48:]))
		h.shstrndx = uint64(o.Uint16(b[50:]))
		h.sizeOff, h.linkOff, h.infoOff = 0x14, 0x18, 0x1c
	default:
		return h, false
	}
	h.sec0MinBytes = h.infoOff + 4
	return h, true
}

// headersEnd returns where the program and section header tables of r
// end; false when the ELF header itself is cut or unknown. A file shorter
// than that was cut (a copy or download that stopped): its section
// headers, at the end, are gone.
func headersEnd(r io.ReaderAt) (uint64, bool) {
	h, ok := readHeader(r)
	if !ok {
		return 0, false
	}
	end := max(h.phoff+h.phentsize*h.phnum, h.shoff+h.shentsize*h.shnum)
	return end, end >= h.phoff && end >= h.shoff
}

// secWord reads the sh_size-sized field at off of a section header.
func (h header) secWord(b []byte) uint64 {
	if h.is64 {
		return h.order.Uint64(b)
	}
	return uint64(h.order.Uint32(b))
}

func checkCounts(r io.ReaderAt) error {
	h, ok := readHeader(r)
	if !ok {
		return nil // elf.NewFile says what is wrong
	}
	shnum, phnum, shstrndx := h.shnum, h.phnum, h.shstrndx
	if h.shoff != 0 && (shnum == 0 || phnum == 0xffff || shstrndx == 0xffff) && int64(h.shoff) >= 0 {
		// Extended numbering: the counts are in section 0.
		var s0 [64]byte
		if k, _ := r.ReadAt(s0[:], int64(h.shoff)); uint64(k) >= h.sec0MinBytes {
			if shnum == 0 {
				shnum = h.secWord(s0[h.sizeOff:])
			}
			if phnum == 0xffff {
				phnum = uint64(h.order.Uint32(s0[h.infoOff:]))
			}
			if shstrndx == 0xffff {
				shstrndx = uint64(h.order.Uint32(s0[h.linkOff:]))
			}
		}
	}
	if shnum > MaxSections {
		return fmt.Errorf("%w: claims %d section headers (more than %d)", ErrNotELF, shnum, MaxSections)
	}
	if phnum > MaxProgs {
		return fmt.Errorf("%w: claims %d program headers (more than %d)", ErrNotELF, phnum, MaxProgs)
	}
	if shstrndx != 0 && shstrndx < shnum && h.shentsize >= h.sec0MinBytes {
		var sh [64]byte
		off := h.shoff + shstrndx*h.shentsize
		if k, _ := r.ReadAt(sh[:h.sec0MinBytes], int64(off)); uint64(k) == h.sec0MinBytes && int64(off) >= 0 {
			if n := h.secWord(sh[h.sizeOff:]); n > MaxNameTable {
				return fmt.Errorf("%w: claims a section name table of %d bytes (more than %d)", ErrNotELF, n, MaxNameTable)
			}
		}
	}
	return nil
}

// HasCode reports whether f has an executable PT_LOAD segment with bytes in
// the file. A separate debug file (objcopy --only-keep-debug) has the
// build-id of its executable but no code: its code sections are NOBITS.
func HasCode(f *elf.File) bool {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Filesz > 0 {
			return true
		}
	}
	return false
}
