package catalog

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reviewDefect is a minimal valid defect file with extra version lines.
func reviewDefect(extra string) []byte {
	return []byte(`schema: 1
revision: "r1"
defects:
  - id: SR-1-review
    product: starrocks
    title: "t"
    match:
      - frames: ["starrocks::A::b"]
    links: ["https://github.com/StarRocks/starrocks/issues/1"]
    tests: ["testdata/x.txt"]
` + extra)
}

// An open-ended range ">= A" covers A's branch and every later one, so a
// fix on any of those branches contradicts it, not only a fix on A's own
// branch: ">= 3.2.0" with "fixed: 3.4.1" says 3.4.5 is affected while the
// status answer calls it should-already-be-fixed.
func TestOpenRangeCoversLaterBranchFix(t *testing.T) {
	for _, extra := range []string{
		"    affected: [\">= 3.2.0\"]\n    fixed: [\"3.4.1\"]\n",
		"    affected: [\">= 3.2.0\"]\n    fixed_likely: [\"3.3.2 (2024-06-21)\"]\n",
	} {
		_, err := Parse("open.yaml", reviewDefect(extra))
		require.Error(t, err, extra)
		var e *Error
		require.True(t, errors.As(err, &e), extra)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.Equal(t, "defects[0].affected[0]", e.Field, extra)
		assert.Equal(t, 11, e.Line, extra)
		assert.Contains(t, e.Msg, "open-ended", extra)
	}
	// A fix on an earlier branch than the range's start is no contradiction.
	_, err := Parse("open-ok.yaml", reviewDefect("    affected: [\">= 3.4.0\"]\n    fixed: [\"3.3.9\"]\n"))
	require.NoError(t, err)
}

// A file with a byte YAML refuses (invalid UTF-8, a control character) is
// reported with the line of that byte, not line 0: the parser's own
// message has no position.
func TestUnreadableByteHasLine(t *testing.T) {
	for name, bad := range map[string]string{
		"nonutf8.yaml": "\xff\xfe",
		"control.yaml": "\x01",
		"nul.yaml":     "\x00",
		"c1.yaml":      "\u0090",
	} {
		data := []byte(string(reviewDefect("")) + "    note: \"ok\"\n    workaround: \"x" + bad + "y\"\n")
		_, err := Parse(name, data)
		require.Error(t, err, name)
		var e *Error
		require.True(t, errors.As(err, &e), name)
		assert.ErrorIs(t, err, ErrSyntax, name)
		assert.Equal(t, 12, e.Line, "%s: %v", name, err)
		assert.Contains(t, e.Error(), name+":12: ", name)
	}
}

// A file within MaxFileSize made of tiny YAML nodes (`[a,a,a,…]`) built a
// node tree about a hundred times its size before any check ran (16 MiB
// of `a,` took 1.6 GB). Such a file is refused before the tree is built,
// with ErrTooLarge at the line where it passes the bound, and memory
// stays a small multiple of the file.
func TestManyTinyNodesRefusedBeforeTree(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema: 1\nrevision: r\nstack:\n  mechanism_marks: [")
	for b.Len() < MaxFileSize-100 {
		b.WriteString("a,")
	}
	b.WriteString("a]\n")
	data := []byte(b.String())
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, err := Parse("tiny.yaml", data)
	runtime.ReadMemStats(&m1)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrTooLarge)
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, 4, e.Line)
	assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(4*MaxFileSize), "allocated bytes")

	// The default catalog's files are far below the bound.
	files, err := DefaultFiles()
	require.NoError(t, err)
	require.NotEmpty(t, files)
}

// A "*" frame glob in a defect alternative is not indexed (it would hit
// every frame), so an alternative with one never matched: `frames:
// ["*"]`, `anchor: "*"`, `callers: ["*"]` and `near: ["*"]` loaded and
// silently matched nothing, while "?*" matched every crash. Such a glob
// says nothing about the crash; it is refused where it is written.
func TestDefectUniversalGlobRefused(t *testing.T) {
	for alt, field := range map[string]string{
		`frames: ["*"]`:                    "defects[0].match[0].frames[0]",
		`frames: ["starrocks::A::b", "*"]`: "defects[0].match[0].frames[1]",
		`anchor: "*"`:                      "defects[0].match[0].anchor",
		"frames: [\"starrocks::A::b\"]\n        callers: [\"*\"]":  "defects[0].match[0].callers[0]",
		"anchor: \"starrocks::A::b\"\n        near: [\"**\"]":      "defects[0].match[0].near[0]",
		"anchor: \"starrocks::A::b\"\n        near: [\"*\"]":       "defects[0].match[0].near[0]",
		"anchor: \"starrocks::A::b\"\n        any_thread: [\"*\"]": "defects[0].match[0].any_thread[0]",
	} {
		data := strings.Replace(string(reviewDefect("")), `frames: ["starrocks::A::b"]`, alt, 1)
		_, err := Parse("star.yaml", []byte(data))
		require.Error(t, err, alt)
		assert.ErrorIs(t, err, ErrInvalid, alt)
		var es Errors
		require.True(t, errors.As(err, &es))
		fields := []string{}
		for _, e := range es {
			fields = append(fields, e.Field)
		}
		assert.Contains(t, fields, field, "%s: %v", alt, err)
	}
	// Path rules keep "*" (a condition's frame glob: main_thread, freed_by).
	_, err := Parse("rule.yaml", []byte("schema: 1\nrevision: r\npaths:\n  - id: x\n    path: lifecycle\n    area: a\n    priority: 1\n    frames: [\"*\"]\n    main_thread: true\n    why: \"w\"\n"))
	require.NoError(t, err)
}
