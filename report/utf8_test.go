package report_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/report"
)

// Buckets built by a library caller can hold strings that are not UTF-8
// (a crash text read without the scanner, a source path from a foreign
// filesystem). html/template escapes markup but passes such bytes on, so
// the page, which declares UTF-8, was not valid UTF-8. Every invalid byte
// becomes U+FFFD.
func TestNonUTF8StaysValid(t *testing.T) {
	bs := syntheticBuckets()
	require.NotEmpty(t, bs)
	bs[0].Key = "FAULT | doris::X\xff\xfe::y"
	bs[0].Area = "area \xe2\x82" // a cut rune
	bs[0].Versions = append(bs[0].Versions, "2.1.\xff")
	page := render(t, bs, report.Options{Title: "T\xff"})
	assert.True(t, utf8.Valid(page), "the page is UTF-8")
	s := string(page)
	assert.True(t, strings.Contains(s, "<title>T\uFFFD</title>"), "the title's bad byte is U+FFFD")
	assert.True(t, strings.Contains(s, "doris::X\uFFFD\uFFFD::y"), "the key's bad bytes are U+FFFD")
	assert.True(t, strings.Contains(s, "area \uFFFD"), "a cut rune is U+FFFD")
	checkPage(t, page, defectLinksOf(bs))
}
