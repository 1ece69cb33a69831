package symbolize

import (
	"testing"
)

// BenchmarkLookup measures steady-state lookups (every compile unit
// already parsed) over the PC list of the committed test binary.
func BenchmarkLookup(b *testing.B) {
	for _, v := range []string{"o2-fp-dw5", "o2-nofp-dw4"} {
		b.Run(v, func(b *testing.B) {
			bin := openCxx(b, v, BinaryOptions{})
			pcs := testPCs(bin)
			var locs []Location
			for _, pc := range pcs {
				locs, _ = bin.AppendLookup(locs[:0], pc, LookupOptions{})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				locs, _ = bin.AppendLookup(locs[:0], pcs[i%len(pcs)], LookupOptions{})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "PCs/s")
		})
	}
}

// BenchmarkOpenFirstLookup measures the cold path: open, index, parse the
// first compile unit and answer one PC.
func BenchmarkOpenFirstLookup(b *testing.B) {
	for _, v := range []string{"o2-fp-dw5", "o2-gz", "split"} {
		b.Run(v, func(b *testing.B) {
			path := cxxBinary(b, v)
			ref, err := OpenBinary(path, BinaryOptions{})
			if err != nil {
				b.Fatal(err)
			}
			pc := symAddr(b, ref, "main") + 8
			ref.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bin, err := OpenBinary(path, BinaryOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if l, _ := bin.Lookup(pc, LookupOptions{}); len(l) == 0 {
					b.Fatal("no result")
				}
				bin.Close()
			}
		})
	}
}

// TestLookupNoAlloc checks that a warm lookup into a reused slice does not allocate.
func TestLookupNoAlloc(t *testing.T) {
	bin := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	pcs := testPCs(bin)
	locs := make([]Location, 0, 64)
	for _, pc := range pcs {
		locs, _ = bin.AppendLookup(locs[:0], pc, LookupOptions{})
	}
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		locs, _ = bin.AppendLookup(locs[:0], pcs[i%len(pcs)], LookupOptions{})
		i += 7
	})
	if allocs != 0 {
		t.Errorf("warm AppendLookup allocates %.2f times per call", allocs)
	}
}
