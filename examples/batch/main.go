// Command batch classifies directories of crash logs, cores and
// compressed files offline, on all cores, and prints a top-crashers table:
// one row per bucket (path, signature key, defect) with its meaning.
//
//	go run ./examples/batch [--assume-version 3.3.9] testdata/corpus /var/crash
//
// Exit status, as crashsig's: 0 crashes found; 1 an input could not be
// read, the output could not be written, or the run was interrupted
// (Ctrl-C or SIGTERM: the table then holds what was read before, and a
// compressed core's temporary copy is removed); 2 usage; 3 every input
// was read and none held a crash. A skipped input (an executable, an
// archive, binary junk) is named on stderr and is not an error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/crashsig/crashsig/pipeline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	version := flag.String("assume-version", "", "version of the crashes that do not print one")
	flag.Parse()
	os.Exit(run(ctx, pipeline.Options{AssumeVersion: *version}, flag.Args(), os.Stdout, os.Stderr))
}

func run(ctx context.Context, opts pipeline.Options, paths []string, stdout, stderr io.Writer) int {
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "usage: batch [--assume-version V] PATH...")
		return 2
	}
	// One input per core at once; Run yields the Results in input order
	// whatever the timing (so the buckets' first/last follow the input),
	// and holds a bounded number of them per input.
	if opts.Jobs == 0 {
		opts.Jobs = runtime.GOMAXPROCS(0)
	}
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "batch:", err)
		return 1
	}
	defer p.Close()
	failed := false
	report := func(err error) {
		switch {
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			// said once below
		case errors.Is(err, pipeline.ErrSkipped):
			fmt.Fprintln(stderr, "batch:", err)
		default: // *pipeline.InputError
			fmt.Fprintln(stderr, "batch:", err)
			failed = true
		}
	}
	b := pipeline.NewBucketer()
	found := false
	for res, err := range p.Run(ctx, nil, paths...) {
		if err != nil {
			report(err)
			continue
		}
		found = true
		b.Add(res)
	}
	werr := table(stdout, b.Buckets(0.8))
	if werr != nil {
		fmt.Fprintln(stderr, "batch: writing the table:", werr)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "batch: interrupted: the table holds the incidents read before")
		return 1
	case werr != nil || failed:
		return 1
	case !found:
		fmt.Fprintln(stderr, "batch: no crash found in the input")
		return 3
	}
	return 0
}

// table prints the buckets, most frequent first within each path.
func table(stdout io.Writer, buckets []pipeline.Bucket) error {
	w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "count\tpath\tarea\tdefect\tstatus\tversions\tfirst seen\tkey")
	for _, bk := range buckets {
		defect := "new"
		if bk.Defect != nil {
			defect = bk.Defect.ID
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.80s\n", bk.Count, bk.Path, bk.Area, defect, bk.Status,
			strings.Join(bk.Versions, ","), bk.First, bk.Key)
	}
	return w.Flush()
}
