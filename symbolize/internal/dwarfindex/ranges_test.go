package dwarfindex

import (
	"encoding/binary"
	"testing"
)

// TestGNURangesBaseSkeleton: DW_AT_GNU_ranges_base (GCC's DWARF 4
// -gsplit-dwarf) applies to the split unit's DW_AT_ranges, not to the
// skeleton's own, which is a plain .debug_ranges offset (LLVM ignores it
// there too). The reader used to add it, so a second skeleton unit, whose
// base equals its own ranges offset, got no ranges at all.
func TestGNURangesBaseSkeleton(t *testing.T) {
	le := binary.LittleEndian
	// abbrev 1: compile_unit, no children, ranges sec_offset, GNU_ranges_base sec_offset, stmt_list absent.
	abbrev := []byte{1, dwTagCompileUnit, 0, dwAtRanges, dwFormSecOffset, 0xb2, 0x42, dwFormSecOffset, 0, 0, 0}
	body := []byte{4, 0, 0, 0, 0, 0, 8, 1} // version 4, abbrev offset 0, address size 8, abbrev code 1
	body = le.AppendUint32(body, 0x20)     // DW_AT_ranges
	body = le.AppendUint32(body, 0x20)     // DW_AT_GNU_ranges_base
	info := le.AppendUint32(nil, uint32(len(body)))
	info = append(info, body...)
	ranges := make([]byte, 0x20)
	ranges = le.AppendUint64(ranges, 0x1000)
	ranges = le.AppendUint64(ranges, 0x1100)
	ranges = append(ranges, make([]byte, 16)...)
	d := &Data{order: le, info: info, abbrev: abbrev, ranges: ranges, abbrevs: map[abbrevKey]*dwAbbrevTable{}}
	u, _, err := d.parseUnitHeader(0)
	if err != nil || u == nil {
		t.Fatal(u, err)
	}
	if err := d.prepare(u); err != nil {
		t.Fatal(err)
	}
	got := d.cuDIERanges(u)
	if len(got) != 1 || got[0] != [2]uint64{0x1000, 0x1100} {
		t.Errorf("skeleton ranges = %#x, want [[0x1000 0x1100]]", got)
	}
	if u.gnuRngBase != 0x20 {
		t.Errorf("gnuRngBase = %#x, want 0x20 (kept for the split unit)", u.gnuRngBase)
	}
}
