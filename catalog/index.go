package catalog

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// globIndex finds, for one frame name, every catalog glob that matches it
// without trying every glob: each glob's longest wildcard-free literal goes
// into an Aho-Corasick automaton; one pass over the name yields the globs
// whose literal occurs in it, and only those are checked. Globs without
// any literal (such as "*") are always tried.
//
// The automaton is laid out for the scan, which is memory-bound (one node
// visit per byte of every frame name, source path and module of every
// crash): a node is one 12-byte record (failure link, edges, an output flag), a
// node with one edge (most of the trie) holds it inline, the edges of the
// others are a short byte run scanned linearly, and nodes with many edges
// get a dense 256-entry table. The globs found are checked by their shape
// (exact, prefix, suffix, contains need no full match).
type globIndex struct {
	globs  []glob
	always []int32 // globs with an empty literal
	// exact are the globs without a wildcard, by text: a map lookup of the
	// whole name finds them, and they stay out of the automaton (in a
	// catalog of exact frame names they would be most of its nodes).
	exact map[string]int32

	root    [256]int32 // goto of the root, complete (0 = stay at root)
	nodes   []acNode
	labels  []byte  // edges of nodes with several edges, sorted per node
	targets []int32 // parallel to labels
	dense   []int32 // 256-entry goto tables of nodes with many edges (-1: none)
	outs    []int32 // glob ids per node (including via fail links)
	// outStart[u] is where node u's glob ids start in outs (one entry
	// more than nodes).
	outStart []int32

	// reference makes matches try every glob in turn (the straightforward
	// evaluation the tests compare the automaton with).
	reference bool
	// memo remembers the globs found in a string (string -> []int32, shared
	// and never modified): the crashes of a fleet repeat their frame names,
	// source paths and modules (in the corpus about 70% of the frame names
	// of a log were in an earlier log). It holds at most memoMax strings and
	// starts over when full. noMemo turns it off (the cold benchmarks).
	memo   atomic.Pointer[sync.Map]
	memoN  atomic.Int64
	noMemo bool

	scratch sync.Pool // *matchScratch
}

// acNode is one automaton node.
type acNode struct {
	fail int32
	// next is the target of the only edge (nEdge == 1), the first edge in
	// labels/targets (1 < nEdge < denseEdges), or the start of the node's
	// table in dense (nEdge >= denseEdges).
	next   int32
	nEdge  uint16
	label  byte // the only edge's byte (nEdge == 1)
	hasOut bool // the node has outputs: outs[outStart[u]:outStart[u+1]]
}

// memoMax bounds the strings a globIndex remembers (a few MB at most).
const memoMax = 1 << 15

// denseEdges is the edge count from which a node gets a dense table.
const denseEdges = 12

type matchScratch struct {
	stamp []uint32
	gen   uint32
}

// buildGlobIndex indexes globs; glob ids are their positions.
func buildGlobIndex(globs []glob) *globIndex {
	ix := &globIndex{globs: globs}
	// The trie under construction: each node's edges sorted by byte (most
	// nodes have one; a map per node made building the default catalog's
	// index cost more than parsing it).
	type bedge struct {
		c byte
		t int32
	}
	type bnode struct {
		edges []bedge
		out   []int32
	}
	size := 1
	for _, g := range globs {
		size += len(g.literal) // at most one node per literal byte
	}
	nodes := make([]bnode, 1, size)
	litNode := map[string]int32{}
	for id, g := range globs {
		if g.literal == "" {
			ix.always = append(ix.always, int32(id))
			continue
		}
		if g.shape == shapeExact {
			if ix.exact == nil {
				ix.exact = map[string]int32{}
			}
			if _, dup := ix.exact[g.literal]; !dup { // interned: never a duplicate
				ix.exact[g.literal] = int32(id)
				continue
			}
		}
		if n, ok := litNode[g.literal]; ok {
			nodes[n].out = append(nodes[n].out, int32(id))
			continue
		}
		cur := int32(0)
		for i := 0; i < len(g.literal); i++ {
			c := g.literal[i]
			es := nodes[cur].edges
			k, found := slices.BinarySearchFunc(es, c, func(e bedge, c byte) int { return int(e.c) - int(c) })
			if found {
				cur = es[k].t
				continue
			}
			nx := int32(len(nodes))
			nodes = append(nodes, bnode{})
			nodes[cur].edges = slices.Insert(es, k, bedge{c, nx})
			cur = nx
		}
		litNode[g.literal] = cur
		nodes[cur].out = append(nodes[cur].out, int32(id))
	}
	n := len(nodes)
	ix.nodes = make([]acNode, n)
	for i := range nodes {
		nd := &ix.nodes[i]
		es := nodes[i].edges
		nd.nEdge = uint16(len(es))
		switch {
		case i == 0:
			for _, e := range es {
				ix.root[e.c] = e.t
			}
		case len(es) == 1:
			nd.label = es[0].c
			nd.next = es[0].t
		case len(es) >= denseEdges:
			nd.next = int32(len(ix.dense))
			for range 256 {
				ix.dense = append(ix.dense, -1)
			}
			for _, e := range es {
				ix.dense[int(nd.next)+int(e.c)] = e.t
			}
		case len(es) > 1:
			nd.next = int32(len(ix.labels))
			for _, e := range es {
				ix.labels = append(ix.labels, e.c)
				ix.targets = append(ix.targets, e.t)
			}
		}
	}
	// Breadth-first: failure links and merged outputs (a node's own globs
	// first, then those of its failure node: longer literals first).
	merged := make([][]int32, n)
	merged[0] = nodes[0].out
	queue := make([]int32, 0, n)
	for c := range 256 {
		if t := ix.root[c]; t != 0 {
			merged[t] = nodes[t].out
			queue = append(queue, t)
		}
	}
	slices.Sort(queue)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, e := range nodes[u].edges {
			c, v := e.c, e.t
			f := ix.nodes[u].fail
			for {
				if t := ix.step1(f, c); t >= 0 {
					ix.nodes[v].fail = t
					break
				}
				if f == 0 {
					ix.nodes[v].fail = ix.root[c]
					break
				}
				f = ix.nodes[f].fail
			}
			if ix.nodes[v].fail == v {
				ix.nodes[v].fail = 0
			}
			merged[v] = nodes[v].out
			if fo := merged[ix.nodes[v].fail]; len(fo) > 0 {
				merged[v] = append(slices.Clip(nodes[v].out), fo...)
			}
			queue = append(queue, v)
		}
	}
	ix.outStart = make([]int32, n+1)
	for i := range ix.nodes {
		ix.outStart[i] = int32(len(ix.outs))
		ix.nodes[i].hasOut = len(merged[i]) > 0
		ix.outs = append(ix.outs, merged[i]...)
	}
	ix.outStart[n] = int32(len(ix.outs))
	return ix
}

// step1 follows the goto edge of node u on c, or returns -1. The root uses
// its dense table.
func (ix *globIndex) step1(u int32, c byte) int32 {
	if u == 0 {
		if t := ix.root[c]; t != 0 {
			return t
		}
		return -1
	}
	nd := &ix.nodes[u]
	switch {
	case nd.nEdge == 1:
		if nd.label == c {
			return nd.next
		}
	case nd.nEdge >= denseEdges:
		return ix.dense[int(nd.next)+int(c)]
	case nd.nEdge > 1:
		labels := ix.labels[nd.next : nd.next+int32(nd.nEdge)]
		for k, l := range labels { // few, sorted
			if l >= c {
				if l == c {
					return ix.targets[nd.next+int32(k)]
				}
				break
			}
		}
	}
	return -1
}

// scratchFor returns a scratch buffer for a run of matches calls; give it
// back with release.
func (ix *globIndex) scratchFor() *matchScratch {
	sc, _ := ix.scratch.Get().(*matchScratch)
	if sc == nil || len(sc.stamp) != len(ix.globs) {
		sc = &matchScratch{stamp: make([]uint32, len(ix.globs))}
	}
	return sc
}

func (ix *globIndex) release(sc *matchScratch) { ix.scratch.Put(sc) }

// matches appends to dst the ids of every glob that matches name, each once,
// and returns dst. The order is that of the globs' literals in name: by
// where the first occurrence of the literal ends, longer literals first,
// then by id; globs without a literal come last. sc comes from scratchFor
// and must not be shared between goroutines; the index itself is safe for
// concurrent use.
func (ix *globIndex) matches(dst []int32, name string, sc *matchScratch) []int32 {
	if len(ix.globs) == 0 {
		return dst
	}
	if ix.reference {
		return ix.matchesReference(dst, name)
	}
	if ix.noMemo {
		return ix.scan(dst, name, sc)
	}
	m := ix.memo.Load()
	if m == nil {
		m = &sync.Map{}
		if !ix.memo.CompareAndSwap(nil, m) {
			m = ix.memo.Load()
		}
	}
	if ids, ok := m.Load(name); ok {
		return append(dst, ids.([]int32)...)
	}
	n := len(dst)
	dst = ix.scan(dst, name, sc)
	if ix.memoN.Add(1) > memoMax { // full: start over
		ix.memoN.Store(0)
		ix.memo.Store(&sync.Map{})
		return dst
	}
	m.Store(strings.Clone(name), slices.Clone(dst[n:]))
	return dst
}

// scan is matches without the memo: one pass of the automaton over name.
func (ix *globIndex) scan(dst []int32, name string, sc *matchScratch) []int32 {
	sc.gen++
	if sc.gen == 0 { // wrapped: clear
		clear(sc.stamp)
		sc.gen = 1
	}
	gen := sc.gen
	nodes := ix.nodes
	ex, hasEx := int32(-1), false
	if len(ix.exact) > 0 {
		ex, hasEx = ix.exact[name]
	}
	u := int32(0)
	for i := 0; i < len(name); i++ {
		c := name[i]
		// Follow failure links until an edge on c is found; at the root the
		// dense table decides.
		for u != 0 {
			nd := &nodes[u]
			t := int32(-1)
			switch {
			case nd.nEdge == 1:
				if nd.label == c {
					t = nd.next
				}
			case nd.nEdge >= denseEdges:
				t = ix.dense[int(nd.next)+int(c)]
			case nd.nEdge > 1:
				labels := ix.labels[nd.next : nd.next+int32(nd.nEdge)]
				for k, l := range labels {
					if l >= c {
						if l == c {
							t = ix.targets[nd.next+int32(k)]
						}
						break
					}
				}
			}
			if t >= 0 {
				u = t
				goto moved
			}
			u = nd.fail
		}
		u = ix.root[c]
	moved:
		if hasEx && i == len(name)-1 {
			// The exact glob's literal is the name: it ends here and is the
			// longest; among the outputs of the same length it goes by id.
			hasEx = false
			outs := ix.outs[ix.outStart[u]:ix.outStart[u+1]]
			k := 0
			for ; k < len(outs); k++ {
				if id := outs[k]; len(ix.globs[id].literal) < len(name) || id > ex {
					break
				}
			}
			dst = ix.emit(dst, outs[:k], name, i, sc, gen)
			sc.stamp[ex] = gen
			dst = append(dst, ex)
			dst = ix.emit(dst, outs[k:], name, i, sc, gen)
			continue
		}
		if nodes[u].hasOut {
			dst = ix.emit(dst, ix.outs[ix.outStart[u]:ix.outStart[u+1]], name, i, sc, gen)
		}
	}
	for _, id := range ix.always {
		if sc.stamp[id] != gen {
			sc.stamp[id] = gen
			if ix.globs[id].match(name) {
				dst = append(dst, id)
			}
		}
	}
	return dst
}

// emit appends the globs of ids (whose literals end at byte end of name)
// that were not seen yet and hold.
func (ix *globIndex) emit(dst, ids []int32, name string, end int, sc *matchScratch, gen uint32) []int32 {
	for _, id := range ids {
		if sc.stamp[id] == gen {
			continue
		}
		sc.stamp[id] = gen
		if ix.holds(id, name, end) {
			dst = append(dst, id)
		}
	}
	return dst
}

// holds checks glob id on name, whose first occurrence of the glob's
// literal ends at byte end.
func (ix *globIndex) holds(id int32, name string, end int) bool {
	g := &ix.globs[id]
	switch g.shape {
	case shapeContains:
		return true
	case shapeExact:
		return len(name) == len(g.literal)
	case shapePrefix: // the first occurrence is at the start if any is
		return end+1 == len(g.literal)
	case shapeSuffix:
		return strings.HasSuffix(name, g.literal)
	}
	return g.match(name)
}

// matchesReference is matches by trying every glob: what the automaton must
// find, in the order it must find it.
func (ix *globIndex) matchesReference(dst []int32, name string) []int32 {
	type found struct {
		end, litLen int
		id          int32
	}
	var fs []found
	for id := range ix.globs {
		g := &ix.globs[id]
		if !g.match(name) {
			continue
		}
		f := found{end: len(name), litLen: 0, id: int32(id)} // no literal: last
		if g.literal != "" {
			f.end, f.litLen = strings.Index(name, g.literal)+len(g.literal)-1, len(g.literal)
		}
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.end != b.end {
			return a.end < b.end
		}
		if a.litLen != b.litLen {
			return a.litLen > b.litLen
		}
		return a.id < b.id
	})
	for _, f := range fs {
		dst = append(dst, f.id)
	}
	return dst
}
