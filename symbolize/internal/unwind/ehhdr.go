package unwind

import (
	"debug/elf"
	"encoding/binary"
	"io"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// ehHdrIndex finds FDEs through the binary-search table of .eh_frame_hdr
// and parses only the FDE (and its CIE) that covers a PC, reading a few
// bytes from the file each time. A backend's .eh_frame holds hundreds of
// thousands of FDEs; parsing them all would cost seconds and ~100 MB for
// the few dozen a core's stacks need.
type ehHdrIndex struct {
	hdr      io.ReaderAt // .eh_frame_hdr contents
	hdrAddr  uint64
	eh       io.ReaderAt // .eh_frame contents
	ehAddr   uint64
	ehSize   uint64
	count    uint64
	cache    map[uint64]*frame.FrameDescriptionEntry // by FDE address; nil entry = unusable
	cacheMax int
}

// DWARF exception-header pointer encodings used by the table.
const (
	dwEHpeUdata4  = 0x03
	dwEHpeSdata4  = 0x0b
	dwEHpePcrel   = 0x10
	dwEHpeDatarel = 0x30
)

// newEHHdrIndex returns the index of ef's .eh_frame_hdr, or nil when the
// section is missing or uses an encoding other than the one GNU ld and
// lld write (pcrel|sdata4 pointer, udata4 count, datarel|sdata4 table).
func newEHHdrIndex(ef *elf.File) *ehHdrIndex {
	hs, es := ef.Section(".eh_frame_hdr"), ef.Section(".eh_frame")
	if hs == nil || es == nil || hs.Type == elf.SHT_NOBITS || es.Type == elf.SHT_NOBITS || hs.Size < 12 || es.Addr == 0 {
		return nil
	}
	if hs.Flags&elf.SHF_COMPRESSED != 0 || es.Flags&elf.SHF_COMPRESSED != 0 {
		return nil
	}
	var h [12]byte
	if _, err := hs.ReadAt(h[:], 0); err != nil {
		return nil
	}
	if h[0] != 1 || h[1] != dwEHpePcrel|dwEHpeSdata4 || h[2] != dwEHpeUdata4 || h[3] != dwEHpeDatarel|dwEHpeSdata4 {
		return nil
	}
	le := binary.LittleEndian
	ehPtr := uint64(int64(hs.Addr) + 4 + int64(int32(le.Uint32(h[4:]))))
	count := uint64(le.Uint32(h[8:]))
	if ehPtr != es.Addr || 12+8*count > hs.Size {
		return nil
	}
	return &ehHdrIndex{hdr: hs, hdrAddr: hs.Addr, eh: es, ehAddr: es.Addr, ehSize: es.Size, count: count,
		cache: map[uint64]*frame.FrameDescriptionEntry{}, cacheMax: 1 << 14}
}

// entry reads table entry i: (initial location, FDE address).
func (x *ehHdrIndex) entry(i uint64) (uint64, uint64, bool) {
	var b [8]byte
	if _, err := x.hdr.ReadAt(b[:], int64(12+8*i)); err != nil {
		return 0, 0, false
	}
	le := binary.LittleEndian
	return uint64(int64(x.hdrAddr) + int64(int32(le.Uint32(b[0:])))), uint64(int64(x.hdrAddr) + int64(int32(le.Uint32(b[4:])))), true
}

// fdeFor returns the FDE covering pc (a link-time address), or nil.
func (x *ehHdrIndex) fdeFor(pc uint64) *frame.FrameDescriptionEntry {
	lo, hi := uint64(0), x.count // find the last entry with loc <= pc
	for lo < hi {
		mid := lo + (hi-lo)/2
		loc, _, ok := x.entry(mid)
		if !ok {
			return nil
		}
		if loc <= pc {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return nil
	}
	_, fdeAddr, ok := x.entry(lo - 1)
	if !ok {
		return nil
	}
	fde, seen := x.cache[fdeAddr]
	if !seen {
		fde = x.parseAt(fdeAddr)
		if len(x.cache) >= x.cacheMax {
			clear(x.cache)
		}
		x.cache[fdeAddr] = fde
	}
	if fde == nil || !fde.Cover(pc) {
		return nil
	}
	return fde
}

const maxCFIEntry = 1 << 16

// readEntry reads the CIE or FDE at address a of .eh_frame (length word included).
func (x *ehHdrIndex) readEntry(a uint64) ([]byte, bool) {
	if a < x.ehAddr || a-x.ehAddr+4 > x.ehSize {
		return nil, false
	}
	off := int64(a - x.ehAddr)
	var l [4]byte
	if _, err := x.eh.ReadAt(l[:], off); err != nil {
		return nil, false
	}
	n := uint64(binary.LittleEndian.Uint32(l[:]))
	if n < 4 || n > maxCFIEntry || uint64(off)+4+n > x.ehSize { // 0xffffffff (64-bit DWARF) lands here too
		return nil, false
	}
	b := make([]byte, 4+n)
	if _, err := x.eh.ReadAt(b, off); err != nil {
		return nil, false
	}
	return b, true
}

// parseAt parses the FDE at fdeAddr with its CIE by handing delve's parser
// a two-entry .eh_frame: the CIE, then the FDE with its CIE pointer
// rewritten, placed at a base address that keeps the FDE's pc-relative
// fields right.
func (x *ehHdrIndex) parseAt(fdeAddr uint64) *frame.FrameDescriptionEntry {
	fdeB, ok := x.readEntry(fdeAddr)
	if !ok || len(fdeB) < 8 {
		return nil
	}
	ciePtr := uint64(binary.LittleEndian.Uint32(fdeB[4:]))
	if ciePtr == 0 || ciePtr > fdeAddr+4 {
		return nil // a CIE, not an FDE
	}
	cieB, ok := x.readEntry(fdeAddr + 4 - ciePtr)
	if !ok || len(cieB) < 8 || binary.LittleEndian.Uint32(cieB[4:]) != 0 {
		return nil
	}
	buf := make([]byte, 0, len(cieB)+len(fdeB))
	buf = append(buf, cieB...)
	buf = append(buf, fdeB...)
	binary.LittleEndian.PutUint32(buf[len(cieB)+4:], uint32(len(cieB)+4))
	base := fdeAddr - uint64(len(cieB))
	if base == 0 {
		return nil
	}
	fdes, err := parseFDEs(buf, base)
	if err != nil || len(fdes) != 1 {
		return nil
	}
	return fdes[0]
}
