package signature

import (
	"sort"
	"strconv"
	"sync"

	"github.com/crashsig/crashsig/symbolize"
)

// Bounds of a Bucketer.
const (
	maxBucketSet = 32
	// MaxNearDuplicateBuckets bounds the buckets NearDuplicates compares
	// pairwise (the most frequent ones).
	MaxNearDuplicateBuckets = 4000
)

// Seen is where an incident was seen: input name and 1-based line (an
// input position, unlike symbolize.Location, which is a source position).
type Seen struct {
	// Source is the input name (Crash.Source).
	Source string `json:"source"`
	// Line is the incident's first line (Crash.StartLine).
	Line int `json:"line"`
}

// Location is the former name of Seen.
//
// Deprecated: use Seen; Location was easy to confuse with symbolize.Location.
type Location = Seen

// String returns "source:line".
func (l Seen) String() string { return l.Source + ":" + strconv.Itoa(l.Line) }

// Bucket is every incident that shares one signature key.
type Bucket struct {
	// Key, ID, Kind and Frames are those of the bucket's signature.
	Key    string   `json:"key"`
	ID     string   `json:"id"`
	Kind   string   `json:"kind"`
	Frames []string `json:"frames"`
	// Count is the number of incidents added with this key.
	Count int `json:"count"`
	// First and Last are the first and last incidents added (in Add order).
	First Seen `json:"first"`
	Last  Seen `json:"last"`
	// Products and Versions are the distinct values seen, sorted (at most 32 each).
	Products []string `json:"products,omitempty"`
	Versions []string `json:"versions,omitempty"`
}

// NearDuplicate is a pair of buckets with different keys whose frames are
// similar (see Similarity): probably the same defect.
type NearDuplicate struct {
	// A and B are the bucket IDs, A < B.
	A string `json:"a"`
	B string `json:"b"`
	// KeyA and KeyB are their keys.
	KeyA string `json:"key_a"`
	KeyB string `json:"key_b"`
	// Score is Similarity of their frames, in (0, 1].
	Score float64 `json:"score"`
}

// Bucketer groups crashes into buckets by signature key. It is safe for
// concurrent use; First/Last follow the order of Add calls.
type Bucketer struct {
	gen *Generator
	mu  sync.Mutex
	m   map[string]*bucketAcc
}

type bucketAcc struct {
	Bucket
	products, versions map[string]bool
}

// NewBucketer returns a Bucketer using g (nil: Default()).
func NewBucketer(g *Generator) *Bucketer {
	if g == nil {
		g = Default()
	}
	return &Bucketer{gen: g, m: map[string]*bucketAcc{}}
}

// Add signs c and adds it; it returns the signature.
func (b *Bucketer) Add(c *symbolize.Crash) Signature {
	s := b.gen.Generate(c)
	b.AddSignature(c, s)
	return s
}

// AddSignature adds a crash whose signature is already known.
func (b *Bucketer) AddSignature(c *symbolize.Crash, s Signature) {
	loc := Seen{}
	var product, version string
	if c != nil {
		loc = Seen{Source: c.Source, Line: c.StartLine}
		product, version = string(c.Product), c.Version
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.m[s.Key]
	if a == nil {
		a = &bucketAcc{Bucket: Bucket{Key: s.Key, ID: s.ID, Kind: s.Kind, Frames: s.Frames, First: loc},
			products: map[string]bool{}, versions: map[string]bool{}}
		b.m[s.Key] = a
	}
	a.Count++
	a.Last = loc
	if product != "" && len(a.products) < maxBucketSet {
		a.products[product] = true
	}
	if version != "" && len(a.versions) < maxBucketSet {
		a.versions[bounded(version, 64)] = true
	}
}

// Buckets returns the buckets by Count descending, then Key.
func (b *Bucketer) Buckets() []Bucket {
	b.mu.Lock()
	out := make([]Bucket, 0, len(b.m))
	for _, a := range b.m {
		bk := a.Bucket
		bk.Frames = append([]string(nil), a.Frames...)
		bk.Products = sortedKeys(a.products)
		bk.Versions = sortedKeys(a.versions)
		out = append(out, bk)
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// NearDuplicates returns pairs of buckets whose frame lists score at least
// threshold by Similarity, best first (ties by IDs). Only the
// MaxNearDuplicateBuckets most frequent buckets are compared, and only
// pairs that share a frame (the others score 0). A threshold ≤ 0 is taken
// as "share a frame".
func NearDuplicates(buckets []Bucket, threshold float64) []NearDuplicate {
	if len(buckets) > MaxNearDuplicateBuckets {
		buckets = buckets[:MaxNearDuplicateBuckets]
	}
	byFrame := map[string][]int{}
	for i := range buckets {
		seen := map[string]bool{}
		for _, f := range firstFrames(buckets[i].Frames) {
			if !seen[f] {
				seen[f] = true
				byFrame[f] = append(byFrame[f], i)
			}
		}
	}
	var out []NearDuplicate
	for i := range buckets {
		done := map[int]bool{}
		for _, f := range firstFrames(buckets[i].Frames) {
			for _, j := range byFrame[f] {
				if j <= i || done[j] {
					continue
				}
				done[j] = true
				a, c := &buckets[i], &buckets[j]
				if a.Key == c.Key {
					continue
				}
				s := Similarity(a.Frames, c.Frames)
				if s > 0 && s >= threshold {
					x, y := a, c
					if y.ID < x.ID {
						x, y = y, x
					}
					out = append(out, NearDuplicate{A: x.ID, B: y.ID, KeyA: x.Key, KeyB: y.Key, Score: s})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if out[i].A != out[j].A {
			return out[i].A < out[j].A
		}
		return out[i].B < out[j].B
	})
	return out
}

// firstFrames bounds the frames Similarity looks at.
func firstFrames(f []string) []string {
	if len(f) > maxSimilarityFrames {
		return f[:maxSimilarityFrames]
	}
	return f
}
