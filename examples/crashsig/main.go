// Command crashsig reads crashes of Apache Doris and StarRocks backends
// (be.out logs, pasted tickets, thread dumps, core files) and prints what
// they are: parsed incidents, signatures, paths and known defects.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
)

// command is one subcommand of the CLI.
type command struct {
	name  string
	usage string
	run   func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"classify", "parse crash logs (and cores) and print each incident with its signature (--json: JSON Lines)", cmdClassify},
		{"explain", "print each incident's signature with the trace of every decision", cmdExplain},
		{"buckets", "group many inputs into buckets by signature key, with near duplicates", cmdBuckets},
		{"diff", "compare the signature keys of two golden signature files or directories", cmdDiff},
		{"symbolize", "symbolize PCs against an ELF binary or its debug file (addr2line-compatible)", cmdSymbolize},
		{"core", "unwind and symbolize every thread of an ELF core file", cmdCore},
		{"catalog", "lint catalog files or show the known defects (catalog lint|show)", cmdCatalog},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	// CRASHSIG_CPUPROFILE=FILE writes a CPU profile of the run (for the
	// performance work described in symbolize/SYMBOLIZER.md).
	if p := os.Getenv("CRASHSIG_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if code != 0 {
		pprof.StopCPUProfile()
		os.Exit(code)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: crashsig <command> [flags] [args]")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.usage)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "crashsig: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}
