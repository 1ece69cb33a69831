package debuginfod

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/internal/testutil"
)

const simID = testutil.SimBuildID

var coreBin = filepath.Join("..", "..", "testdata", "core", "bin")

// gunzipTo writes the committed test binary name (testdata/core/bin/name.gz)
// uncompressed into dir and returns its path.
func gunzipTo(t *testing.T, dir, name string) string {
	t.Helper()
	return testutil.Gunzip(t, filepath.Join(coreBin, name+".gz"), filepath.Join(dir, name))
}

func freePort(t *testing.T) int { return testutil.FreePort(t) }

func startDebuginfod(t *testing.T) string { return testutil.StartDebuginfod(t, coreBin) }

func TestRealServer(t *testing.T) {
	base := startDebuginfod(t)
	cache := t.TempDir()
	// The first server does not exist (a closed port): the client goes on to the next.
	c := &Client{URLs: []string{fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), base}, CacheDir: cache, Retries: -1, Timeout: 10 * time.Second}
	ctx := context.Background()

	p, err := c.Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, simID, "debuginfo"), p, "elfutils' cache layout")
	id, err := BuildID(p)
	require.NoError(t, err)
	assert.Equal(t, simID, id)

	p, err = c.Fetch(ctx, strings2upper(simID), Executable, FetchOptions{})
	require.NoError(t, err, "build-ids are case-insensitive")
	assert.Equal(t, filepath.Join(cache, simID, "executable"), p)

	// A second fetch is served from the cache: no server is needed.
	offline := &Client{URLs: []string{fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}, CacheDir: cache, Retries: -1}
	p2, err := offline.Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, simID, "debuginfo"), p2)

	// An unknown build-id: 404 on the real server, then a cached miss.
	unknown := "00112233445566778899aabbccddeeff00112233"
	_, err = c.Fetch(ctx, unknown, DebugInfo, FetchOptions{})
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, err, ErrUnreachable, "the closed port is reported too")
	var fe *FetchError
	require.ErrorAs(t, err, &fe)
	assert.Len(t, fe.Servers, 2)
	_, err = c.Fetch(ctx, unknown, DebugInfo, FetchOptions{})
	require.ErrorIs(t, err, ErrNotFound)
}

func strings2upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	debug := gunzipTo(t, dir, "sim_strip.debug")
	var hits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, debug) })
	mux.HandleFunc("/flaky/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		http.ServeFile(w, r, debug)
	})
	mux.HandleFunc("/down/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	})
	mux.HandleFunc("/junk/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "not an ELF file") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()

	t.Run("bad build-id", func(t *testing.T) {
		for _, id := range []string{"", "x", "abc", "zz00", "../../etc/passwd"} {
			_, err := (&Client{URLs: []string{srv.URL + "/ok"}, CacheDir: t.TempDir()}).Fetch(ctx, id, DebugInfo, FetchOptions{})
			assert.ErrorIs(t, err, ErrBadBuildID, id)
		}
	})
	t.Run("no servers", func(t *testing.T) {
		_, err := (&Client{CacheDir: t.TempDir()}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
		assert.ErrorIs(t, err, ErrNoServers)
	})
	t.Run("mismatch is not cached", func(t *testing.T) {
		cache := t.TempDir()
		other := "00112233445566778899aabbccddeeff00112233"
		_, err := (&Client{URLs: []string{srv.URL + "/ok"}, CacheDir: cache}).Fetch(ctx, other, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrBuildIDMismatch)
		_, err = os.Stat(filepath.Join(cache, other, "debuginfo"))
		assert.True(t, os.IsNotExist(err), "a rejected file must not stay in the cache")
		_, err = (&Client{URLs: []string{srv.URL + "/junk"}, CacheDir: cache}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrBuildIDMismatch)
	})
	t.Run("too large", func(t *testing.T) {
		_, err := (&Client{URLs: []string{srv.URL + "/ok"}, CacheDir: t.TempDir(), MaxSize: 1000}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
		assert.ErrorIs(t, err, ErrTooLarge)
	})
	t.Run("retry after 5xx", func(t *testing.T) {
		hits.Store(0)
		p, err := (&Client{URLs: []string{srv.URL + "/flaky"}, CacheDir: t.TempDir()}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
		require.NoError(t, err)
		assert.Equal(t, int32(2), hits.Load())
		assert.FileExists(t, p)
	})
	t.Run("failing server then a good one", func(t *testing.T) {
		p, err := (&Client{URLs: []string{srv.URL + "/down", srv.URL + "/ok"}, CacheDir: t.TempDir(), Retries: -1}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
		require.NoError(t, err)
		assert.FileExists(t, p)
	})
	t.Run("all failing", func(t *testing.T) {
		cache := t.TempDir()
		_, err := (&Client{URLs: []string{srv.URL + "/down"}, CacheDir: cache, Retries: 2}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrUnreachable)
		assert.False(t, errors.Is(err, ErrNotFound))
		_, err = os.Stat(filepath.Join(cache, simID, "debuginfo"))
		assert.True(t, os.IsNotExist(err), "a server failure is not a cached miss")
	})
	t.Run("cached miss expires and can be bypassed", func(t *testing.T) {
		cache := t.TempDir()
		c := &Client{URLs: []string{srv.URL + "/nothing"}, CacheDir: cache}
		_, err := c.Fetch(ctx, simID, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrNotFound)
		c.URLs = []string{srv.URL + "/ok"}
		_, err = c.Fetch(ctx, simID, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrNotFound, "the miss is cached")
		p, err := c.Fetch(ctx, simID, DebugInfo, FetchOptions{IgnoreMissCache: true})
		require.NoError(t, err)
		assert.FileExists(t, p)
		require.NoError(t, os.WriteFile(filepath.Join(cache, "cache_miss_s"), []byte("0\n"), 0o644))
		other := "00112233445566778899aabbccddeeff00112233"
		c.URLs = []string{srv.URL + "/nothing"}
		_, err = c.Fetch(ctx, other, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrNotFound)
		c.URLs = []string{srv.URL + "/ok"}
		_, err = c.Fetch(ctx, other, DebugInfo, FetchOptions{})
		require.ErrorIs(t, err, ErrBuildIDMismatch, "cache_miss_s=0: the miss expired and the server was asked again")
	})
	t.Run("context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := (&Client{URLs: []string{srv.URL + "/ok"}, CacheDir: t.TempDir()}).Fetch(cctx, simID, DebugInfo, FetchOptions{})
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestFromEnv(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	_, err := FromEnv()
	assert.ErrorIs(t, err, ErrNoServers)
	t.Setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1 http://127.0.0.1:2")
	t.Setenv("DEBUGINFOD_TIMEOUT", "5")
	t.Setenv("DEBUGINFOD_RETRY_LIMIT", "0")
	t.Setenv("DEBUGINFOD_CACHE_PATH", "/tmp/x")
	c, err := FromEnv()
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, c.URLs)
	assert.Equal(t, 5*time.Second, c.Timeout)
	assert.Equal(t, -1, c.Retries)
	assert.Equal(t, "/tmp/x", c.CacheDir)
	t.Setenv("DEBUGINFOD_TIMEOUT", "soon")
	_, err = FromEnv()
	assert.Error(t, err)
}

func FuzzBuildIDNote(f *testing.F) {
	f.Add([]byte("\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00\xd9\x01\x60\x43\x24\x45\x10\x54\x57\xa9\x1d\x8a\xa8\x74\x7b\x89\xdd\x4b\xb9\x3a"))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id := gnuBuildID(b, binary.LittleEndian)
		if len(id) > 2*len(b) {
			t.Fatalf("build-id longer than its input: %d > 2*%d", len(id), len(b))
		}
		if id != gnuBuildID(b, binary.LittleEndian) {
			t.Fatal("not deterministic")
		}
	})
}

// TestTimeoutIsCommencing: Timeout is elfutils' DEBUGINFOD_TIMEOUT, a
// download-commencing timeout (headers and the first 100 KiB), not a bound
// on the whole transfer: a multi-GiB debug file that arrives steadily but
// takes longer than Timeout must not be cut off (and downloaded again by a
// retry). A server that stalls before 100 KiB is skipped after Timeout;
// MaxTime (DEBUGINFOD_MAXTIME) bounds the whole download.
func TestTimeoutIsCommencing(t *testing.T) {
	dir := t.TempDir()
	debug := gunzipTo(t, dir, "sim_strip.debug")
	body, err := os.ReadFile(debug)
	require.NoError(t, err)
	require.Greater(t, len(body), commenceBytes+1000)
	const timeout = 300 * time.Millisecond
	mux := http.NewServeMux()
	// The first 100 KiB at once, the rest after three timeouts.
	mux.HandleFunc("/slowtail/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body[:commenceBytes+10])
		w.(http.Flusher).Flush()
		select {
		case <-time.After(3 * timeout):
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(body[commenceBytes+10:])
	})
	// Headers and 10 KB, then nothing.
	mux.HandleFunc("/stall/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body[:10000])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()

	p, err := (&Client{URLs: []string{srv.URL + "/slowtail"}, CacheDir: t.TempDir(), Timeout: timeout, Retries: -1}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.NoError(t, err, "a download that has commenced is not cut by Timeout")
	assert.FileExists(t, p)

	start := time.Now()
	_, err = (&Client{URLs: []string{srv.URL + "/stall"}, CacheDir: t.TempDir(), Timeout: timeout, Retries: -1}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.ErrorIs(t, err, ErrUnreachable, "a server that stalls before 100 KiB is skipped")
	assert.Less(t, time.Since(start), 20*timeout)

	_, err = (&Client{URLs: []string{srv.URL + "/slowtail"}, CacheDir: t.TempDir(), Timeout: timeout, MaxTime: timeout, Retries: -1}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.ErrorIs(t, err, ErrUnreachable, "MaxTime bounds the whole download")
	assert.Contains(t, err.Error(), "MaxTime")

	// No timeout at all (Timeout < 0): the slow tail arrives.
	_, err = (&Client{URLs: []string{srv.URL + "/slowtail"}, CacheDir: t.TempDir(), Timeout: -1, Retries: -1}).Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.NoError(t, err)
}

// TestFromEnvElfutils: the environment is read as elfutils reads it:
// DEBUGINFOD_TIMEOUT 0 or negative means no timeout (not an error), and
// DEBUGINFOD_MAXTIME bounds a whole download.
func TestFromEnvElfutils(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1")
	for _, s := range []string{"0", "-1"} {
		t.Setenv("DEBUGINFOD_TIMEOUT", s)
		c, err := FromEnv()
		require.NoError(t, err, "DEBUGINFOD_TIMEOUT=%s is elfutils' \"no timeout\"", s)
		assert.Less(t, c.Timeout, time.Duration(0), s)
	}
	t.Setenv("DEBUGINFOD_TIMEOUT", "")
	t.Setenv("DEBUGINFOD_MAXTIME", "120")
	c, err := FromEnv()
	require.NoError(t, err)
	assert.Equal(t, 120*time.Second, c.MaxTime)
	t.Setenv("DEBUGINFOD_MAXTIME", "0")
	c, err = FromEnv()
	require.NoError(t, err)
	assert.Zero(t, c.MaxTime, "0: infinite, as elfutils")
	t.Setenv("DEBUGINFOD_MAXTIME", "later")
	_, err = FromEnv()
	assert.Error(t, err)
}

// TestFromEnvIMATags: DEBUGINFOD_URLS may hold elfutils' IMA policy tags
// between the URLs; Fedora's default is "ima:enforcing
// https://debuginfod.fedoraproject.org/ ima:ignore". The tags are not
// servers: each was asked for every build-id ("unsupported protocol
// scheme", retried after a pause), and being "unreachable" they kept a
// 404 of the real server from being remembered as a miss.
func TestFromEnvIMATags(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "ima:enforcing https://debuginfod.fedoraproject.org/ ima:ignore http://127.0.0.1:1")
	c, err := FromEnv()
	require.NoError(t, err)
	assert.Equal(t, []string{"https://debuginfod.fedoraproject.org/", "http://127.0.0.1:1"}, c.URLs)
	t.Setenv("DEBUGINFOD_URLS", "ima:enforcing ima:ignore")
	_, err = FromEnv()
	assert.ErrorIs(t, err, ErrNoServers, "tags alone name no server")
}

// TestExecutableWithoutCode: a server (or another tool's cache entry) that
// gives a debug file (objcopy --only-keep-debug: its code sections are
// NOBITS) for an executable is refused like a file of another build-id: it
// has the right build-id, but the core reader would unwind nothing with it
// (no .eh_frame, no code bytes) and say only "no unwind information".
func TestExecutableWithoutCode(t *testing.T) {
	dir := t.TempDir()
	debug := gunzipTo(t, dir, "sim_strip.debug")
	mux := http.NewServeMux()
	mux.HandleFunc("/dbg/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, debug) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	cache := t.TempDir()
	c := &Client{URLs: []string{srv.URL + "/dbg"}, CacheDir: cache, Retries: -1}

	p, err := c.Fetch(ctx, simID, DebugInfo, FetchOptions{})
	require.NoError(t, err, "a debug file is what debuginfo asks for")
	_, err = c.Fetch(ctx, simID, Executable, FetchOptions{})
	require.ErrorIs(t, err, ErrBuildIDMismatch)
	assert.ErrorContains(t, err, "no code")
	_, err = os.Stat(filepath.Join(cache, simID, "executable"))
	assert.True(t, os.IsNotExist(err), "the rejected file is not cached")

	// The same file put in the cache's executable entry by another tool.
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(cache, simID, "executable"), b, 0o644))
	_, err = c.Fetch(ctx, simID, Executable, FetchOptions{})
	require.ErrorIs(t, err, ErrBuildIDMismatch, "a cached debug file is not an executable either")

	// The real executable is accepted.
	exe := gunzipTo(t, dir, "sim_fp")
	id, err := BuildID(exe)
	require.NoError(t, err)
	mux.HandleFunc("/exe/buildid/{id}/{kind}", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, exe) })
	_, err = (&Client{URLs: []string{srv.URL + "/exe"}, CacheDir: t.TempDir(), Retries: -1}).Fetch(ctx, id, Executable, FetchOptions{})
	require.NoError(t, err)
}

// TestBuildIDClaimedSections: a fetched file is untrusted: one claiming a
// million section headers (extended numbering, zeros of a sparse file) is
// refused from its header instead of debug/elf allocating them all (at 30
// million the process died of "out of memory").
func TestBuildIDClaimedSections(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(gunzipTo(t, dir, "sim_strip.debug"))
	require.NoError(t, err)
	le := binary.LittleEndian
	off := (uint64(len(raw)) + 0xfff) &^ 0xfff
	b := append(raw, make([]byte, off-uint64(len(raw))+64)...)
	le.PutUint64(b[0x28:], off)
	le.PutUint16(b[0x3c:], 0)
	le.PutUint16(b[0x3e:], 0)
	le.PutUint64(b[off+0x20:], 1<<20)
	p := filepath.Join(dir, "claims")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	require.NoError(t, os.Truncate(p, int64(off)+64<<20)) // sparse
	_, err = BuildID(p)
	require.Error(t, err)
	assert.ErrorContains(t, err, "section headers")
	assert.ErrorIs(t, verify(p, simID, DebugInfo), ErrBuildIDMismatch)
}
