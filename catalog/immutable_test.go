package catalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

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
			d.Links[0] = "mutated"
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
	log, err := os.Open(filepath.Join(repoRoot, "testdata", "corpus", "starrocks", "002-trash-sweep-rowsetmetapb-mergefrom.txt"))
	require.NoError(t, err)
	defer log.Close()
	crashes, err := symbolize.ParseAll(t.Context(), log, symbolize.ScanOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, crashes)
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
