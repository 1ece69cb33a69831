package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// singleCrashTexts returns the corpus files (both products) that hold
// exactly one incident, in name order, with that incident's facts.
func singleCrashTexts(t testing.TB) ([]string, map[string]string, map[string][]incidentFacts) {
	t.Helper()
	texts := map[string]string{}
	facts := map[string][]incidentFacts{}
	var names []string
	for _, prod := range []string{"doris", "starrocks"} {
		ms, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "corpus", prod, "*.txt"))
		require.NoError(t, err)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			require.NoError(t, err)
			cs := parseString(t, string(b))
			if len(cs) != 1 {
				continue
			}
			name := prod + "/" + filepath.Base(m)
			names = append(names, name)
			texts[name] = string(b)
			facts[name] = factsOf(cs, true)
		}
	}
	sort.Strings(names)
	require.Greater(t, len(names), 100)
	return names, texts, facts
}

// joinTexts puts b after a: after a blank line (sep "\n"), or on the next
// line (sep ""); crlf turns every line end into CRLF.
func joinTexts(a, b, sep string, crlf bool) string {
	if !strings.HasSuffix(a, "\n") {
		a += "\n"
	}
	s := a + sep + b
	if crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// TestBackToBackPairs is issue 10's boundary test: every ordered pair of
// single-crash corpus files, one after the other (after a blank line, on
// the next line, and with CRLF line ends), gives the incidents of each
// file scanned apart: count, kind, signal, crashing-thread frame names and
// the corrupted flag.
func TestBackToBackPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("pairs of every corpus file")
	}
	names, texts, facts := singleCrashTexts(t)
	variants := []struct {
		name string
		sep  string
		crlf bool
	}{{"blank", "\n", false}, {"adjacent", "", false}, {"crlf", "\n", true}}
	total, kept := 0, 0
	bad := map[string]int{}
	for _, a := range names {
		for _, b := range names {
			want := append(append([]incidentFacts{}, facts[a]...), facts[b]...)
			for _, v := range variants {
				total++
				got := factsOf(parseString(t, joinTexts(texts[a], texts[b], v.sep, v.crlf)), true)
				if d := factsDiff(want, got); d == "" {
					kept++
				} else {
					bad[a+" + "+b+" ("+v.name+"): "+d]++
				}
			}
		}
	}
	// Report the failures grouped by what went wrong, then the files that
	// fail most, as first and as second text, with one example each.
	byCause, causeExample := map[string]int{}, map[string]string{}
	for k, n := range bad {
		cause := pairFailure(k)
		byCause[cause] += n
		if causeExample[cause] == "" || k < causeExample[cause] {
			causeExample[cause] = k
		}
	}
	var causes []string
	for c := range byCause {
		causes = append(causes, c)
	}
	sort.Slice(causes, func(i, j int) bool {
		return byCause[causes[i]] > byCause[causes[j]] || byCause[causes[i]] == byCause[causes[j]] && causes[i] < causes[j]
	})
	for _, c := range causes {
		t.Logf("cause %q: %d pairs, e.g. %s", c, byCause[c], causeExample[c])
	}
	byA, byB, example := map[string]int{}, map[string]int{}, map[string]string{}
	for k := range bad {
		a, rest, _ := strings.Cut(k, " + ")
		b, _, _ := strings.Cut(rest, " (")
		byA[a]++
		byB[b]++
		if example["A"+a] == "" || k < example["A"+a] {
			example["A"+a] = k
		}
		if example["B"+b] == "" || k < example["B"+b] {
			example["B"+b] = k
		}
	}
	report := func(what string, m map[string]int) {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Slice(ks, func(i, j int) bool { return m[ks[i]] > m[ks[j]] || m[ks[i]] == m[ks[j]] && ks[i] < ks[j] })
		for i, k := range ks {
			if i < 25 {
				t.Logf("%s %s fails %d times, e.g. %s", what, k, m[k], example[what[:1]+k])
			}
		}
	}
	report("A", byA)
	report("B", byB)
	t.Logf("back-to-back pairs keeping both incidents: %d of %d (%.2f%%)", kept, total, 100*float64(kept)/float64(total))
	// Issue 10 asks for 99%; the floor is the figure reached so far, so
	// that it cannot fall back: 99.30% of 79,707 pairs on the corpus of
	// 2026-11-30. On 2026-12-01 the corpus grew by the validation misses
	// moved into it (mid-chunk frames without a header, ASAN summaries
	// without a stack, check failures cut before their dump), texts that
	// merge with whatever precedes them: 97,240 of 98,283 (98.94%), and the
	// scanner of 36e19c9 (before that day's changes) gives the same figure
	// on the grown corpus, so the drop is the data's, not the code's.
	require.GreaterOrEqual(t, kept*1000, total*989, "fewer than 98.9%% of pairs keep both incidents")
}

// pairFailure names the kind of a failure reported by TestBackToBackPairs
// (`a + b (variant): diff`): the two texts merged into one incident, one
// split in more, a changed corrupted flag, changed frames or kind.
func pairFailure(k string) string {
	_, d, _ := strings.Cut(k, "): ")
	switch {
	case strings.Contains(d, " incidents, want "):
		var got, want int
		fmt.Sscanf(d, "%d incidents, want %d", &got, &want)
		if got < want {
			return "merged: fewer incidents"
		}
		return "split: more incidents"
	case strings.Contains(d, "corrupted="):
		g, w, _ := strings.Cut(d, ", want ")
		_, g, _ = strings.Cut(g, ": ")
		g, _, _ = strings.Cut(g, " corrupted=")
		w, _, _ = strings.Cut(w, " corrupted=")
		if g == w {
			return "corrupted flag differs"
		}
		return "kind or signal differs"
	case strings.Contains(d, " frames, want "):
		return "frame count differs"
	}
	return "frame names differ"
}

// TestConcatenated200 scans 200 single-crash corpus texts one after the
// other (each after a blank line, in a fixed shuffled order) and counts
// the incidents.
func TestConcatenated200(t *testing.T) {
	names, texts, _ := singleCrashTexts(t)
	var b strings.Builder
	for i := range 200 {
		s := texts[names[(i*37+11)%len(names)]]
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	cs := parseString(t, b.String())
	t.Logf("200 concatenated single-crash texts gave %d incidents", len(cs))
	require.InDelta(t, 200, len(cs), 4, "incidents from 200 concatenated texts")
}
