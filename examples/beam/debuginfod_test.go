package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const simID = testutil.SimBuildID

func gunzipFile(t *testing.T, src, out string) string { return testutil.Gunzip(t, src, out) }

func startDebuginfod(t *testing.T) string {
	return testutil.StartDebuginfod(t, filepath.Join("..", "..", "testdata", "core", "bin"))
}

// framesWithLines counts the crashing thread's frames of the backend
// (starrocks:: functions) with file:line.
func framesWithLines(t *testing.T, incidents string) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(incidents), "\n")
	require.Len(t, lines, 1)
	var r pipeline.Result
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &r))
	require.Equal(t, pipeline.ContentCore, r.Input)
	th := r.CrashingThread()
	require.NotNil(t, th)
	n := 0
	for _, f := range th.Frames {
		if f.File != "" && f.Line > 0 && strings.Contains(f.Name(), "starrocks::") {
			n++
		}
	}
	return n
}

// TestDebuginfod: a core whose executable is not on the worker is
// symbolized through a real debuginfod server when the pipeline is given
// one (executable and debug file fetched by the build-ids the core
// recorded), and nothing is fetched without it.
func TestDebuginfod(t *testing.T) {
	base := startDebuginfod(t)
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	in := filepath.Join(t.TempDir(), "node1")
	require.NoError(t, os.Mkdir(in, 0o755))
	data, err := os.ReadFile(filepath.Join(coresDir, "kern_fp.core.gz"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in, "core.gz"), data, 0o644))

	plain, _ := runBeam(t, []string{in + "/**"}, Config{})
	assert.Zero(t, framesWithLines(t, plain), "no binary, no server: no file:line in the backend's frames")

	fetched, _ := runBeam(t, []string{in + "/**"}, Config{DebuginfodURLs: base})
	assert.Greater(t, framesWithLines(t, fetched), 2, "executable and debug file fetched by build-id")
	assert.Contains(t, fetched, "starrocks::ParsedPageV1::read")
}
