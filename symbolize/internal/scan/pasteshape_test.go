package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPasteShapeMay: a shape's byte test accepts every line its expression
// matches (with something after the prefix), so the guard changes no
// answer; it refuses the digit-led lines of ordinary logs.
func TestPasteShapeMay(t *testing.T) {
	lines := []string{
		"105 Minidump created at", "109     @     0x7f39 doris::Foo", "1\tx", "1234567 x", "12345678 x",
		"2025-03-03 10:15:09,145 INFO [pool-3-thread-1] org.apache", "20250303 10:15:09 x", "7", "7 ",
		"0# doris::Thread", "12. foo", "", "x 1 2",
	}
	for _, sh := range pasteShapes {
		for _, l := range lines {
			m := sh.re.FindStringIndex(l)
			if m != nil && m[1] < len(l) {
				assert.True(t, sh.may([]byte(l)), "%s: %q matches the expression but not the guard", sh.id, l)
			}
		}
		assert.False(t, sh.may([]byte("2025-03-03 10:15:09,145 INFO x")), sh.id)
	}
}

// FuzzPasteShapeMay: the guard never refuses a line the expression takes.
func FuzzPasteShapeMay(f *testing.F) {
	f.Add([]byte("105 Minidump"))
	f.Add([]byte("2025-03-03 10:15"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, sh := range pasteShapes {
			if m := sh.re.FindIndex(b); m != nil && m[1] < len(b) && !sh.may(b) {
				t.Fatalf("%s: %q", sh.id, b)
			}
		}
	})
}
