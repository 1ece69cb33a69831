package symbolize

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nulRun is the preallocated tail of a log file a crash leaves behind: the
// next process writes after it, on the same physical line.
var nulRun = strings.Repeat("\x00", 32)

// TestNULRunBeforeDump: a crash text written after a NUL run gives the same
// incidents (so the same signature keys) as without it, with and without
// the prefilter, for every corpus, format and validation text — also when
// the old process's last line, cut by the crash, comes before the run. At
// 9e5a28c most of them differed: the line was junk unless it held `*** `
// or was a glog line, and the glog test failed on the leading NULs.
func TestNULRunBeforeDump(t *testing.T) {
	inputs := prefilterInputs(t)
	for name, data := range inputs {
		want := parseWith(t, data, ScanOptions{}, true)
		for _, before := range []string{nulRun, "I0303 10:15:02.118230 1 daemon.cpp:312] cut by the cra" + nulRun + "x" + nulRun} {
			prefixed := append([]byte(before), data...)
			for _, filtered := range []bool{true, false} {
				got := parseWith(t, prefixed, ScanOptions{}, filtered)
				assert.Equal(t, want, got, "%s after %q (prefilter %v)", filepath.Base(name), before[:min(len(before), 8)], filtered)
			}
		}
	}
}

func TestSkipNUL(t *testing.T) {
	for n := range 600 {
		b := []byte(strings.Repeat("\x00", n) + "a\x00")
		require.Equal(t, n, skipNUL(b), n)
		require.Equal(t, n, skipNUL(b[:n]), n)
	}
}

// TestShortNULRun: NUL runs shorter than minHole (binary junk, UTF-16) do
// not split a line, which stays junk between incidents; minHole NULs do.
func TestShortNULRun(t *testing.T) {
	for n, events := range map[int]int{1: 0, minHole - 1: 0, minHole: 1, 4096: 1} {
		in := strings.Repeat("\x00", n) + "Segmentation fault\n" + tailDump
		for _, filtered := range []bool{true, false} {
			got := parseWith(t, []byte(in), ScanOptions{}, filtered)
			assert.Equal(t, events, strings.Count(got, `"kind":"shell"`), "%d NULs (prefilter %v)", n, filtered)
		}
	}
}
