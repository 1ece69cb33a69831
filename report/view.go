package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/symbolize"
)

// Display limits: they bound the page, never the counts.
const (
	clipName     = 240 // runes of a frame name, key, message
	clipKey      = 400
	clipLabel    = 28 // chart labels
	maxFrames    = 48 // frames of the representative crashing thread
	maxTrace     = 60
	maxEvidence  = 30
	maxShownLocs = 60
	maxBars      = 16 // bars of the version chart
	maxTimeBins  = 240
)

// pathClass and statusClass give CSS classes from fixed tables, so no
// input decides a class name.
var pathClass = map[catalog.Path]string{
	catalog.PathScan: "p-scan", catalog.PathQuery: "p-query", catalog.PathLoad: "p-load",
	catalog.PathBackground: "p-bg", catalog.PathLifecycle: "p-life", catalog.PathUnknown: "p-unk",
}

var statusClass = map[catalog.Status]string{
	catalog.StatusAffected: "s-aff", catalog.StatusFixedLater: "s-aff", catalog.StatusAffectedNoFix: "s-nofix",
	catalog.StatusFixed: "s-fixed", catalog.StatusLikelyFixed: "s-vu",
	catalog.StatusVersionUnknown: "s-vu", catalog.StatusNoKnownDefect: "s-new",
}

// statusOrder is the display order of the statuses.
var statusOrder = []catalog.Status{catalog.StatusAffected, catalog.StatusFixedLater, catalog.StatusAffectedNoFix,
	catalog.StatusFixed, catalog.StatusLikelyFixed, catalog.StatusVersionUnknown, catalog.StatusNoKnownDefect}

func classOf[K comparable](m map[K]string, k K) string {
	if c, ok := m[k]; ok {
		return c
	}
	return "p-other"
}

type page struct {
	Title, Generated              string
	Crashes, NBuckets             int
	Known, KnownBuckets           int
	New, NewBuckets               int
	Paths                         []pathStat
	PathBar                       []barSeg
	Revisions, Algorithms         []string
	Products, PathNames, Statuses []string
	Rows                          []row
	Time                          timeChart
	Versions                      barChart
	StatusChart                   barChart
	Sections                      []section
	Omitted                       int
	UnplacedDays                  int // crashes of buckets files between first and last date
}

type pathStat struct {
	Name, Class      string
	Crashes, Buckets int
	Pct              string
}

type barSeg struct {
	X, W, Class, Title string
}

type row struct {
	Rank                        int
	Anchor                      string
	ID, Key, Kind               string
	Path, PathClass, Area       string
	Products                    string
	Defect, DefectTitle         string
	DefectLink                  string
	Status, StatusClass, Advice string
	Count                       int
	Versions                    string
	First, Last                 string
	FirstSort, LastSort         string
	Spark                       string // SVG path data
	SparkW                      int
	SparkTitle                  string
	Section                     bool
}

type section struct {
	Anchor, ID, Key, Kind       string
	Path, PathClass, Area       string
	PathRule, PathConfidence    string
	Status, StatusClass, Advice string
	Defect                      *defectView
	Count                       int
	Products, Versions          string
	Rep                         *repView
	Frames                      []frameView
	FramesMore                  int
	Trace                       []string
	TraceMore                   int
	Evidence                    []string
	EvidenceMore                int
	Attributes                  []string
	SimilarDefects              []similarDefect
	SimilarBuckets              []similarBucket
	Locations                   []string
	LocationsMore               int
	Groups                      []groupView
	Threads                     int
	Corrupted                   int
	StatusCounts                string
}

type defectView struct {
	ID, Title, Workaround, Confidence string
	Links                             []linkView
	Affected, Fixed, FixedLikely      string
}

// linkView is a defect link: a link when it is an http(s) URL (Href),
// else text.
type linkView struct {
	Text string
	Href bool
}

// httpLink reports whether l is an absolute http or https URL with a
// host: the only links the page makes. Anything else a buckets file or
// a catalog may hold (a relative path, which would open a file beside a
// page read from file://, //host, mailto:) is shown as text.
func httpLink(l string) bool {
	if l != strings.TrimSpace(l) {
		return false
	}
	u, err := url.Parse(l)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) && u.Host != ""
}

type repView struct {
	Where, Product, Version, Build, Kind, Signal, Fault, Message, Corrupted, Time, Thread string
	Formats                                                                               string
}

type frameView struct {
	Index         int
	Name, Where   string
	Inlined, Java bool
}

type similarDefect struct {
	ID, Title, Score, Shared string
}

type similarBucket struct {
	ID, Key, Score, Anchor string
}

type groupView struct {
	Count   int
	Crashed bool
	States  string
	Names   string
	Frames  []string
	More    int
}

type timeChart struct {
	Unit    string // day, week, month or year
	W, H    int
	Rects   []rect
	Labels  []axisLabel
	Max     int
	Legend  []pathStat
	Empty   bool
	Undated int
	Bins    int
}

type rect struct {
	X, Y, W, H, Class, Title string
}

type axisLabel struct {
	X, Y, Text, Anchor string
}

type barChart struct {
	W, H  int
	Bars  []bar
	Empty bool
	Note  string
}

type bar struct {
	Y, TextY, W, NumX, Label, Class, Title string
	N                                      int
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// clipLeft shortens s to its last n runes, marking the cut: the end of a
// path names the file.
func clipLeft(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return "…" + string(r[len(r)-n:])
}

func ff(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// dayOf returns the UTC date of t, "" when t is zero.
func dayOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// fill completes what a bucket from a buckets file lacks, from what it
// has: all crashes on one date when first and last times fall on it, all
// on one version when one version was seen. unplaced counts the crashes it
// could not put on a date.
func fill(b *Bucket) (unplaced int) {
	if b.Days == nil {
		fd, ld := dayOf(b.FirstTime), dayOf(b.LastTime)
		switch {
		case fd == "":
			b.Undated = b.Count
		case fd == ld:
			b.Days = map[string]int{fd: b.Count}
		default:
			b.Days = map[string]int{fd: 1, ld: 1}
			unplaced = max(b.Count-2, 0)
			if b.Count < 2 {
				b.Days = map[string]int{ld: b.Count}
			}
		}
	}
	if b.VersionCounts == nil {
		switch len(b.Versions) {
		case 0:
			b.VersionCounts = map[string]int{"": b.Count}
		case 1:
			b.VersionCounts = map[string]int{b.Versions[0]: b.Count}
		default:
			b.VersionCounts = map[string]int{severalVersions: b.Count}
		}
	}
	return unplaced
}

// mainStatus returns the status most of a bucket's crashes have (ties:
// the more urgent one) and its advice.
func mainStatus(b *Bucket) (catalog.Status, string) {
	best, bestN := b.Status, b.Statuses[b.Status]
	rank := func(s catalog.Status) int {
		if i := slices.Index(statusOrder, s); i >= 0 {
			return i
		}
		return len(statusOrder)
	}
	for _, s := range slices.Sorted(maps.Keys(b.Statuses)) {
		n := b.Statuses[s]
		if n > bestN || n == bestN && rank(s) < rank(best) {
			best, bestN = s, n
		}
	}
	if best == b.Status {
		return best, b.Advice
	}
	if a, ok := b.Advices[best]; ok {
		return best, a
	}
	return b.Status, b.Advice
}

// severalVersions labels crashes of a buckets-file bucket that saw
// several versions (the file does not say how many crashed on each).
const severalVersions = "\x00several"

func build(ctx context.Context, in []Bucket, opts Options) (*page, error) {
	bs := make([]Bucket, len(in))
	copy(bs, in)
	p := &page{Title: cmp.Or(opts.Title, "Crash report"), NBuckets: len(bs)}
	if !opts.Generated.IsZero() {
		p.Generated = opts.Generated.UTC().Format(time.RFC3339)
	}
	for i := range bs {
		p.UnplacedDays += fill(&bs[i])
		bs[i].Status, bs[i].Advice = mainStatus(&bs[i])
	}
	// Rank: count descending, then path order, key, defect.
	order := map[catalog.Path]int{}
	for i, pa := range catalog.Paths() {
		order[pa] = i
	}
	idx := make([]int, len(bs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := &bs[a], &bs[b]
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(rankPath(order, x.Path), rankPath(order, y.Path)),
			cmp.Compare(x.Path, y.Path), cmp.Compare(x.Key, y.Key), cmp.Compare(defectID(x), defectID(y)))
	})

	pathCrashes, pathBuckets := map[catalog.Path]int{}, map[catalog.Path]int{}
	products, revs, algs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	statusBuckets := map[catalog.Status]int{}
	versions := map[string]int{}
	for i := range bs {
		b := &bs[i]
		p.Crashes += b.Count
		if b.Defect != nil {
			p.Known += b.Count
			p.KnownBuckets++
		} else {
			p.New += b.Count
			p.NewBuckets++
		}
		pathCrashes[b.Path] += b.Count
		pathBuckets[b.Path]++
		statusBuckets[b.Status]++
		for _, pr := range b.Products {
			products[pr] = true
		}
		if r := b.Representative; r != nil && r.Classification != nil {
			revs[r.Classification.CatalogRevision] = true
			algs[r.Classification.SignatureAlgorithm] = true
		} else if r != nil && r.Signature != nil {
			algs[r.Signature.Algorithm] = true
		}
		for v, n := range b.VersionCounts {
			versions[v] += n
		}
	}
	delete(revs, "")
	delete(algs, "")
	p.Revisions, p.Algorithms, p.Products = slices.Sorted(maps.Keys(revs)), slices.Sorted(maps.Keys(algs)), slices.Sorted(maps.Keys(products))

	// Paths: the catalog's in order, then any other a buckets file names.
	var paths []catalog.Path
	for _, pa := range catalog.Paths() {
		if pathBuckets[pa] > 0 {
			paths = append(paths, pa)
		}
	}
	for _, pa := range slices.Sorted(maps.Keys(pathBuckets)) {
		if _, known := order[pa]; !known {
			paths = append(paths, pa)
		}
	}
	x := 0.0
	for _, pa := range paths {
		ps := pathStat{Name: string(pa), Class: classOf(pathClass, pa), Crashes: pathCrashes[pa], Buckets: pathBuckets[pa]}
		w := 100 * float64(ps.Crashes) / float64(max(p.Crashes, 1))
		ps.Pct = strconv.FormatFloat(w, 'f', 0, 64)
		p.Paths = append(p.Paths, ps)
		p.PathNames = append(p.PathNames, ps.Name)
		p.PathBar = append(p.PathBar, barSeg{X: ff(x), W: ff(w), Class: ps.Class, Title: fmt.Sprintf("%s: %d %s (%s%%)", ps.Name, ps.Crashes, plural(ps.Crashes, "crash", "crashes"), ps.Pct)})
		x += w
	}
	for _, s := range statusOrder {
		if statusBuckets[s] > 0 {
			p.Statuses = append(p.Statuses, string(s))
		}
	}
	for _, s := range slices.Sorted(maps.Keys(statusBuckets)) {
		if !slices.Contains(statusOrder, s) {
			p.Statuses = append(p.Statuses, string(s))
		}
	}

	bins := newBinner(bs)
	p.Time = timeChartOf(bs, paths, bins)
	p.Versions = versionChart(versions)
	p.StatusChart = statusChart(p.Statuses, statusBuckets)

	// Anchors by rank; similar buckets link to the first bucket with that
	// id on the same path.
	anchorOf := map[string]string{}
	nsec := len(bs)
	if opts.MaxSections > 0 {
		nsec = min(nsec, opts.MaxSections)
	}
	p.Omitted = len(bs) - nsec
	for rank, i := range idx {
		if rank >= nsec {
			break
		}
		k := string(bs[i].Path) + "\x00" + bs[i].ID
		if _, ok := anchorOf[k]; !ok {
			anchorOf[k] = "b" + strconv.Itoa(rank+1)
		}
	}
	p.Rows = make([]row, 0, len(bs))
	for rank, i := range idx {
		if rank&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		b := &bs[i]
		r := rowOf(b, rank+1, bins)
		r.Section = rank < nsec
		p.Rows = append(p.Rows, r)
		if r.Section {
			p.Sections = append(p.Sections, sectionOf(b, r, anchorOf))
		}
	}
	return p, nil
}

func rankPath(order map[catalog.Path]int, p catalog.Path) int {
	if i, ok := order[p]; ok {
		return i
	}
	return len(order)
}

func defectID(b *Bucket) string {
	if b.Defect == nil {
		return ""
	}
	return b.Defect.ID
}

func versionLabel(v string) string {
	switch v {
	case "":
		return "unknown"
	case severalVersions:
		return "several (buckets file)"
	}
	return clip(v, clipLabel)
}

func rowOf(b *Bucket, rank int, bins *binner) row {
	r := row{
		Rank: rank, Anchor: "b" + strconv.Itoa(rank), ID: b.ID, Key: clip(b.Key, clipKey), Kind: clip(b.Kind, clipName),
		Path: string(b.Path), PathClass: classOf(pathClass, b.Path), Area: clip(b.Area, clipLabel*2),
		Products: strings.Join(b.Products, " "),
		Status:   string(b.Status), StatusClass: classOf(statusClass, b.Status), Advice: clip(b.Advice, clipName*2),
		Count: b.Count, Versions: clip(strings.Join(b.Versions, ", "), clipName),
	}
	if b.Defect != nil {
		r.Defect, r.DefectTitle = clip(b.Defect.ID, clipName), clip(b.Defect.Title, clipName)
		if i := slices.IndexFunc(b.Defect.Links, httpLink); i >= 0 {
			r.DefectLink = b.Defect.Links[i]
		}
	}
	r.First, r.FirstSort = seen(b.FirstTime, b.First.Source, b.First.Line)
	r.Last, r.LastSort = seen(b.LastTime, b.Last.Source, b.Last.Line)
	r.Spark, r.SparkW, r.SparkTitle = bins.spark(b)
	return r
}

// seen shows a first/last sighting: its date when the crash printed a
// time, else its location.
func seen(t time.Time, src string, line int) (show, sort string) {
	if !t.IsZero() {
		s := t.UTC().Format("2006-01-02 15:04")
		return s, s
	}
	if src == "" {
		return "", ""
	}
	return clipLeft(src, clipLabel+12) + ":" + strconv.Itoa(line), ""
}

func sectionOf(b *Bucket, r row, anchorOf map[string]string) section {
	s := section{
		Anchor: r.Anchor, ID: b.ID, Key: clip(b.Key, clipKey*4), Kind: r.Kind,
		Path: r.Path, PathClass: r.PathClass, Area: r.Area,
		Status: r.Status, StatusClass: r.StatusClass, Advice: clip(b.Advice, clipName*4),
		Count: b.Count, Products: r.Products, Versions: clip(strings.Join(b.Versions, ", "), clipName*2),
		Threads: b.Threads, Corrupted: b.Corrupted,
	}
	var sc []string
	for _, st := range slices.Sorted(maps.Keys(b.Statuses)) {
		sc = append(sc, fmt.Sprintf("%s %d", clip(string(st), clipLabel), b.Statuses[st]))
	}
	if len(sc) > 1 {
		s.StatusCounts = strings.Join(sc, ", ")
	}
	if d := b.Defect; d != nil {
		dv := &defectView{ID: clip(d.ID, clipName), Title: clip(d.Title, clipName*2), Workaround: clip(d.Workaround, clipName*4),
			Confidence: clip(d.Confidence, clipLabel),
			Affected:   clip(strings.Join(d.Affected, ", "), clipName), Fixed: clip(strings.Join(d.Fixed, ", "), clipName),
			FixedLikely: clip(strings.Join(d.FixedLikely, ", "), clipName)}
		for _, l := range d.Links[:min(len(d.Links), 8)] {
			dv.Links = append(dv.Links, linkView{Text: l, Href: httpLink(l)})
		}
		s.Defect = dv
	}
	for _, sb := range b.Similar[:min(len(b.Similar), 10)] {
		s.SimilarBuckets = append(s.SimilarBuckets, similarBucket{ID: sb.ID, Key: clip(sb.Key, clipName), Score: strconv.FormatFloat(sb.Score, 'f', 2, 64),
			Anchor: anchorOf[string(b.Path)+"\x00"+sb.ID]})
	}
	for _, l := range b.Locations[:min(len(b.Locations), maxShownLocs)] {
		s.Locations = append(s.Locations, fmt.Sprintf("%s:%d-%d", clip(l.Source, clipName), l.StartLine, l.EndLine))
	}
	if len(b.Locations) > 0 {
		s.LocationsMore = max(b.LocationCount, len(b.Locations)) - len(s.Locations)
	} else {
		// A buckets file lists the distinct sources only.
		for _, src := range b.Sources[:min(len(b.Sources), maxShownLocs)] {
			s.Locations = append(s.Locations, clip(src, clipName))
		}
		s.LocationsMore = max(b.SourceCount, len(b.Sources)) - len(s.Locations)
	}
	for _, g := range b.Groups[:min(len(b.Groups), maxGroups)] { // a buckets file's are not clipped
		gv := groupView{Count: g.Count, Crashed: g.Crashed, States: clip(strings.Join(g.States, ", "), clipName)}
		gv.Names = clip(strings.Join(g.NameSamples, ", "), clipName)
		for _, f := range g.Frames[:min(len(g.Frames), 8)] {
			gv.Frames = append(gv.Frames, clip(f, clipName))
		}
		gv.More = len(g.Frames) - len(gv.Frames)
		s.Groups = append(s.Groups, gv)
	}
	rep := b.Representative
	if rep == nil || rep.Crash == nil {
		return s
	}
	c := rep.Crash
	rv := &repView{
		Where:   fmt.Sprintf("%s:%d-%d", clip(c.Source, clipName), c.StartLine, c.EndLine),
		Product: clip(string(c.Product), clipLabel), Version: clip(c.Version, clipLabel*2), Build: clip(c.Build, clipLabel*2),
		Kind: clip(string(c.Kind), clipLabel), Signal: clip(strings.TrimSpace(c.Signal+" "+c.SignalReason), clipName),
		Message: clip(cmp.Or(c.Message, c.CheckExpr, c.ExceptionType, c.SanitizerBug), clipName*2),
		Formats: clip(strings.Join(c.Formats, "+"), clipLabel),
	}
	if c.HasFaultAddress {
		rv.Fault = c.FaultAddress.String()
	}
	if c.Corrupted {
		rv.Corrupted = cmp.Or(clip(c.CorruptedReason, clipName), "corrupted")
	}
	if !c.Time.IsZero() {
		rv.Time = c.Time.UTC().Format(time.RFC3339)
	}
	var th *symbolize.Thread
	if th = c.CrashingThread(); th == nil && len(c.Threads) > 0 {
		th = &c.Threads[0]
	}
	if th != nil {
		rv.Thread = clip(strings.TrimSpace(strconv.FormatInt(th.ID, 10)+" "+th.Name), clipName)
		for _, f := range th.Frames[:min(len(th.Frames), maxFrames)] {
			s.Frames = append(s.Frames, frameOf(f))
		}
		s.FramesMore = len(th.Frames) - len(s.Frames)
	}
	s.Rep = rv
	if sig := rep.Signature; sig != nil {
		s.Trace = clipAll(sig.Trace, maxTrace, clipName*2)
		s.TraceMore = len(sig.Trace) - len(s.Trace)
		s.Attributes = clipAll(sig.Attributes, 20, clipName)
	}
	if v := rep.Classification; v != nil {
		s.PathRule, s.PathConfidence = clip(v.PathRule, clipName), clip(string(v.PathConfidence), clipLabel)
		s.Evidence = clipAll(v.Evidence, maxEvidence, clipName*2)
		s.EvidenceMore = len(v.Evidence) - len(s.Evidence)
		for _, sd := range v.Similar[:min(len(v.Similar), 5)] {
			s.SimilarDefects = append(s.SimilarDefects, similarDefect{ID: clip(sd.ID, clipName), Title: clip(sd.Title, clipName),
				Score: strconv.FormatFloat(sd.Score, 'f', 2, 64), Shared: clip(strings.Join(sd.Shared, ", "), clipName)})
		}
	}
	return s
}

func clipAll(ss []string, n, width int) []string {
	out := make([]string, 0, min(len(ss), n))
	for _, s := range ss[:min(len(ss), n)] {
		out = append(out, clip(s, width))
	}
	return out
}

func frameOf(f symbolize.Frame) frameView {
	name := cmp.Or(f.Demangled, f.Function)
	if name == "" {
		switch {
		case f.Module != "" && f.HasOffset:
			name = f.Module + "+" + f.Offset.String()
		case f.Module != "":
			name = f.Module
		case f.PC != 0:
			name = f.PC.String()
		default:
			name = "??"
		}
	}
	fv := frameView{Index: f.Index, Name: clip(name, clipName), Inlined: f.Inlined, Java: f.Java}
	if f.File != "" {
		fv.Where = clip(f.File, clipName)
		if f.Line > 0 {
			fv.Where += ":" + strconv.Itoa(f.Line)
		}
	} else if f.Module != "" && (f.Demangled != "" || f.Function != "") {
		fv.Where = clip(f.Module, clipName)
	}
	return fv
}
