// Command batch classifies directories of crash logs, cores and
// compressed files offline, on all cores, and prints a top-crashers table:
// one row per bucket (path, signature key, defect) with its meaning.
//
//	go run ./examples/batch [--assume-version 3.3.9] testdata/corpus /var/crash
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/crashsig/crashsig/pipeline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	version := flag.String("assume-version", "", "version of the crashes that do not print one")
	flag.Parse()
	os.Exit(run(ctx, pipeline.Options{AssumeVersion: *version}, flag.Args(), os.Stdout, os.Stderr))
}

func run(ctx context.Context, opts pipeline.Options, paths []string, stdout, stderr io.Writer) int {
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "batch:", err)
		return 1
	}
	defer p.Close()
	var files []string
	for f, err := range pipeline.Files(ctx, paths...) {
		if err != nil {
			fmt.Fprintln(stderr, "batch:", err)
			continue
		}
		files = append(files, f)
	}
	// One worker per core; each file's results land in its slot, so the
	// buckets' first/last follow the input order whatever the timing.
	results := make([][]*pipeline.Result, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				for res, err := range p.File(ctx, files[i]) {
					if err != nil { // *pipeline.InputError, or a *pipeline.SkipError (not a log)
						fmt.Fprintln(stderr, "batch:", err)
						continue
					}
					results[i] = append(results[i], res)
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	b := pipeline.NewBucketer()
	for _, rs := range results {
		for _, res := range rs {
			b.Add(res)
		}
	}
	return table(stdout, b.Buckets(0.8))
}

// table prints the buckets, most frequent first within each path.
func table(stdout io.Writer, buckets []pipeline.Bucket) int {
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
	if err := w.Flush(); err != nil {
		return 1
	}
	return 0
}
