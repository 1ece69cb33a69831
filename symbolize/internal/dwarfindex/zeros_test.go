package dwarfindex

import (
	"encoding/binary"
	"runtime"
	"testing"
)

// TestZeroFilledInfo: a .debug_info that is zeros (a sparse file, padding,
// a hostile header claiming a huge section) is a run of zero-length units
// of version 0, which are skipped. Skipping one allocated a unit first: a
// 200 MB section of zeros cost 13.7 GB of allocations and 15 s before the
// first answer, 2 GB about 115 s. Skipped units allocate nothing now.
func TestZeroFilledInfo(t *testing.T) {
	d := &Data{order: binary.LittleEndian, info: make([]byte, 4<<20), abbrevs: map[abbrevKey]*dwAbbrevTable{}}
	empty := []Range{}
	d.index.Store(&empty)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := d.scanAll(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocs := after.Mallocs - before.Mallocs
	if len(d.units) != 0 {
		t.Errorf("units = %d, want none", len(d.units))
	}
	// One scan of 1M zero-length units: a few allocations for the scan
	// itself, none per unit.
	if allocs > 100 {
		t.Errorf("scanning 4 MiB of zeros made %d allocations, want none per skipped unit", allocs)
	}
}
