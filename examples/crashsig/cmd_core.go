package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

// cmdCore implements `crashsig core CORE [--binary FILE]... [--debug-dir DIR]... [--json]`:
// it reads an ELF core of a backend, unwinds every thread and prints them
// like gdb's `thread apply all bt` (crashing thread first), or with --json
// the pipeline.Result that classify --json prints for the same core.
func cmdCore(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("core", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pf pipelineFlags
	pf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON line, the pipeline.Result of classify --json")
	maxFrames := fs.Int("max-frames", 0, "frames per thread before a stack is cut (default 512)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig core CORE [--binary FILE]... [--debug-dir DIR]... [--sysroot DIR] [--no-host-files] [--json]")
		fmt.Fprintln(stderr, "CORE may be compressed (.gz, .zst, .xz, .bz2); a --binary may not (it is read in place).")
		fmt.Fprintln(stderr, "Exit status: 0 the core was read, 1 it could not be (or output not written), 2 usage or a bad flag value.")
		fs.PrintDefaults()
	}
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitUsage
	}
	if *maxFrames < 0 {
		fmt.Fprintf(stderr, "crashsig: --max-frames %d: want 1 or more (0: the default)\n", *maxFrames)
		return exitUsage
	}
	// A --binary the binary reader refuses (missing, not ELF, compressed:
	// symbolize.ErrCompressed) is a usage error, as for classify, whose
	// pipeline opens them; the core reader would only note it.
	for _, b := range pf.binaries {
		bin, err := symbolize.OpenBinary(b, symbolize.BinaryOptions{})
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: --binary: %v\n", err)
			return exitUsage
		}
		bin.Close()
	}
	// The core is opened as classify opens it: .gz, .zst, .xz and .bz2
	// cores are decompressed to a temporary file (removed on return).
	in, err := pipeline.OpenFile(ctx, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return exitInput
	}
	defer in.Close()
	if in.Kind != pipeline.ContentCore {
		fmt.Fprintf(stderr, "crashsig: %s: not an ELF core file (crash logs are read by crashsig classify)\n", pos[0])
		return exitInput
	}
	out := newOutput(stdout)
	if *asJSON {
		in.Close()
		pf.maxCoreFrames = *maxFrames
		p, code, err := pf.open(ctx, stderr, nil, pos)
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			return code
		}
		defer p.Close()
		// Run reads the core as classify does (decompressing it), and
		// names it as given.
		var res *pipeline.Result
		for r, err := range p.Run(ctx, nil, pos[0]) {
			if err != nil {
				fmt.Fprintf(stderr, "crashsig: %v\n", err)
				return exitInput
			}
			if res == nil {
				res = r
			}
		}
		if res == nil {
			fmt.Fprintf(stderr, "crashsig: %s: no crash read from the core\n", pos[0])
			return exitInput
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "crashsig: %s: warning: %s\n", pos[0], w)
		}
		pipeline.NewEncoder(out).Encode(res)
		return out.close(stderr, exitOK)
	}
	corePath, err := in.CorePath(ctx, "")
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %s: %v\n", pos[0], err)
		return exitInput
	}
	dirs := []string(pf.debugDirs)
	if !pf.noSystemDebug {
		dirs = append(dirs, pipeline.SystemDebugDirs()...)
	}
	c, err := symbolize.OpenCore(ctx, corePath, symbolize.CoreOptions{
		Binaries:     pf.binaries,
		DebugDirs:    dirs,
		Sysroot:      pf.sysroot,
		NoDiskLookup: pf.noHostFiles,
		MaxFrames:    *maxFrames,
	})
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %s: %v\n", pos[0], err)
		return exitInput
	}
	defer c.Close()
	c.Path = pos[0] // the name given, not a temporary copy's
	cr, err := c.Crash(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %s: %v\n", pos[0], err)
		return exitInput
	}
	for _, m := range c.Mismatches {
		fmt.Fprintf(stderr, "crashsig: %s: warning: %v\n", pos[0], m)
	}
	if err := symbolize.WriteCoreText(out, c, cr); err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return exitInput
	}
	return out.close(stderr, exitOK)
}
