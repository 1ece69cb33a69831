package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/report"
	"github.com/crashsig/crashsig/symbolize"
)

// hostile is crash text written to break out of every context the page
// has: element text, attributes, URLs, <style>, <script>, SVG.
const hostile = `</style></script><script>alert(1)</script><img src=x onerror=alert(2)>"'><svg onload=alert(3)>` +
	"</textarea>--><!--\x00\u2028`${alert(4)}`"

// hostileBuckets are the synthetic buckets with hostile text in every
// field a crash or a buckets file can set.
func hostileBuckets() []report.Bucket {
	huge := strings.Repeat("std::vector<std::basic_string<char>>::", 40000) // 1.5 MB name
	results := synthetic()
	for i, r := range results {
		r.Source = hostile + "/be.out"
		r.Product = symbolize.Product("starrocks" + hostile[:9])
		r.Version = `3.3.5"><script>alert(5)</script>`
		r.Message = hostile
		r.Threads[0].Frames[0].Function = hostile + huge
		r.Threads[0].Name = hostile
		r.Signature.Key = hostile + r.Signature.Key + huge
		r.Signature.Trace = append(r.Signature.Trace, hostile)
		r.Classification.Area = hostile
		r.Classification.Advice = hostile
		r.Classification.Evidence = append(r.Classification.Evidence, hostile)
		r.Classification.Status = catalog.Status(string(r.Classification.Status) + hostile[:8])
		if i == 0 {
			r.Classification.Path = catalog.Path(hostile)
		}
		if r.Classification.Defect != nil {
			d := *r.Classification.Defect
			d.Title, d.Workaround = hostile, hostile
			d.Links = []string{"javascript:alert(6)", `https://example.org/"><script>alert(7)</script>`}
			r.Classification.Defect = &d
		}
		if len(r.ThreadGroups) > 1 {
			r.ThreadGroups[1].NameSamples = []string{hostile}
			r.ThreadGroups[1].Frames = []string{hostile + huge}
		}
	}
	col := report.NewCollector()
	for _, r := range results {
		col.Add(r)
	}
	return col.Buckets(0.8)
}

func TestHostileTextStaysInert(t *testing.T) {
	bs := hostileBuckets()
	page := render(t, bs, report.Options{Title: hostile})
	s := string(page)
	t.Logf("page %d bytes", len(page))
	assert.Less(t, len(page), 400<<10, "huge names are clipped, not copied into every place")
	pc := checkPage(t, page, map[string]bool{`https://example.org/%22%3e%3cscript%3ealert%287%29%3c/script%3e`: true})
	for _, h := range pc.hrefs {
		assert.False(t, strings.HasPrefix(strings.ToLower(h), "javascript:"), "href %q", h)
	}
	assert.NotContains(t, pc.hrefs, "#ZgotmplZ", "the javascript: link is not made a link at all")
	assert.Contains(t, s, "<code>javascript:alert(6)</code>", "the javascript: link is shown as text")
	assert.Equal(t, 1, strings.Count(s, "<script"), "only the page's own script element")
	assert.Equal(t, 1, strings.Count(s, "</script"), "no script end tag from input")
	assert.Equal(t, 1, strings.Count(s, "</style"), "no style end tag from input")
	assert.Equal(t, 1, strings.Count(s, "<svg")-strings.Count(s, `<svg class=`), "no svg element from input")
	assert.False(t, strings.Contains(s, "<img"), "no img element from input")
	assert.True(t, strings.Contains(s, "&lt;/style&gt;&lt;/script&gt;&lt;script&gt;alert(1)"), "the text is shown, escaped")
	assert.True(t, strings.Contains(pc.Text(), hostile[:40]), "the text reads as it was")
}

func TestReadBucketsFromCLI(t *testing.T) {
	// The buckets file as `crashsig buckets --json` writes it: the same
	// encoding the command uses for pipeline.Bucket.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	src := syntheticBuckets()
	for _, b := range src {
		require.NoError(t, enc.Encode(b.Bucket))
	}
	require.True(t, report.LooksLikeBuckets(buf.Bytes()))
	got, err := report.ReadBuckets(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Len(t, got, len(src))
	for i := range got {
		assert.Equal(t, src[i].Key, got[i].Key)
		assert.Equal(t, src[i].Count, got[i].Count)
		assert.Nil(t, got[i].Days, "the buckets file has no per-day counts")
	}
	page := render(t, got, report.Options{})
	pc := checkPage(t, page, defectLinksOf(got))
	assert.Equal(t, []string{"9", "6", "1"}, pc.rowCounts)
	text := pc.Text()
	// The scan bucket's crashes span days: only its first and last are placed.
	// 9 background crashes on 3 days and 6 scan crashes on 6 days: 7 + 4
	// lie between their first and last.
	assert.Contains(t, text, "11 crashes of the buckets file lie between their bucket's first and last date")
	assert.Contains(t, text, "several (buckets file)")

	// Merging a file read twice doubles the counts.
	merged := report.Merge(append(got, got...))
	require.Len(t, merged, len(got))
	for i := range got {
		assert.Equal(t, 2*got[i].Count, merged[i].Count)
		assert.Equal(t, got[i].Key, merged[i].Key)
	}

	// Extra fields written by a Collector's bucket round-trip.
	buf.Reset()
	for _, b := range src {
		require.NoError(t, enc.Encode(b))
	}
	full, err := report.ReadBuckets(&buf)
	require.NoError(t, err)
	assert.Equal(t, src[0].Days, full[0].Days)
	assert.Equal(t, render(t, src, report.Options{}), render(t, full, report.Options{}), "a round trip renders the same page")
}

func TestReadBucketsErrors(t *testing.T) {
	for name, in := range map[string]string{
		"not json":        "*** SIGSEGV address not mapped\n",
		"a classify line": `{"schema_version":1,"source":"be.out","start_line":1}` + "\n",
		"newer schema":    `{"schema_version":99,"key":"k","count":1,"path":"scan"}` + "\n",
		"no count":        `{"schema_version":1,"key":"k","path":"scan"}` + "\n",
		"negative":        `{"schema_version":1,"key":"k","count":1,"path":"scan","days":{"2026-01-01":-5}}` + "\n",
		"second line bad": `{"schema_version":1,"key":"k","count":1,"path":"scan"}` + "\n{oops\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := report.ReadBuckets(strings.NewReader(in))
			require.Error(t, err)
			assert.ErrorIs(t, err, report.ErrNotBuckets)
			var be *report.BucketsError
			require.ErrorAs(t, err, &be)
			assert.Positive(t, be.Line)
		})
	}
	assert.False(t, report.LooksLikeBuckets([]byte("*** Aborted at 1700000000")))
	assert.False(t, report.LooksLikeBuckets([]byte(`{"schema_version":1,"source":"x"}`)))
	assert.False(t, report.LooksLikeBuckets([]byte(`{"schema_version":1,"source":"x","start_line":1,"end_line":9,"input":"text","product":"doris","key"`)), "a cut classify --json line")
	assert.False(t, report.LooksLikeBuckets([]byte(`{"level":"fatal","schema_version":1,"key":"x"`)), "a cut JSON log line")
	bs, err := report.ReadBuckets(strings.NewReader("\n\n"))
	require.NoError(t, err)
	assert.Empty(t, bs)
}

func TestRenderStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := report.Render(ctx, &bytes.Buffer{}, syntheticBuckets(), report.Options{})
	require.ErrorIs(t, err, context.Canceled)
}

func TestRenderEmpty(t *testing.T) {
	page := render(t, nil, report.Options{})
	pc := checkPage(t, page, nil)
	assert.Contains(t, pc.Text(), "0 crashes in 0 buckets")
	assert.Contains(t, pc.Text(), "No crash printed a time.")
}

// TestBucketsCommandFile reads what `crashsig buckets --json` really
// writes, when the go tool is at hand to build it.
func TestBucketsCommandFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CLI")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	cmd := exec.Command(goBin, "run", "../examples/crashsig", "buckets", "--json", "--all", "../testdata/formats")
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, runWithin(cmd, 3*time.Minute))
	require.True(t, report.LooksLikeBuckets(out.Bytes()))
	// A head cut inside the first line is judged on the keys it shows.
	for _, n := range []int{40, 300, 1000} {
		assert.True(t, report.LooksLikeBuckets(out.Bytes()[:n]), "first %d bytes", n)
	}
	bs, err := report.ReadBuckets(&out)
	require.NoError(t, err)
	require.NotEmpty(t, bs)
	for _, b := range bs {
		require.NotNil(t, b.Representative, "every bucket line has its representative")
	}
	checkPage(t, render(t, bs, report.Options{}), defectLinksOf(bs))
}

func runWithin(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return nil // no crash found is not an error here
		}
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		return errors.New("timed out")
	}
}

func FuzzReadBuckets(f *testing.F) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, b := range syntheticBuckets() {
		_ = enc.Encode(b)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema_version":1,"key":"k","count":3,"path":"scan","days":{"2026-13-45":2,"2026-01-01":1},"first_time":"2026-01-01T00:00:00Z","last_time":"2020-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"schema_version":1,"key":"k","count":1,"path":"x","versions":["a","b"],"statuses":{"": 1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, err := report.ReadBuckets(bytes.NewReader(data))
		if err != nil {
			var be *report.BucketsError
			require.ErrorAs(t, err, &be)
			return
		}
		// Whatever parsed renders to a well-formed page.
		var out bytes.Buffer
		require.NoError(t, report.Render(context.Background(), &out, report.Merge(bs), report.Options{MaxSections: 20}))
		require.Equal(t, 1, strings.Count(out.String(), "<script"))
	})
}
