package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDigitRunEnd: the word-at-a-time digit run ends where the byte loop
// ends, for every start and length around the eight-byte words.
func TestDigitRunEnd(t *testing.T) {
	for _, s := range []string{"", "1", "12345678", "123456789", "1234567a", "a2345678", "0303 10:15", "140073341400640 daemon.cpp", "99999999999999999", "1234567/9", "12345678:"} {
		for i := 0; i <= len(s); i++ {
			want := i
			for want < len(s) && isDigit(s[want]) {
				want++
			}
			assert.Equal(t, want, digitRunEnd(s, i), "%q from %d", s, i)
		}
	}
}
