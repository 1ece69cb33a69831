package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type cmdFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

func runCmd(t *testing.T, fn cmdFunc, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := fn(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCmdExplain(t *testing.T) {
	f := filepath.Join("..", "..", "testdata", "corpus", "starrocks", "003-evhttpserver-start-lambda.txt")
	code, out, errs := runCmd(t, cmdExplain, f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"key:   FAULT | starrocks::EvHttpServer::start::{lambda}", "trace:", "kept    #"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	code, out, _ = runCmd(t, cmdExplain, "--json", f)
	if code != 0 || !strings.Contains(out, `"algorithm":"crashsig-sig/`) || !strings.Contains(out, `"trace":[`) {
		t.Errorf("json: %d %s", code, out)
	}
	if code, _, _ := runCmd(t, cmdExplain); code != 2 {
		t.Errorf("no args: exit %d", code)
	}
}

func TestCmdBucketsAndDiff(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "corpus")
	// 0.6: crashsig-sig/9 keys most near-duplicates of the corpus alike;
	// the NLJoin permute crashes (SR-10822) still have two keys.
	code, out, errs := runCmd(t, cmdBuckets, "--threshold", "0.6", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "incidents in") || !strings.Contains(out, "first ") || !strings.Contains(out, "probably the same") {
		t.Errorf("buckets output:\n%s", out)
	}
	seen := map[string]bool{} // the similar lines of one bucket
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "       ") { // a bucket's first line (or a path heading)
			clear(seen)
			continue
		}
		if strings.Contains(l, "probably the same as ") {
			if seen[l] {
				t.Errorf("a bucket names a similar bucket twice: %s", l)
			}
			seen[l] = true
		}
	}
	// diff: explain --tsv against itself is empty; against an edited copy
	// it lists the old and the new key.
	_, tsv, _ := runCmd(t, cmdExplain, "--tsv", filepath.Join(dir, "starrocks"))
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a.tsv"), filepath.Join(tmp, "b.tsv")
	os.WriteFile(a, []byte(tsv), 0o644)
	lines := strings.SplitN(tsv, "\n", 2)
	f := strings.Split(lines[0], "\t")
	f[3] = "SIGSEGV | something::else"
	os.WriteFile(b, []byte(strings.Join(f, "\t")+"\n"+lines[1]), 0o644)
	if code, out, _ := runCmd(t, cmdDiff, a, a); code != 0 || !strings.Contains(out, "0 changed") {
		t.Errorf("self diff: %d %s", code, out)
	}
	code, out, _ = runCmd(t, cmdDiff, a, b)
	if code != 1 || !strings.Contains(out, "+ SIGSEGV | something::else") || !strings.Contains(out, "1 changed") {
		t.Errorf("diff: %d %s", code, out)
	}
	golden := filepath.Join("..", "..", "testdata", "signature", "golden.tsv")
	if code, out, errs := runCmd(t, cmdDiff, golden, golden); code != 0 {
		t.Errorf("golden self diff: %d %s %s", code, out, errs)
	}
}

// TestDiffDirectoriesAndExitCodes: diff compares the *.tsv files of the
// same relative name under two directories and names the files on one
// side only; an unreadable input exits 1, a file against a directory 2,
// and -h prints a usage text with the exit status.
func TestDiffDirectoriesAndExitCodes(t *testing.T) {
	_, tsv, _ := runCmd(t, cmdExplain, "--tsv", filepath.Join("..", "..", "testdata", "formats"))
	require.NotEmpty(t, tsv)
	lines := strings.SplitN(tsv, "\n", 2)
	f := strings.Split(lines[0], "\t")
	f[3] = "SIGSEGV | something::else"
	edited := strings.Join(f, "\t") + "\n" + lines[1]

	tmp := t.TempDir()
	dA, dB := filepath.Join(tmp, "dA"), filepath.Join(tmp, "dB")
	for _, d := range []string{filepath.Join(dA, "sub"), filepath.Join(dB, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(p, s string) { require.NoError(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(filepath.Join(dA, "x.tsv"), tsv)
	write(filepath.Join(dB, "x.tsv"), edited)
	write(filepath.Join(dA, "sub", "y.tsv"), tsv)
	write(filepath.Join(dB, "sub", "y.tsv"), tsv)
	write(filepath.Join(dA, "old-only.tsv"), tsv)
	write(filepath.Join(dB, "notes.txt"), "not a signature file\n")

	code, out, errs := runCLI(t, "", "diff", dA, dB)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, out, "+ SIGSEGV | something::else")
	assert.Contains(t, out, "only in "+dA+": old-only.tsv")
	assert.Contains(t, out, "2 file(s) compared, 1 file(s) only in old, 0 file(s) only in new")
	assert.Contains(t, out, "1 changed")
	assert.NotContains(t, out, "notes.txt", "only *.tsv files are compared")

	// Same directory: no difference.
	code, out, _ = runCLI(t, "", "diff", dA, dA)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "0 changed, 0 only in old, 0 only in new")

	// An unreadable input is exit 1, as for every command.
	code, _, errs = runCLI(t, "", "diff", filepath.Join(dA, "x.tsv"), filepath.Join(tmp, "nonexist"))
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "nonexist")
	// A malformed TSV is exit 1 too, naming the line.
	write(filepath.Join(tmp, "bad.tsv"), "only\ttwo\n")
	code, _, errs = runCLI(t, "", "diff", filepath.Join(tmp, "bad.tsv"), filepath.Join(dA, "x.tsv"))
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "bad.tsv:1")
	// A file against a directory, or one argument: usage.
	code, _, errs = runCLI(t, "", "diff", filepath.Join(dA, "x.tsv"), dB)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "want two files or two directories")
	code, _, errs = runCLI(t, "", "diff", dA)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "usage: crashsig diff OLD NEW")

	code, _, errs = runCLI(t, "", "diff", "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errs, "two directories")
	assert.Contains(t, errs, "1 the keys differ")
}
