package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Flag values the CLI refuses as usage errors (exit 2) are refused before
// the job starts: an out-of-range or NaN threshold (which the job took
// silently, or failed on deep in a worker), a version that does not parse
// (which failed the job after submission with Beam's bundle error).
func TestConfigCheck(t *testing.T) {
	for _, c := range []Config{{Threshold: 0}, {Threshold: 0.8}, {Threshold: 1}, {Threshold: 0.8, AssumeVersion: "3.3.9"}, {AssumeVersion: "doris-2.1.8-rc01"}} {
		assert.NoError(t, c.Check(), "%+v", c)
	}
	for _, c := range []Config{{Threshold: 2}, {Threshold: -1}, {Threshold: math.NaN()}, {Threshold: math.Inf(1)}, {Threshold: 0.8, AssumeVersion: "garbage"}} {
		assert.Error(t, c.Check(), "%+v", c)
	}
}

// A wildcard --input that matches no file is not an error (Beam's own
// matching allows an empty wildcard), but it is counted and logged, not
// passed over in silence: a typo in a glob otherwise gives two empty files
// and exit status 0.
func TestEmptyGlobCounted(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "be.out"), []byte("no crash here\n"), 0o644))
	counters, _ := runCounting(t, []string{filepath.Join(dir, "*.log"), filepath.Join(dir, "missing", "**"), filepath.Join(dir, "*.out")})
	assert.Equal(t, int64(2), counters["empty_globs"], "two globs matched nothing")
}

// TestOutputsEqualCLIBinary checks the README's claim against the CLI
// itself, not a re-implementation of it (TestPipelineEqualsCLI's
// reference repeats the CLI's encoding and filters, so a change in the CLI
// would not show there): the crashsig command is built from this
// checkout and run on the same inputs.
func TestOutputsEqualCLIBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	bin := filepath.Join(t.TempDir(), "crashsig")
	build := exec.Command("go", "build", "-o", bin, "github.com/crashsig/crashsig/examples/crashsig")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	dirs := []string{corpusDir, formats, coresDir}
	slices.Sort(dirs)
	inc, bk := runBeam(t, []string{corpusDir + "/**", formats + "/**", coresDir + "/**"}, Config{Threshold: 0.8})
	run := func(args ...string) string {
		cmd := exec.Command(bin, append(args, dirs...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s", stderr.String())
		return stdout.String()
	}
	wantInc := run("classify", "--json")
	wantBk := run("buckets", "--json", "--threshold", "0.8")
	require.Greater(t, strings.Count(wantInc, "\n"), 150)
	equalLines(t, wantInc, inc, IncidentsFile)
	equalLines(t, wantBk, bk, BucketsFile)
}

// A directory walk that meets a dangling symbolic link or a named pipe
// gets a skip from pipeline.Files, which the CLI reports and passes over
// (exit 0); the job failed on it (exit 1, nothing written). Such entries
// are logged and counted as skipped inputs, and the walk goes on.
func TestWalkSkipsDoNotFailJob(t *testing.T) {
	dir := t.TempDir()
	crash, err := os.ReadFile(filepath.Join(corpusDir, "starrocks", "002-trash-sweep-rowsetmetapb-mergefrom.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "be.out"), crash, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "dangling.log")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.log"), 0o644))

	for _, g := range []string{dir, dir + "/**"} {
		files, skips, err := expand(context.Background(), g)
		require.NoError(t, err, g)
		assert.Equal(t, []string{filepath.Join(dir, "be.out")}, files, g)
		assert.Len(t, skips, 2, g)
	}

	counters, out := runCounting(t, []string{dir})
	assert.Equal(t, int64(2), counters["skipped_inputs"])
	inc, err := os.ReadFile(filepath.Join(out, IncidentsFile))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(inc), "\n"), "the crash in be.out")
}

// runCounting runs the pipeline on Prism over globs and returns its
// crashsig/* counters by name and the output directory.
func runCounting(t *testing.T, globs []string) (map[string]int64, string) {
	t.Helper()
	out := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	Build(s, globs, out, Config{Threshold: 0.8})
	res, err := prism.Execute(context.Background(), p)
	require.NoError(t, err)
	counters := map[string]int64{}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Namespace() == "crashsig" {
			counters[c.Name()] += c.Result()
		}
	}
	return counters, out
}
