package scan

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrefilterManyContainsRules: a table with more contains rules than
// scan bits (the rules from maxRuleBit on share a bit) still picks the rule
// the full rule set picks, on every line.
func TestPrefilterManyContainsRules(t *testing.T) {
	n := maxRuleBit + 12
	lit := func(i int) string { return "zq" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ": " }
	table := make([]lineRule, n)
	for i := range table {
		table[i] = lineRule{id: lit(i), kind: kOther, contains: lit(i)}
		if i%3 == 0 {
			// An expression that needs more than the literal: the rule may
			// be skipped only where the expression cannot match.
			table[i].re = regexp.MustCompile(regexp.QuoteMeta(lit(i)) + `(\d+) done`)
		}
	}
	rs := newRuleSet(table)
	pf := newPrefilter(rs)
	require.Len(t, pf.contains, n)
	shared := 0
	for i := range pf.contains {
		if pf.contains[i].bit == 1<<maxRuleBit {
			shared++
		}
	}
	require.Equal(t, n-maxRuleBit, shared, "rules sharing the last bit")
	var lines []string
	for i := range n {
		lines = append(lines, "x "+lit(i)+"12 done", "x "+lit(i)+"no", lit(i))
		if i > 0 {
			lines = append(lines, lit(i)+" "+lit(i-1)+"7 done", lit(n-1-i)+lit(i)+"3 done")
		}
	}
	found := 0
	for _, l := range lines {
		tr := trimBlanks(l)
		wr, wm := rs.match(l, tr, true)
		for _, scanned := range []bool{false, true} {
			var hits scanHits
			if scanned {
				hits = pf.scan(l)
			}
			gr, gm := pf.match(l, tr, true, hits, scanned)
			require.Equal(t, wr, gr, "%q", l)
			assert.Equal(t, wm, gm, "%q", l)
		}
		if wr != nil {
			found++
		}
	}
	require.Greater(t, found, 2*n)
}
