package itanium

import (
	"math/rand"
	"os"
	"regexp"
	"strconv"
	"testing"
)

var (
	reSub   = regexp.MustCompile(`S[0-9A-Z]*_`)
	reParam = regexp.MustCompile(`T[0-9]*_`)
	inserts = []string{"K", "V", "r", "R", "O", "P", "Dp", "KT_", "RS_", "PFvvE", "FviE", "M3FooFviE", "A3_", "Do",
		"S_", "S0_", "S1_", "T_", "T0_", "IiE", "IJEE", "IJiEE", "Li1E", "Lb0E", "DnLDnE", "Ss", "Sa", "St", "B5cxx11",
		"C1", "D0", "Ut_", "UlvE_", "UlT_E_", "Z1fvE", "cvi", "ls", "Dn", "Da", "E", "N", "I", "J", "L", "Z",
		"XadL_Z1fvEE", "X1aIiEE", "XsrT_1aE", "XspT_E", "Xfp_E", "XfpTE", "Xsr1a1bE1cE", "XsrS_1aE", "Xadsr1aE1bE"}
)

// TestMutations compares mutants of real names that stay close to valid
// manglings (other substitution and template parameter indexes, inserted
// qualifiers and types, spliced pieces): wherever the fast path accepts
// a mutant it must print what the reference prints.
func TestMutations(t *testing.T) {
	var pool []string
	for _, s := range loadNames(t) {
		pool = append(pool, s.names...)
	}
	n := 60000
	if testing.Short() {
		n = 5000
	}
	seed := int64(1)
	if v, err := strconv.Atoi(os.Getenv("ITANIUM_MUTATIONS")); err == nil && v > 0 {
		// A longer run with another seed, e.g. ITANIUM_MUTATIONS=3000000.
		n, seed = v, int64(v)
	}
	rng := rand.New(rand.NewSource(seed))
	var d Demangler
	accepted, bad := 0, 0
	for i := 0; i < n; i++ {
		name := mutate(rng, pool[rng.Intn(len(pool))], pool)
		got, ok := d.AppendDemangle(nil, name)
		if d.recovered != nil {
			t.Errorf("internal panic on %q: %v", name, d.recovered)
			d.recovered = nil
		}
		if !ok {
			continue
		}
		accepted++
		want, refOK := safeReference(name)
		if !refOK || string(got) != want {
			bad++
			if bad <= 10 {
				t.Errorf("%s:\n got %q\nwant %q (reference ok=%v)", name, got, want, refOK)
			}
		}
	}
	t.Logf("%d mutants, %d on the fast path, %d differ", n, accepted, bad)
}

func mutate(rng *rand.Rand, name string, pool []string) string {
	for k := rng.Intn(3); k >= 0; k-- {
		if len(name) < 4 {
			return name
		}
		switch rng.Intn(7) {
		case 0, 1:
			if locs := reSub.FindAllStringIndex(name, -1); len(locs) > 0 {
				l := locs[rng.Intn(len(locs))]
				name = name[:l[0]] + []string{"S_", "S0_", "S1_", "S2_", "S3_", "S4_", "S5_", "S9_", "SA_", "Ss", "Sa", "St"}[rng.Intn(12)] + name[l[1]:]
				continue
			}
			fallthrough
		case 2:
			if locs := reParam.FindAllStringIndex(name, -1); len(locs) > 0 {
				l := locs[rng.Intn(len(locs))]
				name = name[:l[0]] + []string{"T_", "T0_", "T1_", "T2_", "T3_"}[rng.Intn(5)] + name[l[1]:]
				continue
			}
			fallthrough
		case 3:
			p := 2 + rng.Intn(len(name)-2)
			name = name[:p] + inserts[rng.Intn(len(inserts))] + name[p:]
		case 4:
			p := 2 + rng.Intn(len(name)-2)
			name = name[:p] + name[p+1:]
		case 5:
			o := pool[rng.Intn(len(pool))]
			if len(o) < 4 {
				continue
			}
			a := 2 + rng.Intn(len(o)-2)
			b := a + rng.Intn(len(o)-a)
			p := 2 + rng.Intn(len(name)-2)
			name = name[:p] + o[a:b] + name[p:]
		case 6:
			p := 2 + rng.Intn(len(name)-2)
			q := p + rng.Intn(len(name)-p)
			name = name[:q] + name[p:q] + name[q:]
		}
	}
	return name
}
