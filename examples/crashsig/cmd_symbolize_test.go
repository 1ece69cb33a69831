package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
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
	out2, _, code := runSymbolize(t, "0x402e21\nstarrocks_be+0x402e21\n\n", "--binary", bin, "--return-addresses")
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

// TestCmdSymbolizeMissingDWO: a split-DWARF binary without its .dwo still
// symbolizes from the symbol table, and the command warns once, at the
// end, about the .dwo its lookups needed.
func TestCmdSymbolizeMissingDWO(t *testing.T) {
	bin := gunzipFixture(t, filepath.Join("..", "..", "symbolize", "testdata", "cxx", "bin", "clang-split.gz"), t.TempDir())
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var pc uint64
	for _, s := range syms {
		if s.Name == "_ZN9starrocks12_GLOBAL__N_111anon_workerEi" {
			pc = s.Value + 4
		}
	}
	if pc == 0 {
		t.Fatal("anon_worker not in the symbol table")
	}
	out, errs, code := runSymbolize(t, "", "--binary", bin, "--exact", fmt.Sprintf("%#x", pc))
	if code != 0 || !strings.HasPrefix(out, "starrocks::(anonymous namespace)::anon_worker(int)\n") {
		t.Errorf("exit %d, output %q", code, out)
	}
	if strings.Count(errs, "warning: symbolize: split DWARF: 1 skeleton units met without their .dwo file") != 1 ||
		!strings.Contains(errs, "clang-split.dwo (not found)") {
		t.Errorf("stderr = %q", errs)
	}
}

// TestClassifyBinaryMissingDWO: classify --binary symbolizes an ASAN
// report's module+offset frames against a split-DWARF binary whose .dwo
// is missing (symbol-table names), and warns about the .dwo on stderr.
func TestClassifyBinaryMissingDWO(t *testing.T) {
	dir := t.TempDir()
	bin := gunzipFixture(t, filepath.Join("..", "..", "symbolize", "testdata", "cxx", "bin", "clang-split.gz"), dir)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var off uint64
	for _, s := range syms {
		if s.Name == "_ZN9starrocks12_GLOBAL__N_111anon_workerEi" {
			off = s.Value + 5 // a return address inside it
		}
	}
	if off == 0 {
		t.Fatal("anon_worker not in the symbol table")
	}
	report := fmt.Sprintf(`=================================================================
==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x55d1c2b3a4f4 bp 0x7f3a2bffe9d0 sp 0x7f3a2bffe9c8 T12)
==7==The signal is caused by a READ memory access.
    #0 0x55d1c2b3a4f4 in (%s+%#x)
    #1 0x7f3a4c494ac2 in start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)

SUMMARY: AddressSanitizer: SEGV (%s+%#x)
==7==ABORTING
`, bin, off, bin, off)
	log := filepath.Join(dir, "be.out")
	if err := os.WriteFile(log, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "classify", "--json", "--binary", bin, log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"demangled":"starrocks::(anonymous namespace)::anon_worker(int)"`) {
		t.Errorf("frame not symbolized from the symbol table:\n%s", out)
	}
	if strings.Count(errs, "split DWARF: 1 skeleton units met without their .dwo file") != 1 {
		t.Errorf("stderr = %q", errs)
	}
}
