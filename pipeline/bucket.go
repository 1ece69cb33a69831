package pipeline

import (
	"cmp"
	"hash/fnv"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
)

// maxBucketSources bounds the distinct sources a Bucket lists.
const maxBucketSources = 32

// Bucket is every incident that shares a signature key, a path and a
// defect (or none): one row of a top-crashers table, with what it means.
// It is one line of `crashsig buckets --json`; result.schema.json
// describes it under $defs/bucket.
type Bucket struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Key, ID, Kind, Frames, Count, First, Last (input order), Products and
	// Versions (distinct, sorted) are those of signature.Bucket.
	signature.Bucket
	// Path and Defect are the classification the incidents share (they
	// are part of the bucket's identity). Area is the first incident's
	// (Add order, as First): incidents of one path and key may sit in
	// different areas of it, and Kind (of signature.Bucket) is likewise
	// the first incident's signal or kind under the key's shared class.
	Path   catalog.Path       `json:"path"`
	Area   string             `json:"area"`
	Defect *catalog.DefectRef `json:"defect"`
	// Status and Advice are those of the most recently added incident;
	// Statuses counts the incidents per status (versions differ).
	Status   catalog.Status         `json:"status"`
	Advice   string                 `json:"advice"`
	Statuses map[catalog.Status]int `json:"statuses"`
	// FirstTime and LastTime are the earliest and latest crash times the
	// incidents printed (zero when none did).
	FirstTime time.Time `json:"first_time,omitzero"`
	LastTime  time.Time `json:"last_time,omitzero"`
	// Sources are the distinct inputs, sorted (at most 32); SourceCount
	// counts them all.
	Sources     []string `json:"sources"`
	SourceCount int      `json:"source_count"`
	// Representative is the first incident that is not corrupted (else
	// the first), with its crashing thread only.
	Representative *Result `json:"representative"`
	// Similar lists buckets of the same path whose frames are similar
	// (signature.Similarity at least the threshold given to Buckets):
	// probably the same defect under another key.
	Similar []SimilarBucket `json:"similar,omitempty"`
}

// SimilarBucket names a bucket similar to another one.
type SimilarBucket struct {
	ID    string  `json:"id"`
	Key   string  `json:"key"`
	Score float64 `json:"score"`
}

type bucketKey struct {
	path   catalog.Path
	key    string
	defect string
}

type bucketAcc struct {
	Bucket
	products, versions, sources map[string]bool
	// seen holds a 64-bit FNV hash of every source, for SourceCount: sources
	// keeps at most maxBucketSources names, the count covers them all.
	seen map[uint64]struct{}
}

// Bucketer collects Results into Buckets. It is safe for concurrent use;
// First and Last, and the fields taken from one incident (Area, Kind,
// Status and Advice, Representative), follow the order of Add calls, so
// adding the Results of Run in its order gives the same buckets on every
// run. To merge buckets made apart (shards, runners), order them by input
// position as examples/beam's combiner does.
type Bucketer struct {
	mu sync.Mutex
	m  map[bucketKey]*bucketAcc
}

// NewBucketer returns an empty Bucketer.
func NewBucketer() *Bucketer { return &Bucketer{m: map[bucketKey]*bucketAcc{}} }

// Add counts r in its bucket. Results without a signature or
// classification are ignored.
func (b *Bucketer) Add(r *Result) {
	if r == nil || r.Crash == nil || r.Signature == nil || r.Classification == nil {
		return
	}
	v, s := r.Classification, r.Signature
	k := bucketKey{path: v.Path, key: s.Key}
	if v.Defect != nil {
		k.defect = v.Defect.ID
	}
	loc := r.Location()
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.m[k]
	if a == nil {
		a = &bucketAcc{
			Bucket: Bucket{
				SchemaVersion: SchemaVersion,
				Bucket:        signature.Bucket{Key: s.Key, ID: s.ID, Kind: s.Kind, Frames: slices.Clone(s.Frames), First: loc},
				Path:          v.Path, Area: v.Area, Defect: v.Defect,
				Statuses: map[catalog.Status]int{},
			},
			products: map[string]bool{}, versions: map[string]bool{}, sources: map[string]bool{}, seen: map[uint64]struct{}{},
		}
		b.m[k] = a
	}
	a.Count++
	a.Last = loc
	a.Status, a.Advice = v.Status, v.Advice
	a.Statuses[v.Status]++
	if t := r.Time; !t.IsZero() {
		if a.FirstTime.IsZero() || t.Before(a.FirstTime) {
			a.FirstTime = t
		}
		if t.After(a.LastTime) {
			a.LastTime = t
		}
	}
	addBounded(a.products, string(r.Product))
	addBounded(a.versions, r.Version)
	h := fnv.New64a()
	h.Write([]byte(r.Source))
	if _, ok := a.seen[h.Sum64()]; !ok {
		a.seen[h.Sum64()] = struct{}{}
		a.SourceCount++
	}
	addBounded(a.sources, r.Source)
	if a.Representative == nil || a.Representative.Corrupted && !r.Corrupted {
		a.Representative = representative(r)
	}
}

func addBounded(m map[string]bool, s string) {
	if s != "" && len(m) < maxBucketSources {
		m[s] = true
	}
}

// representative copies r with its crashing (or first) thread only.
func representative(r *Result) *Result {
	c := *r.Crash
	if len(c.Threads) > 1 {
		c.Threads = c.Threads[:1:1]
	}
	rep := *r
	rep.Crash = &c
	rep.ThreadGroups = nil
	return &rep
}

// Buckets returns the buckets by path (catalog.Paths order), then count
// descending, key and defect. With threshold > 0, each bucket lists the
// buckets of its path whose frames score at least threshold (see
// signature.NearDuplicates).
func (b *Bucketer) Buckets(threshold float64) []Bucket {
	b.mu.Lock()
	out := make([]Bucket, 0, len(b.m))
	for _, a := range b.m {
		bk := a.Bucket
		bk.Frames = slices.Clone(a.Frames)
		bk.Products = slices.Sorted(maps.Keys(a.products))
		bk.Versions = slices.Sorted(maps.Keys(a.versions))
		bk.Sources = slices.Sorted(maps.Keys(a.sources))
		bk.Statuses = maps.Clone(a.Statuses)
		out = append(out, bk)
	}
	b.mu.Unlock()
	return SortBuckets(out, threshold)
}

// SortBuckets orders buckets as Bucketer.Buckets returns them: by path
// (catalog.Paths order), then count descending, key and defect. With
// threshold > 0 it also sets each bucket's Similar to the buckets of its
// path whose frames score at least threshold (signature.NearDuplicates).
// It is for buckets merged outside a Bucketer (examples/beam combines
// per-file buckets); out is sorted in place and returned.
func SortBuckets(out []Bucket, threshold float64) []Bucket {
	order := map[catalog.Path]int{}
	for i, p := range catalog.Paths() {
		order[p] = i
	}
	defectID := func(b *Bucket) string {
		if b.Defect == nil {
			return ""
		}
		return b.Defect.ID
	}
	slices.SortFunc(out, func(x, y Bucket) int {
		return cmp.Or(cmp.Compare(order[x.Path], order[y.Path]), cmp.Compare(string(x.Path), string(y.Path)),
			cmp.Compare(y.Count, x.Count), cmp.Compare(x.Key, y.Key), cmp.Compare(defectID(&x), defectID(&y)))
	})
	for i := range out {
		out[i].Similar = nil
	}
	if threshold <= 0 {
		return out
	}
	for lo := 0; lo < len(out); {
		hi := lo + 1
		for hi < len(out) && out[hi].Path == out[lo].Path {
			hi++
		}
		// Buckets of one key with different defects are separate buckets
		// with the same signature: NearDuplicates compares each key once
		// (its frames are the key's), and every bucket of a key gets the
		// key's similar keys.
		var sb []signature.Bucket
		byID := map[string][]int{}
		for i := lo; i < hi; i++ {
			if byID[out[i].ID] == nil {
				sb = append(sb, out[i].Bucket)
			}
			byID[out[i].ID] = append(byID[out[i].ID], i)
		}
		for _, d := range signature.NearDuplicates(sb, threshold) {
			for _, i := range byID[d.A] {
				out[i].Similar = append(out[i].Similar, SimilarBucket{ID: d.B, Key: d.KeyB, Score: d.Score})
			}
			for _, i := range byID[d.B] {
				out[i].Similar = append(out[i].Similar, SimilarBucket{ID: d.A, Key: d.KeyA, Score: d.Score})
			}
		}
		lo = hi
	}
	return out
}
