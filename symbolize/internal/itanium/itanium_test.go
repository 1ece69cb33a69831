package itanium

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ianlancetaylor/demangle"
)

// The repository regenerates golden files with `go test ./... -update`.
// This package has none: every expected output is computed live by the
// reference library, and testdata/names.txt.gz is input (see README.md for
// how it was made). The flag is accepted so that the command runs here too.
var _ = flag.Bool("update", false, "accepted for `go test ./... -update`; this package has no golden files")

// reference is the output the fast path must reproduce.
func reference(name string) (string, bool) {
	s, err := demangle.ToString(name, demangle.MaxLength(16))
	return s, err == nil
}

type section struct {
	name  string
	names []string
}

var (
	namesOnce sync.Once
	namesList []section
	namesErr  error
)

// loadNames reads testdata/names.txt.gz: one mangled name a line, in
// sections opened by "# <source>" lines (symbench, testbins, corpus,
// libstdc++, syslibs, hard).
func loadNames(tb testing.TB) []section {
	namesOnce.Do(func() {
		f, err := os.Open(filepath.Join("testdata", "names.txt.gz"))
		if err != nil {
			namesErr = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			namesErr = err
			return
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "# ") {
				namesList = append(namesList, section{name: line[2:]})
				continue
			}
			if line == "" || len(namesList) == 0 {
				continue
			}
			namesList[len(namesList)-1].names = append(namesList[len(namesList)-1].names, line)
		}
		namesErr = sc.Err()
	})
	if namesErr != nil {
		tb.Fatal(namesErr)
	}
	return namesList
}

func sectionNames(tb testing.TB, name string) []string {
	for _, s := range loadNames(tb) {
		if s.name == name {
			return s.names
		}
	}
	tb.Fatalf("no section %q in names.txt.gz", name)
	return nil
}

type diffStats struct {
	total, refOK, fast int
	fallbacks          []string
}

// differential checks every name against the reference: ok must imply
// identical output, and no name may hit an internal runtime panic.
func differential(t *testing.T, d *Demangler, names []string) diffStats {
	t.Helper()
	var st diffStats
	var buf []byte
	bad := 0
	for _, name := range names {
		st.total++
		want, refOK := reference(name)
		if refOK {
			st.refOK++
		}
		var ok bool
		buf, ok = d.AppendDemangle(buf[:0], name)
		if d.recovered != nil {
			t.Errorf("internal panic on %s: %v", name, d.recovered)
			d.recovered = nil
		}
		if !ok {
			if refOK {
				st.fallbacks = append(st.fallbacks, name)
			}
			continue
		}
		st.fast++
		if !refOK || string(buf) != want {
			bad++
			if bad <= 20 {
				t.Errorf("%s:\n got %q\nwant %q (reference ok=%v)", name, buf, want, refOK)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d names differ from the reference", bad)
	}
	return st
}

func (st diffStats) coverage() float64 {
	if st.refOK == 0 {
		return 100
	}
	return 100 * float64(st.fast) / float64(st.refOK)
}

// Coverage floors: the share of the names the reference demangles that
// take the fast path. Raise them when coverage improves.
const (
	floorAll      = 99.8
	floorSymbench = 99.9
)

func TestDifferential(t *testing.T) {
	var d Demangler
	var all diffStats
	for _, s := range loadNames(t) {
		st := differential(t, &d, s.names)
		t.Logf("%-10s %6d names, reference ok %6d, fast path %6d (%.2f%%)", s.name, st.total, st.refOK, st.fast, st.coverage())
		all.total += st.total
		all.refOK += st.refOK
		all.fast += st.fast
		if s.name == "symbench" && st.coverage() < floorSymbench {
			t.Errorf("symbench coverage %.2f%% < floor %.2f%%", st.coverage(), floorSymbench)
		}
	}
	t.Logf("all        %6d names, reference ok %6d, fast path %6d (%.2f%%)", all.total, all.refOK, all.fast, all.coverage())
	if all.coverage() < floorAll {
		t.Errorf("coverage %.2f%% < floor %.2f%%", all.coverage(), floorAll)
	}
}

// TestSymbench runs the differential test on every _Z name of the
// symbench backend binary when CRASHSIG_SYMBENCH names its work
// directory (e.g. /work/symbench-work).
func TestSymbench(t *testing.T) {
	dir := os.Getenv("CRASHSIG_SYMBENCH")
	if dir == "" {
		t.Skip("CRASHSIG_SYMBENCH not set")
	}
	bin := filepath.Join(dir, "bin", "dbserver")
	seen := map[string]bool{}
	var names []string
	for _, args := range [][]string{{"--defined-only", bin}, {"-u", bin}} {
		out, err := exec.Command("nm", args...).Output()
		if err != nil {
			t.Fatalf("nm %v: %v", args, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			name, _, _ := strings.Cut(f[len(f)-1], "@")
			if strings.HasPrefix(name, "_Z") && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	var d Demangler
	st := differential(t, &d, names)
	t.Logf("symbench: %d names, reference ok %d, fast path %d (%.3f%%)", st.total, st.refOK, st.fast, st.coverage())
	for i, n := range st.fallbacks {
		if i == 20 {
			break
		}
		t.Logf("fallback: %s", n)
	}
	if st.coverage() < 99 {
		t.Errorf("symbench coverage %.2f%% < 99%%", st.coverage())
	}
}

// TestConstructs pins the constructs the fast path must handle: each
// name must be demangled (ok=true) exactly like the reference.
func TestConstructs(t *testing.T) {
	names := []string{
		// Nested names, CV and ref method qualifiers.
		"_ZN3foo3barEv", "_ZNK3foo3barEv", "_ZNKR3foo3barEi", "_ZNO3foo3barEv", "_ZNVK3foo3barEv",
		// std abbreviations and their constructor/destructor forms.
		"_ZNSsC1Ev", "_ZNSsD2Ev", "_ZNSoD0Ev", "_ZNSiC2Ev", "_ZNSdD1Ev", "_ZNSaIcEC1Ev", "_ZNSt6vectorIiSaIiEEC2Ev",
		"_ZNKSs4sizeEv", "_Z1fSs", "_Z1fSaIcE", "_Z1fSbIwE", "_Z1fSo", "_ZSt4swapIiEvRT_S1_",
		"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1EPKcRKS3_",
		"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
		// Template parameters, return types of function templates, packs.
		"_Z1fIiEvT_", "_Z1fIiEvRKT_", "_ZN1A1fIiEET_S1_", "_Z1fIJiiEEvDpT_", "_Z1fIJEEvDpT_",
		"_Z1fIJRiOlEEvDpOT_", "_ZN1AIiE1fIcEEvT_", "_Z1fIRiEvOT_", "_Z1fIiLi3EEvT_",
		"_Z1fIKiEvRT_", "_Z1fIPFviEEvT_", "_Z1fIA3_iEvRT_",
		// Literals.
		"_Z1fILb1ELb0EEvv", "_Z1fILi3ELin3ELj3ELl3ELm3ELx3ELy3EEvv", "_Z1fILc65ELb2ELs5EEvv", "_Z1fILDnEEvv",
		"_Z1fILZ1gvEEvv",
		// Builtin types.
		"_Z1fDnDsDiDuDhDfDdDe", "_Z1fabcdefghijlmnostwxyz", "_Z1fDaDc",
		// Pointers, references, function types, member pointers, arrays.
		"_Z1fPFviE", "_Z1fRFviE", "_Z1fPKFviE", "_Z1fM3FooFiiE", "_Z1fM3FooKFiiE", "_Z1fM3Fooi",
		"_Z1fPA3_i", "_Z1fRA3_A4_Ki", "_Z1fPFPFivEvE", "_Z1fDoFvvE", "_Z1fPDoFvvE", "_Z1fFvvRE", "_Z1fFvvOE",
		"_Z6outer2IsEPFilES1_", "_Z1fPKc", "_Z1fKPc", "_Z1fPVKi",
		// Operators and conversions.
		"_ZN3FooplERKS_", "_ZN3FooixEi", "_ZN3FooclEv", "_ZN3FoonwEm", "_ZN3FoodaEPv", "_ZN3FoocvbEv",
		"_ZNK3FoocvPKcEv", "_ZN3FoolsIiEERS_T_", "_ZN3FooltIiEEbT_", "_ZN3FooaSEOS_", "_ZN3FoossERKS_",
		// ABI tags.
		"_ZN3fooB5cxx11Ev", "_ZNSt7__cxx114listIiSaIiEE5clearEv", "_ZN3fooB5cxx11B3abcEv",
		// Local names, discriminators, string literals, closures, unnamed types.
		"_ZZ4mainE1x", "_ZZ4mainE1x_0", "_ZZ4mainE1x__12_", "_ZZ4mainEs", "_ZZ4mainEs_1",
		"_ZZ4mainENKUlvE_clEv", "_ZZ4mainENKUlRKiE0_clES0_", "_ZZN1A1fEvENKUlT_E_clIiEEDaS_",
		"_ZN12_GLOBAL__N_13fooEv", "_ZN3FooUt_E", "_ZN3FooUt0_3barEv", "_ZZ1fvEN1A1gEv",
		"_ZZN1A1fEvENUt_1xE", "_ZZ1fvEd_NKUlvE_clEv",
		// Special names.
		"_ZTV3Foo", "_ZTT3Foo", "_ZTI3Foo", "_ZTS3Foo", "_ZThn8_N3Foo3barEv", "_ZTv0_n24_N3Foo3barEv",
		"_ZTch0_h8_N3Foo3barEv", "_ZGVZ4mainE1x", "_ZGR4mainE_", "_ZTW3foo", "_ZTH3foo", "_ZTC3Foo0_3Bar",
		"_ZTIPKc", "_ZTSN9__gnu_cxx13stdio_filebufIcSt11char_traitsIcEEE",
		// GCC clone suffixes.
		"_Z3foov.cold", "_Z3foov.isra.0", "_Z3foov.constprop.0", "_Z3foov.part.0", "_Z3foov.constprop.0.isra.0",
		"_Z3foov.isra.0.cold", "_Z3foov.part.0.cold.12", "_Znwm.cold",
	}
	var d Demangler
	for _, name := range names {
		want, refOK := reference(name)
		if !refOK {
			t.Errorf("%s: the reference rejects it", name)
			continue
		}
		got, ok := d.AppendDemangle(nil, name)
		if !ok {
			t.Errorf("%s: not on the fast path (want %q)", name, want)
			continue
		}
		if string(got) != want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
}

// TestRejects checks names the fast path must hand to the reference.
func TestRejects(t *testing.T) {
	names := []string{
		"", "_", "_Z", "_Z3", "_Z3fo", "_ZN3fooE.cold", "_Z3foov.", "_Z3foovx", "foo", "_R3foo",
		"_ZN3foo17h0123456789abcdefE", // old-style Rust
		"_Z1fIiEvT0_",                 // template parameter out of range
		"_Z1fT_",                      // template parameter outside a template
		"_Z1fRRi",                     // the reference collapses references of non-template types
		"_Z1fIiEvXadL_Z1gvEE",         // expression
		"_GLOBAL__sub_I_foo.cc",
		"_Z1f\x00v",
	}
	var d Demangler
	dst := []byte("keep")
	for _, name := range names {
		got, ok := d.AppendDemangle(dst, name)
		if ok {
			want, refOK := reference(name)
			if !refOK || string(got[4:]) != want {
				t.Errorf("%q: ok with %q, reference %q ok=%v", name, got, want, refOK)
			}
			continue
		}
		if string(got) != "keep" {
			t.Errorf("%q: dst changed to %q", name, got)
		}
	}
}

// TestAppendKeepsPrefix checks that AppendDemangle appends after dst's
// content and that the reference's record of the last byte written does
// not see dst.
func TestAppendKeepsPrefix(t *testing.T) {
	var d Demangler
	for _, name := range []string{"_Z1fIiEvv", "_ZN1AIiEltIiEEvv", "_Z1fv"} {
		want, _ := reference(name)
		got, ok := d.AppendDemangle([]byte("x<"), name)
		if !ok || string(got) != "x<"+want {
			t.Errorf("%s: got %q ok=%v, want %q", name, got, ok, "x<"+want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	var d1, d2 Demangler
	names := sectionNames(t, "syslibs")
	for _, name := range names {
		a, ok1 := d1.AppendDemangle(nil, name)
		b, ok2 := d2.AppendDemangle(nil, name)
		c, ok3 := d1.AppendDemangle(nil, name)
		if ok1 != ok2 || ok1 != ok3 || !bytes.Equal(a, b) || !bytes.Equal(a, c) {
			t.Fatalf("%s: results differ: %q/%v %q/%v %q/%v", name, a, ok1, b, ok2, c, ok3)
		}
	}
}

func TestAllocs(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("allocation counts are not meaningful under -race")
	}
	names := sectionNames(t, "symbench")
	var d Demangler
	buf := make([]byte, 0, 1<<16)
	for _, n := range names {
		buf, _ = d.AppendDemangle(buf[:0], n)
	}
	allocs := testing.AllocsPerRun(3, func() {
		for _, n := range names {
			buf, _ = d.AppendDemangle(buf[:0], n)
		}
	})
	perName := allocs / float64(len(names))
	t.Logf("%.4f allocations per name (warm Demangler, reused dst)", perName)
	if perName > 0.01 {
		t.Errorf("%.4f allocations per name, want ~0", perName)
	}
}

func TestDemangle(t *testing.T) {
	s, ok := Demangle("_ZNKSt6vectorIiSaIiEE4sizeEv")
	if !ok || s != "std::vector<int, std::allocator<int> >::size() const" {
		t.Errorf("got %q, %v", s, ok)
	}
	if s, ok := Demangle("not mangled"); ok || s != "" {
		t.Errorf("got %q, %v for a plain name", s, ok)
	}
}

func BenchmarkDemangle(b *testing.B) {
	names := sectionNames(b, "symbench")
	var size int
	for _, n := range names {
		size += len(n)
	}
	b.Run("itanium", func(b *testing.B) {
		var d Demangler
		buf := make([]byte, 0, 1<<16)
		b.ReportAllocs()
		b.SetBytes(int64(size / len(names)))
		for i := 0; i < b.N; i++ {
			buf, _ = d.AppendDemangle(buf[:0], names[i%len(names)])
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size / len(names)))
		for i := 0; i < b.N; i++ {
			_, _ = demangle.ToString(names[i%len(names)], demangle.MaxLength(16))
		}
	})
}
