package scan

import "math/bits"

// The vector pair filter. scanFrom's pair test (a chosen byte followed by
// a byte that may follow it in one of its literals, or a byte that weighs)
// costs about 1.3 cycles a byte in Go, nearly half of what the scanner
// spends on a JVM line no rule wants. Where the CPU has AVX2 (amd64, not
// built with the purego tag), pairScanAll makes the same test 32 positions
// at a time the way Hyperscan's "shufti" does: a byte's low and high
// nibbles index two 16-byte tables (VPSHUFB), whose AND is the set of
// buckets the byte belongs to; the same for the next byte with the
// follower tables; a position is flagged when the two share a bucket.
// Control bytes are flagged by comparisons (every byte up to 0x1f but tab
// and ESC, and 0x7f: a superset of the bytes binaryWeight counts).
//
// A bucket is a rectangle of bytes (low nibbles × high nibbles) that holds
// chosen bytes, and a rectangle that holds every byte that may follow one
// of them. There are eight buckets, so chosen bytes share them
// (buildPairTables merges the pair whose merged rectangles let the fewest
// common bytes through, by logByteRank). A rectangle holds more bytes than
// asked, never fewer: the vector test flags every position the Go test
// flags and some more, and scanFrom looks at the flagged positions exactly
// as before, in order. TestPairTablesCover and TestVectorScanSame check
// both; FuzzPrefilter runs the scanner with the vector test against the
// reference without the prefilter.

// pairTables are the tables of pairScanAll, laid out for the assembly: each
// 16-byte table twice (VPSHUFB looks up within 16-byte lanes), then the
// constants.
type pairTables struct {
	// bucket bits by low and high nibble, buckets 0-7 then 8-15
	loA, hiA, loB, hiB     [32]byte
	loA2, hiA2, loB2, hiB2 [32]byte
	nib, ctlMax, tab       [32]byte // 0x0f, 0x1f, '\t'
	esc, del               [32]byte // 0x1b, 0x7f
}

// pairBucket is a bucket being built: the chosen bytes and their
// followers, as byte sets.
type pairBucket struct{ a, b byteSet }

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s byteSet) union(t byteSet) byteSet {
	return byteSet{s[0] | t[0], s[1] | t[1], s[2] | t[2], s[3] | t[3]}
}

// nibbles returns the low and high nibbles of the bytes of s, as bit sets.
func (s byteSet) nibbles() (lo, hi uint16) {
	for c := range 256 {
		if s.has(byte(c)) {
			lo |= 1 << (c & 15)
			hi |= 1 << (c >> 4)
		}
	}
	return lo, hi
}

// rectWeight is how common the bytes of the rectangle around s are in log
// text (logByteRank: the k-th most common byte weighs 1/(k+4)).
func (s byteSet) rectWeight() float64 {
	lo, hi := s.nibbles()
	w := 0.0
	for c := range 256 {
		if lo&(1<<(c&15)) != 0 && hi&(1<<(c>>4)) != 0 {
			w += 1 / float64(byteRank(byte(c))+4)
		}
	}
	return w
}

func (b pairBucket) cost() float64 { return b.a.rectWeight() * b.b.rectWeight() }

// pairBuckets is the number of buckets of the vector filter (bits of two
// bytes).
const pairBuckets = 16

// buildPairTables fills pf.vec from the chosen bytes (tab) and their
// followers (next).
func (pf *prefilter) buildPairTables() {
	var bs []pairBucket
	for c := range 256 {
		if pf.tab[c]&pfCandByte != 0 {
			var b pairBucket
			b.a.add(byte(c))
			b.b = pf.next[c]
			bs = append(bs, b)
		}
	}
	for len(bs) > pairBuckets {
		bi, bj, best := 0, 1, 0.0
		for i := range bs {
			for j := i + 1; j < len(bs); j++ {
				m := pairBucket{bs[i].a.union(bs[j].a), bs[i].b.union(bs[j].b)}
				if d := m.cost() - bs[i].cost() - bs[j].cost(); i == 0 && j == 1 || d < best {
					bi, bj, best = i, j, d
				}
			}
		}
		bs[bi] = pairBucket{bs[bi].a.union(bs[bj].a), bs[bi].b.union(bs[bj].b)}
		bs = append(bs[:bj], bs[bj+1:]...)
	}
	t := &pf.vec
	for k, b := range bs {
		loA, hiA, loB, hiB := &t.loA, &t.hiA, &t.loB, &t.hiB
		if k >= 8 {
			loA, hiA, loB, hiB = &t.loA2, &t.hiA2, &t.loB2, &t.hiB2
		}
		bit := byte(1) << (k % 8)
		alo, ahi := b.a.nibbles()
		blo, bhi := b.b.nibbles()
		for n := range 16 {
			if alo&(1<<n) != 0 {
				loA[n] |= bit
			}
			if ahi&(1<<n) != 0 {
				hiA[n] |= bit
			}
			if blo&(1<<n) != 0 {
				loB[n] |= bit
			}
			if bhi&(1<<n) != 0 {
				hiB[n] |= bit
			}
		}
	}
	for _, tb := range []*[32]byte{&t.loA, &t.hiA, &t.loB, &t.hiB, &t.loA2, &t.hiA2, &t.loB2, &t.hiB2} {
		copy(tb[16:], tb[:16])
	}
	for n := range 32 {
		t.nib[n], t.ctlMax[n], t.tab[n], t.esc[n], t.del[n] = 0x0f, 0x1f, '\t', 0x1b, 0x7f
	}
}

// vecFlags is the vector test of one position, in Go (for the tests): c
// followed by d.
func (t *pairTables) vecFlags(c, d byte) bool {
	if c <= 0x1f && c != '\t' && c != 0x1b || c == 0x7f {
		return true
	}
	return t.loA[c&15]&t.hiA[c>>4]&t.loB[d&15]&t.hiB[d>>4] != 0 ||
		t.loA2[c&15]&t.hiA2[c>>4]&t.loB2[d&15]&t.hiB2[d>>4] != 0
}

// pairScanMin is the shortest string pairScanAll is worth calling for: it
// needs a block and the byte after it.
const pairScanMin = 33

// pairOut is the number of flagged blocks pairScanAll reports at a time.
const pairOut = 16

// vectorScan runs the vector filter over s and does the exact test at the
// positions it flags, in order (as scanFrom's loop does); it returns the
// position where scanFrom's Go loop goes on, the hits and weight so far,
// and stop when the weight made s binary and !full.
func (pf *prefilter) vectorScan(s string, full bool, h scanHits) (i int, _ scanHits, w int, stop bool) {
	tab := &pf.tab
	var out [pairOut]uint64
	for {
		n, next := pairScanAll(s[i:], &pf.vec, &out)
		for _, e := range out[:n] {
			at := i + int(e>>32)
			for m := uint32(e); m != 0; m &= m - 1 {
				j := at + bits.TrailingZeros32(m)
				if v := tab[s[j]]; v != 0 {
					if v&pfCandByte != 0 && pf.follows(s, j) {
						h |= pf.verify(s, j)
					}
					if w += int(v &^ pfCandByte); w >= binaryLimit && !full {
						return j, h | hitBinary, w, true
					}
				}
			}
		}
		i += next
		if n < pairOut {
			return i, h, w, false
		}
	}
}
