package scan

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWindowLines checks that readLine, taking lines from the window over
// the reader's buffer (their ends from the newline bits), gives the lines
// a split of the input gives: every length around the 64-byte chunks of
// the bits, lines cut at MaxLineBytes, lines longer than the reader's
// buffer, the last line with and without a newline.
func TestWindowLines(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, limit := range []int{100, 64 << 10} {
		var b strings.Builder
		for b.Len() < 3<<20 {
			n := r.IntN(300)
			switch r.IntN(50) {
			case 0:
				n = 300 << 10 // longer than the reader's buffer
			case 1:
				n = 64*r.IntN(4) + r.IntN(3) - 1
			}
			b.WriteString(strings.Repeat(string(rune('a'+r.IntN(26))), max(n, 0)))
			b.WriteByte('\n')
		}
		for _, tail := range []string{"", "last line without a newline"} {
			data := b.String() + tail
			want := strings.Split(data, "\n")
			if tail == "" {
				want = want[:len(want)-1]
			}
			s := NewScanner(bytes.NewReader([]byte(data)), ScanOptions{MaxLineBytes: limit})
			for i := 0; ; i++ {
				line, truncated, err := s.readLine()
				if len(line) == 0 && err != nil {
					require.ErrorIs(t, err, io.EOF)
					require.Equal(t, len(want), i, "lines")
					break
				}
				require.Less(t, i, len(want))
				w := want[i]
				require.Equal(t, len(w) > limit, truncated, "line %d", i)
				require.Equal(t, w[:min(len(w), limit)], string(line), "line %d", i)
				if err != nil {
					require.True(t, errors.Is(err, io.EOF))
				}
			}
		}
	}
}
