package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/symbolize"
)

// FuzzParse: no input makes the loader panic; errors are always Errors of
// *Error with a file name; a file that loads compiles into a catalog.
func FuzzParse(f *testing.F) {
	f.Add([]byte(testCatalog))
	f.Add([]byte("schema: 1\nrevision: r\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("schema: 1\nrevision: r\npaths: [{id: a, path: scan, area: a, frames: ['*'], why: w}]\n"))
	if b, err := os.ReadFile(filepath.Join("data", "paths.yaml")); err == nil {
		f.Add(b)
	}
	if bad, _ := filepath.Glob(filepath.Join(repoRoot, "testdata", "catalog", "bad", "*.yaml")); len(bad) > 0 {
		for _, p := range bad {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data)
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 || len(es) > maxErrors+10 {
				t.Fatalf("error %T with %d problems", err, len(es))
			}
			for _, e := range es {
				if e.File != "fuzz.yaml" || e.Err == nil {
					t.Fatalf("bad error %+v", e)
				}
			}
			return
		}
		c, err := New(file)
		if err != nil {
			t.Fatalf("parsed file does not compile: %v", err)
		}
		v := c.Classify(crashOf("", "3.3.1", "0-0", "a::b", "starrocks::SegmentIterator::x"), sigOf("SIGSEGV"))
		if v.Path == "" || v.Status == "" {
			t.Fatalf("empty verdict %+v", v)
		}
	})
}

// FuzzParseVersion: no panic; a parsed version's String parses back to the
// same X.Y.Z; Compare is reflexive.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"doris-2.1.6-rc04(AVX2) RELEASE (build git://x@4f5a6b7)", "3.3.19 RELEASE (build 5e6f7a8 distro ubuntu arch x86_64)",
		"3.5.11-ee", "main DEBUG (build 1a2b3c4)", "1.2.3", "0.13.15", "v3.2.1", "1.2.4.2", "9.9.999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		if Compare(v, v) != 0 {
			t.Fatalf("Compare(%v, itself) != 0", v)
		}
		if len(v.Raw) > maxVersionText {
			t.Fatalf("Raw not bounded: %d", len(v.Raw))
		}
		w, err := ParseVersion(v.String())
		if err != nil || cmpRelease(v, w) != 0 || v.Branch() != w.Branch() {
			t.Fatalf("%q -> %q -> %+v, %v", s, v.String(), w, err)
		}
		if r, err := ParseRange(v.Branch() + ".*"); !v.IsDev() && (err != nil || !r.Contains(v)) {
			t.Fatalf("branch range of %v: %v", v, err)
		}
	})
}

// FuzzProductTypes: the extraction of product names from raw frame names
// (untrusted text) never panics, returns at most maxTypes names, each a
// `::`-joined chain of identifiers of the product namespaces.
func FuzzProductTypes(f *testing.F) {
	f.Add("std::_Hashtable<long, std::pair<long const, std::shared_ptr<doris::CloudBaseCompaction> > >::_M_find(long const&)")
	f.Add("_ZNSt8__detail9__variant17__gen_vtable_implINS0_12_Multi_arrayIPFNS0_21__deduce_visit_resultIvEEOZN5doris10vectorized12HashJoinNode4pullEPNS5_12RuntimeStateE")
	f.Add("std::_Function_handler<void (), starrocks::StorageEngine::start_bg_threads()::$_3>::_M_invoke")
	f.Add("_Z9starrocks")
	f.Add("doris::::(anonymous namespace)::")
	f.Add("doris::CalcDeleteBitmapToken::submit_func<doris::BaseBetaRowsetWriter::_generate_delete_bitmap(int)::$_0>(doris::BaseBetaRowsetWriter::_generate_delete_bitmap(int)::$_0)")
	f.Add("doris::Defer<doris::A<int>::f(std::pair<int, int>) const::{lambda()#1}>::~Defer()")
	c, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := c.stack.productTypes(nil, raw)
		if len(got) > maxTypes {
			t.Fatalf("%d names", len(got))
		}
		for _, n := range got {
			if !strings.HasPrefix(n, "doris::") && !strings.HasPrefix(n, "starrocks::") || strings.HasSuffix(n, "::") {
				t.Fatalf("bad name %q from %q", n, raw)
			}
		}
		_ = sourcePath(&symbolize.Frame{Raw: raw})
		_ = lambdaOwner(raw)
		owners := c.stack.lambdaArgOwners(nil, raw, "doris::Defer::~Defer")
		if len(owners) > maxTypes {
			t.Fatalf("%d owners", len(owners))
		}
		for _, n := range owners {
			if !strings.HasPrefix(n, "doris::") && !strings.HasPrefix(n, "starrocks::") || strings.HasSuffix(n, "::") || strings.ContainsAny(n, "<>()") {
				t.Fatalf("bad owner %q from %q", n, raw)
			}
		}
	})
}
