package signature

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

func TestSimilarity(t *testing.T) {
	a := []string{"f", "g", "h", "i"}
	cases := []struct {
		a, b   []string
		lo, hi float64
	}{
		{a, a, 1, 1},
		{a, []string{"x", "y", "z"}, 0, 0},
		{a, nil, 0, 0},
		{nil, nil, 0, 0},
		{a, []string{"f", "g", "h", "x"}, 0.75, 0.9},        // differs at the bottom: high
		{a, []string{"x", "g", "h", "i"}, 0.55, 0.75},       // differs at the top: lower
		{a, []string{"memcpy", "f", "g", "h"}, 0.45, 0.7},   // shifted by one frame
		{a, []string{"f"}, 1, 1},                            // a prefix: normalized by the shorter list
		{[]string{"f", "g"}, []string{"g", "f"}, 0.2, 0.45}, // order matters
	}
	for _, c := range cases {
		s := Similarity(c.a, c.b)
		assert.False(t, math.IsNaN(s), "Similarity(%q, %q) is NaN", c.a, c.b)
		assert.InDelta(t, (c.lo+c.hi)/2, s, (c.hi-c.lo)/2+1e-9, "Similarity(%q, %q)", c.a, c.b)
		assert.InDelta(t, s, Similarity(c.b, c.a), 1e-12, "not symmetric")
	}
	// Bottom differences weigh less than top differences.
	if Similarity(a, []string{"f", "g", "h", "x"}) <= Similarity(a, []string{"x", "g", "h", "i"}) {
		t.Error("a difference at the top must cost more than one at the bottom")
	}
	long := make([]string, 1000)
	for i := range long {
		long[i] = "f"
	}
	if s := Similarity(long, long); s != 1 {
		t.Errorf("long: %v", s)
	}
}

func TestBucketer(t *testing.T) {
	// Three significant frames per key, so that the buckets differ below
	// the crash site and NearDuplicates has frames to compare.
	g3, err := NewGenerator(Options{Frames: 3})
	require.NoError(t, err)
	b := NewBucketer(g3)
	mk := func(src string, line int, p symbolize.Product, ver string, frames ...string) *symbolize.Crash {
		c := crash(symbolize.KindSignal, "SIGSEGV", fr(frames...))
		c.Source, c.StartLine, c.Product, c.Version = src, line, p, ver
		return c
	}
	b.Add(mk("a.log", 3, symbolize.ProductStarRocks, "3.3.1", "starrocks::A::a()", "starrocks::B::b()", "starrocks::C::c()"))
	b.Add(mk("b.log", 9, symbolize.ProductStarRocks, "3.3.2", "starrocks::A::a(int)", "starrocks::B::b()", "starrocks::C::c()"))
	b.Add(mk("c.log", 1, symbolize.ProductStarRocks, "3.3.2", "starrocks::A::a()", "starrocks::B::b()", "starrocks::D::d()"))
	b.Add(mk("d.log", 5, symbolize.ProductDoris, "2.1.0", "doris::X::x()"))
	bs := b.Buckets()
	if len(bs) != 3 {
		t.Fatalf("%d buckets", len(bs))
	}
	top := bs[0]
	if top.Count != 2 || top.First.String() != "a.log:3" || top.Last.String() != "b.log:9" ||
		len(top.Versions) != 2 || top.Products[0] != "starrocks" {
		t.Errorf("top bucket %+v", top)
	}
	nd := NearDuplicates(bs, 0.6)
	if len(nd) != 1 || nd[0].Score < 0.6 || nd[0].Score >= 1 {
		t.Fatalf("near duplicates %+v", nd)
	}
	keys := nd[0].KeyA + nd[0].KeyB
	if !strings.Contains(keys, "starrocks::C::c") || !strings.Contains(keys, "starrocks::D::d") {
		t.Errorf("wrong pair %+v", nd[0])
	}
	// The default key stops at the first significant frame: the three
	// StarRocks crashes at starrocks::A::a are one bucket.
	d := NewBucketer(nil)
	d.Add(mk("a.log", 3, symbolize.ProductStarRocks, "3.3.1", "starrocks::A::a()", "starrocks::B::b()", "starrocks::C::c()"))
	d.Add(mk("c.log", 1, symbolize.ProductStarRocks, "3.3.2", "starrocks::A::a()", "starrocks::B::b()", "starrocks::D::d()"))
	d.Add(mk("e.log", 1, symbolize.ProductStarRocks, "3.3.2", "starrocks::A::a()", "starrocks::E::e()"))
	db := d.Buckets()
	require.Len(t, db, 1)
	assert.Equal(t, "FAULT | starrocks::A::a", db[0].Key)
	assert.Equal(t, 3, db[0].Count)
}
