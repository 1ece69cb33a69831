package scan

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// colorize writes data as glog with --colorlogtostderr does: a WARNING,
// ERROR or FATAL line starts with its colour (`ESC[0;33m` yellow for W,
// `ESC[0;31m` red for E and F) and the reset `ESC[m` comes after the
// newline, at the start of the next line.
func colorize(data []byte) []byte {
	var out bytes.Buffer
	reset := false
	for line := range bytes.Lines(data) {
		if reset {
			out.WriteString("\x1b[m")
			reset = false
		}
		if len(line) > 5 && isDigit(line[1]) && isDigit(line[4]) {
			switch line[0] {
			case 'W':
				out.WriteString("\x1b[0;33m")
				reset = true
			case 'E', 'F':
				out.WriteString("\x1b[0;31m")
				reset = true
			}
		}
		out.Write(line)
	}
	return out.Bytes()
}

// Terminal colours change nothing: every crash text of testdata gives the
// same incidents with glog's colours (review: a coloured `Check failed`
// line was lost, EMPTY: FATAL for EMPTY: CHECK(p != nullptr)), and a line
// that resets its colour before its newline reads as without.
func TestTerminalColours(t *testing.T) {
	coloured := 0
	for name, data := range prefilterInputs(t) {
		c := colorize(data)
		if len(c) == len(data) {
			continue
		}
		coloured++
		require.Equal(t, parseWith(t, data, ScanOptions{}, true), parseWith(t, c, ScanOptions{}, true), "%s: colours changed the incidents", name)
	}
	assert.Greater(t, coloured, 50, "inputs with glog W/E/F lines")

	plain := "F0611 08:02:41.118230 90211 threadpool.cpp:247] Check failed: p != nullptr \n*** Check failure stack trace: ***\n"
	for _, in := range []string{
		"\x1b[0;31mF0611 08:02:41.118230 90211 threadpool.cpp:247] Check failed: p != nullptr \n\x1b[m*** Check failure stack trace: ***\n",
		"\x1b[1;31mF0611 08:02:41.118230 90211 threadpool.cpp:247] Check failed: p != nullptr \x1b[0m\n*** Check failure stack trace: ***\x1b[m\n",
	} {
		assert.Equal(t, parseWith(t, []byte(plain), ScanOptions{}, true), parseWith(t, []byte(in), ScanOptions{}, true), "%q", in)
	}
	// Not a colour sequence: kept.
	for _, s := range []string{"\x1b[0;31", "\x1b[x", "\x1b]0;title\x07"} {
		text, _, _ := normalizeLine([]byte(s + "F0611 x"))
		assert.Equal(t, s+"F0611 x", string(text))
	}
}
