package main

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/signature"
)

// maxValues bounds the distinct products, versions and sources a bucket
// lists, as pipeline.Bucket documents ("at most 32").
const maxValues = 32

// Seen is a distinct value of a bucket (a product, a version, a source)
// and where it was first seen; the first maxValues in input order are kept,
// as pipeline.Bucketer keeps them.
type Seen struct {
	Value string         `json:"v"`
	At    signature.Seen `json:"at"`
}

// Partial is the combiner's accumulator: a pipeline.Bucket of some of the
// inputs (made by pipeline.Bucketer for one file, then merged), with the
// first-seen positions of its bounded value sets so that merging stays
// exact. Merging is associative and commutative: every choice is made by
// input position (source, then line), never by arrival order, so any
// bundling on any runner gives the same bucket as one pass over the files
// in order.
type Partial struct {
	Bucket   pipeline.Bucket `json:"bucket"`
	Products []Seen          `json:"products,omitempty"`
	Versions []Seen          `json:"versions,omitempty"`
	Sources  []Seen          `json:"sources,omitempty"`
}

// partialOf wraps a bucket of one file. Values get the bucket's first
// location (the Bucketer already kept a file's first ones).
func partialOf(b pipeline.Bucket) Partial {
	p := Partial{Bucket: b}
	seen := func(vs []string) []Seen {
		var out []Seen
		for _, v := range vs {
			out = append(out, Seen{v, b.First})
		}
		return out
	}
	p.Products, p.Versions, p.Sources = seen(b.Products), seen(b.Versions), seen(b.Sources)
	return p
}

// key is the bucket identity of `crashsig buckets`: path, signature key,
// defect (the product is aggregated inside, see Bucket.Products).
func (p Partial) key() string {
	d := ""
	if p.Bucket.Defect != nil {
		d = p.Bucket.Defect.ID
	}
	return string(p.Bucket.Path) + "\x00" + p.Bucket.Key + "\x00" + d
}

// before orders locations in input order: source, then line.
func before(a, b signature.Seen) bool {
	return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Line, b.Line)) < 0
}

// mergeBucketsFn is the CombineFn of buckets per (path, key, defect).
type mergeBucketsFn struct{}

// MergeAccumulators merges two partial buckets of the same key.
func (mergeBucketsFn) MergeAccumulators(a, b Partial) Partial { return merge(a, b) }

func merge(a, b Partial) Partial {
	if before(b.Bucket.First, a.Bucket.First) {
		a, b = b, a
	}
	x, y := &a.Bucket, &b.Bucket
	out := Partial{Bucket: *x}
	o := &out.Bucket
	o.Frames = slices.Clone(x.Frames)
	o.Count = x.Count + y.Count
	if before(x.Last, y.Last) {
		o.Last, o.Status, o.Advice = y.Last, y.Status, y.Advice
	}
	o.Statuses = maps.Clone(x.Statuses)
	if o.Statuses == nil {
		o.Statuses = map[catalog.Status]int{}
	}
	for s, n := range y.Statuses {
		o.Statuses[s] += n
	}
	if t := y.FirstTime; !t.IsZero() && (o.FirstTime.IsZero() || t.Before(o.FirstTime)) {
		o.FirstTime = t
	}
	if y.LastTime.After(o.LastTime) {
		o.LastTime = y.LastTime
	}
	// Partials come from distinct files (one per file and bucket), so
	// their sources are disjoint and the counts add up exactly.
	o.SourceCount = x.SourceCount + y.SourceCount
	o.Representative = pickRepresentative(x.Representative, y.Representative)
	out.Products, o.Products = mergeSeen(a.Products, b.Products)
	out.Versions, o.Versions = mergeSeen(a.Versions, b.Versions)
	out.Sources, o.Sources = mergeSeen(a.Sources, b.Sources)
	return out
}

// pickRepresentative keeps the first incident that is not corrupted,
// else the first (pipeline.Bucket.Representative).
func pickRepresentative(r1, r2 *pipeline.Result) *pipeline.Result {
	switch {
	case r1 == nil || r1.Crash == nil:
		return r2
	case r2 == nil || r2.Crash == nil:
		return r1
	case r1.Corrupted != r2.Corrupted:
		if r1.Corrupted {
			return r2
		}
		return r1
	case before(r2.Location(), r1.Location()):
		return r2
	}
	return r1
}

// mergeSeen unions two value sets keeping each value's first position and
// the maxValues first values; it also returns the values sorted.
func mergeSeen(a, b []Seen) ([]Seen, []string) {
	m := map[string]signature.Seen{}
	for _, s := range slices.Concat(a, b) {
		if at, ok := m[s.Value]; !ok || before(s.At, at) {
			m[s.Value] = s.At
		}
	}
	out := make([]Seen, 0, len(m))
	for v, at := range m {
		out = append(out, Seen{v, at})
	}
	slices.SortFunc(out, func(p, q Seen) int {
		return cmp.Or(cmp.Compare(p.At.Source, q.At.Source), cmp.Compare(p.At.Line, q.At.Line), cmp.Compare(p.Value, q.Value))
	})
	if len(out) > maxValues {
		out = out[:maxValues]
	}
	vals := make([]string, len(out))
	for i, s := range out {
		vals[i] = s.Value
	}
	slices.Sort(vals)
	if len(out) == 0 {
		return nil, nil
	}
	return out, vals
}

// finalBuckets orders merged buckets and lists similar ones as
// `crashsig buckets` does (pipeline.SortBuckets).
func finalBuckets(ps []Partial, threshold float64) []pipeline.Bucket {
	out := make([]pipeline.Bucket, len(ps))
	for i, p := range ps {
		out[i] = p.Bucket
	}
	return pipeline.SortBuckets(out, threshold)
}

// encodePartial and decodePartial are the Beam coder of Partial (JSON:
// the bucket is the JSON `crashsig buckets --json` prints).
func encodePartial(p Partial) ([]byte, error) { return json.Marshal(p) }

func decodePartial(b []byte) (Partial, error) {
	var p Partial
	err := json.Unmarshal(b, &p)
	return p, err
}
