package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestClassifyJSONSchema pins the keys the README promises for every
// incident of `classify --json`.
func TestClassifyJSONSchema(t *testing.T) {
	code, out, errs := runCLI(t, "", "classify", "--json", "../../testdata/formats/f3-doris-check-then-f1.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d JSON lines, want 1", len(lines))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"source", "start_line", "end_line", "product", "version", "kind", "signal", "fault_address", "query_id", "message", "corrupted", "corrupted_reason", "threads", "signature", "classification"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	th := m["threads"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "crashed", "frames"} {
		if _, ok := th[k]; !ok {
			t.Errorf("thread key %q missing", k)
		}
	}
	if th["crashed"] != true {
		t.Error("first thread not marked crashed")
	}
	f := th["frames"].([]any)[10].(map[string]any)
	for _, k := range []string{"index", "function", "file", "line", "inlined"} {
		if _, ok := f[k]; !ok {
			t.Errorf("frame key %q missing in %v", k, f)
		}
	}
	sig := m["signature"].(map[string]any)
	for _, k := range []string{"algorithm", "kind", "frames", "key", "id", "trace"} {
		if _, ok := sig[k]; !ok {
			t.Errorf("signature key %q missing", k)
		}
	}
	cl := m["classification"].(map[string]any)
	for _, k := range []string{"path", "area", "defect", "status", "evidence", "catalog_revision"} {
		if _, ok := cl[k]; !ok {
			t.Errorf("classification key %q missing", k)
		}
	}
	if m["product"] != "doris" || m["kind"] != "check" || m["signal"] != "SIGABRT" {
		t.Errorf("product/kind/signal = %v/%v/%v", m["product"], m["kind"], m["signal"])
	}
}

func TestClassifyInputs(t *testing.T) {
	dir := t.TempDir()
	crash, err := os.ReadFile("../../testdata/formats/f2-glog04-preamble.txt")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(crash)
	zw.Close()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "be.out.gz"), gz.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "be.INFO"), []byte("I0303 10:15:02.118230 1 a.cpp:1] nothing\n"), 0o644)

	// A directory, recursively, with a gzip file inside.
	code, out, _ := runCLI(t, "", "classify", "--json", dir)
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"product":"starrocks"`) {
		t.Fatalf("dir: exit %d, output %q", code, out)
	}
	// Standard input.
	code, out, _ = runCLI(t, string(crash), "classify", "-")
	if code != 0 || !strings.Contains(out, "key:    SIGSEGV") {
		t.Fatalf("stdin: exit %d, output %q", code, out)
	}
	// No crash in a readable input: exit 3 and say so.
	code, out, _ = runCLI(t, "", "classify", filepath.Join(dir, "be.INFO"))
	if code != exitNoCrash || !strings.Contains(out, "no crash found") {
		t.Fatalf("no crash: exit %d, output %q", code, out)
	}
	// An unreadable input: non-zero with a clear message naming it.
	code, _, errs := runCLI(t, "", "classify", filepath.Join(dir, "missing.log"))
	if code == 0 || !strings.Contains(errs, "missing.log") {
		t.Fatalf("missing: exit %d, stderr %q", code, errs)
	}
	// No paths: usage, exit 2.
	if code, _, _ := runCLI(t, "", "classify"); code != 2 {
		t.Fatalf("no args: exit %d", code)
	}
}

// TestClassifyDeterministic runs the main job twice over all sample data
// and wants byte-identical output.
func TestClassifyDeterministic(t *testing.T) {
	_, a, _ := runCLI(t, "", "classify", "--json", "../../testdata/corpus", "../../testdata/formats")
	_, b, _ := runCLI(t, "", "classify", "--json", "../../testdata/corpus", "../../testdata/formats")
	if a != b || len(a) < 100000 {
		t.Fatalf("outputs differ or are short (%d, %d bytes)", len(a), len(b))
	}
}

// TestClassifyCore classifies a gzip-compressed kernel core of the
// backend-like test program with its binary: the core is detected by its
// ELF type, unwound, symbolized, signed and put on the scan path. The
// binary itself, given as an input, is skipped without failing the run.
func TestClassifyCore(t *testing.T) {
	binPath := gunzipCoreFixture(t, t.TempDir(), "bin/sim_fp.gz")
	code, out, errs := runCLI(t, "", "classify", "--json", "--binary", binPath, "../../testdata/core/cores/kern_fp.core.gz", "../../testdata/core/bin/sim_fp.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "not a core") {
		t.Errorf("the executable among the inputs was not reported as skipped: %q", errs)
	}
	var rec struct {
		Product        string `json:"product"`
		Signal         string `json:"signal"`
		Formats        []string
		Signature      struct{ Key string }
		Classification struct {
			Path string `json:"path"`
		}
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &rec); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if rec.Product != "starrocks" || rec.Signal != "SIGSEGV" || rec.Classification.Path != "scan" ||
		!strings.Contains(rec.Signature.Key, "starrocks::ParsedPageV1::read") {
		t.Errorf("got %+v", rec)
	}
}

var update = flag.Bool("update", false, "rewrite testdata/golden/crashsig")

// checkGolden compares out with testdata/golden/crashsig/name; -update
// rewrites it. The JSON goldens (*.jsonl) are validated against
// pipeline/result.schema.json by the pipeline package's tests.
func checkGolden(t *testing.T, name, out string) {
	t.Helper()
	golden := filepath.Join("../../testdata/golden/crashsig", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./examples/crashsig -update")
	if string(want) != out {
		t.Errorf("output differs from %s; run go test ./examples/crashsig -update and review the diff", golden)
	}
}

// TestClassifyHumanGolden pins the readable output of the README's main
// command on the synthetic format files; -update rewrites it.
func TestClassifyHumanGolden(t *testing.T) {
	code, out, errs := runCLI(t, "", "classify", "../../testdata/formats")
	require.Equal(t, exitOK, code, errs)
	checkGolden(t, "classify-formats.txt", out)
}

// TestJSONGoldens pins the JSON Lines of classify (text and a compressed
// core) and buckets: one schema, pipeline.Result and pipeline.Bucket.
func TestJSONGoldens(t *testing.T) {
	code, out, errs := runCLI(t, "", "classify", "--json", "../../testdata/formats")
	require.Equal(t, exitOK, code, errs)
	checkGolden(t, "classify-formats.jsonl", out)

	dir := t.TempDir()
	bin := gunzipCoreFixture(t, dir, "bin/sim_fp.gz")
	code, out, errs = runCLI(t, "", "classify", "--json", "--no-system-debug-dir", "--no-host-files",
		"--binary", bin, "--assume-version", "3.3.9", "../../testdata/core/cores/kern_fp.core.gz")
	require.Equal(t, exitOK, code, errs)
	require.NotContains(t, out, dir, "no temporary path in the output")
	checkGolden(t, "classify-core.jsonl", out)

	// core --json prints the same Result as classify --json.
	core := gunzipCoreFixture(t, dir, "cores/kern_fp.core.gz")
	code, out2, errs := runCLI(t, "", "core", core, "--json", "--no-system-debug-dir", "--no-host-files",
		"--binary", bin, "--assume-version", "3.3.9")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, out, strings.ReplaceAll(out2, core, "../../testdata/core/cores/kern_fp.core.gz"))

	code, out, errs = runCLI(t, "", "buckets", "--json", "../../testdata/corpus/starrocks")
	require.Equal(t, exitOK, code, errs)
	checkGolden(t, "buckets-starrocks.jsonl", out)
}
