// Package debuginfod is a client of debuginfod servers: it fetches the
// debug file or the executable of an ELF build-id over HTTP, the way gdb,
// llvm-symbolizer, perf and systemd-coredump do when DEBUGINFOD_URLS is set.
//
// The client is opt-in: nothing here touches the network unless the caller
// builds a Client with server URLs (directly, or with FromEnv when the
// environment names servers). A fetched file is verified before use: it must
// be an ELF file whose GNU build-id note equals the one asked for. Verified
// files are kept in a local cache laid out like elfutils' client cache, so
// that gdb and crashsig share downloads:
//
//	$DEBUGINFOD_CACHE_PATH/<build-id>/debuginfo
//	$DEBUGINFOD_CACHE_PATH/<build-id>/executable
//
// (default $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client).
// A server's 404 is remembered as elfutils does, by an empty file with mode
// 000 in the entry's place, for the cache's cache_miss_s seconds (600 when
// that file is absent); FetchOptions.IgnoreMissCache bypasses it.
//
// Servers are tried in order; each gets Retries extra attempts after a
// transport error or a 5xx answer, and a response larger than MaxSize is
// refused (from Content-Length or X-Debuginfod-Size before the body is read,
// and while reading it otherwise). Errors are typed: test them with errors.Is
// against ErrNotFound, ErrBuildIDMismatch, ErrTooLarge, ErrUnreachable and
// ErrBadBuildID, or errors.As with *FetchError for the per-server details.
//
// A Client is safe for concurrent use. Two concurrent fetches of one build-id
// may both download it; the cache entry is replaced atomically (rename), so a
// reader never sees a partial file.
package debuginfod

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// Errors returned by the client. A *FetchError matches each of the errors of
// the servers it tried with errors.Is.
var (
	// ErrNotFound means every server answered 404 (or the miss is cached).
	ErrNotFound = errors.New("debuginfod: not found")
	// ErrBuildIDMismatch means a server sent a file whose build-id is not the
	// one asked for (or that is not ELF, or, asked for an executable, a debug
	// file without code); the file is not cached.
	ErrBuildIDMismatch = errors.New("debuginfod: fetched file does not have the requested build-id")
	// ErrTooLarge means a server's answer exceeds Client.MaxSize.
	ErrTooLarge = errors.New("debuginfod: file exceeds the size limit")
	// ErrUnreachable means a server could not be reached or answered with an
	// error other than 404 (after the retries).
	ErrUnreachable = errors.New("debuginfod: server unreachable or failing")
	// ErrBadBuildID means the build-id is not a hex string of 2 to 128 digits.
	ErrBadBuildID = errors.New("debuginfod: malformed build-id")
	// ErrNoServers means no server URL is configured.
	ErrNoServers = errors.New("debuginfod: no server configured")
)

// Kind is the artifact asked for.
type Kind string

// The artifacts a debuginfod server serves by build-id that this client fetches.
const (
	DebugInfo  Kind = "debuginfo"  // the separate debug file (or an unstripped binary)
	Executable Kind = "executable" // the binary itself (for cores whose binary is not at hand)
)

// Defaults used when the corresponding Client field is zero.
const (
	DefaultTimeout  = 90 * time.Second // to commence a download, like elfutils' DEBUGINFOD_TIMEOUT
	DefaultMaxSize  = 8 << 30          // 8 GiB: a backend's debug file is 1-4 GiB
	DefaultRetries  = 1                // extra attempts per server after a transport error or 5xx
	defaultMissTTL  = 600 * time.Second
	maxErrorBodyLen = 512
	// commenceBytes is how much of the body must arrive within Timeout
	// (elfutils: "at least 100K of data within this many seconds").
	commenceBytes = 100 << 10
)

// Client fetches files from debuginfod servers. The zero value has no
// servers; use FromEnv or fill URLs.
type Client struct {
	// URLs are the servers' base URLs, tried in order
	// (e.g. "https://debuginfod.example.org/").
	URLs []string
	// CacheDir is the cache root. Empty: DefaultCacheDir().
	CacheDir string
	// HTTPClient sends the requests. Nil: a client with no overall timeout
	// (Timeout and MaxTime bound each request).
	HTTPClient *http.Client
	// Timeout is the download-commencing timeout of elfutils'
	// DEBUGINFOD_TIMEOUT: a server that has not sent its headers and the
	// first 100 KiB of the file (or all of a smaller file) within Timeout
	// is given up (ErrUnreachable). A download that has commenced is not
	// cut by it, however long a large debug file takes; MaxTime bounds
	// that. Zero: DefaultTimeout; negative: no timeout.
	Timeout time.Duration
	// MaxTime bounds one whole download (elfutils' DEBUGINFOD_MAXTIME);
	// zero or negative: no bound.
	MaxTime time.Duration
	// MaxSize is the largest file accepted, in bytes. Zero: DefaultMaxSize.
	MaxSize int64
	// Retries is the number of extra attempts per server after a transport
	// error or a 5xx answer. Zero: DefaultRetries; negative: none.
	Retries int
}

// FromEnv returns a client configured like elfutils' from the environment:
// DEBUGINFOD_URLS (space-separated server URLs), DEBUGINFOD_CACHE_PATH,
// DEBUGINFOD_TIMEOUT (seconds to commence a download; 0 or negative: no
// timeout), DEBUGINFOD_MAXTIME (seconds for a whole download; 0: no bound),
// DEBUGINFOD_MAXSIZE (bytes) and DEBUGINFOD_RETRY_LIMIT. The IMA policy
// tags elfutils allows among the URLs (ima:enforcing, ima:ignore) are
// skipped: IMA signatures are not checked. It returns ErrNoServers when
// DEBUGINFOD_URLS names no server, so that callers can treat "not
// configured" as "off".
func FromEnv() (*Client, error) {
	var urls []string
	for _, f := range strings.Fields(os.Getenv("DEBUGINFOD_URLS")) {
		// elfutils' IMA policy tags ("ima:enforcing", "ima:ignore") sit
		// between the URLs (Fedora's default). They are not servers; the
		// files this client fetches are verified by build-id instead.
		if !strings.HasPrefix(f, "ima:") {
			urls = append(urls, f)
		}
	}
	if len(urls) == 0 {
		return nil, ErrNoServers
	}
	c := &Client{URLs: urls, CacheDir: os.Getenv("DEBUGINFOD_CACHE_PATH")}
	if s := os.Getenv("DEBUGINFOD_TIMEOUT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("debuginfod: DEBUGINFOD_TIMEOUT=%q: want a number of seconds", s)
		}
		c.Timeout = time.Duration(n) * time.Second
		if n <= 0 {
			c.Timeout = -1 // elfutils: zero or negative means no timeout
		}
	}
	if s := os.Getenv("DEBUGINFOD_MAXTIME"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("debuginfod: DEBUGINFOD_MAXTIME=%q: want a number of seconds >= 0", s)
		}
		c.MaxTime = time.Duration(n) * time.Second
	}
	if s := os.Getenv("DEBUGINFOD_MAXSIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("debuginfod: DEBUGINFOD_MAXSIZE=%q: want a positive number of bytes", s)
		}
		c.MaxSize = n
	}
	if s := os.Getenv("DEBUGINFOD_RETRY_LIMIT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("debuginfod: DEBUGINFOD_RETRY_LIMIT=%q: want a number >= 0", s)
		}
		c.Retries = n
		if n == 0 {
			c.Retries = -1
		}
	}
	return c, nil
}

// DefaultCacheDir is elfutils' default cache root:
// $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
// ~/.cache/debuginfod_client.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("DEBUGINFOD_CACHE_PATH"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "debuginfod_client"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("debuginfod: no cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "debuginfod_client"), nil
}

// FetchOptions adjust one fetch.
type FetchOptions struct {
	// IgnoreMissCache asks the servers again even when a recent 404 is cached.
	IgnoreMissCache bool
}

// FetchError reports a fetch that failed on every server: one error per
// server tried, in order. It matches each of them with errors.Is, so
// errors.Is(err, ErrNotFound) is true when some server said 404.
type FetchError struct {
	BuildID string        // the build-id asked for (lower-case hex)
	Kind    Kind          // the artifact asked for
	Servers []ServerError // one per server tried, in order (or the cached miss)
}

// ServerError is one server's failure.
type ServerError struct {
	URL string // the full request URL (or the cache entry of a cached miss)
	Err error  // wraps ErrNotFound, ErrUnreachable, ErrTooLarge or ErrBuildIDMismatch
}

// Error lists the failure of each server tried.
func (e *FetchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "debuginfod: %s of build-id %s:", e.Kind, e.BuildID)
	for i, s := range e.Servers {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s: %v", s.URL, s.Err)
	}
	return b.String()
}

// Unwrap returns the per-server errors.
func (e *FetchError) Unwrap() []error {
	errs := make([]error, len(e.Servers))
	for i, s := range e.Servers {
		errs[i] = s.Err
	}
	return errs
}

// Fetch returns the path of the cached file of kind k for buildID, fetching
// it from the servers when the cache does not hold it. The file is a
// verified ELF file with that build-id.
func (c *Client) Fetch(ctx context.Context, buildID string, k Kind, opts FetchOptions) (string, error) {
	id, err := normalizeBuildID(buildID)
	if err != nil {
		return "", err
	}
	if k != DebugInfo && k != Executable {
		return "", fmt.Errorf("debuginfod: unknown artifact kind %q", k)
	}
	root := c.CacheDir
	if root == "" {
		if root, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(root, id)
	target := filepath.Join(dir, string(k))

	// A cached file is trusted only after the same check a download gets:
	// another tool may share the cache.
	if fi, err := os.Stat(target); err == nil {
		switch {
		case fi.Mode().IsRegular() && fi.Size() > 0:
			if verify(target, id, k) == nil {
				return target, nil
			}
			_ = os.Remove(target)
		case fi.Size() == 0 && !opts.IgnoreMissCache && time.Since(fi.ModTime()) < missTTL(root):
			return "", &FetchError{BuildID: id, Kind: k, Servers: []ServerError{{URL: target, Err: fmt.Errorf("%w (cached miss)", ErrNotFound)}}}
		default:
			_ = os.Remove(target)
		}
	}
	if len(c.URLs) == 0 {
		return "", ErrNoServers
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("debuginfod: cache: %w", err)
	}

	fe := &FetchError{BuildID: id, Kind: k}
	allNotFound := true
	for _, base := range c.URLs {
		u := strings.TrimRight(base, "/") + "/buildid/" + id + "/" + string(k)
		err := c.fetchOne(ctx, u, dir, target, id, k)
		if err == nil {
			return target, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		fe.Servers = append(fe.Servers, ServerError{URL: u, Err: err})
		if !errors.Is(err, ErrNotFound) {
			allNotFound = false
		}
	}
	if allNotFound {
		// elfutils' negative cache: an empty, unreadable file.
		if f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0); err == nil {
			_ = f.Close()
		}
	}
	return "", fe
}

// fetchOne asks one server, with retries on transport errors and 5xx.
func (c *Client) fetchOne(ctx context.Context, u, dir, target, id string, k Kind) error {
	retries := c.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	var err error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(time.Duration(attempt) * 200 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		var retry bool
		retry, err = c.download(ctx, u, dir, target, id, k)
		if err == nil || !retry {
			return err
		}
	}
	return err
}

// download performs one request; retry says whether another attempt may help.
func (c *Client) download(ctx context.Context, u, dir, target, id string, k Kind) (retry bool, err error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	maxSize := c.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	if c.MaxTime > 0 {
		var cancelMax context.CancelFunc
		ctx, cancelMax = context.WithTimeoutCause(ctx, c.MaxTime,
			fmt.Errorf("download not complete within MaxTime %v", c.MaxTime))
		defer cancelMax()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The commencing timeout: stopped once commenceBytes have arrived.
	commenced := func() bool { return true }
	if timeout > 0 {
		timer := time.AfterFunc(timeout, func() {
			cancel(fmt.Errorf("no %d bytes within Timeout %v", commenceBytes, timeout))
		})
		defer timer.Stop()
		commenced = timer.Stop
	}
	// cause names the timeout that ended the request, if one did.
	cause := func(err error) error {
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			return fmt.Errorf("%w: %v", ErrUnreachable, c)
		}
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	req.Header.Set("User-Agent", "crashsig-debuginfod/1")
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return true, cause(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, ErrNotFound
	case resp.StatusCode >= 500:
		return true, fmt.Errorf("%w: %s%s", ErrUnreachable, resp.Status, errorBody(resp.Body))
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("%w: %s%s", ErrUnreachable, resp.Status, errorBody(resp.Body))
	}
	if n := announcedSize(resp); n > maxSize {
		return false, fmt.Errorf("%w: %d bytes announced, limit %d", ErrTooLarge, n, maxSize)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return false, fmt.Errorf("debuginfod: cache: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	n, err := io.CopyN(tmp, resp.Body, min(commenceBytes, maxSize+1))
	if err == nil || err == io.EOF {
		commenced()
		var m int64
		if err == nil {
			m, err = io.Copy(tmp, io.LimitReader(resp.Body, maxSize+1-n))
			n += m
		} else {
			err = nil
		}
	}
	if err != nil {
		return true, fmt.Errorf("reading the body: %w", cause(err))
	}
	if n > maxSize {
		return false, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, maxSize)
	}
	if err = tmp.Close(); err != nil {
		return false, fmt.Errorf("debuginfod: cache: %w", err)
	}
	if err = verify(tmp.Name(), id, k); err != nil {
		return false, err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, fmt.Errorf("debuginfod: cache: %w", err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return false, fmt.Errorf("debuginfod: cache: %w", err)
	}
	return false, nil
}

func announcedSize(resp *http.Response) int64 {
	if s := resp.Header.Get("X-Debuginfod-Size"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	}
	return resp.ContentLength
}

func errorBody(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBodyLen))
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return ": " + strings.Join(strings.Fields(s), " ")
}

// missTTL reads elfutils' cache_miss_s file of the cache root.
func missTTL(root string) time.Duration {
	b, err := os.ReadFile(filepath.Join(root, "cache_miss_s"))
	if err != nil {
		return defaultMissTTL
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return defaultMissTTL
	}
	return time.Duration(n) * time.Second
}

func normalizeBuildID(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < 2 || len(s) > 128 || len(s)%2 != 0 {
		return "", fmt.Errorf("%w: %q", ErrBadBuildID, s)
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", fmt.Errorf("%w: %q", ErrBadBuildID, s)
	}
	return s, nil
}

// verify checks that path is an ELF file with GNU build-id id and, for an
// executable, that it holds code: a debug file (objcopy --only-keep-debug)
// has the build-id of its executable, but its code sections are NOBITS.
func verify(path, id string, k Kind) error {
	f, err := openELF(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBuildIDMismatch, err)
	}
	defer f.Close()
	got, err := buildID(f.File)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBuildIDMismatch, err)
	}
	if got != id {
		return fmt.Errorf("%w: got %q, want %q", ErrBuildIDMismatch, got, id)
	}
	if k == Executable && !elfimage.HasCode(f.File) {
		return fmt.Errorf("%w: the %s has no code (a debug file?)", ErrBuildIDMismatch, k)
	}
	return nil
}

// openELF opens the ELF file at path through elfimage.NewFile, which
// refuses a file claiming millions of headers before debug/elf allocates
// them (a server's answer is untrusted input).
func openELF(path string) (*elfFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := elfimage.NewFile(fh)
	if err != nil {
		fh.Close()
		return nil, err
	}
	return &elfFile{f, fh}, nil
}

// elfFile is an *elf.File that closes the file it reads.
type elfFile struct {
	*elf.File
	fh *os.File
}

func (f *elfFile) Close() error { return f.fh.Close() }

// BuildID returns the hex GNU build-id of the ELF file at path, read from
// its note sections (or PT_NOTE segments when it has no section headers).
func BuildID(path string) (string, error) {
	f, err := openELF(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return buildID(f.File)
}

// buildID is BuildID of an opened file.
func buildID(f *elf.File) (string, error) {
	var notes []io.ReaderAt
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			notes = append(notes, s)
		}
	}
	if len(notes) == 0 {
		for _, p := range f.Progs {
			if p.Type == elf.PT_NOTE {
				notes = append(notes, p)
			}
		}
	}
	for _, n := range notes {
		sz := int64(0)
		switch v := n.(type) {
		case *elf.Section:
			sz = int64(v.Size)
		case *elf.Prog:
			sz = int64(v.Filesz)
		}
		if sz <= 0 || sz > 1<<20 {
			continue
		}
		b := make([]byte, sz)
		if _, err := n.ReadAt(b, 0); err != nil {
			continue
		}
		if id := gnuBuildID(b, f.ByteOrder); id != "" {
			return id, nil
		}
	}
	return "", errors.New("no GNU build-id note")
}

// gnuBuildID walks ELF notes (4-byte aligned) for NT_GNU_BUILD_ID (3) of "GNU".
func gnuBuildID(b []byte, order binary.ByteOrder) string {
	for len(b) >= 12 {
		namesz := uint64(order.Uint32(b[0:]))
		descsz := uint64(order.Uint32(b[4:]))
		typ := order.Uint32(b[8:])
		b = b[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := (descsz + 3) &^ 3
		if nameEnd > uint64(len(b)) || nameEnd+descsz > uint64(len(b)) {
			return ""
		}
		name := b[:namesz]
		desc := b[nameEnd : nameEnd+descsz]
		if typ == 3 && bytes.Equal(bytes.TrimRight(name, "\x00"), []byte("GNU")) && descsz > 0 {
			return hex.EncodeToString(desc)
		}
		if nameEnd+descEnd > uint64(len(b)) {
			return ""
		}
		b = b[nameEnd+descEnd:]
	}
	return ""
}

// FetchDebugInfo fetches the debug file of buildID (symbolize.DebugFetcher).
func (c *Client) FetchDebugInfo(ctx context.Context, buildID string) (string, error) {
	return c.Fetch(ctx, buildID, DebugInfo, FetchOptions{})
}

// FetchExecutable fetches the executable of buildID (symbolize.DebugFetcher).
func (c *Client) FetchExecutable(ctx context.Context, buildID string) (string, error) {
	return c.Fetch(ctx, buildID, Executable, FetchOptions{})
}
