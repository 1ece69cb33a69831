//go:build unix

package main

import (
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/stretchr/testify/assert"
)

// TestMain runs main itself when CRASHSIG_TEST_ARGS is set, so that a
// test can send the process a signal (testutil.ChildMain).
func TestMain(m *testing.M) { testutil.ChildMain(m, "CRASHSIG_TEST_ARGS", "crashsig", main) }

// TestSIGTERM: SIGTERM (kill, systemd, docker stop) ends `crashsig
// classify` as Ctrl-C does: the temporary copy of a compressed core being
// read is removed and the exit status is 1 (review: the process died at
// once and left the copy, up to the size of the core, in the temporary
// directory).
func TestSIGTERM(t *testing.T) {
	code, stderr, left := testutil.SIGTERMDuringCoreCopy(t, "CRASHSIG_TEST_ARGS", "../../testdata/core/cores/kern_fp.core.gz",
		func(fifo string) []string { return []string{"classify", fifo} })
	assert.Equal(t, exitInput, code, "exit status (-1: killed by the signal); stderr: %s", stderr)
	assert.Empty(t, left, "the temporary copy of the core is left behind")
	assert.Contains(t, stderr, "context canceled")
}
