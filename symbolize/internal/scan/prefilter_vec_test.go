package scan

import (
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPairTablesCover checks that the vector filter flags every position
// scanFrom's exact test may find something at: a chosen byte followed by
// a byte one of its literals has after it, or a byte that weighs.
func TestPairTablesCover(t *testing.T) {
	pf := anchored
	for c := range 256 {
		for d := range 256 {
			need := binaryWeight[c] != 0 || pf.tab[c]&pfCandByte != 0 && pf.next[c][d>>6]&(1<<(d&63)) != 0
			if need {
				require.Truef(t, pf.vec.vecFlags(byte(c), byte(d)), "%q then %q not flagged", c, d)
			}
		}
	}
	// The filter is worth its cost only if it lets most text through:
	// of the pairs of common log bytes, few are flagged.
	const common = " e0aornit1:dc2s.3lp45-m/ghub_697,8x]fSjkyCIGBFv[NP"
	flagged := 0
	for i := 0; i < len(common); i++ {
		for j := 0; j < len(common); j++ {
			if pf.vec.vecFlags(common[i], common[j]) {
				flagged++
			}
		}
	}
	require.Less(t, flagged, len(common)*len(common)/20, "common pairs flagged")
}

// withoutVector returns a copy of pf that scans with the Go loop alone.
func withoutVector(pf *prefilter) *prefilter {
	c := *pf
	c.vector = false
	return &c
}

// vecInputs are strings for the vector-scan tests: log text with the
// literals and control bytes in it at every offset around a block
// boundary, random bytes, and lines of the benchmark kinds.
func vecInputs() []string {
	r := rand.New(rand.NewPCG(11, 12))
	var in []string
	base := strings.Repeat("2025-03-03 10:15:09,145 INFO [pool-3-thread-1] org.apache.doris ", 3)
	var specials []string
	for _, l := range anchored.lits {
		specials = append(specials, l.lit)
	}
	specials = append(specials, "\x00", "\x01", "\x7f", "\t", "\x1b", "\r", "\xe6", "@", "#")
	for _, sp := range specials {
		for off := 0; off < 70; off++ {
			s := base[:off] + sp + base[off:]
			in = append(in, s, s[:min(len(s), off+len(sp))], sp+base[:off])
		}
	}
	for range 3000 {
		n := r.IntN(300)
		b := make([]byte, n)
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = byte(r.Uint32())
			default:
				b[i] = base[r.IntN(len(base))]
			}
		}
		in = append(in, string(b))
	}
	for _, k := range lineKinds {
		var data []byte
		if k.gen != nil {
			data = k.gen(64 << 10)
		} else {
			data = kindInput(k.format, 64<<10)
		}
		in = append(in, strings.Split(string(data), "\n")...)
	}
	return in
}

// TestVectorScanSame checks that scanFrom gives the same anchors with the
// vector filter as with the Go loop alone, stopping early or not.
func TestVectorScanSame(t *testing.T) {
	if !anchored.vector {
		t.Skip("no vector filter on this CPU")
	}
	ref := withoutVector(anchored)
	for _, s := range vecInputs() {
		require.Equal(t, ref.scanFrom(s, true), anchored.scanFrom(s, true), "%q", s)
		require.Equal(t, ref.scanFrom(s, false), anchored.scanFrom(s, false), "%q", s)
	}
}

// vecFlagged returns the positions of s pairScanAll flags, calling it as
// vectorScan does, and where Go goes on.
func vecFlagged(t *testing.T, s string, tb *pairTables) (flagged []int, end int) {
	var out [pairOut]uint64
	i := 0
	for {
		n, next := pairScanAll(s[i:], tb, &out)
		for _, e := range out[:n] {
			m := uint32(e)
			require.NotZero(t, m)
			for ; m != 0; m &= m - 1 {
				flagged = append(flagged, i+int(e>>32)+bits.TrailingZeros32(m))
			}
		}
		i += next
		if n < pairOut {
			return flagged, i
		}
	}
}

// TestPairScanMask checks the assembly against vecFlags, position by
// position: it flags exactly the positions vecFlags flags, once each and
// in order, up to the last byte (strings of a block and more; or less than
// a block before it, left to Go) or none.
func TestPairScanMask(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	tb := &anchored.vec
	inputs := vecInputs()
	for n := range 200 { // every length around the block size, all flagged
		inputs = append(inputs, strings.Repeat("\x01", n), strings.Repeat("a", n))
	}
	for _, s := range inputs {
		got, end := vecFlagged(t, s, tb)
		if len(s) < pairScanMin {
			require.Zero(t, end)
			require.Empty(t, got)
			continue
		}
		if end != len(s)-1 {
			// out was full after the last whole block: Go does the rest.
			require.Less(t, len(s)-end, pairScanMin, "%q", s)
		}
		var want []int
		for j := 0; j < end; j++ {
			if tb.vecFlags(s[j], s[j+1]) {
				want = append(want, j)
			}
		}
		require.Equal(t, want, got, "%q", s)
	}
}

// FuzzVectorScan compares scanFrom with and without the vector filter.
func FuzzVectorScan(f *testing.F) {
	for _, s := range vecInputs()[:200] {
		f.Add(s)
	}
	ref := withoutVector(anchored)
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, ref.scanFrom(s, true), anchored.scanFrom(s, true))
		require.Equal(t, ref.scanFrom(s, false), anchored.scanFrom(s, false))
	})
}
