package symbolize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawName is the name a raw-PC lookup (OpenBinary + Lookup) gives the
// outermost function at pc, without its ELF symbol version, as the core
// reader prints it; "" when the lookup knows nothing.
func rawName(t *testing.T, b *Binary, pc uint64, exact bool) string {
	t.Helper()
	locs, err := b.Lookup(pc, LookupOptions{Exact: exact, NoDemangle: true})
	require.NoError(t, err)
	if len(locs) == 0 {
		return ""
	}
	return stripSymVersion(locs[len(locs)-1].Linkage)
}

// TestCoreAndRawPCNamesAgree: a core frame and a raw-PC lookup of the same
// address in the same file give the same function name, in modules with
// DWARF (the executable) and without (libc, ld.so: symbol tables only).
// The two paths used to read the symbol tables with their own rules: the
// core reader, among aliases of one size, the public name (read), OpenBinary
// the last in the table (__read); 20 nanosleep frames of the committed cores
// came out __nanosleep by raw PC. Both now follow elfimage.LoadSymbols.
func TestCoreAndRawPCNamesAgree(t *testing.T) {
	checked := map[string]int{}
	for _, cc := range coreCases {
		c := openTestCore(t, t.TempDir(), cc.name, "bin/"+cc.bin+".gz")
		bins := map[*CoreModule]*Binary{}
		for _, m := range c.Modules {
			if m.IsVDSO || m.File == "" {
				continue
			}
			b, err := OpenBinary(m.File, BinaryOptions{})
			require.NoError(t, err)
			defer b.Close()
			bins[m] = b
		}
		for ti, th := range c.Threads {
			frames := c.ThreadFrames(ti)
			for _, f := range th.Frames {
				b := bins[f.Module]
				if b == nil || f.SignalTrampoline {
					continue
				}
				// the core's outermost frame at this PC
				var core string
				for _, fr := range frames {
					if fr.PC == f.PC && !fr.Inlined {
						core = fr.Function
					}
				}
				raw := rawName(t, b, uint64(f.PC-f.Module.Bias), f.Exact)
				assert.Equal(t, raw, core, "%s thread %d pc %s (%s+%#x)", cc.name, ti, f.PC, f.Module.Name(), uint64(f.PC-f.Module.Bias))
				checked[f.Module.Name()]++
			}
		}
	}
	t.Logf("frames checked per module: %v", checked)
	require.NotZero(t, checked["libc.so.6"])
	require.NotZero(t, checked["sim_fp"])
}
