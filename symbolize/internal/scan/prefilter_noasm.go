//go:build !amd64 || purego

package scan

// pairScanAll is the vector pair filter (prefilter_amd64.s); without it
// the Go loop of scanFrom does the whole scan.
func pairScanAll(s string, t *pairTables, out *[pairOut]uint64) (n, next int) { return 0, 0 }

// hasAVX2 is false: there is no vector filter on this platform.
const hasAVX2 = false

// junkScanAVX2 is not called without AVX2 (hasAVX2 is false).
func junkScanAVX2(b []byte, c *junkConstTable, st *junkStats) int { return 0 }

// zeroBlockAVX2 is not called without AVX2 (hasAVX2 is false).
func zeroBlockAVX2(b []byte) int { return 0 }

// countRepeatsAVX2 is not called without AVX2 (hasAVX2 is false).
func countRepeatsAVX2(buf []byte, vp *vecPattern) int { return 0 }

// newlineBitsAVX2 is not called without AVX2 (hasAVX2 is false).
func newlineBitsAVX2(b []byte, bits []uint64) {}
