package dwarfindex

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestTooManyUnits: a .debug_info of more units than maxUnits (a hostile
// section of tiny units, which a compressed section can hold a
// thousandfold) is indexed up to the bound and then refused with
// ErrBadDWARF, instead of costing about 250 bytes per 11-byte unit without
// bound (2.2 GB for a 0.9 MB file).
func TestTooManyUnits(t *testing.T) {
	const n = 100
	var info []byte
	for range n {
		// DWARF 4 unit: length 7, version 4, abbrev offset 0, address size 8.
		info = append(info, 7, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8)
	}
	d := &Data{order: binary.LittleEndian, info: info, abbrevs: map[abbrevKey]*dwAbbrevTable{}, maxUnits: 40}
	empty := []Range{}
	d.index.Store(&empty)
	err := d.scanAll()
	require.ErrorIs(t, err, elfimage.ErrBadDWARF)
	assert.Contains(t, err.Error(), "more than 40 units")
	assert.Len(t, d.units, 40)

	d = &Data{order: binary.LittleEndian, info: info, abbrevs: map[abbrevKey]*dwAbbrevTable{}, maxUnits: n}
	d.index.Store(&empty)
	require.NoError(t, d.scanAll())
	assert.Len(t, d.units, n)
}
