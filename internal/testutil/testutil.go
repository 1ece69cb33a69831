// Package testutil holds helpers shared by the module's tests (and the
// examples/beam module's): decompressing committed fixtures and starting a
// real elfutils debuginfod on 127.0.0.1. It is not part of the library.
package testutil

import (
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SimBuildID is the GNU build-id of testdata/core/bin/sim_* (sim_strip and
// sim_strip.debug share it: objcopy keeps the note), the binary the
// bundled cores of testdata/core/cores come from.
const SimBuildID = "d90160432445105457a91d8aa8747b89dd4bb93a"

// Gunzip decompresses the gzip file src into dst and returns dst.
func Gunzip(t testing.TB, src, dst string) string {
	t.Helper()
	f, err := os.Open(src)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	w, err := os.Create(dst)
	require.NoError(t, err)
	_, err = io.Copy(w, zr)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return dst
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartDebuginfod starts elfutils' debuginfod on a free port over a
// temporary directory holding the stripped test binary and its debug file
// (from coreBin, the testdata/core/bin directory), waits until it serves
// SimBuildID and returns its base URL (http://127.0.0.1:PORT). The server
// is killed when the test ends. It skips when debuginfod is not installed,
// except under CI (.ci/run installs it), where it fails.
func StartDebuginfod(t testing.TB, coreBin string) string {
	t.Helper()
	bin, err := exec.LookPath("debuginfod")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("debuginfod is not installed; .ci/run installs it (apt-get install -y debuginfod)")
		}
		t.Skip("debuginfod not installed (apt-get install -y debuginfod)")
	}
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv")
	require.NoError(t, os.Mkdir(srv, 0o755))
	Gunzip(t, filepath.Join(coreBin, "sim_strip.gz"), filepath.Join(srv, "sim_strip"))
	Gunzip(t, filepath.Join(coreBin, "sim_strip.debug.gz"), filepath.Join(srv, "sim_strip.debug"))
	port := FreePort(t)
	cmd := exec.Command(bin, "-F", "-p", strconv.Itoa(port), "-d", filepath.Join(dir, "db.sqlite"), "-t", "0", "-g", "0", "-c", "1", srv)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/buildid/" + SimBuildID + "/debuginfo")
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
