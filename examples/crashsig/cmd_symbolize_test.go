package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func extractTestBinary(t *testing.T, name string) string {
	t.Helper()
	return gunzipFixture(t, filepath.Join("..", "..", "symbolize", "testdata", "cxx", "bin", name+".gz"), t.TempDir())
}

func runSymbolize(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmdSymbolize(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestCmdSymbolize(t *testing.T) {
	bin := extractTestBinary(t, "o2-nofp-dw4") // non-PIE, anon_worker at 0x402e10
	// Arguments, addr2line style, exact: inline chain then ?? for unknown.
	out, errs, code := runSymbolize(t, "", "--binary", bin, "--exact", "0x402e20", "deadbeef0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "starrocks::(anonymous namespace)::mix3\n/src/crashsig-cxx/backend.cpp:33\n" +
		"starrocks::(anonymous namespace)::mix2\n/src/crashsig-cxx/backend.cpp:34\n" +
		"starrocks::(anonymous namespace)::mix1\n/src/crashsig-cxx/backend.cpp:35\n" +
		"starrocks::(anonymous namespace)::anon_worker(int)\n/src/crashsig-cxx/backend.cpp:36\n" +
		"??\n??:0\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	// stdin, module+offset and return-address adjustment: 0x402e21 - 1 = 0x402e20.
	out2, _, code := runSymbolize(t, "0x402e21\nstarrocks_be+0x402e21\n\n", "--binary", bin)
	if code != 0 || out2 != strings.Repeat(strings.TrimSuffix(want, "??\n??:0\n"), 2) {
		t.Errorf("stdin output (%d):\n%s", code, out2)
	}
	// Bias and JSON.
	out3, _, code := runSymbolize(t, "", "--binary", bin, "--json", "--exact", "--bias", "0x1000", "0x403e20", "zz")
	lines := strings.Split(strings.TrimSpace(out3), "\n")
	if code != 1 || len(lines) != 2 {
		t.Fatalf("json (%d): %s", code, out3)
	}
	var rec struct {
		PC     string `json:"pc"`
		Frames []struct {
			Function string `json:"function"`
			Inlined  bool   `json:"inlined"`
		} `json:"frames"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec.PC != "0x402e20" || len(rec.Frames) != 4 || !rec.Frames[0].Inlined {
		t.Errorf("json line 1 = %s (%v)", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec.Error == "" {
		t.Errorf("json line 2 = %s", lines[1])
	}
	// llvm style with raw names matches llvm-symbolizer --no-demangle's shape.
	out4, _, _ := runSymbolize(t, "", "--binary", bin, "--exact", "--style", "llvm", "--raw", "0x402e20")
	if !strings.HasPrefix(out4, "mix3\n/src/crashsig-cxx/backend.cpp:33:") || !strings.HasSuffix(out4, "\n\n") {
		t.Errorf("llvm style:\n%s", out4)
	}
	// Usage errors.
	if _, _, code := runSymbolize(t, "", "0x1"); code != 2 {
		t.Errorf("missing --binary: exit %d", code)
	}
	if _, errs, code := runSymbolize(t, "", "--binary", filepath.Join(t.TempDir(), "nope")); code != 1 || errs == "" {
		t.Errorf("missing file: exit %d %q", code, errs)
	}
}

// TestCmdSymbolizeOrder feeds thousands of PCs through stdin, so that the
// chunks are symbolized by concurrent workers, and checks that the output
// is in input order: it must equal the per-PC outputs concatenated.
func TestCmdSymbolizeOrder(t *testing.T) {
	bin := extractTestBinary(t, "o2-nofp-dw4")
	pcs := []string{"0x402e20", "deadbeef0", "0x402e10", "starrocks_be+0x402e21", "zz"}
	var in strings.Builder
	var want strings.Builder
	per := map[string]string{}
	for _, pc := range pcs {
		out, _, _ := runSymbolize(t, "", "--binary", bin, "--exact", pc)
		per[pc] = out
	}
	for i := range 5000 {
		pc := pcs[(i*7+i/3)%len(pcs)]
		in.WriteString(pc + "\n")
		want.WriteString(per[pc])
	}
	out, _, code := runSymbolize(t, in.String(), "--binary", bin, "--exact")
	if code != 1 { // "zz" is not an address
		t.Errorf("exit %d, want 1", code)
	}
	if out != want.String() {
		t.Errorf("output of 5000 PCs differs from the per-PC outputs in input order (%d vs %d bytes)", len(out), want.Len())
	}
}
