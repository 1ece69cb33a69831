package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// SystemDebugDirs returns the debug directories searched by default, as
// gdb's debug-file-directory: /usr/lib/debug.
func SystemDebugDirs() []string { return []string{"/usr/lib/debug"} }

// Options configure a Pipeline. The zero value classifies text and cores
// with the embedded catalog and the default signature rules.
type Options struct {
	// Binaries are backend executables or shared libraries: raw PCs of
	// text crashes are symbolized against them, and cores use them for
	// their modules (matched by build-id, then name).
	Binaries []string
	// Bias is the load bias (load address minus link address) of the first
	// binary in the crashed process, for absolute PCs of a PIE; valid when
	// HasBias. Without it the bias is recovered from the crash when
	// possible (symbolize.RecoverBias).
	Bias    uint64
	HasBias bool
	// DebugDirs are directories of separate debug files (.build-id/xx/rest.debug,
	// debuglink names). SystemDebugDirs are searched after them unless
	// NoSystemDebugDirs is set.
	DebugDirs         []string
	NoSystemDebugDirs bool
	// Sysroot and NoHostFiles say where a core's libraries are found
	// (symbolize.CoreOptions.Sysroot and NoDiskLookup).
	Sysroot     string
	NoHostFiles bool
	// MaxCoreFrames caps the frames unwound per thread of a core (default
	// 512; symbolize.CoreOptions.MaxFrames).
	MaxCoreFrames int
	// Fetcher, when set, fetches debug files and executables by build-id
	// from a symbol server (package symbolize/debuginfod): a core's
	// modules not found on disk (symbolize.CoreOptions.Fetcher), and the
	// debug file of a binary without DWARF (symbolize.FetchDebugFile). Nil:
	// nothing touches the network.
	Fetcher symbolize.DebugFetcher

	// Catalog classifies; nil means catalog.Default().
	Catalog *catalog.Catalog
	// Generator signs; nil means signature.Default().
	Generator *signature.Generator

	// VersionOf gives the version of inputs whose crashes do not print
	// one, keyed by input: a file, or a directory that applies to every
	// file under it. A key matches the source as spelled, else as a
	// cleaned absolute path (relative keys and sources are taken from the
	// working directory at New), so /abs/logs matches the input
	// logs/be.out; the most specific key wins. AssumeVersion applies to
	// every other input. A version the input itself prints (the dump, or
	// the startup banner earlier in the same file) always wins;
	// Result.VersionSource and the evidence say which was used. New
	// refuses a version catalog.ParseVersion does not read, and an empty
	// key, with an *OptionError.
	VersionOf     map[string]string
	AssumeVersion string

	// IdleFlush, when positive, emits an incident that is still open once
	// a stream (Reader, Text, "-" in Run) has been idle that long: set it
	// when following a live log or a pipe (symbolize.DefaultFollowIdleTimeout).
	// Files are read to their end without it.
	IdleFlush time.Duration
	// Scan holds the scanner's limits (Source and IdleTimeout are set by
	// the pipeline).
	Scan symbolize.ScanOptions
	// TempDir is where a compressed core is decompressed to (the core
	// reader needs random access); "" means os.TempDir().
	TempDir string
	// MaxCoreBytes bounds a decompressed core's temporary copy; 0 means
	// DefaultMaxCoreBytes. A larger one fails with ErrCoreTooLarge.
	MaxCoreBytes int64
	// Progress, when set, is updated as inputs are read.
	Progress *Progress
	// Jobs is how many inputs Run reads at once; 0 or 1 reads one at a
	// time. Whatever Jobs is, Run yields the same sequence: the Results of
	// each input in input order, with at most Jobs×64 Results held ahead
	// of the consumer. A file of ChunkScanBytes or more, on disk and not
	// compressed, is also scanned by Jobs goroutines at once, in chunks
	// (symbolize.ScanParallel), with the same Results.
	Jobs int
	// ChunkScanBytes is the size from which a file is scanned in chunks
	// when Jobs > 1; 0 means DefaultChunkScanBytes, a negative value never.
	ChunkScanBytes int64
}

// DefaultChunkScanBytes is Options.ChunkScanBytes by default: a file
// smaller than this is scanned in well under a second by one goroutine.
const DefaultChunkScanBytes = 256 << 20

// Progress counts what a Pipeline has read. Its methods are safe to call
// while the pipeline runs.
type Progress struct {
	inputs, incidents, bytes atomic.Int64
	current                  atomic.Pointer[string]
}

// Inputs returns the number of inputs started (skipped ones included).
func (p *Progress) Inputs() int64 { return p.inputs.Load() }

// Incidents returns the number of Results yielded.
func (p *Progress) Incidents() int64 { return p.incidents.Load() }

// Bytes returns the bytes read from the inputs (compressed bytes for
// compressed inputs).
func (p *Progress) Bytes() int64 { return p.bytes.Load() }

// Current returns the name of the input being read.
func (p *Progress) Current() string {
	if s := p.current.Load(); s != nil {
		return *s
	}
	return ""
}

// Pipeline turns inputs into Results: it scans text for incidents (or
// reads a core), symbolizes raw PCs against the binaries, applies the
// versions given from outside, signs, classifies and groups threads. A
// Pipeline is safe for concurrent use once built; Close it when done.
type Pipeline struct {
	opts      Options
	gen       *signature.Generator
	cat       *catalog.Catalog
	debugDirs []string
	bins      []*symbolize.Binary
	mods      []symbolize.Module
	warnings  []string
	closed    atomic.Bool
	// versionOf is Options.VersionOf, and its keys as cleaned absolute
	// paths (sorted by key), taken from the working directory cwd at New.
	versionOf map[string]string
	verKeys   []versionKey
	cwd       string
}

// versionKey is a key of Options.VersionOf with its absolute path.
type versionKey struct{ key, abs, ver string }

// OptionError reports an Options value New refuses. For a version that
// catalog.ParseVersion does not read, errors.Is(err, catalog.ErrVersion)
// holds.
type OptionError struct {
	// Option is the field: "AssumeVersion" or "VersionOf".
	Option string
	// Key is the VersionOf key, for Option "VersionOf".
	Key string
	// Err is the cause.
	Err error
}

// Error returns "pipeline: Options.OPTION: CAUSE" (with [KEY] for VersionOf).
func (e *OptionError) Error() string {
	if e.Option == "VersionOf" {
		return fmt.Sprintf("pipeline: Options.VersionOf[%q]: %v", e.Key, e.Err)
	}
	return "pipeline: Options." + e.Option + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *OptionError) Unwrap() error { return e.Err }

// ErrClosed is returned (or yielded) by Run, File, Reader, Text, Core and
// Complete of a Pipeline that was closed, or that was not made by New (a
// zero Pipeline).
var ErrClosed = errors.New("pipeline: closed (or not made by New)")

// ErrNoStdin is the cause of the *InputError Run yields for "-" when it
// was given no standard input (a nil reader), and Reader and Text for a
// nil reader.
var ErrNoStdin = errors.New("no standard input given")

// usableWith is usable for a stream: a nil r is an *InputError.
func (p *Pipeline) usableWith(name string, r io.Reader) error {
	if err := p.usable(); err != nil {
		return err
	}
	if r == nil {
		return &InputError{Name: name, Err: ErrNoStdin}
	}
	return nil
}

// usable returns ErrClosed when p was closed or not made by New.
func (p *Pipeline) usable() error {
	if p == nil || p.gen == nil || p.closed.Load() {
		return ErrClosed
	}
	return nil
}

// New builds a Pipeline: it opens the binaries (reading their symbol
// tables and debug information as needed) and loads the default catalog
// when none is given.
func New(ctx context.Context, opts Options) (*Pipeline, error) {
	p := &Pipeline{opts: opts, gen: opts.Generator, cat: opts.Catalog}
	if err := p.setVersions(); err != nil {
		return nil, err
	}
	if p.gen == nil {
		p.gen = signature.Default()
	}
	if p.cat == nil {
		c, err := catalog.Default()
		if err != nil {
			return nil, fmt.Errorf("embedded catalog: %w", err)
		}
		p.cat = c
	}
	p.debugDirs = slices.Clone(opts.DebugDirs)
	if !opts.NoSystemDebugDirs {
		p.debugDirs = append(p.debugDirs, SystemDebugDirs()...)
	}
	for i, path := range opts.Binaries {
		if err := ctx.Err(); err != nil {
			p.Close()
			return nil, err
		}
		bo := symbolize.BinaryOptions{DebugDirs: p.debugDirs}
		if opts.Fetcher != nil {
			dbg, err := symbolize.FetchDebugFile(ctx, opts.Fetcher, path)
			if err != nil {
				p.warnings = append(p.warnings, path+": "+err.Error())
			}
			bo.DebugFile = dbg
		}
		b, err := symbolize.OpenBinaryContext(ctx, path, bo)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.bins = append(p.bins, b)
		m := symbolize.Module{Binary: b}
		if i == 0 && opts.HasBias {
			m.Bias, m.HasBias = opts.Bias, true
		}
		p.mods = append(p.mods, m)
		for _, w := range b.Warnings() {
			p.warnings = append(p.warnings, path+": "+w.Error())
		}
	}
	return p, nil
}

// Close closes the binaries. Afterwards Run, File, Reader and Text yield
// ErrClosed and Core and Complete return it; a second Close does nothing.
// Call it once every Run (and File, Reader, Text) loop has ended: a run
// still going when Close is called loses its binaries under it, and the
// raw PCs it has not symbolized yet stay unsymbolized.
func (p *Pipeline) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	var err error
	for _, b := range p.bins {
		if e := b.Close(); err == nil {
			err = e
		}
	}
	p.bins, p.mods = nil, nil
	return err
}

// Catalog returns the catalog the pipeline classifies with.
func (p *Pipeline) Catalog() *catalog.Catalog { return p.cat }

// Generator returns the signature generator the pipeline signs with.
func (p *Pipeline) Generator() *signature.Generator { return p.gen }

// Warnings returns what opening the binaries noticed (rejected debug
// files, for example), one line each.
func (p *Pipeline) Warnings() []string { return slices.Clone(p.warnings) }

// MissingDWO returns, per binary, the split-DWARF .dwo files lookups
// needed but did not find so far (see symbolize.Binary.MissingDWO).
func (p *Pipeline) MissingDWO() []error {
	var out []error
	for _, b := range p.bins {
		if err := b.MissingDWO(); err != nil {
			out = append(out, fmt.Errorf("%s: %w", b.Path(), err))
		}
	}
	return out
}

// Run reads every input named by paths (files, directories recursively in
// a stable order, "-" for stdin; see Files and NewInput) and yields one
// Result per incident, in input order. An input that cannot be read is
// yielded as a *InputError, one that is skipped as a *SkipError, and the
// run goes on; when ctx is done its error is yielded last. "-" with a nil
// stdin is an *InputError matching ErrNoStdin. With Options.Jobs > 1
// several inputs are read at once; the sequence is the same. A closed
// Pipeline yields ErrClosed alone.
func (p *Pipeline) Run(ctx context.Context, stdin io.Reader, paths ...string) iter.Seq2[*Result, error] {
	return func(yield func(*Result, error) bool) {
		if err := p.usable(); err != nil {
			yield(nil, err)
			return
		}
		if p.opts.Jobs > 1 {
			p.runParallel(ctx, stdin, p.opts.Jobs, paths, yield)
			return
		}
		// As runParallel: once ctx is done, its error ends the run, said
		// once (the input being read may have said it already, or ended
		// without noticing).
		ctxErrYielded := false
		stop := func(err error) bool {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				ctxErrYielded = true
			}
			return !yield(nil, err)
		}
		for name, err := range Files(ctx, paths...) {
			if err == nil {
				for r, err := range p.named(ctx, name, stdin) {
					if err != nil {
						if stop(err) {
							return
						}
					} else if !yield(r, nil) {
						return
					}
				}
			} else if stop(err) {
				return
			}
			if err := ctx.Err(); err != nil {
				if !ctxErrYielded {
					yield(nil, err)
				}
				return
			}
		}
		if err := ctx.Err(); err != nil && !ctxErrYielded {
			// The walk stopped with nothing left to read.
			yield(nil, err)
		}
	}
}

// named is the Results of one input Files yielded: "-" is stdin.
func (p *Pipeline) named(ctx context.Context, name string, stdin io.Reader) iter.Seq2[*Result, error] {
	if name == "-" {
		return p.Reader(ctx, "-", stdin)
	}
	return p.File(ctx, name)
}

// File yields the Results of one file (text or core, compressed or not;
// see NewInput).
func (p *Pipeline) File(ctx context.Context, path string) iter.Seq2[*Result, error] {
	return func(yield func(*Result, error) bool) {
		if err := p.usable(); err != nil {
			yield(nil, err)
			return
		}
		p.started(path)
		in, err := openFile(ctx, path, p.counter())
		if err != nil {
			yield(nil, err)
			return
		}
		defer in.Close()
		p.input(ctx, in, 0, yield)
	}
}

// Reader yields the Results of one stream named name: its content is
// identified like a file's (NewInput). To follow a live log, where
// identification must not wait for bytes, use Text. A nil r is an
// *InputError matching ErrNoStdin.
func (p *Pipeline) Reader(ctx context.Context, name string, r io.Reader) iter.Seq2[*Result, error] {
	return func(yield func(*Result, error) bool) {
		if err := p.usableWith(name, r); err != nil {
			yield(nil, err)
			return
		}
		p.started(name)
		in, err := p.openReader(ctx, name, r)
		if err != nil {
			yield(nil, err)
			return
		}
		defer in.Close()
		p.input(ctx, in, p.opts.IdleFlush, yield)
	}
}

// openReader detects r's content. Detection waits for the first bytes;
// when ctx can be cancelled it waits in a goroutine, so that a quiet pipe
// does not hold the caller past its deadline (the goroutine ends when the
// reader returns; close the reader to free it sooner).
func (p *Pipeline) openReader(ctx context.Context, name string, r io.Reader) (*Input, error) {
	if ctx.Done() == nil {
		return newInput(name, r, p.counter())
	}
	type opened struct {
		in  *Input
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		in, err := newInput(name, r, p.counter())
		ch <- opened{in, err}
	}()
	select {
	case o := <-ch:
		return o.in, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.in != nil {
				o.in.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

func (p *Pipeline) counter() *atomic.Int64 {
	if p.opts.Progress == nil {
		return nil
	}
	return &p.opts.Progress.bytes
}

func (p *Pipeline) started(name string) {
	if pr := p.opts.Progress; pr != nil {
		pr.inputs.Add(1)
		pr.current.Store(&name)
	}
}

func (p *Pipeline) input(ctx context.Context, in *Input, idle time.Duration, yield func(*Result, error) bool) {
	if in.Kind == ContentOwnJSON {
		yield(nil, &SkipError{Name: in.Name, Reason: SkipOwnOutput, Detail: ownOutputDetail})
		return
	}
	if in.Kind == ContentCore {
		in.MaxCoreBytes = p.opts.MaxCoreBytes
		path, err := in.CorePath(ctx, p.opts.TempDir)
		if err != nil {
			yield(nil, inputError(in.Name, err))
			return
		}
		r, err := p.core(ctx, in.Name, path)
		if err != nil {
			yield(nil, err)
			return
		}
		p.count()
		yield(r, nil)
		return
	}
	// A regular file truncated or rewritten while it is read (a restart
	// script emptying be.out) ends early without a read error: say so
	// after what was read, unless the scan ended otherwise.
	size0, regular := in.size()
	finished := true
	each := func(r *Result, err error) bool {
		finished = finished && err == nil
		if !yield(r, err) {
			finished = false
			return false
		}
		return true
	}
	if size := p.chunkScanSize(in); size > 0 {
		p.textChunks(ctx, in, size, each)
	} else {
		p.text(ctx, in.Name, in.Reader(), idle, regular, each)
	}
	if size, _ := in.size(); finished && regular && size < size0 {
		yield(nil, inputError(in.Name, fmt.Errorf("the file shrank from %d to %d bytes while it was read (truncated or rewritten under the reader): its incidents may be incomplete", size0, size)))
	}
}

// chunkScanSize returns the size of in when it is to be scanned in chunks
// (Options.ChunkScanBytes): a regular file (Input.size) at least that
// large; else 0.
func (p *Pipeline) chunkScanSize(in *Input) int64 {
	limit := p.opts.ChunkScanBytes
	if limit == 0 {
		limit = DefaultChunkScanBytes
	}
	if p.opts.Jobs < 2 || limit < 0 || in.Compression != "" || in.Encoding != "" || in.Kind != ContentText {
		return 0
	}
	if size, regular := in.size(); regular && size >= limit {
		return size
	}
	return 0
}

// textChunks is text for a large file on disk: symbolize.ScanParallel
// reads it at its offsets with Options.Jobs goroutines, the Results are
// the same.
func (p *Pipeline) textChunks(ctx context.Context, in *Input, size int64, yield func(*Result, error) bool) {
	so := p.opts.Scan
	so.Source = in.Name
	if in.count != nil {
		// The first bytes were counted as the input was identified.
		if off, err := in.file.Seek(0, io.SeekCurrent); err == nil {
			defer in.count.Add(size - off)
		}
	}
	for c, err := range symbolize.ScanParallel(ctx, in.file, size, so, symbolize.ParallelOptions{Workers: p.opts.Jobs}) {
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				yield(nil, err)
				return
			}
			yield(nil, inputError(in.Name, err))
			return
		}
		res, err := p.Complete(ctx, c)
		if err == nil {
			p.count()
		}
		if !yield(res, err) {
			return
		}
	}
}

func (p *Pipeline) count() {
	if pr := p.opts.Progress; pr != nil {
		pr.incidents.Add(1)
	}
}

// Text scans r as log text (no decompression or identification, so it
// never waits for more bytes than a line) and yields one Result per
// incident as soon as the incident is complete. With Options.IdleFlush an
// open incident is also emitted once r has been idle that long, which a
// follower of a live log needs. When ctx is done while an incident is
// open, that incident is yielded first (its Notes say the scan was
// stopped by the caller: it may lack its last lines), then ctx's error,
// once; so do Reader and Run for a stream. A read error is yielded as *InputError,
// a nil r as an *InputError matching ErrNoStdin.
func (p *Pipeline) Text(ctx context.Context, name string, r io.Reader) iter.Seq2[*Result, error] {
	return func(yield func(*Result, error) bool) {
		if err := p.usableWith(name, r); err != nil {
			yield(nil, err)
			return
		}
		p.text(ctx, name, r, p.opts.IdleFlush, false, yield)
	}
}

// nonBlocking says that r never waits for input (a regular file, maybe
// decompressed): the Scanner then reads it synchronously whatever ctx,
// which keeps its fast skips (symbolize.ScanOptions.NonBlocking).
func (p *Pipeline) text(ctx context.Context, name string, r io.Reader, idle time.Duration, nonBlocking bool, yield func(*Result, error) bool) {
	so := p.opts.Scan
	so.Source = name
	so.IdleTimeout = idle
	so.NonBlocking = so.NonBlocking || nonBlocking
	sc := symbolize.NewScanner(r, so)
	defer sc.Close()
	for sc.NextContext(ctx) {
		cctx := ctx
		if ctx.Err() != nil {
			// ctx is done: the scanner hands out the incident that was
			// open (noted as stopped by the caller) before it stops.
			// Completing it is bounded work; ctx's error follows once.
			cctx = context.WithoutCancel(ctx)
		}
		res, err := p.complete(cctx, sc.Crash())
		if err == nil {
			p.count()
		}
		if !yield(res, err) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			yield(nil, err)
			return
		}
		yield(nil, inputError(name, err))
	}
}

// Core reads the ELF core at path, compressed (gzip, zstd, xz, bzip2:
// decompressed to a temporary file under Options.TempDir, at most
// Options.MaxCoreBytes) or not, unwinds and symbolizes every thread with
// the pipeline's binaries and debug directories, and returns its Result.
// A file that is not a core is an *InputError matching symbolize.ErrNotCore;
// a closed Pipeline returns ErrClosed.
func (p *Pipeline) Core(ctx context.Context, path string) (*Result, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	in, err := OpenFile(ctx, path)
	if err != nil {
		var se *SkipError
		if !errors.As(err, &se) {
			return nil, err
		}
		return nil, inputError(path, fmt.Errorf("%w: %s", symbolize.ErrNotCore, se.Detail))
	}
	defer in.Close()
	if in.Kind != ContentCore {
		return nil, inputError(path, symbolize.ErrNotCore)
	}
	in.MaxCoreBytes = p.opts.MaxCoreBytes
	core, err := in.CorePath(ctx, p.opts.TempDir)
	if err != nil {
		return nil, inputError(path, err)
	}
	return p.core(ctx, path, core)
}

// core reads the core file at path (the input name, or a temporary copy
// of the decompressed input) as the input name: errors name the input
// once (symbolize.OpenCore would prefix them with path).
func (p *Pipeline) core(ctx context.Context, name, path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, inputError(name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, inputError(name, err)
	}
	c, err := symbolize.NewCore(ctx, f, st.Size(), symbolize.CoreOptions{
		Binaries:     p.opts.Binaries,
		DebugDirs:    p.debugDirs,
		Sysroot:      p.opts.Sysroot,
		NoDiskLookup: p.opts.NoHostFiles,
		MaxFrames:    p.opts.MaxCoreFrames,
		Fetcher:      p.opts.Fetcher,
	})
	if err != nil {
		return nil, inputError(name, err)
	}
	c.Path = name
	defer c.Close()
	cr, err := c.Crash(ctx)
	if err != nil {
		return nil, inputError(name, err)
	}
	cr.Source = name
	res, err := p.Complete(ctx, cr)
	if err != nil {
		return nil, err
	}
	res.Input = ContentCore
	for _, m := range c.Mismatches {
		res.Warnings = append(res.Warnings, m.Error())
	}
	return res, nil
}

// Complete completes one parsed incident in place and returns its
// Result, which holds c: raw PCs of text crashes are symbolized into c
// (symbolize.Frames) and a version given by Options is filled in; then c
// is signed, classified and its threads grouped. Use it when the crashes
// come from elsewhere (symbolize.ParseAll, a Scanner of your own).
// Completing the same crash again gives the same answer: the version it
// filled in is still reported as given (Crash.VersionGiven), and frames
// already symbolized are left as they are, so the second Result's
// Symbolization reports no new frame. A closed Pipeline returns ErrClosed.
func (p *Pipeline) Complete(ctx context.Context, c *symbolize.Crash) (*Result, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.complete(ctx, c)
}

// complete is Complete of a usable Pipeline.
func (p *Pipeline) complete(ctx context.Context, c *symbolize.Crash) (*Result, error) {
	res := &Result{SchemaVersion: SchemaVersion, Crash: c, Input: ContentText}
	isCore := slices.Contains(c.Formats, "core")
	if isCore {
		res.Input = ContentCore
	}
	if len(p.mods) > 0 && len(c.Threads) > 0 && !isCore {
		// Frames an earlier call symbolized are left alone (Symbolized).
		rep, err := symbolize.SymbolizeInPlace(ctx, c, p.mods...)
		if err != nil {
			return nil, inputError(c.Source, err)
		}
		res.Symbolization = &rep
	}
	// A version an earlier call filled in is the caller's, not printed.
	printed := c.Version
	if c.VersionGiven {
		printed = ""
	}
	given, scope := p.versionFor(c.Source)
	var evidence string
	switch {
	case printed != "" && c.VersionFromBanner:
		res.VersionSource = VersionFromBanner
		evidence = "version " + c.Version + " from the startup banner earlier in " + c.Source + " (the crash itself does not print it)"
	case printed != "":
		res.VersionSource = VersionFromCrash
	case given != "":
		c.Version, c.VersionGiven = given, true
		res.VersionSource = VersionFromOptions
		evidence = "version " + given + " given by the caller for " + scope + " (the input does not print it)"
	case c.VersionGiven:
		// Filled in by an earlier call whose options this Pipeline lacks.
		res.VersionSource = VersionFromOptions
	}
	if printed != "" && given != "" && res.VersionSource != VersionFromOptions && !sameVersion(given, c.Version) {
		evidence = strings.TrimSpace(evidence + "; the input prints version " + c.Version + ", which wins over " + given + " given for " + scope)
	}
	sig := p.gen.Generate(c)
	v := p.cat.Classify(c, sig)
	if evidence != "" {
		v.Evidence = append([]string{evidence}, v.Evidence...)
	}
	res.Signature, res.Classification = &sig, &v
	if len(c.Threads) > 1 && (c.Kind == symbolize.KindThreadDump || isCore || slices.Contains(c.Formats, "F7")) {
		res.ThreadGroups = p.gen.Aggregate(c.Threads)
	}
	return res, nil
}

// setVersions checks Options.AssumeVersion and VersionOf and keeps the
// VersionOf keys as absolute paths.
func (p *Pipeline) setVersions() error {
	if v := p.opts.AssumeVersion; v != "" {
		if _, err := catalog.ParseVersion(v); err != nil {
			return &OptionError{Option: "AssumeVersion", Err: err}
		}
	}
	p.cwd, _ = os.Getwd()
	p.versionOf = maps.Clone(p.opts.VersionOf)
	for _, k := range slices.Sorted(maps.Keys(p.versionOf)) {
		v := p.versionOf[k]
		if k == "" {
			return &OptionError{Option: "VersionOf", Key: k, Err: errors.New("empty key: want a file or directory")}
		}
		if _, err := catalog.ParseVersion(v); err != nil {
			return &OptionError{Option: "VersionOf", Key: k, Err: err}
		}
		p.verKeys = append(p.verKeys, versionKey{k, p.absPath(k), v})
	}
	return nil
}

// absPath is name as a cleaned absolute path, from the working directory
// at New; "" for "-" (standard input, matched as spelled only).
func (p *Pipeline) absPath(name string) string {
	if name == "-" {
		return ""
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(p.cwd, name)
	}
	return filepath.Clean(name)
}

// under says whether the cleaned absolute path path is dir or lies under it.
func under(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir != string(filepath.Separator) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// UnmatchedVersionOf returns the Options.VersionOf keys, sorted, that
// concern none of paths: no path is the key, lies under it or holds it,
// compared as cleaned absolute paths (as Run matches the sources it
// reads). Such an entry gives no input its version, probably a typo; a
// caller may warn about it before Run.
func (p *Pipeline) UnmatchedVersionOf(paths ...string) []string {
	var out []string
	for _, k := range p.verKeys {
		matched := false
		for _, in := range paths {
			a := p.absPath(in)
			if in == k.key || a != "" && k.abs != "" && (under(a, k.abs) || under(k.abs, a)) {
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, k.key)
		}
	}
	return out
}

// versionFor returns the version given for source and what it was given
// for (the key of VersionOf, or "every input").
func (p *Pipeline) versionFor(source string) (string, string) {
	if v, ok := p.versionOf[source]; ok {
		return v, source
	}
	best, bestKey, bestLen := "", "", -1
	src := ""
	if len(p.verKeys) > 0 {
		src = p.absPath(source) // without VersionOf no path is built per incident
	}
	if src != "" {
		// The most specific (longest) path wins; keys that are the same
		// path (logs, logs/, ./logs, /abs/logs) are ordered by the key
		// itself (verKeys is sorted), so that map order never decides.
		for _, k := range p.verKeys {
			if k.abs != "" && under(src, k.abs) && len(k.abs) > bestLen {
				best, bestKey, bestLen = k.ver, k.key, len(k.abs)
			}
		}
	}
	if bestLen >= 0 {
		return best, bestKey
	}
	if p.opts.AssumeVersion != "" {
		return p.opts.AssumeVersion, "every input"
	}
	return "", ""
}

// sameVersion compares versions on what catalog.ParseVersion reads, else
// as strings.
func sameVersion(a, b string) bool {
	va, ea := catalog.ParseVersion(a)
	vb, eb := catalog.ParseVersion(b)
	if ea != nil || eb != nil {
		return a == b
	}
	return catalog.Compare(va, vb) == 0
}
