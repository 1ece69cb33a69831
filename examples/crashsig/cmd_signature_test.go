package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
