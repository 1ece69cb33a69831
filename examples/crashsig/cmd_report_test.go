package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportCommand is the README's command on the bundled data: a page
// under 2 MB, the same bytes twice, and the same page from the buckets
// JSON Lines of the same inputs (detected by content, from a file and
// from stdin).
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	inputs := []string{"../../testdata/corpus", "../../testdata/formats", "../../testdata/core"}
	code, _, stderr := runCLI(t, "", append([]string{"report", "-o", out}, inputs...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "wrote "+out)
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Less(t, len(page), 2<<20, "the bundled data's page is under 2 MB")
	assert.True(t, bytes.HasPrefix(page, []byte("<!DOCTYPE html>")))
	assert.NotRegexp(t, ` · generated \d{4}-\d\d-\d\dT`, string(page), "no wall-clock time unless asked (the header's generation time; the word itself may be in a defect's title)")

	code, again, stderr := runCLI(t, "", append([]string{"report"}, inputs...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, string(page), again, "same input, same bytes (stdout this time)")

	// Buckets JSON Lines: every kind (--all), as the report counts.
	code, lines, stderr := runCLI(t, "", append([]string{"buckets", "--json", "--all"}, inputs...)...)
	require.Equal(t, exitOK, code, stderr)
	bfile := filepath.Join(dir, "buckets.jsonl")
	require.NoError(t, os.WriteFile(bfile, []byte(lines), 0o644))
	code, fromFile, stderr := runCLI(t, "", "report", bfile)
	require.Equal(t, exitOK, code, stderr)
	code, fromStdin, stderr := runCLI(t, lines, "report", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, fromFile, fromStdin)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write([]byte(lines))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(bfile+".gz", gz.Bytes(), 0o644))
	code, fromGzip, stderr := runCLI(t, "", "report", bfile+".gz")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, fromFile, fromGzip, "a gzip-compressed buckets file reads the same")
	// ... also on stdin (gzip -c buckets.jsonl | crashsig report -): it is
	// decompressed before it is told apart from crash logs.
	code, fromGzipStdin, stderr := runCLI(t, gz.String(), "report", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, fromFile, fromGzipStdin, "a gzip-compressed buckets stream reads the same")
	// A gzip-compressed crash log on stdin is still read as crash logs.
	gzLog := gzipBytes(t, mustRead(t, "../../testdata/formats/f2-glog04-preamble.txt"))
	code, _, stderr = runCLI(t, string(gzLog), "report", "-", "-o", filepath.Join(dir, "log.html"))
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "1 crashes in 1 buckets")
	// Same buckets, same ranking; the file lacks per-day counts and
	// locations, so the pages differ there only.
	rows := func(p string) string {
		i, j := strings.Index(p, "<tbody>"), strings.Index(p, "</tbody>")
		require.True(t, i > 0 && j > i)
		var ids []string
		for _, l := range strings.Split(p[i:j], "\n") {
			if k := strings.Index(l, "<code>"); k >= 0 && strings.Contains(l, `class="key"`) {
				ids = append(ids, l[k:k+30])
			}
		}
		return strings.Join(ids, "\n")
	}
	assert.Equal(t, rows(string(page)), rows(fromFile))

	code, withTime, _ := runCLI(t, "", "report", "--generated", "2026-11-30T12:00:00Z", "--title", "Week 48", bfile)
	require.Equal(t, exitOK, code)
	assert.Contains(t, withTime, "generated 2026-11-30T12:00:00Z")
	assert.Contains(t, withTime, "<title>Week 48</title>")
}

func TestReportCommandErrors(t *testing.T) {
	code, _, stderr := runCLI(t, "", "report")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "usage: crashsig report")
	code, _, _ = runCLI(t, "", "report", "--generated", "yesterday", "x")
	assert.Equal(t, exitUsage, code)

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema_version":1,"key":"k","count":1,"path":"scan","statuses":{}}`+"\n{broken\n"), 0o644))
	code, _, stderr = runCLI(t, "", "report", "-o", filepath.Join(dir, "r.html"), bad)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, stderr, "line 2")

	code, _, stderr = runCLI(t, "", "report", "-o", filepath.Join(dir, "no", "such", "dir.html"), "../../testdata/formats")
	assert.Equal(t, exitInput, code, stderr)
	code, _, _ = runCLI(t, "", "report", "-o", filepath.Join(dir, "r.html"), filepath.Join(dir, "missing.log"))
	assert.Equal(t, exitInput, code)
}

// TestReportDefaultMaxSections: by default a page gives at most
// defaultMaxSections buckets a section and says how many it left to the
// table; --max-sections 0 gives every bucket one (review: 100,000 buckets
// made a 720 MB page).
func TestReportDefaultMaxSections(t *testing.T) {
	var b strings.Builder
	n := defaultMaxSections + 5
	for i := range n {
		// Counts fall with i, so the least frequent are the last five.
		fmt.Fprintf(&b, `{"schema_version":1,"key":"FAULT | starrocks::F%d","count":%d,"path":"scan","statuses":{"new":1}}`+"\n", i, n-i+1)
	}
	in := filepath.Join(t.TempDir(), "buckets.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	code, page, stderr := runCLI(t, "", "report", in)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, defaultMaxSections, strings.Count(page, `class="bucket"`))
	assert.Contains(t, page, "The 5 least frequent buckets have no section here")
	assert.Contains(t, page, "starrocks::F1004", "the table lists every bucket")
	code, page, stderr = runCLI(t, "", "report", "--max-sections", "0", in)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, n, strings.Count(page, `class="bucket"`))
}
