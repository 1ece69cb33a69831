package signature

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizerCache(t *testing.T) {
	n := NewNormalizer(2)
	for i := 0; i < 3; i++ {
		for _, c := range normalizeCases[:5] {
			require.Equal(t, c.want, n.Normalize(c.in), "cached Normalize(%q)", c.in)
		}
	}
	assert.LessOrEqual(t, n.c.len(), 2, "cache holds more than its limit")
	assert.Equal(t, "a.B.c", n.NormalizeJava("a.B.c(B.java:1)"))
	// The same text as a C++ and as a Java name is cached apart: the
	// second call must not return the first one's answer.
	assert.Equal(t, "A.B$$Lambda$1/0x2.run", n.Normalize("A.B$$Lambda$1/0x2.run"))
	assert.Equal(t, "A.B$$Lambda.run", n.NormalizeJava("A.B$$Lambda$1/0x2.run"))
	assert.Equal(t, "A.B$$Lambda$1/0x2.run", n.Normalize("A.B$$Lambda$1/0x2.run"))
}
