package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simID is the build-id of testdata/core/bin/sim_* (the binary the bundled
// cores come from; sim_strip and sim_strip.debug share it).
const simID = "d90160432445105457a91d8aa8747b89dd4bb93a"

func gunzipFile(t *testing.T, src, out string) string {
	t.Helper()
	f, err := os.Open(src)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	w, err := os.Create(out)
	require.NoError(t, err)
	_, err = io.Copy(w, zr)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return out
}

// startDebuginfod starts elfutils' debuginfod on 127.0.0.1 over a
// temporary directory holding the stripped test binary and its debug file
// (as symbolize/debuginfod's tests do). It skips when debuginfod is not
// installed, except under CI (.ci/run installs it).
func startDebuginfod(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("debuginfod is not installed; .ci/run installs it")
		}
		t.Skip("debuginfod not installed (apt-get install -y debuginfod)")
	}
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv")
	require.NoError(t, os.Mkdir(srv, 0o755))
	binDir := filepath.Join("..", "..", "testdata", "core", "bin")
	gunzipFile(t, filepath.Join(binDir, "sim_strip.gz"), filepath.Join(srv, "sim_strip"))
	gunzipFile(t, filepath.Join(binDir, "sim_strip.debug.gz"), filepath.Join(srv, "sim_strip.debug"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-F", "-p", strconv.Itoa(port), "-d", filepath.Join(dir, "db.sqlite"), "-t", "0", "-g", "0", "-c", "1", srv)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/buildid/" + simID + "/debuginfo")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("debuginfod on %s did not index the test files within 30 s (last: %v)", base, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
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
