package report_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/report"
)

// A buckets file is input: counts near the int64 limit made the page's
// totals wrap ("-1 crashes", "query: -9223372036854775808 crashes"), and
// per-day or per-version counts adding up to more than the bucket's count
// drew a chart of crashes the bucket does not have. Such lines are refused
// like a negative count.
func TestReadBucketsCountsBounded(t *testing.T) {
	for name, in := range map[string]string{
		"huge count":          `{"schema_version":1,"key":"k","count":9223372036854775807,"path":"scan"}`,
		"days beyond count":   `{"schema_version":1,"key":"k","count":3,"path":"scan","days":{"2026-01-01":2,"2026-01-02":2}}`,
		"undated and days":    `{"schema_version":1,"key":"k","count":3,"path":"scan","days":{"2026-01-01":2},"undated":2}`,
		"versions beyond":     `{"schema_version":1,"key":"k","count":3,"path":"scan","version_counts":{"a":9223372036854775807,"b":9223372036854775807}}`,
		"wrapping versions":   `{"schema_version":1,"key":"k","count":3,"path":"scan","version_counts":{"a":1,"b":9223372036854775807}}`,
		"statuses beyond":     `{"schema_version":1,"key":"k","count":3,"path":"scan","statuses":{"affected":3,"no-known-defect":1}}`,
		"negative status":     `{"schema_version":1,"key":"k","count":3,"path":"scan","statuses":{"affected":-3}}`,
		"huge location count": `{"schema_version":1,"key":"k","count":3,"path":"scan","location_count":9223372036854775807}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := report.ReadBuckets(strings.NewReader(in + "\n"))
			require.Error(t, err)
			assert.ErrorIs(t, err, report.ErrNotBuckets)
			var be *report.BucketsError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, 1, be.Line)
		})
	}
	// Consistent counts read, and two big buckets still add up.
	ok := `{"schema_version":1,"key":"k","count":1000000000000,"path":"scan","days":{"2026-01-01":999999999999},"undated":1,"version_counts":{"3.3.5":1000000000000},"statuses":{"affected":1000000000000}}` + "\n" +
		`{"schema_version":1,"key":"k2","count":1000000000000,"path":"query"}` + "\n"
	bs, err := report.ReadBuckets(strings.NewReader(ok))
	require.NoError(t, err)
	require.Len(t, bs, 2)
	var page bytes.Buffer
	require.NoError(t, report.Render(context.Background(), &page, bs, report.Options{}))
	assert.True(t, strings.Contains(page.String(), "<b>2000000000000</b><span>crashes"), "the total adds up")
}

// LooksLikeBuckets skips a UTF-8 byte order mark (an editor's, or
// PowerShell's Set-Content -Encoding UTF8), so `crashsig report` took such
// a file for buckets, and then ReadBuckets refused its first line
// ("invalid character 'ï'"). The mark is skipped there too.
func TestReadBucketsByteOrderMark(t *testing.T) {
	line := `{"schema_version":1,"key":"k","count":2,"path":"scan","statuses":{"affected":2}}` + "\n"
	in := "\ufeff" + line + line
	require.True(t, report.LooksLikeBuckets([]byte(in)))
	bs, err := report.ReadBuckets(strings.NewReader(in))
	require.NoError(t, err)
	assert.Len(t, bs, 2)
	// Only at the start of the file: a mark inside is not JSON.
	_, err = report.ReadBuckets(strings.NewReader(line + "\ufeff" + line))
	require.Error(t, err)
}

// A Collector keeps at most 40 thread groups per bucket and the page says
// "40+"; a buckets file's groups were all rendered (a 64 MiB line of tiny
// groups gave a section of hundreds of thousands of list items). The page
// shows the first 40 whatever the source.
func TestGroupsFromFileBounded(t *testing.T) {
	var g strings.Builder
	for i := range 5000 {
		if i > 0 {
			g.WriteByte(',')
		}
		g.WriteString(`{"count":1,"frames":["f"]}`)
	}
	in := `{"schema_version":1,"key":"k","count":1,"path":"scan","statuses":{"affected":1},"threads":5000,"groups":[` + g.String() + "]}\n"
	bs, err := report.ReadBuckets(strings.NewReader(in))
	require.NoError(t, err)
	var page bytes.Buffer
	require.NoError(t, report.Render(context.Background(), &page, bs, report.Options{}))
	s := page.String()
	assert.Equal(t, 40, strings.Count(s, "<li><b>1</b> thread"), "groups shown")
	assert.True(t, strings.Contains(s, "5000 threads in 40+ groups"))
}
