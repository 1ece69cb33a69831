package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// utf8BOM is the byte order mark Windows editors write at the start of a
// file saved as UTF-8.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// A byte order mark at the start of a file, or at the start of a line
// where `cat` joined two such files, changes nothing: every crash text of
// testdata gives the same incidents (spans, keys' frames, notes) with one.
func TestByteOrderMark(t *testing.T) {
	inputs := prefilterInputs(t)
	for name, data := range inputs {
		plain := parseWith(t, data, ScanOptions{}, true)
		withBOM := parseWith(t, append(bytes.Clone(utf8BOM), data...), ScanOptions{}, true)
		require.Equal(t, plain, withBOM, "%s: a BOM at the start changed the incidents", name)
	}
	// Two files saved with a BOM, concatenated: the second BOM starts a line.
	a, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "corpus", "doris", "007-hashjoin-hash-variable-len-row.txt"))
	require.NoError(t, err)
	joined := append(append(bytes.Clone(a), utf8BOM...), a...)
	twice := append(bytes.Clone(a), a...)
	assert.Equal(t, parseWith(t, twice, ScanOptions{}, true), parseWith(t, joined, ScanOptions{}, true))
}
