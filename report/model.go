package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/signature"
)

// Bounds on what a bucket keeps for its section; counts stay exact.
const (
	// MaxLocations is how many crash locations a bucket keeps (the first
	// ones added); LocationCount counts them all.
	MaxLocations = 200
	// maxGroups bounds the thread groups kept per bucket, maxGroupFrames
	// the frames kept per group.
	maxGroups      = 40
	maxGroupFrames = 12
	// maxVersions bounds the distinct versions counted per bucket.
	maxVersions = 64
	// maxDays bounds the distinct crash dates counted per bucket (older
	// dates beyond it are merged into the nearest kept one).
	maxDays = 4096
)

// Location is where one crash of a bucket was seen: its input and the
// 1-based inclusive line span of the incident.
type Location struct {
	Source    string `json:"source"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

// Bucket is a pipeline.Bucket with what the page shows beyond it. The
// extra fields are exact when the bucket was built by a Collector; a
// bucket read from `crashsig buckets --json` has them only when its line
// carries them (Days, VersionCounts, Locations, Groups are then nil).
type Bucket struct {
	pipeline.Bucket
	// Days counts the crashes per UTC date ("2006-01-02") of the crashes
	// that printed a time; Undated counts the others.
	Days    map[string]int `json:"days,omitempty"`
	Undated int            `json:"undated,omitempty"`
	// VersionCounts counts the crashes per version ("" when unknown).
	VersionCounts map[string]int `json:"version_counts,omitempty"`
	// Locations are the first MaxLocations crashes; LocationCount counts
	// every crash added.
	Locations     []Location `json:"locations,omitempty"`
	LocationCount int        `json:"location_count,omitempty"`
	// Groups are the representative's threads grouped by stack (thread
	// dumps, gdb dumps, cores), largest first, and Threads its thread count.
	Groups  []signature.Group `json:"groups,omitempty"`
	Threads int               `json:"threads,omitempty"`
	// Advices is the advice given to the last crash of each status (the
	// versions of a bucket's crashes, hence their statuses, can differ).
	Advices map[catalog.Status]string `json:"advices,omitempty"`
	// Corrupted counts the crashes marked corrupted.
	Corrupted int `json:"corrupted,omitempty"`
}

type bucketKey struct {
	path        catalog.Path
	key, defect string
}

func keyOf(path catalog.Path, key string, d *catalog.DefectRef) bucketKey {
	k := bucketKey{path: path, key: key}
	if d != nil {
		k.defect = d.ID
	}
	return k
}

type extra struct {
	days         map[string]int
	undated      int
	versions     map[string]int
	locs         []Location
	count        int
	hasRep       bool
	repCorrupted bool
	groups       []signature.Group
	threads      int
	advices      map[catalog.Status]string
	corrupted    int
}

// Collector groups pipeline Results into Buckets (with pipeline.Bucketer)
// and keeps, per bucket, what the page needs beyond pipeline.Bucket. It is
// safe for concurrent use; its memory grows with the buckets, not the
// crashes (bounded lists per bucket).
type Collector struct {
	b  *pipeline.Bucketer
	mu sync.Mutex
	m  map[bucketKey]*extra
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{b: pipeline.NewBucketer(), m: map[bucketKey]*extra{}}
}

// Add counts r. Results without a signature or classification are
// ignored, as pipeline.Bucketer does.
func (c *Collector) Add(r *pipeline.Result) {
	if r == nil || r.Crash == nil || r.Signature == nil || r.Classification == nil {
		return
	}
	c.b.Add(r)
	k := keyOf(r.Classification.Path, r.Signature.Key, r.Classification.Defect)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		e = &extra{days: map[string]int{}, versions: map[string]int{}, advices: map[catalog.Status]string{}}
		c.m[k] = e
	}
	e.count++
	e.advices[r.Classification.Status] = r.Classification.Advice
	if r.Corrupted {
		e.corrupted++
	}
	if r.Time.IsZero() {
		e.undated++
	} else {
		d := r.Time.UTC().Format(time.DateOnly)
		if _, ok := e.days[d]; ok || len(e.days) < maxDays {
			e.days[d]++
		} else {
			e.undated++
		}
	}
	if _, ok := e.versions[r.Version]; ok || len(e.versions) < maxVersions {
		e.versions[r.Version]++
	}
	if len(e.locs) < MaxLocations {
		e.locs = append(e.locs, Location{Source: r.Source, StartLine: r.StartLine, EndLine: r.EndLine})
	}
	// The same choice of representative as pipeline.Bucketer: the first
	// incident that is not corrupted, else the first.
	if !e.hasRep || e.repCorrupted && !r.Corrupted {
		e.hasRep, e.repCorrupted = true, r.Corrupted
		e.threads = len(r.Threads)
		e.groups = clipGroups(r.ThreadGroups)
	}
}

func clipGroups(gs []signature.Group) []signature.Group {
	if len(gs) == 0 {
		return nil
	}
	out := make([]signature.Group, 0, min(len(gs), maxGroups))
	for _, g := range gs[:min(len(gs), maxGroups)] {
		g.Frames = slices.Clone(g.Frames[:min(len(g.Frames), maxGroupFrames)])
		g.NameSamples = slices.Clone(g.NameSamples)
		g.NamePatterns = nil
		g.States = slices.Clone(g.States)
		out = append(out, g)
	}
	return out
}

// Buckets returns every bucket in pipeline.Bucketer's order, with similar
// buckets listed at the given similarity threshold (0 disables).
func (c *Collector) Buckets(threshold float64) []Bucket {
	pbs := c.b.Buckets(threshold)
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Bucket, len(pbs))
	for i, pb := range pbs {
		out[i].Bucket = pb
		e := c.m[keyOf(pb.Path, pb.Key, pb.Defect)]
		if e == nil {
			continue
		}
		out[i].Days = cloneMap(e.days)
		out[i].Undated = e.undated
		out[i].VersionCounts = cloneMap(e.versions)
		out[i].Locations = slices.Clone(e.locs)
		out[i].LocationCount = e.count
		out[i].Groups = e.groups
		out[i].Threads = e.threads
		out[i].Advices = maps.Clone(e.advices)
		out[i].Corrupted = e.corrupted
	}
	return out
}

func cloneMap(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ErrNotBuckets is matched (errors.Is) by the error ReadBuckets returns
// for input that is not buckets JSON Lines.
var ErrNotBuckets = errors.New("not a crashsig buckets JSON Lines file")

// BucketsError reports a line of a buckets file that could not be read.
type BucketsError struct {
	Line int    // 1-based line number
	Err  error  // the cause
	Why  string // what is wrong, when Err is ErrNotBuckets
}

// Error returns "line N: ...".
func (e *BucketsError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("line %d: %v: %s", e.Line, e.Err, e.Why)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *BucketsError) Unwrap() error { return e.Err }

// MaxBucketLine bounds one line of a buckets file (a bucket with its
// representative crash).
const MaxBucketLine = 64 << 20

// LooksLikeBuckets reports whether head (the first bytes of a file) is
// the start of `crashsig buckets --json` output: a JSON object whose
// first line has the keys of a pipeline.Bucket. It decides by content, not
// by name. A truncated first line (no newline in head) is judged on the
// keys it shows: a bucket line starts `{"schema_version":N,"key":`, where
// a classify --json line has "source" second.
func LooksLikeBuckets(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		rest, ok := bytes.CutPrefix(head, []byte(`{"schema_version":`))
		if !ok {
			return false
		}
		rest = bytes.TrimLeft(rest, "0123456789")
		return bytes.HasPrefix(rest, []byte(`,"key":`))
	}
	head = head[:i]
	for _, k := range []string{`"schema_version"`, `"key"`, `"count"`, `"path"`, `"statuses"`} {
		if !bytes.Contains(head, []byte(k)) {
			return false
		}
	}
	return true
}

// ReadBuckets reads the JSON Lines written by `crashsig buckets --json`
// (one pipeline.Bucket per line; the extra fields of Bucket are read when
// present). Blank lines are skipped. Malformed input returns a
// *BucketsError naming the line; input that is not buckets at all also
// matches ErrNotBuckets. Lines longer than MaxBucketLine are refused.
func ReadBuckets(r io.Reader) ([]Bucket, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out []Bucket
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &BucketsError{Line: n, Err: err}
		}
		if n == 1 {
			// LooksLikeBuckets skips a byte order mark: so does reading.
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var b Bucket
			if jerr := json.Unmarshal(t, &b); jerr != nil {
				return nil, &BucketsError{Line: n, Err: ErrNotBuckets, Why: jerr.Error()}
			}
			if why := invalid(&b); why != "" {
				return nil, &BucketsError{Line: n, Err: ErrNotBuckets, Why: why}
			}
			out = append(out, b)
		}
		if err != nil {
			return out, nil
		}
	}
}

var errLongLine = fmt.Errorf("line longer than %d bytes", MaxBucketLine)

// readLine returns the next line without its newline; io.EOF with the
// last (possibly empty) line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxBucketLine {
			return nil, errLongLine
		}
		line = append(line, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// invalid says why a decoded line is not a usable bucket ("" when it is).
func invalid(b *Bucket) string {
	switch {
	case b.SchemaVersion < 1:
		return "no schema_version"
	case b.SchemaVersion > pipeline.SchemaVersion:
		return fmt.Sprintf("schema_version %d is newer than this program's %d", b.SchemaVersion, pipeline.SchemaVersion)
	case b.Key == "":
		return "no key"
	case b.Count < 1:
		return "count below 1"
	case b.Count > maxBucketCount:
		return fmt.Sprintf("count above %d", maxBucketCount)
	case b.Path == "":
		return "no path"
	}
	if b.Undated < 0 || b.LocationCount < 0 || b.Threads < 0 {
		return "negative count"
	}
	if b.LocationCount > b.Count {
		return "location_count above count"
	}
	if why := countsWithin(b.Days, b.Undated, b.Count, "day"); why != "" {
		return why
	}
	if why := countsWithin(b.VersionCounts, 0, b.Count, "version"); why != "" {
		return why
	}
	return countsWithin(b.Statuses, 0, b.Count, "status")
}

// maxBucketCount bounds a bucket's count in a buckets file (a trillion
// crashes): far above any fleet, far below where the page's totals over
// millions of lines would wrap.
const maxBucketCount = 1 << 40

// countsWithin says why per-key counts (plus extra) are not a breakdown
// of count: a negative one, or more than count in all ("" when they are).
func countsWithin[K comparable](m map[K]int, extra, count int, what string) string {
	sum := extra
	for _, n := range m {
		if n < 0 {
			return "negative " + what + " count"
		}
		if n > count-sum { // sum ≤ count here: no overflow
			return what + " counts add up to more than count"
		}
		sum += n
	}
	return ""
}

// Merge adds buckets that share a path, key and defect (from several
// files, say) into one: counts add up, lists are merged. The order is
// that of the first occurrence of each bucket.
func Merge(bs []Bucket) []Bucket {
	idx := map[bucketKey]int{}
	var out []Bucket
	for _, b := range bs {
		k := keyOf(b.Path, b.Key, b.Defect)
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, b)
			continue
		}
		out[i] = mergeTwo(out[i], b)
	}
	return out
}

func mergeTwo(a, b Bucket) Bucket {
	a.Count += b.Count
	a.Last = b.Last
	if a.FirstTime.IsZero() || !b.FirstTime.IsZero() && b.FirstTime.Before(a.FirstTime) {
		a.FirstTime = b.FirstTime
	}
	if b.LastTime.After(a.LastTime) {
		a.LastTime = b.LastTime
	}
	a.Products = union(a.Products, b.Products)
	a.Versions = union(a.Versions, b.Versions)
	a.Sources = union(a.Sources, b.Sources)
	a.SourceCount += b.SourceCount
	st := map[catalog.Status]int{}
	for s, n := range a.Statuses {
		st[s] += n
	}
	for s, n := range b.Statuses {
		st[s] += n
	}
	a.Statuses = st
	a.Status, a.Advice = b.Status, b.Advice
	a.Days = addCounts(a.Days, b.Days)
	a.VersionCounts = addCounts(a.VersionCounts, b.VersionCounts)
	a.Undated += b.Undated
	if len(a.Locations) < MaxLocations {
		a.Locations = append(slices.Clone(a.Locations), b.Locations[:min(len(b.Locations), MaxLocations-len(a.Locations))]...)
	}
	a.LocationCount += b.LocationCount
	a.Corrupted += b.Corrupted
	if b.Advices != nil {
		adv := maps.Clone(a.Advices)
		if adv == nil {
			adv = map[catalog.Status]string{}
		}
		maps.Copy(adv, b.Advices)
		a.Advices = adv
	}
	if a.Representative == nil || a.Representative.Corrupted && b.Representative != nil && !b.Representative.Corrupted {
		a.Representative, a.Groups, a.Threads = b.Representative, b.Groups, b.Threads
	}
	return a
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

func addCounts(a, b map[string]int) map[string]int {
	if a == nil && b == nil {
		return nil
	}
	out := make(map[string]int, len(a)+len(b))
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}
