package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOwnJSONRefused: crashsig's own JSON Lines output given back as a
// crash log (a file, stdin, gzip-compressed stdin) is refused with a
// clear error instead of inventing a crash; the other inputs are read.
func TestOwnJSONRefused(t *testing.T) {
	dir := t.TempDir()
	code, js, errs := runCLI(t, "", "classify", "--json", crashTxt)
	require.Equal(t, exitOK, code, errs)
	one := filepath.Join(dir, "one.jsonl")
	require.NoError(t, os.WriteFile(one, []byte(js), 0o644))
	code, bk, errs := runCLI(t, "", "buckets", "--json", crashTxt)
	require.Equal(t, exitOK, code, errs)
	bkFile := filepath.Join(dir, "bk.jsonl.gz")
	require.NoError(t, os.WriteFile(bkFile, gzipBytes(t, []byte(bk)), 0o644))

	for _, cmd := range []string{"classify", "explain", "buckets"} {
		for _, in := range []string{one, bkFile} {
			code, out, errs := runCLI(t, "", cmd, in)
			assert.Equal(t, exitInput, code, "%s %s: %s", cmd, in, errs)
			assert.Contains(t, errs, in+": skipped: this is crashsig --json output, not a crash log")
			assert.NotContains(t, out, "key:")
		}
		for name, stdin := range map[string]string{"plain": js, "gzip": string(gzipBytes(t, []byte(js)))} {
			code, out, errs := runCLI(t, stdin, cmd, "-")
			assert.Equal(t, exitInput, code, "%s %s stdin: %s", cmd, name, errs)
			assert.Contains(t, errs, "crashsig: -: skipped: this is crashsig --json output, not a crash log", name)
			assert.NotContains(t, out, "key:")
		}
		// The other inputs are still read.
		code, out, _ := runCLI(t, "", cmd, one, crashTxt)
		assert.Equal(t, exitInput, code)
		assert.Contains(t, out, "FAULT")
	}
	// report refuses classify --json output (it reads buckets --json).
	code, _, errs = runCLI(t, "", "report", one, "-o", filepath.Join(dir, "r.html"))
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "this is crashsig --json output")

}

// TestGzipCrashOnStdin: a gzip-compressed crash log on stdin is still
// read as before (the screening decompresses it for the pipeline).
func TestGzipCrashOnStdin(t *testing.T) {
	crash := mustRead(t, crashTxt)
	code, plain, errs := runCLI(t, string(crash), "classify", "-")
	require.Equal(t, exitOK, code, errs)
	code, gz, errs := runCLI(t, string(gzipBytes(t, crash)), "classify", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, plain, gz)
	assert.Equal(t, 1, strings.Count(gz, "key:"))
}
