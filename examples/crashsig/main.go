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
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/signature"
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
		{"diff", "compare the signature keys of two golden signature files or directories", withOutput(cmdDiff)},
		{"symbolize", "symbolize PCs against an ELF binary or its debug file (addr2line-compatible)", cmdSymbolize},
		{"core", "unwind and symbolize every thread of an ELF core file", cmdCore},
		{"catalog", "lint catalog files or show the known defects (catalog lint|show)", withOutput(cmdCatalog)},
		{"report", "write a self-contained HTML crash report: top crashers, charts, one section per bucket (-o FILE)", withOutput(cmdReport)},
	}
}

// withOutput runs a command whose output is not otherwise checked with a
// stdout whose write errors make the exit code 1.
func withOutput(run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int) func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		out := newOutput(stdout)
		code := run(ctx, args, stdin, out, stderr)
		return out.close(stderr, code)
	}
}

func main() {
	// SIGTERM (kill, systemd, docker stop) ends a run as Ctrl-C does: the
	// temporary copy of a compressed core being read is removed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	fmt.Fprintln(w, "usage: crashsig <command> [flags] [args]   (flags may come anywhere after the command)")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w, "  version    print the library version, catalog revision and signature algorithm (also --version)")
	fmt.Fprintln(w, "`crashsig <command> -h` lists a command's flags.")
	fmt.Fprintln(w, "exit status:")
	fmt.Fprintln(w, "  0  crashes found (symbolize, catalog, core: the work was done; diff: no difference)")
	fmt.Fprintln(w, "  1  an input could not be read, or the output could not be written (diff: also the keys differ)")
	fmt.Fprintln(w, "  2  usage error: unknown command or flag, bad flag value (also a flag naming a file")
	fmt.Fprintln(w, "     that cannot be used: --catalog, --rules, --binary), missing argument")
	fmt.Fprintln(w, "  3  every input was read and none held a crash (classify, explain, buckets, report)")
}

// printVersion writes what produced the answers: the library, the
// embedded catalog's revision, the signature algorithm, the JSON schema.
func printVersion(w io.Writer) error {
	rev := "unavailable"
	if c, err := catalog.Default(); err == nil {
		rev = c.Revision()
	}
	_, err := fmt.Fprintf(w, "crashsig %s\ncatalog revision %s\nsignature algorithm %s\nresult schema %d\n%s\n",
		pipeline.Version, rev, signature.Algorithm, pipeline.SchemaVersion, runtime.Version())
	return err
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		out := newOutput(stdout)
		usage(out)
		return out.close(stderr, exitOK)
	case "--version", "-version", "version":
		out := newOutput(stdout)
		printVersion(out)
		return out.close(stderr, exitOK)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "crashsig: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}
