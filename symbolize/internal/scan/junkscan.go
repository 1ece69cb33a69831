package scan

// Junk lines at memory speed (issue 11). skipJunk decides for each line of
// the read buffer whether the full path would skip it as junk; before,
// that took a newline search, a NUL search, a hole search from the first
// NUL, a weight loop or a `*** ` search per line: five passes and calls
// over the same bytes. junkScan makes one pass that finds the newline and
// gathers what junkLine needs of the bytes before it; on amd64 with AVX2
// 32 bytes at a time (junkScanAVX2), the end in Go.

// junkStats is what junkScan finds in b up to its first newline.
type junkStats struct {
	nl   int // index of the first newline, or -1
	nul  int // index of the first NUL before it, or -1
	ctl  int // bytes before it that weigh (binaryWeight), NULs included
	hole int // 1 when a run of minHole NULs is before it
	star int // 1 when `*** ` starts before it
}

// junkScan returns the junkStats of b.
func junkScan(b []byte) junkStats {
	st := junkStats{nl: -1, nul: -1}
	i := 0
	if hasAVX2 && len(b) >= junkScanMin {
		if i = junkScanAVX2(b, &junkConsts, &st); st.nl >= 0 {
			return st
		}
	}
	return junkScanFrom(b, i, st)
}

// junkScanMin is the shortest b junkScanAVX2 is called for: a block and
// the three bytes a `*** ` starting in it may need after it.
const junkScanMin = 35

// junkScanFrom is junkScan in Go, from b[i] on, with st gathered over
// b[:i] (which holds no newline).
func junkScanFrom(b []byte, i int, st junkStats) junkStats {
	run := 0 // NULs right before i
	for j := i - 1; j >= 0 && run < minHole && b[j] == 0; j-- {
		run++
	}
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			st.nl = i
			return st
		case c == 0:
			if st.nul < 0 {
				st.nul = i
			}
			if run++; run >= minHole {
				st.hole = 1
			}
		default:
			run = 0
			if c == '*' && i+4 <= len(b) && string(b[i:i+4]) == "*** " {
				st.star = 1
			}
		}
		if binaryWeight[c] != 0 {
			st.ctl++
		}
	}
	return st
}

// junkConstTable holds the byte constants of junkScanAVX2, each 32 times.
type junkConstTable struct {
	nl, star, blank [32]byte
	// The bytes that weigh (binaryWeight) by nibble: c weighs when
	// lo[c&15]&hi[c>>4] != 0 (a class bit each for 0x0_, 0x1_ and 0x7f),
	// each table twice (VPSHUFB looks up within 16-byte lanes); low4 is
	// 0x0f 32 times.
	lo, hi, low4 [32]byte
}

var junkConsts = func() (t junkConstTable) {
	for i := range 32 {
		t.nl[i], t.star[i], t.blank[i] = '\n', '*', ' '
		l := byte(i % 16)
		if l != '\t' && l != '\n' && l != '\f' && l != '\r' {
			t.lo[i] |= 1 // 0x00-0x0f but tab, newline, FF, CR
		}
		if l != 0x1b&15 {
			t.lo[i] |= 2 // 0x10-0x1f but ESC
		}
		if l == 0x7f&15 {
			t.lo[i] |= 4 // DEL
		}
		t.hi[i] = [16]byte{0: 1, 1: 2, 7: 4}[l]
		t.low4[i] = 0x0f
	}
	return t
}()
