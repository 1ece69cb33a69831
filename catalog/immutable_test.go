package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

const trashSweepLog = `*** Aborted at 1652960713 (unix time) try "date -d @1652960713" if you are using GNU date ***
PC: @          0x41f9851 starrocks::RowsetMetaPB::MergeFrom()
*** SIGSEGV (@0x8) received by PID 12079 (TID 0x7f5335458700) from PID 8; stack trace: ***
    @          0x4bf3b52 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7f540e9ee630 (unknown)
    @          0x41f9851 starrocks::RowsetMetaPB::MergeFrom()
    @          0x386b957 starrocks::TabletMeta::to_meta_pb()
    @          0x386bdc8 starrocks::TabletMeta::_save_meta()
    @          0x384d263 starrocks::Tablet::delete_expired_stale_rowset()
    @          0x3860020 starrocks::TabletManager::start_trash_sweep()
`

// A *Catalog is documented immutable and safe for concurrent use, but
// Defects, Defect, Rules, every Verdict's DefectRef and the Files given to
// New and Merge shared their slices with it: writing into a returned
// defect's links (or a file's, after New) changed the catalog and every
// later verdict, and raced with concurrent classifications.
func TestCatalogNotMutableThroughResults(t *testing.T) {
	const id = "SR-6725-trash-sweep-rowsetmetapb-mergefrom"
	files, err := DefaultFiles()
	require.NoError(t, err)
	cat, err := New(files...)
	require.NoError(t, err)
	want, ok := cat.Defect(id)
	require.True(t, ok)
	wantLink, wantRule := want.Links[0], cat.Rules()[0].Frames[0]

	for _, d := range cat.Defects() {
		if d.ID == id {
			d.Links[0], d.Affected = "mutated", append(d.Affected[:0:0], "x")
			d.Match[0].Near[0] = "mutated"
		}
	}
	d, _ := cat.Defect(id)
	d.Links[0] = "mutated"
	cat.Rules()[0].Frames[0] = "mutated"
	for _, f := range files { // the files the catalog was built from
		for i := range f.Defects {
			if f.Defects[i].ID == id {
				f.Defects[i].Links[0] = "mutated"
			}
		}
		if len(f.Rules) > 0 {
			f.Rules[0].Frames[0] = "mutated"
		}
	}
	crashes, err := symbolize.ParseAll(t.Context(), strings.NewReader(trashSweepLog), symbolize.ScanOptions{})
	require.NoError(t, err)
	c := crashes[0]
	v := cat.Classify(c, signature.Generate(c))
	require.NotNil(t, v.Defect)
	require.Equal(t, id, v.Defect.ID)
	v.Defect.Links[0] = "mutated"

	got, _ := cat.Defect(id)
	assert.Equal(t, wantLink, got.Links[0])
	assert.NotEqual(t, "mutated", got.Match[0].Near[0])
	assert.Equal(t, wantRule, cat.Rules()[0].Frames[0])
	v2 := cat.Classify(c, signature.Generate(c))
	assert.Equal(t, wantLink, v2.Defect.Links[0])
}
