package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCatalog(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmdCatalog(context.Background(), args, nil, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCatalogLintDefault(t *testing.T) {
	code, out, _ := runCatalog(t, "lint", "--no-tests")
	if code != 0 || !strings.Contains(out, "catalog revision ") || !strings.Contains(out, "signature algorithm ") || !strings.HasSuffix(strings.TrimSpace(out), ": ok") {
		t.Errorf("lint of the default catalog: exit %d\n%s", code, out)
	}
}

func TestCatalogLintOverfitSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("classifies every training log")
	}
	root := filepath.Join("..", "..")
	code, out, _ := runCatalog(t, "lint", "--root", root)
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, ": defects[", "defects' overfit warnings are one count line without -v")
	assert.Contains(t, out, "defect(s) are matched only by the log they were written from (variants not counted; use -v to list)")
	code, out, _ = runCatalog(t, "lint", "--root", root, "-v")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, ": defects[", "-v lists every defect's warning")
	assert.NotContains(t, out, "use -v to list")
}

func TestCatalogLintBadFile(t *testing.T) {
	bad := filepath.Join("..", "..", "testdata", "catalog", "bad", "unknown-field.yaml")
	code, out, _ := runCatalog(t, "lint", "--no-tests", bad)
	if code != 1 || !strings.Contains(out, "unknown-field.yaml:9: defects[0].titel: unknown field") || !strings.Contains(out, "1 problem(s)") {
		t.Errorf("exit %d\n%s", code, out)
	}
	// The summary says the file failed to load, not "catalog revision , …".
	assert.Contains(t, out, "1 of 1 file(s) failed to load: "+bad+": 1 problem(s)")
	assert.NotContains(t, out, "catalog revision ")

	// A missing file is named once; a good file beside it is still summed up.
	missing := filepath.Join(t.TempDir(), "nonexist.yaml")
	code, out, _ = runCatalog(t, "lint", "--no-tests", missing)
	assert.Equal(t, 1, code)
	assert.NotContains(t, out, "open "+missing, "the path once per line")
	assert.Contains(t, out, missing+": open: no such file or directory")
	code, out, _ = runCatalog(t, "lint", "--no-tests", "--over-default", missing, "../../catalog/data/paths.yaml")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "1 of 2 file(s) failed to load: "+missing)
	assert.Contains(t, out, "catalog revision ", "the file that loaded is summed up")

	// -v, which the warning line names, is in the usage.
	_, usage, _ := runCatalog(t, "-h")
	assert.Contains(t, usage, "[-v]")
	code, _, errs := runCatalog(t, "lint", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errs, "  -v\t")
}

func TestCatalogLintTestLogs(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	log := "*** Aborted at 1652960713 (unix time) try \"date -d @1652960713\" if you are using GNU date ***\n" +
		"PC: @          0x41f9851 starrocks::RowsetMetaPB::MergeFrom()\n" +
		"*** SIGSEGV (@0x8) received by PID 12079 (TID 0x7f5335458700) from PID 8; stack trace: ***\n" +
		"    @          0x4bf3b52 google::(anonymous namespace)::FailureSignalHandler()\n" +
		"    @     0x7f540e9ee630 (unknown)\n" +
		"    @          0x41f9851 starrocks::RowsetMetaPB::MergeFrom()\n" +
		"    @          0x386b957 starrocks::TabletMeta::to_meta_pb()\n" +
		"    @          0x3860020 starrocks::TabletManager::start_trash_sweep()\n"
	os.WriteFile(filepath.Join(dir, "logs", "a.txt"), []byte(log), 0o644)
	cat := `schema: 1
revision: "u1"
defects:
  - id: SR-1-merge-from
    product: starrocks
    title: "t"
    match:
      - frames: ["starrocks::RowsetMetaPB::MergeFrom", "starrocks::TabletMeta::to_meta_pb"]
    fixed: ["3.3.9"]
    links: ["https://github.com/StarRocks/starrocks/issues/1"]
    tests: ["logs/a.txt"]
  - id: SR-2-other
    product: starrocks
    title: "t"
    match:
      - frames: ["starrocks::Other::thing"]
    fixed: ["3.3.9"]
    links: ["https://github.com/StarRocks/starrocks/issues/2"]
    tests: ["logs/a.txt", "logs/missing.txt"]
`
	path := filepath.Join(dir, "c.yaml")
	os.WriteFile(path, []byte(cat), 0o644)
	code, out, _ := runCatalog(t, "lint", "--root", dir, path)
	if code != 1 || strings.Contains(out, "SR-1-merge-from;") || !strings.Contains(out, "does not match SR-2-other") || !strings.Contains(out, "logs/missing.txt") || !strings.Contains(out, "2 problem(s)") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestCatalogShow(t *testing.T) {
	code, out, _ := runCatalog(t, "show")
	if code != 0 || !strings.HasPrefix(out, "catalog revision ") {
		t.Errorf("show: exit %d\n%s", code, out)
	}
	code, out, _ = runCatalog(t, "show", "--paths", "--json")
	if code != 0 {
		t.Fatalf("show --paths --json: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rec struct {
		CatalogRevision string `json:"catalog_revision"`
		Rule            struct {
			ID   string `json:"id"`
			Path string `json:"path"`
		} `json:"path_rule"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec.CatalogRevision == "" || rec.Rule.ID == "" || len(lines) < 20 {
		t.Errorf("show --json: %v %+v (%d lines)", err, rec, len(lines))
	}
	if code, _, errOut := runCatalog(t, "show", "--catalog", "/nonexistent.yaml"); code != 1 || !strings.Contains(errOut, "nonexistent") {
		t.Errorf("missing catalog file: exit %d %q", code, errOut)
	}
	if code, _, _ := runCatalog(t, "frobnicate"); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}

// TestCatalogShowLikelyFix: an entry with only fixed_likely names the likely
// version and the date instead of "no fix known" (SR-26738, DORIS-37534 in
// the default catalog; a user file here so the test does not depend on the
// research state of the default one).
func TestCatalogShowLikelyFix(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "ours.yaml")
	y := `schema: 1
revision: u1
defects:
  - id: SR-900-likely-only
    product: starrocks
    title: likely only
    match:
      - anchor: "starrocks::Foo::bar"
    fixed_likely: ["3.1.0 (2023-07-21)"]
    links: ["https://github.com/StarRocks/starrocks/pull/900"]
    tests: ["t.txt"]
  - id: SR-901-both
    product: starrocks
    title: both
    match:
      - anchor: "starrocks::Foo::baz"
    fixed: ["3.2.4"]
    fixed_likely: ["3.1.9 (2024-02-01)"]
    links: ["https://github.com/StarRocks/starrocks/pull/901"]
    tests: ["t.txt"]
  - id: SR-903-lineage
    product: starrocks
    title: lineage
    match:
      - anchor: "starrocks::Foo::quux"
    fixed_likely: ["3.2.0 (main 2023-08-14)", "3.3.0 (main PR 2023-10-26)"]
    links: ["https://github.com/StarRocks/starrocks/pull/903"]
    tests: ["t.txt"]
  - id: SR-902-none
    product: starrocks
    title: none
    match:
      - anchor: "starrocks::Foo::qux"
    links: ["https://github.com/StarRocks/starrocks/pull/902"]
    tests: ["t.txt"]
`
	require.NoError(t, os.WriteFile(f, []byte(y), 0o644))
	code, out, errOut := runCatalog(t, "show", "--catalog", f)
	require.Equal(t, 0, code, errOut)
	block := func(id string) string {
		i := strings.Index(out, id+"  [")
		require.GreaterOrEqual(t, i, 0, "%s not shown:\n%s", id, out)
		rest := out[i:]
		if j := strings.Index(rest[1:], "\nSR-"); j >= 0 {
			rest = rest[:j+1]
		}
		return rest
	}
	b := block("SR-900-likely-only")
	assert.Contains(t, b, "likely fixed in 3.1.0 (the fix reached branch-3.1 on 2023-07-21)")
	assert.NotContains(t, b, "no fix known")
	assert.Contains(t, block("SR-901-both"), "fixed 3.2.4; likely fixed in 3.1.9 (the fix reached branch-3.1 on 2024-02-01)")
	assert.Contains(t, block("SR-902-none"), "no fix known")
	// Lineage: the date is the trunk's, before the branch was cut.
	lin := block("SR-903-lineage")
	assert.Contains(t, lin, "likely fixed in 3.2.0 (the fix reached main on 2023-08-14, before branch-3.2 was cut); likely fixed in 3.3.0 (the main fix of 2023-10-26, before branch-3.3 was cut)")
	assert.NotContains(t, lin, "reached branch-")

	// The default catalog's likely-only entries say so too.
	code, out, _ = runCatalog(t, "show")
	require.Equal(t, 0, code)
	i := strings.Index(out, "SR-26738-")
	require.GreaterOrEqual(t, i, 0)
	entry := out[i:]
	entry = entry[:strings.Index(entry, "\n    http")]
	// Its 3.1 date is the pick's opening date (the merge was not seen): the
	// branch-PR form says so instead of claiming when the fix reached the branch.
	assert.Contains(t, entry, "likely fixed in 3.1.0 (a PR to branch-3.1 was opened on 2023-07-21; its merge date was not seen)")
	assert.NotContains(t, entry, "reached branch-3.1")
}
