//go:build amd64 && !purego

package scan

// pairScanAll tests the positions of s that have a byte after them with
// the vector pair filter (prefilter_vec.go), 32 at a time, the last ones
// in a block that overlaps the one before (its positions already tested
// masked out). Each block with a flagged position gives an entry of out,
// its offset<<32 | the mask of its flagged positions, in order; n are the
// entries written. next is where Go goes on: the last byte of s when all
// was tested, the block after the last entry when out is full, 0 when s is
// shorter than pairScanMin. It needs AVX2 (hasAVX2).
//
//go:noescape
func pairScanAll(s string, t *pairTables, out *[pairOut]uint64) (n, next int)

// cpuid returns the registers CPUID sets for leaf and sub-leaf sub.
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// xgetbv0 returns the XCR0 register (the register states the OS saves).
func xgetbv0() (a, d uint32)

// hasAVX2 says whether the CPU and the OS support AVX2 (and POPCNT, which
// every AVX2 CPU has; junkScanAVX2 uses it), read once.
var hasAVX2 = func() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const popcnt, osxsave, avx = 1 << 23, 1 << 27, 1 << 28
	if c1&popcnt == 0 || c1&osxsave == 0 || c1&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 { // XMM and YMM state
		return false
	}
	_, b7, _, _ := cpuid(7, 0)
	return b7&(1<<5) != 0
}()

// junkScanAVX2 is junkScan over the 32-byte blocks of b while a block and
// three bytes fit (junkscan.go), adding to st (nl and nul -1, the rest 0
// when called); it stops after the block holding the first newline (st.nl
// set) and returns the offset of the first byte it did not look at.
//
//go:noescape
func junkScanAVX2(b []byte, c *junkConstTable, st *junkStats) int

// zeroBlockAVX2 returns the offset of the first 32-byte block of b (at
// 0, 32, 64, …) with an eight-byte word of NULs at 0, 8, 16 or 24 in it,
// or the end of the last whole block (zeroWord). It needs AVX2.
//
//go:noescape
func zeroBlockAVX2(b []byte) int

// countRepeatsAVX2 is countRepeats for a line of 32 bytes or more,
// prepared in vp, 32 bytes at a time: the same lines, the same stop
// (repeatWords). It needs AVX2.
//
//go:noescape
func countRepeatsAVX2(buf []byte, vp *vecPattern) int

// newlineBitsAVX2 sets bits[k], for each whole 64-byte chunk k of b (at
// most len(bits) of them), to the mask of its newlines: bit i where
// b[64k+i] is '\n'. It needs AVX2.
//
//go:noescape
func newlineBitsAVX2(b []byte, bits []uint64)
