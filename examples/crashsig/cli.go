package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

// Exit codes, the same for every command (README "The command line").
const (
	exitOK      = 0 // crashes found (or, for symbolize/catalog/diff, the work done)
	exitInput   = 1 // an input could not be read, or the output could not be written
	exitUsage   = 2 // bad flags or arguments
	exitNoCrash = 3 // every input was read and none held a crash
)

// exitStatusText is the exit-status paragraph of the usage of the commands
// that classify inputs (classify, explain, buckets, report).
const exitStatusText = `Exit status: 0 crashes found, 1 an input could not be read (or the output
not written), 2 usage or a bad flag value (also a flag naming a file that
cannot be used), 3 every input was read and none held a crash.`

// thresholdUsage describes --threshold of buckets and report.
const thresholdUsage = "list similar buckets whose frames score at least this similarity, 0 to 1 (0 disables)"

// checkThreshold refuses a --threshold outside [0, 1]: a similarity score
// lies in that range, so any other value would silently list all or none.
func checkThreshold(v float64) error {
	if !(v >= 0 && v <= 1) { // also NaN
		return fmt.Errorf("--threshold %v: want a similarity from 0 to 1 (0 disables)", v)
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseArgs parses flags anywhere on the line (`classify FILE --json`):
// it returns the positional arguments in order. "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFlags runs parseArgs and turns its errors into exit codes: -h is
// 0 (usage printed), anything else 2. ok is false when the command must
// return code.
func parseFlags(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, exitOK, false
	}
	if err != nil {
		return nil, exitUsage, false
	}
	return pos, 0, true
}

// parsePaths is parseFlags for commands that need at least one PATH: with
// none it prints the usage and returns exit code 2.
func parsePaths(fs *flag.FlagSet, args []string) (paths []string, code int, ok bool) {
	paths, code, ok = parseFlags(fs, args)
	if ok && len(paths) == 0 {
		fs.Usage()
		return nil, exitUsage, false
	}
	return paths, code, ok
}

// hexFlag is a hexadecimal uint64 flag (0x prefix optional).
type hexFlag struct {
	v   uint64
	set bool
}

func (h *hexFlag) String() string {
	if !h.set {
		return ""
	}
	return fmt.Sprintf("%#x", h.v)
}

func (h *hexFlag) Set(s string) error {
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 64)
	if err != nil {
		return fmt.Errorf("not a hexadecimal number: %q", s)
	}
	h.v, h.set = v, true
	return nil
}

// pipelineFlags are the flags of the commands that read crashes. Every
// command that classifies inputs (classify, explain, buckets, report)
// registers them all with registerInput, so that the same input gives the
// same key whichever command reads it; core registers them without --jobs.
type pipelineFlags struct {
	sig           signatureFlags
	catalogs      stringList
	binaries      stringList
	debugDirs     stringList
	noSystemDebug bool
	bias          hexFlag
	versionOf     stringList
	assumeVersion string
	sysroot       string
	noHostFiles   bool
	maxCoreFrames int  // set by the core command's --max-frames
	jobs          int  // inputs read at once (--jobs)
	hasJobs       bool // --jobs was registered: jobs must be ≥ 1
}

// registerInput adds the flags of every command that classifies inputs:
// those of register and --jobs.
func (f *pipelineFlags) registerInput(fs *flag.FlagSet) {
	f.register(fs)
	f.registerJobs(fs)
}

// registerJobs adds --jobs (default GOMAXPROCS): how many inputs are read
// at once. The output is the same whatever it is.
func (f *pipelineFlags) registerJobs(fs *flag.FlagSet) {
	fs.IntVar(&f.jobs, "jobs", runtime.GOMAXPROCS(0), "read up to N inputs at once, N ≥ 1 (output in input order, the same for any N)")
	f.hasJobs = true
}

func (f *pipelineFlags) register(fs *flag.FlagSet) {
	f.sig.register(fs)
	fs.Var(&f.catalogs, "catalog", "catalog YAML file merged over the embedded default (repeatable)")
	fs.Var(&f.binaries, "binary", "backend binary (or shared library) to symbolize raw PCs and cores with, uncompressed (repeatable)")
	fs.Var(&f.debugDirs, "debug-dir", "directory of separate debug files (.build-id/xx/rest.debug, debuglink), searched before /usr/lib/debug (repeatable)")
	fs.BoolVar(&f.noSystemDebug, "no-system-debug-dir", false, "do not search /usr/lib/debug")
	fs.Var(&f.bias, "bias", "load bias (hex) of the first --binary, subtracted from absolute PCs of a PIE (default: recovered from the crash)")
	fs.Var(&f.versionOf, "version-of", "SOURCE=VERSION: the version of the crashes in SOURCE (a file or directory, relative or absolute) when they do not print one (repeatable)")
	fs.StringVar(&f.assumeVersion, "assume-version", "", "the version of every crash that does not print one (after --version-of)")
	fs.StringVar(&f.sysroot, "sysroot", "", "prefix for the library paths recorded in cores (as gdb's set sysroot)")
	fs.BoolVar(&f.noHostFiles, "no-host-files", false, "do not open the library paths recorded in cores on this machine (core from another host)")
}

// open builds the pipeline the flags describe for the inputs paths. Bad
// flag values, including a flag naming a file that cannot be used
// (--catalog, --rules, --binary), are usage errors (exitUsage); code says
// which. A --version-of entry that names none of paths is warned about on
// stderr.
func (f *pipelineFlags) open(ctx context.Context, stderr io.Writer, progress *pipeline.Progress, paths []string) (*pipeline.Pipeline, int, error) {
	if f.hasJobs && f.jobs < 1 {
		return nil, exitUsage, fmt.Errorf("--jobs %d: want 1 or more", f.jobs)
	}
	if f.maxCoreFrames < 0 {
		return nil, exitUsage, fmt.Errorf("--max-frames %d: want 1 or more (0: the default)", f.maxCoreFrames)
	}
	gen, err := f.sig.generator()
	if err != nil {
		return nil, exitUsage, err
	}
	cat, err := loadCatalog(ctx, f.catalogs)
	if err != nil {
		return nil, exitUsage, fmt.Errorf("--catalog: %w", err)
	}
	versions, err := versionMap(f.versionOf)
	if err != nil {
		return nil, exitUsage, err
	}
	p, err := pipeline.New(ctx, pipeline.Options{
		Binaries: f.binaries, Bias: f.bias.v, HasBias: f.bias.set,
		DebugDirs: f.debugDirs, NoSystemDebugDirs: f.noSystemDebug,
		Sysroot: f.sysroot, NoHostFiles: f.noHostFiles, MaxCoreFrames: f.maxCoreFrames,
		Catalog: cat, Generator: gen,
		VersionOf: versions, AssumeVersion: f.assumeVersion,
		Progress: progress,
		Jobs:     f.jobs,
		// "-" may be a live pipe (tail -f be.out | crashsig classify -):
		// a crash is printed once the pipe has been quiet for 2 s.
		IdleFlush: symbolize.DefaultFollowIdleTimeout,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, exitInput, err
		}
		var oe *pipeline.OptionError
		switch {
		case errors.As(err, &oe) && oe.Option == "AssumeVersion":
			return nil, exitUsage, fmt.Errorf("--assume-version %q: %w", f.assumeVersion, oe.Err)
		case errors.As(err, &oe) && oe.Option == "VersionOf":
			return nil, exitUsage, fmt.Errorf("--version-of %q: %w", oe.Key+"="+versions[oe.Key], oe.Err)
		}
		// pipeline.New fails on a --binary it cannot open.
		return nil, exitUsage, fmt.Errorf("--binary: %w", err)
	}
	for _, src := range p.UnmatchedVersionOf(paths...) {
		fmt.Fprintf(stderr, "crashsig: warning: --version-of %s: matches no input (inputs: %s)\n", src, strings.Join(paths, " "))
	}
	for _, n := range cat.Notes() {
		fmt.Fprintf(stderr, "crashsig: catalog: %s\n", n)
	}
	for _, w := range p.Warnings() {
		fmt.Fprintf(stderr, "crashsig: warning: %s\n", w)
	}
	return p, 0, nil
}

// versionMap reads the --version-of SOURCE=VERSION entries. The pipeline
// checks the versions (pipeline.OptionError) and matches SOURCE to the
// inputs, also as cleaned absolute paths.
func versionMap(entries []string) (map[string]string, error) {
	versions := map[string]string{}
	for _, kv := range entries {
		src, ver, ok := strings.Cut(kv, "=")
		if !ok || src == "" || ver == "" {
			return nil, fmt.Errorf("--version-of %q: want SOURCE=VERSION", kv)
		}
		versions[src] = ver
	}
	return versions, nil
}

// runStatus accumulates what a command that reads inputs saw, and turns it
// into the exit code.
type runStatus struct {
	stderr    io.Writer
	incidents int
	failed    bool
	// answered holds the inputs that yielded a Result or an error, by
	// name as given (Result.Source, InputError.Name, SkipError.Name).
	answered map[string]bool
}

// got records that r's input yielded a Result.
func (s *runStatus) got(r *pipeline.Result) { s.mark(r.Source) }

// report prints a per-input error: skipped inputs are notes, others make
// the exit code 1. It returns false when the run must stop (ctx done).
func (s *runStatus) report(ctx context.Context, err error) bool {
	var ie *pipeline.InputError
	var sk *pipeline.SkipError
	switch {
	case errors.As(err, &sk):
		s.mark(sk.Name)
	case errors.As(err, &ie):
		s.mark(ie.Name)
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintf(s.stderr, "crashsig: %v\n", err)
		s.failed = true
		return false
	}
	var se *pipeline.SkipError
	if errors.As(err, &se) && se.Reason != pipeline.SkipOwnOutput {
		// Junk, executables, archives, links: notes. crashsig's own JSON
		// given back as a log is the user's mistake: it fails the run.
		fmt.Fprintf(s.stderr, "crashsig: %v\n", err)
		return true
	}
	fmt.Fprintf(s.stderr, "crashsig: %v\n", err)
	s.failed = true
	return true
}

func (s *runStatus) mark(name string) {
	if s.answered == nil {
		s.answered = make(map[string]bool)
	}
	s.answered[name] = true
}

// noteBinary prints a note for each regular file among paths that yielded
// nothing and holds no text (binaryShare): "no crash found" alone would
// not say that the file was never a log. Directories are not walked again.
func (s *runStatus) noteBinary(paths []string) {
	for _, p := range paths {
		if p == "-" || s.answered[p] {
			continue
		}
		if why := binaryFile(p); why != "" {
			fmt.Fprintf(s.stderr, "crashsig: %s: note: %s\n", p, why)
		}
	}
}

func (s *runStatus) code() int {
	switch {
	case s.failed:
		return exitInput
	case s.incidents == 0:
		return exitNoCrash
	}
	return exitOK
}

// output is stdout, buffered, remembering the first write error so that
// a full disk or a closed pipe makes the command fail instead of losing
// output silently.
type output struct {
	*bufio.Writer
	err *error
}

type errRecorder struct {
	w   io.Writer
	err error
}

func (e *errRecorder) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

func newOutput(w io.Writer) output {
	r := &errRecorder{w: w}
	return output{Writer: bufio.NewWriterSize(r, 64<<10), err: &r.err}
}

// failed reports whether a write has failed so far.
func (o output) failed() bool { return *o.err != nil }

// close flushes; a write error is printed and turns code into exitInput.
func (o output) close(stderr io.Writer, code int) int {
	err := o.Flush()
	if *o.err != nil {
		err = *o.err
	}
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: writing output: %v\n", err)
		return exitInput
	}
	return code
}

// startProgress prints a progress line on stderr while a run lasts longer
// than a second, when stderr is a terminal. The returned function stops
// it and clears the line.
func startProgress(stderr io.Writer, p *pipeline.Progress) func() {
	f, ok := stderr.(*os.File)
	if !ok {
		return func() {}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(time.Second)
		defer timer.Stop()
		select {
		case <-done:
			return
		case <-timer.C:
		}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			fmt.Fprintf(f, "\r\x1b[Kcrashsig: %d inputs, %d incidents, %.1f MB read: %s", p.Inputs(), p.Incidents(), float64(p.Bytes())/1e6, clip(p.Current(), 60))
			select {
			case <-done:
				fmt.Fprint(f, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
