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
)

// NewFile is elf.NewFile for untrusted input: it first reads the ELF
// header (and section 0, which holds the counts of extended numbering) and
// refuses a file that claims more than MaxSections section headers or
// MaxProgs program headers, with an error naming the count.
func NewFile(r io.ReaderAt) (*elf.File, error) {
	if err := checkCounts(r); err != nil {
		return nil, err
	}
	return elf.NewFile(r)
}

// header is what NewFile and the truncation message read of an ELF header.
type header struct {
	order                          binary.ByteOrder
	is64                           bool
	phoff, shoff                   uint64
	phentsize, phnum               uint64
	shentsize, shnum               uint64
	sizeOff, infoOff, sec0MinBytes uint64 // where sh_size and sh_info lie in a section header
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
		h.sizeOff, h.infoOff = 0x20, 0x2c
	case elf.ELFCLASS32:
		if n < 52 {
			return h, false
		}
		h.phoff, h.shoff = uint64(o.Uint32(b[28:])), uint64(o.Uint32(b[32:]))
		h.phentsize, h.phnum = uint64(o.Uint16(b[42:])), uint64(o.Uint16(b[44:]))
		h.shentsize, h.shnum = uint64(o.Uint16(b[46:])), uint64(o.Uint16(b[48:]))
		h.sizeOff, h.infoOff = 0x14, 0x1c
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

func checkCounts(r io.ReaderAt) error {
	h, ok := readHeader(r)
	if !ok {
		return nil // elf.NewFile says what is wrong
	}
	shnum, phnum := h.shnum, h.phnum
	if h.shoff != 0 && (shnum == 0 || phnum == 0xffff) && int64(h.shoff) >= 0 {
		// Extended numbering: the counts are in section 0.
		var s0 [64]byte
		if k, _ := r.ReadAt(s0[:], int64(h.shoff)); uint64(k) >= h.sec0MinBytes {
			if shnum == 0 {
				if h.is64 {
					shnum = h.order.Uint64(s0[h.sizeOff:])
				} else {
					shnum = uint64(h.order.Uint32(s0[h.sizeOff:]))
				}
			}
			if phnum == 0xffff {
				phnum = uint64(h.order.Uint32(s0[h.infoOff:]))
			}
		}
	}
	if shnum > MaxSections {
		return fmt.Errorf("%w: claims %d section headers (more than %d)", ErrNotELF, shnum, MaxSections)
	}
	if phnum > MaxProgs {
		return fmt.Errorf("%w: claims %d program headers (more than %d)", ErrNotELF, phnum, MaxProgs)
	}
	return nil
}
