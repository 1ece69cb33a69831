package pipeline

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/crashsig/crashsig/internal/magic"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// ErrSkipped is matched (errors.Is) by every *SkipError: an input that was
// read but holds nothing this package can classify.
var ErrSkipped = errors.New("skipped")

// ErrCoreTooLarge means a compressed core decompressed to more than the
// limit (Options.MaxCoreBytes, Input.MaxCoreBytes): a damaged or hostile
// file must not fill the temporary directory.
var ErrCoreTooLarge = errors.New("decompressed core exceeds the size limit")

// DefaultMaxCoreBytes bounds the temporary copy of a compressed core when
// no limit is set: larger than a backend's core (tens of GB) needs.
const DefaultMaxCoreBytes = 256 << 30

// SkipReason says why an input was skipped.
type SkipReason string

// Reasons an input is skipped.
const (
	// SkipELF: an ELF executable, shared object or object file (not a core).
	SkipELF SkipReason = "elf-not-core"
	// SkipBinary: bytes that are not text (more than a third of the first
	// 8 KiB are NUL or control bytes).
	SkipBinary SkipReason = "binary"
	// SkipArchive: an archive or a compression format that is not read
	// (zip, 7z, tar, lz4, rar): unpack it first.
	SkipArchive SkipReason = "archive"
	// SkipNoCores: an ELF core given where cores are not accepted.
	SkipNoCores SkipReason = "core-not-accepted"
	// SkipNotLogName: a directory given holds no file a walk reads, only
	// files whose extension says they are no crash text (IsLogName); the
	// SkipError names how many of each extension.
	SkipNotLogName SkipReason = "not-log-name"
	// SkipOwnOutput: crashsig's own JSON Lines output given as a crash
	// log (ContentOwnJSON).
	SkipOwnOutput SkipReason = "crashsig-output"
	// SkipSymlink: a symbolic link met in a directory walk that is not
	// followed: its target is missing, or it is a directory (a walk does
	// not follow links to directories, which may loop).
	SkipSymlink SkipReason = "symlink"
	// SkipNotRegular: a named pipe (FIFO), socket or device met in a
	// directory walk: reading it may wait forever or never end, so a walk
	// reads regular files only. Name a FIFO or device to read it.
	SkipNotRegular SkipReason = "not-regular-file"
)

// SkipError reports a skipped input. errors.Is(err, ErrSkipped) holds.
type SkipError struct {
	// Name is the input as given (path, or "-" for standard input).
	Name string
	// Reason is the kind of content; Detail says more in words.
	Reason SkipReason
	Detail string
}

// Error returns "NAME: skipped: DETAIL".
func (e *SkipError) Error() string { return e.Name + ": skipped: " + e.Detail }

// Is reports whether target is ErrSkipped.
func (e *SkipError) Is(target error) bool { return target == ErrSkipped }

// InputError reports an input that could not be read (missing file,
// permission, damaged compressed stream, a core the reader refused, a
// file that shrank while it was read: truncated under the reader).
// The other inputs are still processed.
type InputError struct {
	// Name is the input as given.
	Name string
	// Err is the cause; it never repeats Name.
	Err error
}

// Error returns "NAME: CAUSE".
func (e *InputError) Error() string { return e.Name + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// inputError wraps err for the input name, dropping a *fs.PathError layer
// or a "NAME: " prefix that would name the same file again.
func inputError(name string, err error) error {
	var ie *InputError
	var se *SkipError
	if errors.As(err, &ie) || errors.As(err, &se) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == name {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	if msg := err.Error(); strings.HasPrefix(msg, name+": ") {
		// A reader that named the file itself (the core reader).
		err = namedOnce{err, strings.TrimPrefix(msg, name+": ")}
	}
	if m, ok := err.(interface{ Unwrap() []error }); ok && errors.Is(err, symbolize.ErrRead) {
		// The scanner's "reading input: CAUSE": keep both matchable,
		// print the cause once.
		for _, cause := range m.Unwrap() {
			if cause != symbolize.ErrRead {
				err = readError{cause}
			}
		}
	}
	return &InputError{Name: name, Err: err}
}

// namedOnce is an error whose message started with the input name, which
// InputError prints already: msg is the rest.
type namedOnce struct {
	err error
	msg string
}

func (e namedOnce) Error() string { return e.msg }
func (e namedOnce) Unwrap() error { return e.err }

// readError is a read error of the input under the scanner.
type readError struct{ cause error }

func (e readError) Error() string   { return "reading: " + e.cause.Error() }
func (e readError) Unwrap() []error { return []error{symbolize.ErrRead, e.cause} }

// ContentKind is what an opened input holds.
type ContentKind string

// Content kinds.
const (
	// ContentText is log text (be.out, be.INFO, a paste, a gdb or jstack dump).
	ContentText ContentKind = "text"
	// ContentCore is an ELF core file.
	ContentCore ContentKind = "core"
	// ContentOwnJSON is crashsig's own JSON Lines output (a Result or a
	// Bucket per line, as classify, explain and buckets --json print
	// them): Run refuses it (SkipOwnOutput) instead of reading its frame
	// names as a crash log; a reader of buckets files takes it.
	ContentOwnJSON ContentKind = "crashsig-json"
)

// Input is one opened input: its content kind, its compression, and a
// reader of its decompressed bytes. Close it when done.
type Input struct {
	// Name is the input as given (a path, or the name passed to NewInput).
	Name string
	// Kind is what the decompressed content holds.
	Kind ContentKind
	// Compression is "gzip", "zstd", "xz", "bzip2" or "" (none).
	Compression string
	// Encoding is "utf-16le" or "utf-16be" when the (decompressed)
	// content starts with that byte order mark (FF FE or FE FF: what
	// PowerShell's `>` writes, for one): Reader then gives it transcoded
	// to UTF-8, the mark dropped, so the lines and their numbers are the
	// same. "" for anything else, which is read as it is (UTF-16 without a
	// byte order mark too).
	Encoding string
	// MaxCoreBytes bounds the temporary copy CorePath makes of a compressed
	// core; 0 means DefaultMaxCoreBytes.
	MaxCoreBytes int64

	r       *bufio.Reader
	src     *srcReader // the bottom of r's chain: the reader given
	file    *os.File   // the file on disk, for a core read in place
	tmp     string     // a decompressed core written to a temporary file
	closers []func() error
	count   *atomic.Int64
}

// Reader returns the decompressed content. For a core, CorePath is
// usually what a caller wants instead.
func (in *Input) Reader() io.Reader { return in.r }

// regular says whether the Input reads a regular file on disk (maybe
// through a decompressor): its reads never wait for input.
func (in *Input) regular() bool {
	_, ok := in.size()
	return ok
}

// size returns the size of the file under in and true when it is a
// regular file.
func (in *Input) size() (int64, bool) {
	if in.file == nil {
		return 0, false
	}
	st, err := in.file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	return st.Size(), true
}

// CorePath returns a file holding the decompressed core: the file itself,
// or a temporary copy of a compressed one (removed by Close; sparse: whole
// 64 KiB blocks of zeros are left as holes, as in the core). It returns
// "" for text inputs and for a core read from a stream that was not yet
// copied; ctx bounds the copy.
func (in *Input) CorePath(ctx context.Context, tempDir string) (string, error) {
	if in.Kind != ContentCore {
		return "", nil
	}
	if in.tmp != "" {
		return in.tmp, nil
	}
	if in.regular() && in.Compression == "" {
		return in.file.Name(), nil
	}
	tmp, err := os.CreateTemp(tempDir, "crashsig-core-*")
	if err != nil {
		return "", err
	}
	in.tmp = tmp.Name()
	limit := in.MaxCoreBytes
	if limit <= 0 {
		limit = DefaultMaxCoreBytes
	}
	if !in.regular() {
		// A pipe (stdin, a FIFO) may block in Read with its writer open:
		// the copy must still end when ctx is done. The raw source is
		// read in a goroutine (below the decompressor, which only this
		// goroutine uses: Close may close it while a Read of the source
		// is still blocked).
		ar := newAsyncReader(ctx, in.src.r)
		in.src.r = ar
		defer ar.stop()
	}
	n, err := copySparse(tmp, io.LimitReader(ctxReader{ctx, in.r}, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("%w: more than %d bytes", ErrCoreTooLarge, limit)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(in.tmp)
		in.tmp = ""
		return "", fmt.Errorf("decompressing core: %w", err)
	}
	return in.tmp, nil
}

// sparseBlock is the unit copySparse leaves as a hole when it is all zero
// bytes.
const sparseBlock = 64 << 10

// copySparse copies src to the start of dst, an empty file, as io.Copy
// does, but seeks over each whole block of zero bytes instead of writing
// it, so that the holes of a core (most of a backend's tens of GB) stay
// holes in the copy; the size is set at the end, for a copy that ends in
// zeros.
func copySparse(dst *os.File, src io.Reader) (int64, error) {
	buf := make([]byte, sparseBlock)
	zero := make([]byte, sparseBlock)
	var n int64
	for {
		k, err := io.ReadFull(src, buf)
		if k > 0 {
			var werr error
			if bytes.Equal(buf[:k], zero[:k]) {
				_, werr = dst.Seek(int64(k), io.SeekCurrent)
			} else {
				_, werr = dst.Write(buf[:k])
			}
			if werr != nil {
				return n, werr
			}
			n += int64(k)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return n, dst.Truncate(n)
		}
		if err != nil {
			return n, err
		}
	}
}

// Close releases the input: decompressors, the file, a temporary core copy.
func (in *Input) Close() error {
	var err error
	for i := len(in.closers) - 1; i >= 0; i-- {
		if e := in.closers[i](); err == nil {
			err = e
		}
	}
	in.closers = nil
	if in.tmp != "" {
		os.Remove(in.tmp)
		in.tmp = ""
	}
	return err
}

// srcReader is the bottom of an Input's chain of readers (under the
// byte count, the sniffing buffer and the decompressor): CorePath puts an
// asyncReader in its place to copy a core from a pipe.
type srcReader struct{ r io.Reader }

func (s *srcReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// asyncReader reads r in a goroutine of its own, so that Read returns
// ctx's error as soon as ctx is done even while r is blocked (a pipe whose
// writer stays open, as stdin under a shell pipeline). A Read of r in
// progress then stays blocked until it returns (data, EOF or an error,
// when the writer writes or closes); the goroutine ends then, dropping
// what it read.
type asyncReader struct {
	ctx  context.Context
	ch   chan asyncChunk
	done chan struct{}
	cur  []byte
	err  error
}

type asyncChunk struct {
	b   []byte
	err error
}

// asyncChunkBytes is the size of one read of the goroutine.
const asyncChunkBytes = 256 << 10

func newAsyncReader(ctx context.Context, r io.Reader) *asyncReader {
	a := &asyncReader{ctx: ctx, ch: make(chan asyncChunk, 1), done: make(chan struct{})}
	go func() {
		for {
			b := make([]byte, asyncChunkBytes)
			n, err := r.Read(b)
			select {
			case a.ch <- asyncChunk{b[:n], err}:
			case <-a.done:
				return
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		select {
		case c := <-a.ch:
			a.cur, a.err = c.b, c.err
		case <-a.ctx.Done():
			a.err = a.ctx.Err()
			return 0, a.err
		}
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// stop lets the goroutine end after its Read in progress returns.
func (a *asyncReader) stop() { close(a.done) }

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// countReader adds the bytes read to n.
type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// OpenFile opens the file at path as an Input; see NewInput. Errors are
// *InputError or *SkipError, or ctx's error when ctx is done first. A
// named pipe (FIFO) is read as it is written: opening it waits for a
// writer and reading it for input, both only until ctx is done (then
// reads fail with ctx's error); so do the reads of a device.
func OpenFile(ctx context.Context, path string) (*Input, error) {
	return openFile(ctx, path, nil)
}

func openFile(ctx context.Context, path string, count *atomic.Int64) (*Input, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var f *os.File
	st, err := os.Stat(path)
	if err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		f, err = openFIFO(ctx, path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, ctx.Err()
		}
		return nil, inputError(path, err)
	}
	var r io.Reader = f
	stop := func() bool { return false }
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() && ctx.Done() != nil {
		// A pipe or device may wait for input: a done ctx ends a Read
		// in progress (through the read deadline of a file the runtime
		// polls) and every later one.
		stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
		r = ctxReader{ctx, deadlineReader{ctx, f}}
	}
	in, err := newInput(path, r, count)
	if err != nil {
		stop()
		f.Close()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, ctx.Err()
		}
		return nil, err
	}
	in.file = f
	in.closers = append([]func() error{func() error { stop(); return f.Close() }}, in.closers...)
	return in, nil
}

// deadlineReader reads a file whose read deadline is set when ctx is
// done: the deadline's error is ctx's.
type deadlineReader struct {
	ctx context.Context
	f   *os.File
}

func (d deadlineReader) Read(p []byte) (int, error) {
	n, err := d.f.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && d.ctx.Err() != nil {
		err = d.ctx.Err()
	}
	return n, err
}

// openFIFO opens the named pipe at path for reading. open(2) of a FIFO
// waits for a writer, which no context can interrupt: the open waits in a
// goroutine, and when ctx is done first, opening the FIFO for writing
// (without blocking: this function holds a non-blocking reader open for
// that; a FIFO this process may not write to keeps the goroutine until a
// writer comes) releases it. The file returned is polled by the runtime, so its
// reads honour a read deadline.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	guard, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer guard.Close()
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
	}
	w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// Not writable by this process: the open ends when a writer
		// comes; its file is closed then.
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
	o := <-ch // with a writer (w) the open returns
	w.Close()
	if o.f != nil {
		o.f.Close()
	}
	return nil, ctx.Err()
}

// NewInput identifies the content of r by its bytes, not its name:
// gzip, zstd, xz and bzip2 streams are decompressed transparently (one
// layer), text with a UTF-16 byte order mark is transcoded to UTF-8
// (Input.Encoding), an ELF core is ContentCore, other ELF files, archives and binary
// junk are refused with a *SkipError (errors.Is(err, ErrSkipped)), the
// rest is ContentText. It reads at most a few KiB before returning.
func NewInput(name string, r io.Reader) (*Input, error) {
	return newInput(name, r, nil)
}

const sniffBytes = 8 << 10

func newInput(name string, r io.Reader, count *atomic.Int64) (*Input, error) {
	in := &Input{Name: name, count: count, src: &srcReader{r}}
	r = in.src
	if count != nil {
		r = countReader{r, count}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(6)
	var zr io.Reader
	switch c := magic.Compression(head); c {
	case "gzip":
		g, err := gzip.NewReader(br)
		if err != nil {
			return nil, inputError(name, codecError("gzip", err))
		}
		g.Multistream(true)
		in.Compression, zr = c, g
		in.closers = append(in.closers, g.Close)
	case "zstd":
		d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(128<<20))
		if err != nil {
			return nil, inputError(name, codecError("zstd", err))
		}
		in.Compression, zr = c, d
		in.closers = append(in.closers, func() error { d.Close(); return nil })
	case "xz":
		x, err := xz.NewReader(br)
		if err != nil {
			return nil, inputError(name, codecError("xz", err))
		}
		in.Compression, zr = c, x
	case "bzip2":
		in.Compression, zr = c, bzip2.NewReader(br)
	}
	if zr != nil {
		br = bufio.NewReaderSize(errPrefix{zr, in.Compression}, 64<<10)
	}
	if bom, _ := br.Peek(2); len(bom) == 2 && (bom[0] == 0xff && bom[1] == 0xfe || bom[0] == 0xfe && bom[1] == 0xff) {
		big := bom[0] == 0xfe
		in.Encoding = "utf-16le"
		if big {
			in.Encoding = "utf-16be"
		}
		br.Discard(2)
		br = bufio.NewReaderSize(&utf16Reader{r: br, big: big}, 64<<10)
	}
	in.r = br
	// Look at what one read brought (a file gives a full buffer) without
	// waiting for more: a pipe or a growing log may have only a line yet.
	head, err := br.Peek(1)
	if len(head) == 0 && err != nil && err != io.EOF {
		in.Close()
		return nil, inputError(name, err)
	}
	head, _ = br.Peek(min(br.Buffered(), sniffBytes))
	kind, reason, detail := sniff(head)
	if reason != "" {
		in.Close()
		return nil, &SkipError{Name: name, Reason: reason, Detail: detail}
	}
	in.Kind = kind
	return in, nil
}

// utf16Reader transcodes UTF-16 (after its byte order mark) to UTF-8 as
// it reads: a surrogate pair split between reads is kept for the next
// one; an unpaired surrogate, and an odd byte at the end, become U+FFFD.
type utf16Reader struct {
	r    io.Reader
	big  bool   // big-endian
	in   []byte // bytes read and not yet decoded (at most 3)
	out  []byte // UTF-8 not yet returned (in ob)
	ob   []byte
	buf  []byte
	err  error
	done bool
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.done {
			return 0, u.err
		}
		if u.buf == nil {
			u.buf = make([]byte, 32<<10)
		}
		n, err := u.r.Read(u.buf[len(u.in):])
		copy(u.buf, u.in) // the undecoded tail goes first
		data := u.buf[:len(u.in)+n]
		u.in = u.in[:0]
		u.out = u.ob[:0]
		i := 0
		for ; i+1 < len(data); i += 2 {
			c := u.unit(data[i:])
			switch {
			case !utf16.IsSurrogate(rune(c)):
				u.out = utf8.AppendRune(u.out, rune(c))
				continue
			case c < 0xdc00 && i+3 < len(data): // a high surrogate and the next unit
				if r := utf16.DecodeRune(rune(c), rune(u.unit(data[i+2:]))); r != utf8.RuneError {
					u.out = utf8.AppendRune(u.out, r)
					i += 2
					continue
				}
			case c < 0xdc00 && err == nil:
				// The low surrogate is still to come.
				u.in = append(u.in, data[i:]...)
				i = len(data)
				continue
			}
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
		}
		if i < len(data) {
			if err == nil {
				u.in = append(u.in, data[i:]...)
			} else {
				u.out = utf8.AppendRune(u.out, utf8.RuneError) // an odd byte at the end
			}
		}
		if err != nil {
			u.done, u.err = true, err
		}
		u.ob = u.out
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// unit returns the UTF-16 code unit at the start of b.
func (u *utf16Reader) unit(b []byte) uint16 {
	if u.big {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[1])<<8 | uint16(b[0])
}

// errPrefix names the decompressor in its errors.
type errPrefix struct {
	r    io.Reader
	name string
}

func (e errPrefix) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		err = codecError(e.name, err)
	}
	return n, err
}

// codecError names the decompressor in err unless err starts with its
// name already ("gzip: invalid checksum", "bzip2 data invalid: …").
func codecError(name string, err error) error {
	if strings.HasPrefix(err.Error(), name) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// archiveMagic lists formats that are recognized but not read.
var archiveMagic = []struct {
	magic, name string
}{
	{"PK\x03\x04", "a zip archive"},
	{"7z\xbc\xaf\x27\x1c", "a 7z archive"},
	{"Rar!\x1a\x07", "a rar archive"},
	{"\x04\x22\x4d\x18", "an lz4 stream"},
}

// LooksLikeOwnJSON reports whether head, the first bytes of a
// decompressed input, is crashsig's own JSON Lines output: a JSON object
// whose first key is "schema_version", as every Result and Bucket line
// starts (a byte order mark and blanks before it are passed over). A JSON
// log line that holds the key later (`{"level":"fatal","schema_version":1}`)
// is not.
func LooksLikeOwnJSON(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !bytes.HasPrefix(head, []byte("{")) {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(head, []byte(`"schema_version"`))
}

// ownOutputDetail is the SkipError detail of ContentOwnJSON.
const ownOutputDetail = "this is crashsig --json output, not a crash log (give the logs it was made from; crashsig report reads buckets --json output)"

// sniff decides the content kind from the first bytes.
func sniff(head []byte) (ContentKind, SkipReason, string) {
	if LooksLikeOwnJSON(head) {
		return ContentOwnJSON, "", ""
	}
	if len(head) >= 18 && string(head[:4]) == "\x7fELF" {
		var typ uint16
		switch head[5] {
		case 1:
			typ = uint16(head[16]) | uint16(head[17])<<8
		case 2:
			typ = uint16(head[17]) | uint16(head[16])<<8
		}
		if typ == 4 { // ET_CORE
			return ContentCore, "", ""
		}
		return "", SkipELF, "an ELF file that is not a core (an executable or library: pass it as a binary to symbolize with)"
	}
	for _, a := range archiveMagic {
		if bytes.HasPrefix(head, []byte(a.magic)) {
			return "", SkipArchive, a.name + ": unpack it first"
		}
	}
	if len(head) >= 262 && string(head[257:262]) == "ustar" {
		return "", SkipArchive, "a tar archive: unpack it first"
	}
	// A run of magic.HoleNULs or more NULs is a hole in a log file, not
	// binary content: the scanner treats it as a line break (symbolize,
	// "binary junk"), so it counts neither way here.
	text, bad, _ := magic.TextBytes(head)
	if text > 0 && bad*3 > text {
		return "", SkipBinary, fmt.Sprintf("binary data, not text (%d of the first %d bytes are control bytes)", bad, len(head))
	}
	return ContentText, "", ""
}

// Files expands paths into the files they name, in a stable order: each
// path in turn, a directory recursively in lexical order, skipping hidden
// entries (".git") and files that are not crash text by their extension
// (.json, .md, .go, .yaml, …; see IsLogName). A path that is a file is
// yielded whatever its name. "-" is yielded as is (standard input).
//
// Symbolic links: a path given (a file or a directory) is followed. In a
// walk, a link to a regular file is read under the link's name (the logs
// of /var/log/containers are links into /var/log/pods); a link to a
// directory is not followed (links may loop) and a link whose target is
// missing is not read: both are yielded as *SkipError (SkipSymlink). A
// named pipe, socket or device met in a walk is yielded as *SkipError
// (SkipNotRegular): it may wait for input forever; named as a path it is
// read (see OpenFile). When
// a directory given holds no file to read but files left out by their
// extension, one *SkipError (SkipNotLogName) says how many of each, so
// that a folder of `ticket.md` files does not end in silence.
//
// Errors (a missing path, an unreadable directory) are yielded as
// *InputError and the walk goes on.
func Files(ctx context.Context, paths ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				yield("", err)
				return
			}
			if p == "-" {
				if !yield(p, nil) {
					return
				}
				continue
			}
			st, err := os.Stat(p)
			if err != nil {
				if !yield("", inputError(p, err)) {
					return
				}
				continue
			}
			if !st.IsDir() {
				if !yield(p, nil) {
					return
				}
				continue
			}
			files, errs := walkDir(ctx, p)
			for _, e := range errs {
				if !yield("", e) {
					return
				}
			}
			for _, f := range files {
				if !yield(f, nil) {
					return
				}
			}
		}
	}
}

// walkDir lists the crash-text files under the directory p (Files), sorted,
// and the errors and skips met, in the order met.
func walkDir(ctx context.Context, p string) ([]string, []error) {
	var files []string
	var errs []error
	// WalkDir does not descend into a root that is itself a link: walk its
	// target and give the files under the name p.
	root := p
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		root = real
	}
	named := func(path string) string {
		if root == p {
			return path
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return path
		}
		return filepath.Join(p, rel)
	}
	notLog := map[string]int{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, inputError(named(path), err))
			return nil
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		typ := d.Type()
		if typ&fs.ModeSymlink != 0 {
			st, err := os.Stat(path)
			switch {
			case err != nil:
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err // it names the link again, by its walked path
				}
				errs = append(errs, &SkipError{Name: named(path), Reason: SkipSymlink, Detail: "symbolic link whose target cannot be read (" + linkTarget(path) + "): " + err.Error()})
				return nil
			case st.IsDir():
				errs = append(errs, &SkipError{Name: named(path), Reason: SkipSymlink, Detail: "symbolic link to a directory (" + linkTarget(path) + "), not followed in a walk: name it to read it"})
				return nil
			}
			typ = st.Mode().Type()
		}
		switch {
		case typ.IsRegular():
			if IsLogName(d.Name()) {
				files = append(files, named(path))
			} else {
				notLog[logExt(d.Name())]++
			}
		case !typ.IsDir():
			errs = append(errs, &SkipError{Name: named(path), Reason: SkipNotRegular, Detail: notRegular(typ) + ", not read in a walk (it may wait for input forever): name it to read it"})
		}
		return ctx.Err()
	})
	slices.Sort(files)
	if len(files) == 0 && len(notLog) > 0 {
		n := 0
		var parts []string
		for _, ext := range slices.Sorted(maps.Keys(notLog)) {
			n += notLog[ext]
			parts = append(parts, fmt.Sprintf("%s %d", ext, notLog[ext]))
		}
		errs = append(errs, &SkipError{Name: p, Reason: SkipNotLogName, Detail: fmt.Sprintf("%d file(s) not read by their extension (%s): they are notes, labels or sources beside logs; name a file to read it", n, strings.Join(parts, ", "))})
	}
	return files, errs
}

// notRegular names the kind of file typ is, for a SkipNotRegular detail.
func notRegular(typ fs.FileMode) string {
	switch {
	case typ&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case typ&fs.ModeSocket != 0:
		return "a socket"
	case typ&fs.ModeCharDevice != 0:
		return "a character device"
	case typ&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// linkTarget is the target a symbolic link names, as written, or "?".
func linkTarget(path string) string {
	t, err := os.Readlink(path)
	if err != nil {
		return "?"
	}
	return t
}

// logExt is the extension IsLogName judges name by.
func logExt(name string) string {
	for _, z := range []string{".gz", ".zst", ".xz", ".bz2"} {
		name = strings.TrimSuffix(name, z)
	}
	return filepath.Ext(name)
}

// notLogExt are extensions of files that sit beside logs in a directory
// (labels, notes, golden outputs, scripts, sources) and are not crash text.
var notLogExt = []string{".jsonl", ".json", ".md", ".go", ".sh", ".py", ".yaml", ".yml", ".tsv", ".golden", ".source", ".cpp", ".cc", ".h"}

// IsLogName reports whether a file met while walking a directory may be
// crash text (or a core), judged by its extension after a compression
// suffix. Files named explicitly are always read.
func IsLogName(name string) bool {
	return !slices.Contains(notLogExt, logExt(name))
}
