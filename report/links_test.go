package report_test

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/crashsig/crashsig/report"
)

// A buckets file (or a user catalog merged with links the decoder did not
// check) can carry defect links that are not http(s) URLs. The package
// promises that the only external links are http and https ones: a
// relative link would open a local file next to the page (file://), a
// protocol-relative or mailto one leaves the page another way. They are
// shown as text, not links.
func TestDefectLinksHTTPOnly(t *testing.T) {
	bs := syntheticBuckets()
	bad := []string{"../../../etc/passwd", "//evil.example/x", "mailto:a@evil.example", "evil.html", "ftp://evil.example/x", "https:///nohost", "  https://example.org/lead"}
	good := "https://github.com/apache/doris/issues/1"
	n := 0
	for i := range bs {
		if bs[i].Defect == nil {
			continue
		}
		d := *bs[i].Defect
		d.Links = append(append([]string{}, bad...), good)
		bs[i].Defect = &d
		n++
	}
	require.NotZero(t, n, "the synthetic buckets have a known defect")
	page := render(t, bs, report.Options{})
	z := html.NewTokenizer(bytes.NewReader(page))
	var hrefs []string
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		tok := z.Token()
		for _, a := range tok.Attr {
			if a.Key == "href" && !strings.HasPrefix(a.Val, "#") && a.Val != "data:," {
				hrefs = append(hrefs, a.Val)
			}
		}
	}
	require.NotEmpty(t, hrefs)
	for _, h := range hrefs {
		u, err := url.Parse(h)
		require.NoError(t, err)
		assert.True(t, (u.Scheme == "http" || u.Scheme == "https") && u.Host != "", "href %q is not an http(s) link", h)
	}
	assert.Contains(t, hrefs, good)
	s := string(page)
	assert.Contains(t, s, "mailto:a@evil.example", "a refused link is still shown, as text")
}
