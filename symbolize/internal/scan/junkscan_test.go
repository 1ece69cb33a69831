package scan

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// junkScanInputs are buffers for the junkScan tests: random bytes, NUL
// runs of every length around 8 at every offset around a block, `*** `
// and newlines across block boundaries, text.
func junkScanInputs() [][]byte {
	r := rand.New(rand.NewPCG(21, 22))
	var in [][]byte
	text := strings.Repeat("2025-03-03 10:15:09,145 INFO [pool-3] org.apache ", 4)
	for _, sp := range []string{"\x00", "*** ", "** ", "\n", "\x01", "\r", "\t", "\x1b", "\x7f", "\f"} {
		for run := 1; run <= 10; run++ {
			for off := 0; off < 72; off++ {
				s := text[:off] + strings.Repeat(sp, run) + text[off:]
				in = append(in, []byte(s), []byte(s[:min(len(s), off+run*len(sp)+3)]))
			}
		}
	}
	for range 5000 {
		b := make([]byte, r.IntN(400))
		mode := r.IntN(3)
		for i := range b {
			switch {
			case mode == 0:
				b[i] = byte(r.Uint32())
			case r.IntN(10) == 0:
				const special = "\x00\x00\x00*  \n\x01\x7f"
				b[i] = special[r.IntN(len(special))]
			default:
				b[i] = text[r.IntN(len(text))]
			}
		}
		in = append(in, b)
	}
	return in
}

// TestJunkScanSame checks junkScan (with the vector pass where the CPU
// has it) against the byte loop, on every input and every suffix start
// of the first ones.
func TestJunkScanSame(t *testing.T) {
	for n, b := range junkScanInputs() {
		want := junkScanFrom(b, 0, junkStats{nl: -1, nul: -1})
		require.Equal(t, want, junkScan(b), "%q", b)
		if n < 500 {
			for i := 1; i < len(b); i += 7 {
				require.Equal(t, junkScanFrom(b[i:], 0, junkStats{nl: -1, nul: -1}), junkScan(b[i:]), "%q", b[i:])
			}
		}
	}
}

// TestJunkScanMeaning checks junkScanFrom against what it stands for:
// the first newline, the first NUL before it, the weight, holes and `*** `.
func TestJunkScanMeaning(t *testing.T) {
	for _, b := range junkScanInputs() {
		st := junkScan(b)
		line := b
		if nl := strings.IndexByte(string(b), '\n'); nl >= 0 {
			line = b[:nl]
			require.Equal(t, nl, st.nl)
		} else {
			require.Equal(t, -1, st.nl)
		}
		require.Equal(t, strings.IndexByte(string(line), 0), st.nul)
		ctl := 0
		for _, c := range line {
			if binaryWeight[c] != 0 {
				ctl++
			}
		}
		require.Equal(t, ctl, st.ctl)
		h, _ := nextHole(line, 0)
		require.Equal(t, h >= 0, st.hole != 0, "%q", line)
		// A `*** ` starts in the line (it holds no newline, so it ends
		// there too when the buffer holds it).
		require.Equal(t, strings.Contains(string(b[:min(len(b), len(line)+3)]), "*** "), st.star != 0, "%q", b)
	}
}

// FuzzJunkScan compares junkScan with the byte loop.
func FuzzJunkScan(f *testing.F) {
	for _, b := range junkScanInputs()[:300] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		require.Equal(t, junkScanFrom(b, 0, junkStats{nl: -1, nul: -1}), junkScan(b))
	})
}

// TestJunkConstsWeigh: the nibble tables of junkScanAVX2 say of every
// byte what binaryWeight says.
func TestJunkConstsWeigh(t *testing.T) {
	for c := range 256 {
		got := junkConsts.lo[c&15]&junkConsts.hi[c>>4] != 0
		require.Equal(t, binaryWeight[c] != 0, got, "byte %#x", c)
		require.Equal(t, junkConsts.lo[c&15], junkConsts.lo[16+c&15], "lanes")
		require.Equal(t, junkConsts.hi[c>>4], junkConsts.hi[16+c>>4], "lanes")
	}
}

// TestJunkConstsLayout: the offsets junkScanAVX2 reads junkConstTable by
// (prefilter_amd64.s, J_*) are the struct's.
func TestJunkConstsLayout(t *testing.T) {
	var c junkConstTable
	require.Equal(t, []uintptr{0, 32, 64, 96, 128, 160}, []uintptr{
		unsafe.Offsetof(c.nl), unsafe.Offsetof(c.star), unsafe.Offsetof(c.blank),
		unsafe.Offsetof(c.lo), unsafe.Offsetof(c.hi), unsafe.Offsetof(c.low4),
	}, "J_NL, J_STAR, J_BLANK, J_LO, J_HI, J_LOW4")
}
