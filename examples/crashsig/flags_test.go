package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedInputFlags: classify, explain, buckets and report take the
// same input flags, so a core read with --binary gets the same symbolized
// key from each.
func TestSharedInputFlags(t *testing.T) {
	dir := t.TempDir()
	bin := gunzipCoreFixture(t, dir, "bin/sim_fp.gz")
	core := "../../testdata/core/cores/kern_fp.core.gz"
	common := []string{"--binary", bin, "--no-system-debug-dir", "--no-host-files", "--assume-version", "3.3.9",
		"--version-of", core + "=3.3.9", "--jobs", "2", "--frames", "1", core}

	code, out, errs := runCLI(t, "", append([]string{"classify", "--json"}, common...)...)
	require.Equal(t, exitOK, code, errs)
	var res pipeline.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	key := res.Signature.Key
	require.Contains(t, key, "starrocks::ParsedPageV1::read", "symbolized with --binary")

	code, out, errs = runCLI(t, "", append([]string{"explain", "--tsv"}, common...)...)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "\t"+key+"\t")

	code, out, errs = runCLI(t, "", append([]string{"buckets", "--json"}, common...)...)
	require.Equal(t, exitOK, code, errs)
	var bk pipeline.Bucket
	require.NoError(t, json.Unmarshal([]byte(out), &bk))
	assert.Equal(t, key, bk.Key)

	code, out, errs = runCLI(t, "", append([]string{"report"}, common...)...)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "ParsedPageV1::read")
}

// TestBadFlagValues: bad flag values are usage errors (exit 2) in every
// command that takes them, a flag naming a file that cannot be used
// included; they are never accepted silently.
func TestBadFlagValues(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(badYAML, []byte("schema: [\n"), 0o644))
	notELF := filepath.Join(dir, "not-elf")
	require.NoError(t, os.WriteFile(notELF, []byte("hello\n"), 0o644))
	cases := [][]string{
		{"--frames", "0"}, {"--frames", "-1"},
		{"--jobs", "0"}, {"--jobs", "-3"},
		{"--assume-version", "notaversion"},
		{"--version-of", "nonsense"},
		{"--catalog", filepath.Join(dir, "nonexist.yaml")}, {"--catalog", badYAML},
		{"--rules", filepath.Join(dir, "nonexist.yaml")}, {"--rules", badYAML},
		{"--binary", filepath.Join(dir, "nonexist")}, {"--binary", notELF},
		{"--bias", "zz"},
	}
	for _, cmd := range []string{"classify", "explain", "buckets", "report"} {
		for _, c := range cases {
			code, _, errs := runCLI(t, "", append([]string{cmd, crashTxt}, c...)...)
			assert.Equal(t, exitUsage, code, "%s %v: %s", cmd, c, errs)
			assert.NotEmpty(t, errs, "%s %v: says why", cmd, c)
		}
	}
	for _, cmd := range []string{"buckets", "report"} {
		for _, v := range []string{"5", "-1", "1.01", "NaN"} {
			code, _, errs := runCLI(t, "", cmd, crashTxt, "--threshold", v)
			assert.Equal(t, exitUsage, code, "%s --threshold %s: %s", cmd, v, errs)
		}
		for _, v := range []string{"0", "1", "0.6"} {
			code, _, errs := runCLI(t, "", cmd, crashTxt, "--threshold", v)
			assert.Equal(t, exitOK, code, "%s --threshold %s: %s", cmd, v, errs)
		}
	}
	code, _, _ := runCLI(t, "", "report", crashTxt, "--max-sections", "-1")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, "", "core", "../../testdata/core/cores/kern_fp.core.gz", "--max-frames", "-1")
	assert.Equal(t, exitUsage, code)
	// The default --frames is the generator's: the same keys as without it.
	_, def, _ := runCLI(t, "", "explain", "--tsv", crashTxt)
	_, one, _ := runCLI(t, "", "explain", "--tsv", crashTxt, "--frames", "1")
	assert.Equal(t, def, one)
}

// TestCompressedBinaryRefused: --binary FILE.gz says the binary must be
// decompressed first (a binary is read in place), as a usage error.
func TestCompressedBinaryRefused(t *testing.T) {
	bin := "../../testdata/core/bin/sim_fp.gz"
	for _, cmd := range []string{"classify", "explain", "buckets", "report"} {
		code, _, errs := runCLI(t, "", cmd, crashTxt, "--binary", bin)
		assert.Equal(t, exitUsage, code, "%s: %s", cmd, errs)
		assert.Contains(t, errs, "sim_fp.gz: gzip stream: symbolize: a compressed file (a binary is read in place: decompress it first)", cmd)
	}
	// The refusal is the binary reader's own error.
	_, err := symbolize.OpenBinary(bin, symbolize.BinaryOptions{})
	require.True(t, errors.Is(err, symbolize.ErrCompressed), "%v", err)
	b, err := symbolize.OpenBinary(gunzipCoreFixture(t, t.TempDir(), "bin/sim_fp.gz"), symbolize.BinaryOptions{})
	require.NoError(t, err)
	b.Close()
}

// TestVersionOfMatching: a --version-of SOURCE given as an absolute path,
// or as a file under an input directory, applies to the input named
// otherwise; an entry that matches no input is warned about.
func TestVersionOfMatching(t *testing.T) {
	rel := "../../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt"
	abs, err := filepath.Abs(rel)
	require.NoError(t, err)
	version := func(args ...string) (string, string) {
		t.Helper()
		code, out, errs := runCLI(t, "", append([]string{"classify", "--json"}, args...)...)
		require.Equal(t, exitOK, code, errs)
		var res pipeline.Result
		require.NoError(t, json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &res))
		return res.Version, errs
	}
	v, errs := version(rel, "--version-of", abs+"=2.1.5")
	assert.Equal(t, "2.1.5", v)
	assert.NotContains(t, errs, "matches no input")
	v, _ = version(abs, "--version-of", rel+"=2.1.6")
	assert.Equal(t, "2.1.6", v)
	// An absolute directory holding the relative input.
	v, _ = version(rel, "--version-of", filepath.Dir(abs)+"=2.1.7")
	assert.Equal(t, "2.1.7", v)
	// A file under an input directory, named absolutely; the more
	// specific entry wins over a directory entry.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "be.out"), mustRead(t, rel), 0o644))
	v, _ = version(dir, "--version-of", filepath.Join(dir, "be.out")+"=2.1.8", "--version-of", dir+"=2.1.1")
	assert.Equal(t, "2.1.8", v)

	v, errs = version(rel, "--version-of", "/no/such/file=2.1.5")
	assert.Equal(t, "", v)
	assert.Contains(t, errs, "crashsig: warning: --version-of /no/such/file: matches no input")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// gzipBytes compresses b.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestSymbolizeExactFlag: --exact=false looks up pc-1 like
// --return-addresses; --exact with --return-addresses is a usage error;
// a compressed --binary is refused with the reason.
func TestSymbolizeExactFlag(t *testing.T) {
	bin := extractTestBinary(t, "o2-nofp-dw4")
	ret, _, code := runSymbolize(t, "", "--binary", bin, "--return-addresses", "0x402e10")
	require.Equal(t, exitOK, code)
	notExact, _, code := runSymbolize(t, "", "--binary", bin, "--exact=false", "0x402e10")
	require.Equal(t, exitOK, code)
	assert.Equal(t, ret, notExact)
	exact, _, _ := runSymbolize(t, "", "--binary", bin, "--exact", "0x402e10")
	assert.NotEqual(t, ret, exact)
	_, errs, code := runSymbolize(t, "", "--binary", bin, "--exact", "--return-addresses", "0x402e10")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "contradict")

	gz := filepath.Join(t.TempDir(), "bin.gz")
	require.NoError(t, os.WriteFile(gz, gzipBytes(t, mustRead(t, bin)), 0o644))
	_, errs, code = runSymbolize(t, "", "--binary", gz, "0x402e10")
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "gzip stream: symbolize: a compressed file (a binary is read in place: decompress it first)")
}

// TestCoreCompressed: core reads a compressed core as classify does, names
// it as given, and refuses what is not a core.
func TestCoreCompressed(t *testing.T) {
	dir := t.TempDir()
	bin := gunzipCoreFixture(t, dir, "bin/sim_fp.gz")
	gz := "../../testdata/core/cores/kern_fp.core.gz"
	code, out, errs := runCLI(t, "", "core", gz, "--binary", bin, "--no-host-files", "--no-system-debug-dir")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "core kern_fp.core.gz: "), out[:min(len(out), 80)])
	assert.Contains(t, out, "starrocks::ParsedPageV1::read")
	plain := gunzipCoreFixture(t, dir, "cores/kern_fp.core.gz")
	code, out2, _ := runCLI(t, "", "core", plain, "--binary", bin, "--no-host-files", "--no-system-debug-dir")
	require.Equal(t, exitOK, code)
	assert.Equal(t, strings.Replace(out2, "core kern_fp.core:", "core kern_fp.core.gz:", 1), out)

	code, _, errs = runCLI(t, "", "core", crashTxt)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "not an ELF core file")
	code, _, errs = runCLI(t, "", "core", gz, "--binary", "../../testdata/core/bin/sim_fp.gz")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "decompress it first")
}

// TestExitCodeTable: the cases of the exit-status table that concern
// more than one command: report exits 3 on no crash like classify; a flag
// naming a missing file is 2 whichever flag it is.
func TestExitCodeTable(t *testing.T) {
	code, _, errs := runCLI(t, "", "report", noCrashTxt, "-o", filepath.Join(t.TempDir(), "r.html"))
	assert.Equal(t, exitNoCrash, code, errs)
	for _, f := range []string{"--catalog", "--rules", "--binary"} {
		code, _, errs := runCLI(t, "", "classify", crashTxt, f, "/nonexist.yaml")
		assert.Equal(t, exitUsage, code, "%s: %s", f, errs)
		assert.Contains(t, errs, f+": ", "the message names the flag")
	}
	_, help, _ := runCLI(t, "", "help")
	assert.Contains(t, help, "(classify, explain, buckets, report)")
	assert.Contains(t, help, "bad flag value")
}

// TestPathConfidenceInText: the text output says how sure the path
// decision is for every verdict, as the JSON's path_confidence does.
func TestPathConfidenceInText(t *testing.T) {
	code, out, errs := runCLI(t, "", "classify", "../../testdata/formats")
	require.Equal(t, exitOK, code, errs)
	code, js, errs := runCLI(t, "", "classify", "--json", "../../testdata/formats")
	require.Equal(t, exitOK, code, errs)
	paths := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  path:   ") {
			paths++
			assert.Regexp(t, `; confidence (high|medium|low)\)$|\(confidence (high|medium|low)\)$`, l)
		}
	}
	assert.Equal(t, strings.Count(js, `"path_confidence":`), paths)
	assert.Contains(t, out, "path:   query (unplaced; confidence low)")
}

// TestExplainThreadAndSpan: explain names the crashing thread as classify
// does (a pthread handle in hex, never its decimal value) and prints a
// core's name without a line span.
func TestExplainThreadAndSpan(t *testing.T) {
	code, out, errs := runCLI(t, "", "explain", "../../testdata/corpus/starrocks/002-trash-sweep-rowsetmetapb-mergefrom.txt")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "thread: crashing thread 0x7f5335458700, 15 frames")
	assert.NotContains(t, out, "139995352762112")

	code, out, errs = runCLI(t, "", "explain", "../../testdata/core/cores/kern_fp.core.gz", "--no-host-files", "--no-system-debug-dir")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "../../testdata/core/cores/kern_fp.core.gz\n"), out[:min(len(out), 80)])
	assert.NotContains(t, out, ":0-0")
}
