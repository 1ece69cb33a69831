package catalog

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseLikelyFix: fixed_likely values come from users' catalog files.
// No input panics; a bad one wraps ErrVersion; a parsed one re-parses from
// its Text to the same value, its Said names the date and never says a
// pick-dated fix reached the branch, and a lineage value is an X.Y.0.
func FuzzParseLikelyFix(f *testing.F) {
	for _, s := range []string{"2.1.5 (2024-06-21)", "2.1.5 (branch PR 2024-06-17)", "4.0.0 (master 2025-02-13)",
		"3.3.0 (main PR 2024-01-15)", "3.0.7 (branch PR 2025-06-26; base assumed; link inferred)",
		"1.2.0 (master PR 2021-04-07; link inferred)", "2.1.5 (branch PR 2024-06-17; )", "2.1.5 (; base assumed)", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lf, err := ParseLikelyFix(s)
		if err != nil {
			if !errors.Is(err, ErrVersion) {
				t.Fatalf("%q: error %v does not wrap ErrVersion", s, err)
			}
			return
		}
		again, err := ParseLikelyFix(lf.Text)
		if err != nil || again != lf {
			t.Fatalf("%q: re-parse of %q = %+v, %v; want %+v", s, lf.Text, again, err, lf)
		}
		said := lf.Said()
		if !strings.Contains(said, lf.Date) || !validDate(lf.Date) {
			t.Fatalf("%q: Said %q does not name a valid date %q", s, said, lf.Date)
		}
		if lf.PickOnly() && strings.Contains(said, "reached") {
			t.Fatalf("%q: a pick-dated fix is said to have reached the branch: %q", s, said)
		}
		if lf.Trunk != "" && lf.Version.Patch != 0 {
			t.Fatalf("%q: lineage value %s is not X.Y.0", s, lf.Version)
		}
	})
}
