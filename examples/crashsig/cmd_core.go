package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/crashsig/crashsig/symbolize"
)

// cmdCore implements `crashsig core CORE [--binary FILE]... [--debug-dir DIR]... [--json]`:
// it reads an ELF core of a backend, unwinds every thread and prints them
// like gdb's `thread apply all bt` (crashing thread first), or the Crash
// model as JSON.
func cmdCore(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("core", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bins, debugDirs stringList
	fs.Var(&bins, "binary", "executable or shared library of the crashed process (repeatable; matched by build-id, then name; an unmatched one is the main executable)")
	fs.Var(&debugDirs, "debug-dir", "debug root with .build-id/ or debuglink files (repeatable)")
	sysroot := fs.String("sysroot", "", "prefix for the library paths recorded in the core (as gdb's set sysroot)")
	noDisk := fs.Bool("no-host-files", false, "do not open the paths recorded in the core on this machine (core from another host)")
	asJSON := fs.Bool("json", false, "print the Crash model as JSON")
	maxFrames := fs.Int("max-frames", 0, "frames per thread before a stack is cut (default 512)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig core CORE [--binary FILE]... [--debug-dir DIR]... [--sysroot DIR] [--json]")
		fs.PrintDefaults()
	}
	// flags may come before or after the core path
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	c, err := symbolize.OpenCore(ctx, pos[0], symbolize.CoreOptions{
		Binaries:     bins,
		DebugDirs:    debugDirs,
		Sysroot:      *sysroot,
		NoDiskLookup: *noDisk,
		MaxFrames:    *maxFrames,
	})
	if err != nil {
		fmt.Fprintln(stderr, "crashsig core:", err)
		return 1
	}
	defer c.Close()
	cr, err := c.Crash(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "crashsig core:", err)
		return 1
	}
	for _, m := range c.Mismatches {
		fmt.Fprintln(stderr, "crashsig core: warning:", m)
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(cr)
	} else {
		err = symbolize.WriteCoreText(out, c, cr)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintln(stderr, "crashsig core:", err)
		return 1
	}
	return 0
}
