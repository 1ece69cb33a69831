package catalog

import (
	"sort"
	"sync"
)

// globIndex finds, for one frame name, every catalog glob that matches it
// without trying every glob: each glob's longest wildcard-free literal goes
// into an Aho-Corasick automaton; one pass over the name yields the globs
// whose literal occurs in it, and only those are matched in full. Globs
// without any literal (such as "*") are always tried.
type globIndex struct {
	globs  []glob
	always []int32 // globs with an empty literal

	// Aho-Corasick automaton over the distinct literals.
	root      [256]int32 // goto of the root, complete (0 = stay at root)
	edgeStart []int32    // per node: first edge in labels/targets
	edgeEnd   []int32
	labels    []byte
	targets   []int32
	fail      []int32
	out       [][]int32 // per node: glob ids whose literal ends here (including via fail links)

	scratch sync.Pool // *matchScratch
}

type matchScratch struct {
	stamp []uint32
	gen   uint32
}

// buildGlobIndex indexes globs; glob ids are their positions.
func buildGlobIndex(globs []glob) *globIndex {
	ix := &globIndex{globs: globs}
	type bnode struct {
		next map[byte]int32
		out  []int32
	}
	nodes := []bnode{{next: map[byte]int32{}}}
	litNode := map[string]int32{}
	for id, g := range globs {
		if g.literal == "" {
			ix.always = append(ix.always, int32(id))
			continue
		}
		if n, ok := litNode[g.literal]; ok {
			nodes[n].out = append(nodes[n].out, int32(id))
			continue
		}
		cur := int32(0)
		for i := 0; i < len(g.literal); i++ {
			c := g.literal[i]
			nx, ok := nodes[cur].next[c]
			if !ok {
				nx = int32(len(nodes))
				nodes = append(nodes, bnode{next: map[byte]int32{}})
				nodes[cur].next[c] = nx
			}
			cur = nx
		}
		litNode[g.literal] = cur
		nodes[cur].out = append(nodes[cur].out, int32(id))
	}
	n := len(nodes)
	ix.edgeStart = make([]int32, n)
	ix.edgeEnd = make([]int32, n)
	ix.fail = make([]int32, n)
	ix.out = make([][]int32, n)
	for i := range nodes {
		ix.edgeStart[i] = int32(len(ix.labels))
		keys := make([]int, 0, len(nodes[i].next))
		for c := range nodes[i].next {
			keys = append(keys, int(c))
		}
		sort.Ints(keys)
		for _, c := range keys {
			ix.labels = append(ix.labels, byte(c))
			ix.targets = append(ix.targets, nodes[i].next[byte(c)])
		}
		ix.edgeEnd[i] = int32(len(ix.labels))
		ix.out[i] = nodes[i].out
	}
	// Breadth-first: failure links and merged outputs.
	queue := make([]int32, 0, n)
	for c, t := range nodes[0].next {
		ix.root[c] = t
		ix.fail[t] = 0
		queue = append(queue, t)
	}
	sort.Slice(queue, func(i, j int) bool { return queue[i] < queue[j] })
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for e := ix.edgeStart[u]; e < ix.edgeEnd[u]; e++ {
			c, v := ix.labels[e], ix.targets[e]
			f := ix.fail[u]
			for {
				if t := ix.step1(f, c); t >= 0 {
					ix.fail[v] = t
					break
				}
				if f == 0 {
					ix.fail[v] = ix.root[c]
					break
				}
				f = ix.fail[f]
			}
			if ix.fail[v] == v {
				ix.fail[v] = 0
			}
			if fo := ix.out[ix.fail[v]]; len(fo) > 0 {
				merged := make([]int32, 0, len(ix.out[v])+len(fo))
				merged = append(append(merged, ix.out[v]...), fo...)
				ix.out[v] = merged
			}
			queue = append(queue, v)
		}
	}
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
	lo, hi := ix.edgeStart[u], ix.edgeEnd[u]
	for lo < hi { // edges are few and sorted
		m := (lo + hi) / 2
		switch l := ix.labels[m]; {
		case l == c:
			return ix.targets[m]
		case l < c:
			lo = m + 1
		default:
			hi = m
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
// and returns dst. sc comes from scratchFor and must not be shared between
// goroutines; the index itself is safe for concurrent use.
func (ix *globIndex) matches(dst []int32, name string, sc *matchScratch) []int32 {
	if len(ix.globs) == 0 {
		return dst
	}
	sc.gen++
	if sc.gen == 0 { // wrapped: clear
		clear(sc.stamp)
		sc.gen = 1
	}
	gen := sc.gen
	u := int32(0)
	for i := 0; i < len(name); i++ {
		c := name[i]
		for {
			if u == 0 {
				u = ix.root[c]
				break
			}
			if t := ix.step1(u, c); t >= 0 {
				u = t
				break
			}
			u = ix.fail[u]
		}
		for _, id := range ix.out[u] {
			if sc.stamp[id] != gen {
				sc.stamp[id] = gen
				if ix.globs[id].match(name) {
					dst = append(dst, id)
				}
			}
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
