package debuginfod

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/symbolize"
)

// A core whose binary has no debug info is symbolized through a real
// debuginfod server: the stripped binary is given, its debug file is
// fetched by the build-id the core recorded.
func TestCoreThroughServer(t *testing.T) {
	base := startDebuginfod(t)
	dir := t.TempDir()
	stripped := gunzipTo(t, dir, "sim_strip")
	core := gunzipCore(t, dir, "kern_fp")
	ctx := context.Background()

	crashing := func(opts symbolize.CoreOptions) *symbolize.Thread {
		c, err := symbolize.OpenCore(ctx, core, opts)
		require.NoError(t, err)
		defer c.Close()
		crash, err := c.Crash(ctx)
		require.NoError(t, err)
		th := crash.CrashingThread()
		require.NotNil(t, th)
		return th
	}
	withLines := func(th *symbolize.Thread) (n int) {
		for _, f := range th.Frames {
			if f.File != "" && f.Line > 0 {
				n++
			}
		}
		return n
	}

	// Without a fetcher: symbols of the stripped binary only (.dynsym), no lines.
	plain := crashing(symbolize.CoreOptions{Binaries: []string{stripped}, NoDiskLookup: true})
	assert.Zero(t, withLines(plain), "a stripped binary gives no file:line")

	client := &Client{URLs: []string{base}, CacheDir: filepath.Join(dir, "cache"), Retries: -1}
	th := crashing(symbolize.CoreOptions{Binaries: []string{stripped}, NoDiskLookup: true, Fetcher: client})
	require.NotEmpty(t, th.Frames)
	assert.Greater(t, withLines(th), 2, "the fetched debug file gives file:line")
	var names []string
	for _, f := range th.Frames {
		names = append(names, f.Name())
	}
	assert.Contains(t, names, "starrocks::ParsedPageV1::read(starrocks::Column*, unsigned long*)", "frames: %q", names)
	_, err := os.Stat(filepath.Join(dir, "cache", simID, "debuginfo"))
	assert.NoError(t, err, "the debug file is kept in the cache")

	// The executable itself can come from the server too: no binary given.
	th = crashing(symbolize.CoreOptions{NoDiskLookup: true, Fetcher: client})
	assert.Greater(t, withLines(th), 2, "executable and debug file fetched by build-id")
}

func gunzipCore(t *testing.T, dir, name string) string {
	t.Helper()
	coreDir := filepath.Join(dir, "cores")
	require.NoError(t, os.MkdirAll(coreDir, 0o755))
	// gunzipTo reads testdata/core/bin; cores live beside it.
	src := filepath.Join("..", "..", "testdata", "core", "cores", name+".core.gz")
	return testutil.Gunzip(t, src, filepath.Join(coreDir, name+".core"))
}
