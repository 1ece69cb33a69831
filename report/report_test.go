package report_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/report"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/report")

// bundledInputs are the inputs of the README's report command.
var bundledInputs = []string{"../testdata/corpus", "../testdata/formats", "../testdata/core"}

// bundled runs the pipeline over the bundled crash texts and cores once.
var bundled = sync.OnceValues(func() ([]*pipeline.Result, error) {
	ctx := context.Background()
	p, err := pipeline.New(ctx, pipeline.Options{NoSystemDebugDirs: true})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var out []*pipeline.Result
	for res, err := range p.Run(ctx, nil, bundledInputs...) {
		if err != nil {
			if errors.Is(err, pipeline.ErrSkipped) {
				continue // the executables and libraries beside the cores
			}
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
})

func bundledBuckets(t testing.TB) []report.Bucket {
	t.Helper()
	results, err := bundled()
	require.NoError(t, err)
	require.NotEmpty(t, results)
	col := report.NewCollector()
	for _, r := range results {
		col.Add(r)
	}
	return col.Buckets(0.8)
}

func render(t testing.TB, bs []report.Bucket, opts report.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.Render(context.Background(), &buf, bs, opts))
	return buf.Bytes()
}

// voidElements close themselves in HTML.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// pageTags are every element the page template uses: anything else in a
// page came from input and means markup was injected.
var pageTags = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "link": true, "style": true,
	"body": true, "header": true, "h1": true, "p": true, "main": true, "section": true, "div": true, "b": true, "span": true,
	"svg": true, "rect": true, "ul": true, "li": true, "i": true, "h2": true, "form": true, "label": true, "select": true,
	"option": true, "input": true, "output": true, "table": true, "thead": true, "tr": true, "th": true, "tbody": true,
	"td": true, "small": true, "br": true, "a": true, "code": true, "path": true, "figure": true, "figcaption": true,
	"line": true, "text": true, "g": true, "article": true, "h3": true, "dl": true, "dt": true, "dd": true, "h4": true,
	"ol": true, "em": true, "footer": true, "script": true}

type pageCheck struct {
	tags      map[string]int
	hrefs     []string
	scripts   int
	text      strings.Builder
	rowIDs    []string
	rowCounts []string
}

// checkPage tokenizes page and fails unless it is well-formed: every
// element closes in order, only the template's elements occur, no src
// attribute, and the only external links are the defects' links.
func checkPage(t *testing.T, page []byte, defectLinks map[string]bool) *pageCheck {
	t.Helper()
	pc := &pageCheck{tags: map[string]int{}}
	z := html.NewTokenizer(bytes.NewReader(page))
	var stack []string
	inTop, inRow, col := false, false, 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			require.ErrorIs(t, z.Err(), io.EOF, "tokenizing the page")
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			pc.tags[tok.Data]++
			require.True(t, pageTags[tok.Data], "element <%s> is not one the template writes: injected markup", tok.Data)
			for _, a := range tok.Attr {
				require.False(t, strings.HasPrefix(a.Key, "on"), "event handler attribute %s=%q", a.Key, a.Val)
				require.NotEqual(t, "src", a.Key, "a src attribute loads something: %q", a.Val)
				require.NotEqual(t, "style", a.Key, "no inline style attributes: %q", a.Val)
				if a.Key == "href" {
					pc.hrefs = append(pc.hrefs, a.Val)
					u, err := url.Parse(a.Val)
					require.NoError(t, err)
					if u.Scheme != "" || u.Host != "" {
						if a.Val != "data:," {
							require.True(t, defectLinks[a.Val], "external link %q is not a defect link", a.Val)
						}
					}
				}
				if tok.Data == "tr" && inTop && a.Key == "data-path" {
					inRow, col = true, 0
				}
			}
			if tok.Data == "script" {
				pc.scripts++
			}
			if tok.Data == "table" {
				for _, a := range tok.Attr {
					if a.Key == "id" && a.Val == "top" {
						inTop = true
					}
				}
			}
			if inRow && tok.Data == "td" {
				col++
			}
			if inRow && tok.Data == "code" && col == 3 && len(pc.rowIDs) == len(pc.rowCounts) {
				z.Next()
				pc.rowIDs = append(pc.rowIDs, z.Token().Data)
				stack = append(stack, "code")
				continue
			}
			if tt == html.StartTagToken && !voidElements[tok.Data] {
				stack = append(stack, tok.Data)
			}
		case html.EndTagToken:
			require.NotEmpty(t, stack, "</%s> closes nothing", tok.Data)
			require.Equal(t, stack[len(stack)-1], tok.Data, "</%s> closes <%s> (open: %v)", tok.Data, stack[len(stack)-1], stack)
			stack = stack[:len(stack)-1]
			if tok.Data == "table" {
				inTop = false
			}
			if tok.Data == "tr" {
				inRow = false
			}
		case html.TextToken:
			if inRow && col == 5 && stack[len(stack)-1] == "td" && strings.TrimSpace(tok.Data) != "" {
				pc.rowCounts = append(pc.rowCounts, tok.Data)
			}
			if len(stack) == 0 || stack[len(stack)-1] != "script" && stack[len(stack)-1] != "style" {
				pc.text.WriteString(tok.Data)
				pc.text.WriteByte(' ')
			}
		}
	}
	require.Empty(t, stack, "elements left open")
	require.Equal(t, 1, pc.scripts, "exactly one script, the page's own")
	return pc
}

// Text returns the page's text with white space collapsed.
func (pc *pageCheck) Text() string { return strings.Join(strings.Fields(pc.text.String()), " ") }

func defectLinksOf(bs []report.Bucket) map[string]bool {
	m := map[string]bool{}
	for _, b := range bs {
		if b.Defect != nil {
			for _, l := range b.Defect.Links {
				m[l] = true
			}
		}
	}
	return m
}

func TestRenderBundled(t *testing.T) {
	bs := bundledBuckets(t)
	page := render(t, bs, report.Options{})
	t.Logf("bundled data: %d buckets, page %d bytes", len(bs), len(page))
	assert.Less(t, len(page), 2<<20, "the README promises a page under 2 MB for the bundled data")

	// Deterministic: the same results in the same order give the same bytes.
	require.Equal(t, page, render(t, bundledBuckets(t), report.Options{}))

	pc := checkPage(t, page, defectLinksOf(bs))
	// One row and one section per bucket; the rows are ranked by count.
	require.Len(t, pc.rowIDs, len(bs))
	require.Equal(t, len(bs), pc.tags["article"])
	var counts []int
	total := 0
	for _, s := range pc.rowCounts {
		var n int
		_, err := fmt.Sscan(s, &n)
		require.NoError(t, err)
		counts = append(counts, n)
		total += n
	}
	require.True(t, slices.IsSortedFunc(counts, func(a, b int) int { return b - a }), "rows ranked by count: %v", counts)
	want := 0
	maxCount := 0
	for _, b := range bs {
		want += b.Count
		maxCount = max(maxCount, b.Count)
	}
	require.Equal(t, want, total)
	require.Equal(t, maxCount, counts[0])

	text := pc.Text()
	// The summary names the catalog revision and the signature algorithm.
	cat, err := catalog.Default()
	require.NoError(t, err)
	assert.Contains(t, text, cat.Revision())
	assert.Contains(t, text, signature.Algorithm)
	// Known defects show their status and advice; thread dumps their groups.
	var known *report.Bucket
	for i := range bs {
		if bs[i].Defect != nil {
			known = &bs[i]
			break
		}
	}
	require.NotNil(t, known, "the corpus has known defects")
	assert.Contains(t, text, known.Defect.ID)
	assert.Contains(t, text, known.Advice)
	assert.Contains(t, text, "Thread groups")
	assert.Contains(t, text, "inlined", "the cores show inlined frames")
	assert.Contains(t, string(page), `id="chart-time"`)
	assert.Contains(t, string(page), `<form id="filters" class="controls" hidden>`, "without JavaScript the filters stay hidden")

	if dir := os.Getenv("CRASHSIG_REPORT_OUT"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "bundled.html"), page, 0o644))
	}
}

// synth makes a Result as the pipeline would, without parsing.
type synth struct {
	source       string
	line         int
	product      string
	version      string
	path         catalog.Path
	area         string
	kind         string
	frames       []string
	defect       *catalog.DefectRef
	status       catalog.Status
	advice       string
	time         time.Time
	corrupted    bool
	threads      int
	message      string
	evidence     []string
	similar      []catalog.Similar
	inlinedFrame string
}

func (s synth) result() *pipeline.Result {
	c := &symbolize.Crash{Source: s.source, StartLine: s.line, EndLine: s.line + 10, Product: symbolize.Product(s.product),
		Version: s.version, Kind: symbolize.KindSignal, Signal: s.kind, Time: s.time, Corrupted: s.corrupted, Message: s.message}
	if s.corrupted {
		c.CorruptedReason = "two dumps interleaved"
	}
	th := symbolize.Thread{ID: 4242, Name: "scan_worker", Crashed: true}
	for i, f := range s.frames {
		th.Frames = append(th.Frames, symbolize.Frame{Index: i, Function: f, File: "be/src/x.cpp", Line: 10 + i})
		if i == 0 && s.inlinedFrame != "" {
			th.Frames = append(th.Frames, symbolize.Frame{Index: i, Function: s.inlinedFrame, Inlined: true})
		}
	}
	c.Threads = append(c.Threads, th)
	for i := 1; i < s.threads; i++ {
		c.Threads = append(c.Threads, symbolize.Thread{ID: int64(5000 + i), Name: "pthread-" + fmt.Sprint(i)})
	}
	key := s.kind + " | " + strings.Join(s.frames, " | ")
	sig := &signature.Signature{Algorithm: signature.Algorithm, Kind: s.kind, Frames: s.frames, Key: key,
		ID: fmt.Sprintf("%016x", len(key)*7919+len(s.frames)), Trace: []string{"frame 0 " + s.frames[0] + ": kept", "frame 1: skipped (mechanism)"}}
	v := &catalog.Verdict{Path: s.path, Area: s.area, Defect: s.defect, Status: s.status, Advice: s.advice,
		Evidence: s.evidence, Similar: s.similar, Version: s.version, CatalogRevision: "test-rev", SignatureAlgorithm: signature.Algorithm}
	r := &pipeline.Result{SchemaVersion: pipeline.SchemaVersion, Crash: c, Signature: sig, Classification: v}
	if s.threads > 1 {
		r.ThreadGroups = []signature.Group{{Frames: s.frames, Key: key, Count: 1, Crashed: true},
			{Frames: []string{"pthread_cond_wait", "ThreadPool::work"}, Key: "parked", Count: s.threads - 1, States: []string{"WAITING"}, NameSamples: []string{"pthread-1"}}}
	}
	return r
}

var day0 = time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)

// synthetic is a small fleet week: a known scan defect on two versions,
// a new background crash growing over the days, a thread dump.
func synthetic() []*pipeline.Result {
	sr := &catalog.DefectRef{ID: "SR-1234-segment-page-decode", Title: "Scan crashes decoding a segment page",
		Links: []string{"https://github.com/StarRocks/starrocks/issues/1234"}, Affected: []string{"3.3.0-3.3.8"}, Fixed: []string{"3.3.9"}}
	var out []*pipeline.Result
	for i := range 6 {
		v := "3.3.5"
		st, adv := catalog.StatusAffected, "known defect SR-1234-segment-page-decode: upgrade to 3.3.9"
		if i%3 == 2 {
			v = "3.3.9"
			st, adv = catalog.StatusFixed, "known defect SR-1234-segment-page-decode, but 3.3.9 has the fix: a regression or another bug"
		}
		out = append(out, synth{source: fmt.Sprintf("fleet/be%d/be.out", i%3), line: 100 * (i + 1), product: "starrocks", version: v,
			path: catalog.PathScan, area: "segment-read", kind: "SIGSEGV",
			frames: []string{"starrocks::BinaryPlainPageDecoder::next_batch", "starrocks::ScalarColumnIterator::next_batch", "starrocks::SegmentIterator::_read"},
			defect: sr, status: st, advice: adv, time: day0.Add(time.Duration(i) * 26 * time.Hour),
			evidence: []string{"frame 0 matches scan rule segment-read"}, inlinedFrame: "starrocks::PageDecoder::decode_bitshuffle"}.result())
	}
	for i := range 9 {
		out = append(out, synth{source: "fleet/be3/be.out", line: 50 + 20*i, product: "starrocks", version: "3.3.5",
			path: catalog.PathBackground, area: "lake-vacuum", kind: "SIGABRT",
			frames: []string{"starrocks::lake::vacuum_tablet", "starrocks::lake::TabletManager::vacuum"}, status: catalog.StatusNoKnownDefect,
			advice: "new: no known defect matches; closest is SR-99-vacuum at 0.62", time: day0.Add(time.Duration(4+i/3) * 24 * time.Hour),
			similar:   []catalog.Similar{{ID: "SR-99-vacuum", Title: "vacuum crash", Score: 0.62, Shared: []string{"starrocks::lake::*"}}},
			corrupted: i == 0}.result())
	}
	out = append(out, synth{source: "tickets/jstack.txt", line: 1, product: "doris", path: catalog.PathUnknown, kind: "THREADS",
		frames: []string{"doris::ThreadPool::dispatch_thread"}, status: catalog.StatusNoKnownDefect, advice: "new", threads: 35000}.result())
	return out
}

func syntheticBuckets() []report.Bucket {
	col := report.NewCollector()
	for _, r := range synthetic() {
		col.Add(r)
	}
	return col.Buckets(0.8)
}

func TestGolden(t *testing.T) {
	bs := syntheticBuckets()
	page := render(t, bs, report.Options{Title: "Fleet week 45", Generated: time.Date(2026, 11, 9, 12, 0, 0, 0, time.UTC)})
	golden := "../testdata/golden/report/synthetic.html"
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, page, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./report -update")
	require.Equal(t, string(want), string(page), "golden differs: go test ./report -update and read the diff")

	pc := checkPage(t, page, defectLinksOf(bs))
	text := pc.Text()
	// Ranked: the background bucket (9) above the scan defect (6) above the dump.
	require.Len(t, pc.rowCounts, 3)
	assert.Equal(t, []string{"9", "6", "1"}, pc.rowCounts)
	assert.Contains(t, text, "upgrade to 3.3.9")
	assert.Contains(t, text, "affected 4, should-already-be-fixed 2", "the statuses of a bucket whose versions differ")
	assert.Contains(t, text, "3.3.5, 3.3.9")
	assert.Contains(t, text, "fleet/be1/be.out:200-210", "every crash's location")
	assert.Contains(t, text, "35000 threads")
	assert.Contains(t, text, "34999", "35,000 parked threads are one group with its count")
	assert.Contains(t, text, "SR-99-vacuum 0.62", "similar defects with their scores")
	assert.Contains(t, text, "corrupted")
	assert.Contains(t, text, "Crashes per day")
	assert.Contains(t, text, "generated 2026-11-09T12:00:00Z")
}
