package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestClassifyJSONSchema: each line of classify --json is a
// pipeline.Result (unknown keys refused) carrying the keys the README
// promises; result.schema.json validates the goldens (go test ./pipeline).
func TestClassifyJSONSchema(t *testing.T) {
	code, out, errs := runCLI(t, "", "classify", "--json", "../../testdata/formats/f3-doris-check-then-f1.txt")
	require.Equal(t, exitOK, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1)
	var res pipeline.Result
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&res))
	assert.Equal(t, pipeline.SchemaVersion, res.SchemaVersion)
	assert.Equal(t, "doris", string(res.Product))
	assert.Equal(t, "check", string(res.Kind))
	assert.Equal(t, "SIGABRT", res.Signal)
	require.NotEmpty(t, res.Threads)
	assert.True(t, res.Threads[0].Crashed, "the crashing thread first")
	require.Greater(t, len(res.Threads[0].Frames), 10)
	require.NotNil(t, res.Signature)
	assert.NotEmpty(t, res.Signature.Key)
	assert.NotEmpty(t, res.Signature.Trace)
	require.NotNil(t, res.Classification)
	assert.NotEmpty(t, res.Classification.CatalogRevision)

	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	for _, k := range []string{"schema_version", "source", "start_line", "end_line", "product", "version", "kind", "signal", "fault_address", "query_id", "message", "corrupted", "corrupted_reason", "threads", "signature", "classification", "input"} {
		assert.Contains(t, m, k)
	}
}

func TestClassifyInputs(t *testing.T) {
	dir := t.TempDir()
	crash, err := os.ReadFile("../../testdata/formats/f2-glog04-preamble.txt")
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(crash)
	zw.Close()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "be.out.gz"), gz.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "be.INFO"), []byte("I0303 10:15:02.118230 1 a.cpp:1] nothing\n"), 0o644))

	// A directory, recursively, with a gzip file inside.
	code, out, _ := runCLI(t, "", "classify", "--json", dir)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, 1, strings.Count(out, "\n"), out)
	assert.Contains(t, out, `"product":"starrocks"`)
	// Standard input.
	code, out, _ = runCLI(t, string(crash), "classify", "-")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "key:    FAULT")
	// No crash in a readable input: exit 3 and say so.
	code, out, _ = runCLI(t, "", "classify", filepath.Join(dir, "be.INFO"))
	assert.Equal(t, exitNoCrash, code)
	assert.Contains(t, out, "no crash found")
	// An unreadable input: exit 1 with a message naming it.
	code, _, errs := runCLI(t, "", "classify", filepath.Join(dir, "missing.log"))
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "missing.log")
	// No paths: usage, exit 2.
	code, _, _ = runCLI(t, "", "classify")
	assert.Equal(t, exitUsage, code)
}

// TestClassifyDeterministic runs the main job twice over all sample data
// and wants byte-identical output.
func TestClassifyDeterministic(t *testing.T) {
	_, a, _ := runCLI(t, "", "classify", "--json", "../../testdata/corpus", "../../testdata/formats")
	_, b, _ := runCLI(t, "", "classify", "--json", "../../testdata/corpus", "../../testdata/formats")
	assert.Greater(t, len(a), 100000)
	assert.True(t, a == b, "outputs differ")
}

// TestClassifyCore classifies a gzip-compressed kernel core of the
// backend-like test program with its binary: the core is detected by its
// ELF type, unwound, symbolized, signed and put on the scan path. The
// binary itself, given as an input, is skipped without failing the run.
func TestClassifyCore(t *testing.T) {
	binPath := gunzipCoreFixture(t, t.TempDir(), "bin/sim_fp.gz")
	code, out, errs := runCLI(t, "", "classify", "--json", "--binary", binPath, "../../testdata/core/cores/kern_fp.core.gz", "../../testdata/core/bin/sim_fp.gz")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "sim_fp.gz: skipped: an ELF file that is not a core")
	var res pipeline.Result
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &res))
	assert.Equal(t, pipeline.ContentCore, res.Input)
	assert.Equal(t, "starrocks", string(res.Product))
	assert.Equal(t, "SIGSEGV", res.Signal)
	assert.Equal(t, "scan", string(res.Classification.Path))
	assert.Contains(t, res.Signature.Key, "starrocks::ParsedPageV1::read")
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

// TestClassifyNotesBinaryInput: random bytes read as text yield "no crash
// found" and a note that the file holds no text; a log in a legacy
// encoding, a text without a crash and a binary file that held a crash
// get no note.
func TestClassifyNotesBinaryInput(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	junk := make([]byte, 200<<10)
	for i := range junk {
		junk[i] = byte(r.Uint32())
	}
	crash, err := os.ReadFile("../../testdata/formats/f2-glog04-preamble.txt")
	require.NoError(t, err)
	// GBK text: almost no byte of it is UTF-8, and none is a control byte.
	gbk := bytes.Repeat([]byte{0xca, 0xfd, 0xbe, 0xdd, 0xbf, 0xe2, ' ', 0xb1, 0xc0, 0xc0, 0xa3, '\n'}, 8<<10)
	files := map[string][]byte{
		"random.log":      junk,
		"gbk.log":         gbk,
		"plain.log":       []byte("I0303 10:15:02.118230 1 a.cpp:1] nothing\n"),
		"crash-junk.log":  append(append(append([]byte{}, junk[:16<<10]...), '\n'), crash...),
		"also-random.bin": junk[1:],
	}
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	path := func(n string) string { return filepath.Join(dir, n) }

	code, out, errs := runCLI(t, "", "classify", path("random.log"), path("gbk.log"), path("plain.log"))
	assert.Equal(t, exitNoCrash, code)
	assert.Contains(t, out, "no crash found")
	assert.Equal(t, 1, strings.Count(errs, "note: binary data"), errs)
	assert.Contains(t, errs, "random.log: note: binary data, not a crash log or a core: of its first 65536 bytes, ")
	assert.NotContains(t, errs, "gbk.log")
	assert.NotContains(t, errs, "plain.log")

	// A crash after junk: found, so no note.
	code, _, errs = runCLI(t, "", "classify", path("crash-junk.log"))
	assert.Equal(t, exitOK, code)
	assert.NotContains(t, errs, "note:")

	// The other commands that read inputs say it too.
	_, _, errs = runCLI(t, "", "explain", path("also-random.bin"))
	assert.Contains(t, errs, "also-random.bin: note: binary data")
	_, _, errs = runCLI(t, "", "report", "-o", path("r.html"), path("also-random.bin"))
	assert.Contains(t, errs, "also-random.bin: note: binary data")
}
