package elfimage

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSortByAddr checks the radix sort used for the symbol table and
// the .debug_aranges index against a stable comparison sort: same order,
// ties kept in input order, on keys that vary in few or many bytes.
func TestRadixSortByAddr(t *testing.T) {
	type rec struct {
		key uint64
		seq int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() uint64{
		"pie-text":   func() uint64 { return 0x1000 + rng.Uint64N(20<<20) },     // 3 bytes vary
		"non-pie":    func() uint64 { return 0x400000 + rng.Uint64N(1<<30) },    // 4 bytes
		"full-range": func() uint64 { return rng.Uint64() },                     // 8 bytes
		"many-ties":  func() uint64 { return 0x7f0000000000 + rng.Uint64N(16) }, // ties
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, 17, 1000, 70000} {
			xs := make([]rec, n)
			for i := range xs {
				xs[i] = rec{gen(), i}
			}
			want := slices.Clone(xs)
			slices.SortStableFunc(want, func(a, b rec) int { return cmp.Compare(a.key, b.key) })
			got := SortByAddr(slices.Clone(xs), func(r *rec) uint64 { return r.key })
			if !slices.Equal(got, want) {
				t.Errorf("%s, n=%d: radix order differs from a stable sort", name, n)
			}
			// Already sorted input comes back as is.
			again := SortByAddr(want, func(r *rec) uint64 { return r.key })
			if !slices.Equal(again, want) {
				t.Errorf("%s, n=%d: sorted input reordered", name, n)
			}
		}
	}
}
