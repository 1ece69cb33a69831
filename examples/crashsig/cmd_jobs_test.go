package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJobsSameOutput: classify (human and --json) and buckets print the
// same bytes, on stdout and stderr, whatever --jobs is, over every file
// of the corpus and validation sets (hundreds of files of mixed sizes)
// and a missing path. Run it with -race.
func TestJobsSameOutput(t *testing.T) {
	inputs := []string{"../../testdata/corpus", "../../testdata/nonexistent.txt", "../../testdata/validation"}
	for _, cmd := range [][]string{{"classify"}, {"classify", "--json"}, {"buckets", "--json"}} {
		args := append(append([]string{}, cmd...), inputs...)
		code1, out1, err1 := runCLI(t, "", append(args, "--jobs", "1")...)
		require.Equal(t, exitInput, code1, "the missing path makes the exit code 1")
		require.NotEmpty(t, out1)
		assert.Contains(t, err1, "nonexistent.txt")
		for _, jobs := range []string{"2", "5"} {
			code, out, errs := runCLI(t, "", append(args, "--jobs", jobs)...)
			assert.Equal(t, code1, code, "%v --jobs %s", cmd, jobs)
			require.Equal(t, out1, out, "%v --jobs %s: stdout", cmd, jobs)
			require.Equal(t, err1, errs, "%v --jobs %s: stderr", cmd, jobs)
		}
	}
	code, _, errs := runCLI(t, "", "classify", "--jobs", "-1", "../../testdata/corpus")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "--jobs -1")
}
