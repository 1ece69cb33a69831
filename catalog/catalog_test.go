package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in                   string
		major, minor, patch  int
		rc                   int
		edition, commit, dev string
		branch, str          string
	}{
		{in: "doris-2.1.6-rc04(AVX2) RELEASE (build git://vm-82@4f5a6b7)", major: 2, minor: 1, patch: 6, rc: 4, commit: "4f5a6b7", branch: "2.1", str: "2.1.6"},
		{in: "doris-4.1.3-rc02-7126cf65d96", major: 4, minor: 1, patch: 3, rc: 2, commit: "7126cf65d96", branch: "4.1", str: "4.1.3"},
		{in: "2.1.6", major: 2, minor: 1, patch: 6, branch: "2.1", str: "2.1.6"},
		{in: "1.2.3", major: 1, minor: 2, patch: 3, branch: "1.2", str: "1.2.3"},
		{in: "0.13.15", major: 0, minor: 13, patch: 15, branch: "0.13", str: "0.13.15"},
		{in: "3.3.19 RELEASE (build 5e6f7a8 distro ubuntu arch x86_64)", major: 3, minor: 3, patch: 19, commit: "5e6f7a8", branch: "3.3", str: "3.3.19"},
		{in: "3.3.5-6d81f75", major: 3, minor: 3, patch: 5, commit: "6d81f75", branch: "3.3", str: "3.3.5"},
		{in: "3.5.11-ee", major: 3, minor: 5, patch: 11, edition: "ee", branch: "3.5", str: "3.5.11"},
		{in: "v3.2.1", major: 3, minor: 2, patch: 1, branch: "3.2", str: "3.2.1"},
		{in: "2.1", major: 2, minor: 1, branch: "2.1", str: "2.1.0"},
		{in: "1.2.4.2", major: 1, minor: 2, patch: 4, branch: "1.2", str: "1.2.4"},
		{in: "main DEBUG (build 1a2b3c4)", dev: "main", commit: "1a2b3c4", branch: "main", str: "main"},
		{in: "master", dev: "master", branch: "master", str: "master"},
		{in: "branch-3.2", dev: "branch-3.2", branch: "branch-3.2", str: "branch-3.2"},
		{in: "selectdb-doris 2.0.3-rc04", major: 2, minor: 0, patch: 3, rc: 4, branch: "2.0", str: "2.0.3"},
	}
	for _, c := range cases {
		v, err := ParseVersion(c.in)
		if err != nil {
			t.Errorf("ParseVersion(%q): %v", c.in, err)
			continue
		}
		if v.Major != c.major || v.Minor != c.minor || v.Patch != c.patch || v.RC != c.rc || v.Edition != c.edition || v.Commit != c.commit || v.Dev != c.dev {
			t.Errorf("ParseVersion(%q) = %+v", c.in, v)
		}
		if v.Branch() != c.branch || v.String() != c.str {
			t.Errorf("ParseVersion(%q): branch %q string %q, want %q %q", c.in, v.Branch(), v.String(), c.branch, c.str)
		}
	}
	for _, bad := range []string{"", "   ", "abc", "3", "x.y.z", "3.3.x", "1.2.3.4.5", "9999999.1.1", "doris-", "-1.2.3"} {
		if _, err := ParseVersion(bad); !errors.Is(err, ErrVersion) {
			t.Errorf("ParseVersion(%q) error = %v, want ErrVersion", bad, err)
		}
	}
}

func mustVersion(t testing.TB, s string) Version {
	t.Helper()
	v, err := ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCompare(t *testing.T) {
	order := []string{"0.13.15", "1.2.3", "2.1.6", "doris-2.1.6-rc01", "doris-2.1.6-rc04", "2.1.7", "2.1.10", "3.0.0", "3.3.9", "3.3.10", "main"}
	for i := range order {
		for j := range order {
			a, b := mustVersion(t, order[i]), mustVersion(t, order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := Compare(a, b); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
}

func TestRanges(t *testing.T) {
	cases := []struct {
		r   string
		in  []string
		out []string
	}{
		{"3.3.0 - 3.3.8", []string{"3.3.0", "3.3.5-6d81f75", "3.3.8"}, []string{"3.3.9", "3.2.8", "3.4.0", "main"}},
		{"3.2.*", []string{"3.2.0", "3.2.99"}, []string{"3.3.0", "3.1.9"}},
		{">= 2.1.3", []string{"2.1.3", "2.1.9", "3.0.0", "4.1.3"}, []string{"2.1.2", "2.0.9", "1.2.3", "master"}},
	}
	for _, c := range cases {
		r, err := ParseRange(c.r)
		if err != nil {
			t.Fatalf("ParseRange(%q): %v", c.r, err)
		}
		for _, v := range c.in {
			if !r.Contains(mustVersion(t, v)) {
				t.Errorf("%q should contain %s", c.r, v)
			}
		}
		for _, v := range c.out {
			if r.Contains(mustVersion(t, v)) {
				t.Errorf("%q should not contain %s", c.r, v)
			}
		}
	}
	for _, bad := range []string{"3.3.8 - 3.3.0", "3.2.0 - 3.3.1", "3.3", "3.3.0-3.3.8", ">= 3.3", "3.*", "x.y.*", "3.3.0 - ", "> 3.3.0"} {
		if _, err := ParseRange(bad); !errors.Is(err, ErrVersion) {
			t.Errorf("ParseRange(%q) error = %v, want ErrVersion", bad, err)
		}
	}
}

func TestStatus(t *testing.T) {
	d := &Defect{ID: "SR-1-x", Affected: []string{"3.3.0 - 3.3.8", "3.2.*", "2.5.3 - 2.5.9"}, Fixed: []string{"3.3.9", "2.5.10"}}
	reparseVersions(d)
	cases := []struct {
		version string
		want    Status
		advice  string
	}{
		{"3.3.5", StatusAffected, "upgrade to 3.3.9"},
		{"3.3.9", StatusFixed, "SHOULD ALREADY BE FIXED"},
		{"3.3.12-ee", StatusFixed, "possible regression"},
		{"3.2.4", StatusFixedLater, "no fix on branch 3.2: fixed in a later version, upgrade to 3.3.9"},
		{"2.5.4", StatusAffected, "upgrade to 2.5.10"},
		{"2.5.1", StatusVersionUnknown, "before the first affected version"},
		{"3.1.0", StatusVersionUnknown, "says nothing about branch 3.1"},
		{"3.4.0", StatusVersionUnknown, "says nothing about branch 3.4"},
	}
	for _, c := range cases {
		st, adv, ev := statusFor(mustVersion(t, c.version), d)
		if st != c.want || !strings.Contains(adv, c.advice) || ev == "" {
			t.Errorf("%s: %s %q (%s), want %s containing %q", c.version, st, adv, ev, c.want, c.advice)
		}
	}
	open := &Defect{ID: "DORIS-2-y", Affected: []string{">= 2.1.3"}, Workaround: "set x=false"}
	reparseVersions(open)
	st, adv, _ := statusFor(mustVersion(t, "3.0.1"), open)
	if st != StatusAffectedNoFix || !strings.Contains(adv, "set x=false") {
		t.Errorf("open range: %s %q", st, adv)
	}
	if st, _, _ := statusFor(mustVersion(t, "2.1.2"), open); st != StatusVersionUnknown {
		t.Errorf("before open range: %s", st)
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		glob, name string
		want       bool
	}{
		{"starrocks::RowsetMetaPB::MergeFrom", "starrocks::RowsetMetaPB::MergeFrom", true},
		{"starrocks::RowsetMetaPB::MergeFrom", "starrocks::RowsetMetaPB::MergeFromX", false},
		{"starrocks::RowsetMetaPB::MergeFrom", "xstarrocks::RowsetMetaPB::MergeFrom", false},
		{"*Compaction*", "starrocks::CompactionTask::run", true},
		{"*Compaction*", "starrocks::compaction::run", false},
		{"*::lake::vacuum*", "starrocks::lake::vacuum_full", true},
		{"*::lake::vacuum*", "starrocks::lake::Vacuum", false},
		{"starrocks::*::read_page", "starrocks::ColumnReader::read_page", true},
		{"starrocks::*::read_page", "starrocks::read_page", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxcxxbxxaxx", false},
		{"*ab", "abab", true},
		{"ab*ab", "ab", false},
		{"ab*ab", "abab", true},
		{"*", "", true},
		{"*::?::*", "a::b::c", true},
		{"*{lambda}", "starrocks::EvHttpServer::start::{lambda}", true},
	}
	for _, c := range cases {
		g, err := compileGlob(c.glob)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", c.glob, err)
		}
		if got := g.match(c.name); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.glob, c.name, got, c.want)
		}
	}
	for _, bad := range []string{"", "a**b", "a\tb", strings.Repeat("a", maxGlobLen+1)} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compileGlob(%q) accepted", bad)
		}
	}
}

// TestGlobIndexAgreesWithLinear: the Aho-Corasick index finds exactly the
// globs a linear scan finds.
func TestGlobIndexAgreesWithLinear(t *testing.T) {
	texts := []string{"*Compaction*", "*compaction*", "starrocks::A::b", "*::A::*", "a", "*a*", "b*", "*", "?", "*::Segment?terator::*",
		"starrocks::SegmentIterator::*", "*Iterator::do_get_next", "doris::*", "*r::*", "ab*ab", "*abab*", "x"}
	var globs []glob
	for _, s := range texts {
		g, err := compileGlob(s)
		if err != nil {
			t.Fatal(err)
		}
		globs = append(globs, g)
	}
	ix := buildGlobIndex(globs)
	names := []string{"starrocks::A::b", "starrocks::SegmentIterator::do_get_next", "doris::CumulativeCompaction::run", "a", "", "abab", "ababab", "x",
		"starrocks::lake::compaction_task", "starrocks::SegmentXterator::y", "bar::baz"}
	sc := ix.scratchFor()
	for _, n := range names {
		got := map[int32]bool{}
		for _, id := range ix.matches(nil, n, sc) {
			if got[id] {
				t.Errorf("%q: glob %d reported twice", n, id)
			}
			got[id] = true
		}
		for id := range globs {
			if want := globs[id].match(n); want != got[int32(id)] {
				t.Errorf("%q ~ %q: index %v, linear %v", texts[id], n, got[int32(id)], want)
			}
		}
	}
}

// TestBadCatalogs: every file under testdata/catalog/bad fails to load
// with the error its first line announces: `# want: LINE FIELD SENTINEL`.
func TestBadCatalogs(t *testing.T) {
	sentinels := map[string]error{"syntax": ErrSyntax, "unsupported-schema": ErrSchema, "unknown-field": ErrUnknownField,
		"invalid": ErrInvalid, "missing": ErrMissing, "duplicate": ErrDuplicate}
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "catalog", "bad", "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("bad catalogs: %v (%d files)", err, len(files))
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		var line, field, sent string
		if _, err := fmt.Sscanf(first, "# want: %s %s %s", &line, &field, &sent); err != nil {
			t.Fatalf("%s: bad want line %q", path, first)
		}
		_, err = Parse(filepath.Base(path), b)
		if err == nil {
			t.Errorf("%s: loaded without error", path)
			continue
		}
		var es Errors
		if !errors.As(err, &es) {
			t.Fatalf("%s: error %T is not Errors", path, err)
		}
		found := false
		for _, e := range es {
			lineOK := line == "-" || strconv.Itoa(e.Line) == line
			fieldOK := field == "-" || e.Field == field
			if lineOK && fieldOK && errors.Is(e, sentinels[sent]) && e.File == filepath.Base(path) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want line %s field %s %s; got:\n%v", path, line, field, sent, err)
		}
		var one *Error
		if !errors.As(err, &one) || !errors.Is(err, sentinels[sent]) {
			t.Errorf("%s: errors.As/Is do not see through Errors", path)
		}
	}
}

func TestDefaultCatalogLoads(t *testing.T) {
	c := defaultCatalog(t)
	if c.Revision() == "" || len(c.Rules()) < 20 {
		t.Fatalf("default catalog: revision %q, %d rules", c.Revision(), len(c.Rules()))
	}
	files, err := DefaultFiles()
	if err != nil {
		t.Fatal(err)
	}
	if errs := Lint(context.Background(), files, LintOptions{}); len(errs) > 0 {
		t.Errorf("lint of the default catalog:\n%v", errs)
	}
	seen := map[Path]bool{}
	for _, r := range c.Rules() {
		seen[r.Path] = true
	}
	for _, p := range []Path{PathScan, PathQuery, PathLoad, PathBackground, PathLifecycle} {
		if !seen[p] {
			t.Errorf("no rule for path %s", p)
		}
	}
}

const testCatalog = `
schema: 1
revision: "t1"
paths:
  - id: bg-compaction
    path: background
    area: compaction
    priority: 90
    frames: ["*Compaction*"]
    why: "compaction"
  - id: scan-segment
    path: scan
    area: segment-read
    priority: 50
    frames: ["*::SegmentIterator::*", "*PageDecoder*"]
    why: "segment read"
    no_query: {path: background, area: storage-read}
  - id: scan-under-operator
    path: scan
    area: scan-operator
    priority: 60
    frames: ["*::ColumnReader::*"]
    callers: ["*::ScanOperator::*"]
    not_callers: ["*Compaction*"]
    why: "a column read under a scan operator"
  - id: weak-flush
    path: load
    area: memtable-flush
    priority: 5
    threads: ["MemTableFlush*"]
    why: "flush thread name"
defects:
  - id: SR-100-page-decoder
    product: starrocks
    title: "page decoder reads past the page"
    match:
      - kind: "SIGSEGV*"
        frames: ["starrocks::BinaryPlainPageDecoder::append_range", "starrocks::*::next_batch"]
    affected: ["3.3.0 - 3.3.8", "3.2.*"]
    fixed: ["3.3.9"]
    links: ["https://github.com/StarRocks/starrocks/issues/100"]
    tests: ["testdata/x.txt"]
  - id: SR-101-check-message
    product: starrocks
    title: "check on chunk size"
    match:
      - message: "num_rows\\(\\) == "
        frames: ["starrocks::Chunk::*"]
    links: ["https://github.com/StarRocks/starrocks/issues/101"]
    tests: ["testdata/x.txt"]
  - id: SR-102-caller
    product: starrocks
    title: "column reader under compaction"
    match:
      - frames: ["starrocks::ColumnReader::read_page"]
        callers: ["*Compaction*"]
    affected: [">= 3.1.0"]
    links: ["https://github.com/StarRocks/starrocks/issues/102"]
    tests: ["testdata/x.txt"]
  - id: SR-103-threads
    product: starrocks
    title: "executor threads leak"
    path: scan
    area: jni-thread-leak
    match:
      - kind: "THREADS"
        threads:
          frames: ["java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take"]
          name: "sdk-ScheduledExecutor-*"
          min_count: 100
    fixed: ["3.5.2"]
    links: ["https://github.com/StarRocks/starrocks/issues/103"]
    tests: ["testdata/x.txt"]
`

func testCat(t testing.TB) *Catalog {
	t.Helper()
	f, err := Parse("test.yaml", []byte(testCatalog))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func crashOf(product symbolize.Product, version, query string, names ...string) *symbolize.Crash {
	th := symbolize.Thread{Crashed: true}
	for i, n := range names {
		th.Frames = append(th.Frames, symbolize.Frame{Index: i, Function: n})
	}
	return &symbolize.Crash{Product: product, Version: version, QueryID: query, Threads: []symbolize.Thread{th}}
}

func sigOf(kind string, frames ...string) signature.Signature {
	return signature.Signature{Kind: kind, Frames: frames}
}

func TestClassifyHandBuilt(t *testing.T) {
	c := testCat(t)
	sig := signature.Signature{Algorithm: "test-sig/1", Kind: "SIGSEGV", Frames: []string{"starrocks::BinaryPlainPageDecoder::append_range"}}
	cr := crashOf(symbolize.ProductStarRocks, "3.3.5-6d81f75", "1234-5678",
		"google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)",
		"starrocks::BinaryPlainPageDecoder<(starrocks::LogicalType)17>::append_range(unsigned int, unsigned int, starrocks::Column*) const",
		"starrocks::BinaryPlainPageDecoder<(starrocks::LogicalType)17>::next_batch(starrocks::SparseRange<unsigned int> const&, starrocks::Column*)",
		"starrocks::SegmentIterator::_do_get_next(starrocks::Chunk*)",
		"starrocks::pipeline::ScanOperator::_trigger_next_scan(starrocks::RuntimeState*, int)::{lambda()#1}::operator()() const")
	v := c.Classify(cr, sig)
	if v.Path != PathScan || v.Area != "segment-read" || v.Defect == nil || v.Defect.ID != "SR-100-page-decoder" || v.Status != StatusAffected {
		t.Fatalf("verdict %+v", v)
	}
	if !strings.Contains(v.Advice, "upgrade to 3.3.9") || v.CatalogRevision != "t1" || v.SignatureAlgorithm != "test-sig/1" || v.Version != "3.3.5" {
		t.Errorf("advice %q revision %q algorithm %q version %q", v.Advice, v.CatalogRevision, v.SignatureAlgorithm, v.Version)
	}
	if got := v.Summary(); got != "scan path (segment-read); known defect SR-100-page-decoder, affected 3.3.0 - 3.3.8, fixed in 3.3.9: upgrade to 3.3.9 or later" {
		t.Errorf("summary %q", got)
	}
	if len(v.Evidence) < 3 || !strings.Contains(strings.Join(v.Evidence, "\n"), "#1 starrocks::BinaryPlainPageDecoder::append_range") {
		t.Errorf("evidence %q", v.Evidence)
	}

	// Same stack, fixed version: loud.
	cr.Version = "3.3.12"
	if v := c.Classify(cr, sig); v.Status != StatusFixed || !strings.Contains(v.Advice, "SHOULD ALREADY BE FIXED") {
		t.Errorf("fixed: %s %q", v.Status, v.Advice)
	}
	cr.Version = ""
	if v := c.Classify(cr, sig); v.Status != StatusVersionUnknown {
		t.Errorf("no version: %s", v.Status)
	}
	cr.Version = "main DEBUG (build 1a2b3c4)"
	if v := c.Classify(cr, sig); v.Status != StatusVersionUnknown {
		t.Errorf("dev build: %s", v.Status)
	}
	// Doris crash never matches a StarRocks defect.
	cr.Product = symbolize.ProductDoris
	if v := c.Classify(cr, sig); v.Defect != nil {
		t.Errorf("product filter: %+v", v.Defect)
	}
	// Wrong kind.
	cr.Product = symbolize.ProductStarRocks
	if v := c.Classify(cr, signature.Signature{Kind: "SIGABRT", Frames: sig.Frames}); v.Defect != nil {
		t.Errorf("kind filter: %+v", v.Defect)
	}
	// Frames out of order do not match; the near miss is reported.
	rev := crashOf(symbolize.ProductStarRocks, "3.3.5", "",
		"starrocks::BinaryPlainPageDecoder::next_batch", "starrocks::BinaryPlainPageDecoder::append_range", "starrocks::SegmentIterator::_do_get_next")
	v = c.Classify(rev, signature.Signature{Kind: "SIGSEGV"})
	if v.Defect != nil || v.Status != StatusNoKnownDefect || len(v.Similar) == 0 || v.Similar[0].ID != "SR-100-page-decoder" || v.Similar[0].Score <= 0 {
		t.Errorf("out of order: %+v", v)
	}
	if !strings.Contains(v.Advice, "closest is SR-100-page-decoder") {
		t.Errorf("advice %q", v.Advice)
	}
}

func TestPathRules(t *testing.T) {
	c := testCat(t)
	cases := []struct {
		name   string
		query  string
		thread string
		frames []string
		path   Path
		area   string
	}{
		{"segment read under scan", "1-2", "", []string{"starrocks::SegmentIterator::_read", "starrocks::pipeline::ScanOperator::run"}, PathScan, "segment-read"},
		{"segment read under compaction", "1-2", "", []string{"starrocks::SegmentIterator::_read", "starrocks::CompactionTask::run"}, PathBackground, "compaction"},
		{"segment read, no query attached", "0-0", "", []string{"starrocks::SegmentIterator::_read"}, PathBackground, "storage-read"},
		{"segment read, all-zero uuid", "00000000-0000-0000-0000-000000000000", "", []string{"starrocks::SegmentIterator::_read"}, PathBackground, "storage-read"},
		{"column read needs the scan operator caller", "", "", []string{"starrocks::ColumnReader::read_page"}, PathUnknown, ""},
		{"column read under scan operator", "", "", []string{"starrocks::ColumnReader::read_page", "starrocks::pipeline::ScanOperator::run"}, PathScan, "scan-operator"},
		{"caller must be deeper", "", "", []string{"starrocks::pipeline::ScanOperator::run", "starrocks::ColumnReader::read_page"}, PathUnknown, ""},
		{"not_callers", "", "", []string{"starrocks::ColumnReader::read_page", "starrocks::pipeline::ScanOperator::run", "x::Compaction::y"}, PathBackground, "compaction"},
		{"weak thread name", "", "MemTableFlushTh", []string{"foo::bar"}, PathLoad, "memtable-flush"},
		{"thread name never beats a frame", "", "MemTableFlushTh", []string{"starrocks::CompactionTask::run"}, PathBackground, "compaction"},
		{"nothing", "", "", nil, PathUnknown, ""},
	}
	for _, tc := range cases {
		cr := crashOf(symbolize.ProductStarRocks, "", tc.query, tc.frames...)
		cr.Threads[0].Name = tc.thread
		v := c.Classify(cr, signature.Signature{})
		if v.Path != tc.path || v.Area != tc.area || len(v.Evidence) == 0 {
			t.Errorf("%s: %s/%s, want %s/%s; %q", tc.name, v.Path, v.Area, tc.path, tc.area, v.Evidence)
		}
		if p, a := c.PathOf(cr); p != v.Path || a != v.Area {
			t.Errorf("%s: PathOf = %s/%s, Classify = %s/%s", tc.name, p, a, v.Path, v.Area)
		}
	}
}

func TestDefectCallersAndMessage(t *testing.T) {
	c := testCat(t)
	cr := crashOf(symbolize.ProductStarRocks, "3.4.1", "", "starrocks::ColumnReader::read_page", "starrocks::SegmentIterator::_read", "starrocks::CompactionTask::run")
	v := c.Classify(cr, signature.Signature{Kind: "SIGSEGV"})
	if v.Defect == nil || v.Defect.ID != "SR-102-caller" || v.Status != StatusAffectedNoFix {
		t.Errorf("callers: %+v", v)
	}
	cr = crashOf(symbolize.ProductStarRocks, "3.4.1", "", "starrocks::ColumnReader::read_page", "starrocks::SegmentIterator::_read")
	if v := c.Classify(cr, signature.Signature{Kind: "SIGSEGV"}); v.Defect != nil {
		t.Errorf("missing caller matched: %+v", v.Defect)
	}
	cr = crashOf(symbolize.ProductStarRocks, "", "", "starrocks::Chunk::num_rows")
	cr.Message = "Check failed: chunk->num_rows() == 5 (3 vs. 5)"
	if v := c.Classify(cr, signature.Signature{Kind: "CHECK(x)"}); v.Defect == nil || v.Defect.ID != "SR-101-check-message" {
		t.Errorf("message: %+v", v)
	}
	cr.Message = "Check failed: something else"
	if v := c.Classify(cr, signature.Signature{Kind: "CHECK(x)"}); v.Defect != nil {
		t.Errorf("message mismatch matched: %+v", v.Defect)
	}
}

func TestThreadDumpMatch(t *testing.T) {
	c := testCat(t)
	dump := &symbolize.Crash{Product: symbolize.ProductStarRocks, Version: "3.5.1", Kind: symbolize.KindThreadDump}
	parked := []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos",
		"java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take", "java.lang.Thread.run"}
	for i := 0; i < 150; i++ {
		th := symbolize.Thread{ID: int64(1000 + i), Name: fmt.Sprintf("sdk-ScheduledExecutor-%d-%d", i/10, i%10)}
		for k, n := range parked {
			th.Frames = append(th.Frames, symbolize.Frame{Index: k, Function: n, Java: true})
		}
		dump.Threads = append(dump.Threads, th)
		if i%50 == 0 {
			dump.Threads = append(dump.Threads, symbolize.Thread{ID: int64(5000 + i), Name: "main", Frames: []symbolize.Frame{{Function: "java.lang.Object.wait", Java: true}}})
		}
	}
	sig := signature.Signature{Kind: "THREADS"}
	v := c.Classify(dump, sig)
	if v.Defect == nil || v.Defect.ID != "SR-103-threads" || v.Status != StatusAffected {
		t.Fatalf("thread dump: %+v", v)
	}
	if v.Path != PathScan || v.Area != "jni-thread-leak" {
		t.Errorf("thread dump path from the defect: %s/%s", v.Path, v.Area)
	}
	if p, _ := c.PathOf(dump); p != PathUnknown {
		t.Errorf("PathOf(thread dump) = %s", p)
	}
	dump.Threads = dump.Threads[:60] // too few threads
	if v := c.Classify(dump, sig); v.Defect != nil {
		t.Errorf("min_count ignored: %+v", v.Defect)
	}
}

func TestMerge(t *testing.T) {
	base := testCat(t)
	over, err := Parse("user.yaml", []byte(`
schema: 1
revision: "u7"
defects:
  - id: SR-100-page-decoder
    product: starrocks
    title: "our own reading of the page decoder bug"
    match:
      - frames: ["starrocks::BinaryPlainPageDecoder::append_range"]
    fixed: ["3.3.7"]
    links: ["https://example.com/internal/1"]
    tests: ["testdata/x.txt"]
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(base, over)
	if err != nil {
		t.Fatal(err)
	}
	if m.Revision() != "t1+u7" || len(m.Notes()) != 1 || !strings.Contains(m.Notes()[0], "overrides") {
		t.Fatalf("revision %q notes %q", m.Revision(), m.Notes())
	}
	d, _ := m.Defect("SR-100-page-decoder")
	if d.Title != "our own reading of the page decoder bug" || len(m.Defects()) != len(base.Defects()) {
		t.Errorf("override not applied: %+v", d)
	}
	cr := crashOf(symbolize.ProductStarRocks, "3.3.8", "", "starrocks::BinaryPlainPageDecoder::append_range", "starrocks::BinaryPlainPageDecoder::next_batch")
	v := m.Classify(cr, signature.Signature{Kind: "SIGSEGV"})
	if v.Status != StatusFixed || !strings.Contains(strings.Join(v.Evidence, "\n"), "overrides") || v.CatalogRevision != "t1+u7" {
		t.Errorf("merged verdict %+v", v)
	}
	// The base is unchanged.
	if v := base.Classify(cr, signature.Signature{Kind: "SIGSEGV"}); v.Status != StatusAffected {
		t.Errorf("base changed by Merge: %s", v.Status)
	}
	// New() refuses the same id twice.
	f1, _ := Parse("a.yaml", []byte(testCatalog))
	if _, err := New(f1, f1); !errors.Is(err, ErrDuplicate) {
		t.Errorf("New with duplicate ids: %v", err)
	}
}

func TestClassifyConcurrent(t *testing.T) {
	c := testCat(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				cr := crashOf(symbolize.ProductStarRocks, "3.3."+strconv.Itoa(i%12), "", "starrocks::BinaryPlainPageDecoder::append_range", "starrocks::X::next_batch", "starrocks::SegmentIterator::_read")
				v := c.Classify(cr, signature.Signature{Kind: "SIGSEGV"})
				if v.Defect == nil || v.Path != PathScan {
					t.Errorf("goroutine %d: %+v", g, v)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestClassifyDeterministic(t *testing.T) {
	c := defaultCatalog(t)
	p := parseLog(t, "testdata/corpus/starrocks/002-trash-sweep-rowsetmetapb-mergefrom.txt")
	a, _ := json.Marshal(c.Classify(p.crashes[0], p.sigs[0]))
	for i := 0; i < 20; i++ {
		if b, _ := json.Marshal(c.Classify(p.crashes[0], p.sigs[0])); string(a) != string(b) {
			t.Fatalf("not deterministic:\n%s\n%s", a, b)
		}
	}
}

func TestPathByKind(t *testing.T) {
	c := testCat(t)
	cr := crashOf(symbolize.ProductStarRocks, "", "", "starrocks::CompactionTask::run")
	cr.Kind = symbolize.KindTermination
	if v := c.Classify(cr, signature.Signature{}); v.Path != PathLifecycle || v.Area != "termination" {
		t.Errorf("termination: %s/%s", v.Path, v.Area)
	}
	cr.Kind = symbolize.KindLeak
	if p, a := c.PathOf(cr); p != PathLifecycle || a != "leak-report" {
		t.Errorf("leak: %s/%s", p, a)
	}
}

func TestClassifyNil(t *testing.T) {
	c := testCat(t)
	v := c.Classify(nil, signature.Signature{})
	if v.Path != PathUnknown || v.Status != StatusNoKnownDefect {
		t.Errorf("nil crash: %+v", v)
	}
}

func TestLintOrderAndIDs(t *testing.T) {
	f, err := Parse("o.yaml", []byte(`schema: 1
revision: "r"
defects:
  - id: SR-1-order
    product: doris
    title: "t"
    match: [{frames: ["a::b"]}]
    affected: ["3.3.0 - 3.3.8", "3.2.0 - 3.2.4"]
    fixed: ["3.3.9", "3.2.5"]
    links: ["https://example.com/1"]
    tests: ["x.txt"]
`))
	if err != nil {
		t.Fatal(err)
	}
	errs := Lint(context.Background(), []*File{f}, LintOptions{})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Field+": "+e.Msg)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"defects[0].affected[1]: ranges out of order", "defects[0].fixed[1]: fixed versions out of order", "does not fit product doris"} {
		if !strings.Contains(all, want) {
			t.Errorf("lint misses %q:\n%s", want, all)
		}
	}
}

// TestReadFilesMissing: a file that cannot be opened is one Error that
// names the file once and matches fs.ErrNotExist; the files that load are
// not returned (ReadFiles is all or nothing).
func TestReadFilesMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	files, err := ReadFiles(context.Background(), "data/paths.yaml", missing)
	require.Error(t, err)
	assert.Nil(t, files)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	var es Errors
	require.ErrorAs(t, err, &es)
	require.Len(t, es, 1)
	assert.Equal(t, missing, es[0].File)
	assert.Equal(t, 1, strings.Count(es[0].Error(), missing), es[0].Error())
	assert.Contains(t, es[0].Error(), "open: ")
}
