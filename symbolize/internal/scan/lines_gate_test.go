package scan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMarkdownLinkGate checks the cheap test normalizeLine makes before
// markdownLink's expression: every line the expression takes passes it.
func TestMarkdownLinkGate(t *testing.T) {
	heavyUnderRace(t)
	r := rand.New(rand.NewPCG(7, 8))
	const alphabet = "[]()ab:/ \t\n0x"
	lines := []string{
		"[16:54:50 ](http://ci/log?x=1&focusLine=48797&y)   0# doris::Foo",
		"[](https://a)  x",
		"[" + string(make([]byte, 64)) + "](ab://c) x",
	}
	for range 200000 {
		b := make([]byte, 4+r.IntN(90))
		b[0] = '['
		for i := 1; i < len(b); i++ {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		lines = append(lines, string(b))
	}
	took := 0
	for _, l := range lines {
		b := []byte(l)
		if markdownLink(b) == 0 {
			continue
		}
		took++
		text, _, prefixed := normalizeLine(b)
		require.True(t, prefixed, "%q", l)
		require.Less(t, len(text), len(b), "%q", l)
	}
	require.Positive(t, took)
}
