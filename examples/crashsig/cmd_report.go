package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/report"
)

// cmdReport writes the crash report: one self-contained HTML page with the
// top crashers, charts and a section per bucket (package report). Inputs
// are crash logs and cores (read through the pipeline like classify) or
// buckets JSON Lines files written by `crashsig buckets --json`, told apart
// by their content.
// defaultMaxSections bounds the per-bucket sections of a page by default:
// a fleet's 100,000 buckets with a section each made a 720 MB page that
// took 22 s to write and no browser opens; the table still lists every
// bucket, and --max-sections 0 gives all of them a section.
const defaultMaxSections = 1000

func cmdReport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	outPath := fs.String("o", "-", "write the HTML page to this file (- for standard output)")
	title := fs.String("title", "", "page title (default \"Crash report\")")
	generated := fs.String("generated", "", "show this generation time on the page (RFC 3339, or \"now\"); without it the page holds no wall-clock time")
	maxSections := fs.Int("max-sections", defaultMaxSections, "give only the N most frequent buckets a section; the table lists every bucket (0: all)")
	threshold := fs.Float64("threshold", 0.8, thresholdUsage)
	var pf pipelineFlags
	pf.registerInput(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig report [-o FILE] [--title T] [--generated TIME|now] [--max-sections N] [input flags of classify] PATH...")
		fmt.Fprintln(stderr, "  PATH: crash logs, directories, cores, - for stdin, or buckets JSON Lines (crashsig buckets --json), compressed or not")
		fmt.Fprintln(stderr, exitStatusText)
		fs.PrintDefaults()
	}
	paths, code, ok := parsePaths(fs, args)
	if !ok {
		return code
	}
	if err := checkThreshold(*threshold); err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return exitUsage
	}
	if *maxSections < 0 {
		fmt.Fprintf(stderr, "crashsig: --max-sections %d: want 0 (all) or more\n", *maxSections)
		return exitUsage
	}
	opts := report.Options{Title: *title, MaxSections: *maxSections}
	switch *generated {
	case "":
	case "now":
		opts.Generated = time.Now()
	default:
		t, err := time.Parse(time.RFC3339, *generated)
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: --generated: %v\n", err)
			return exitUsage
		}
		opts.Generated = t
	}

	st := runStatus{stderr: stderr}
	var fromFiles []report.Bucket
	var logs []string
	var in io.Reader = stdin
	closeStdin := func() error { return nil }
	defer func() { closeStdin() }()
	for _, path := range paths {
		bs, isBuckets, err := readBucketsFile(path, &in, &closeStdin)
		switch {
		case err != nil:
			st.report(ctx, err)
		case isBuckets:
			fromFiles = append(fromFiles, bs...)
			for _, b := range bs {
				st.incidents += b.Count
			}
		default:
			logs = append(logs, path)
		}
	}
	col := report.NewCollector()
	if len(logs) > 0 {
		var prog pipeline.Progress
		p, code, err := pf.open(ctx, stderr, &prog, logs)
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			return code
		}
		defer p.Close()
		stop := startProgress(stderr, &prog)
		for res, err := range p.Run(ctx, in, logs...) {
			if err != nil {
				if !st.report(ctx, err) {
					break
				}
				continue
			}
			st.incidents++
			st.got(res)
			col.Add(res)
		}
		stop()
		st.noteBinary(logs)
		if ctx.Err() != nil {
			return exitInput
		}
	}
	buckets := report.Merge(append(col.Buckets(*threshold), fromFiles...))

	var w io.Writer = stdout
	var f *os.File
	if *outPath != "-" {
		var err error
		if f, err = os.Create(*outPath); err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			return exitInput
		}
		w = f
	}
	err := report.Render(ctx, w, buckets, opts)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: writing the report: %v\n", err)
		return exitInput
	}
	if *outPath != "-" {
		fmt.Fprintf(stderr, "crashsig: %d crashes in %d buckets: wrote %s\n", st.incidents, len(buckets), *outPath)
	}
	return st.code()
}

// readBucketsFile reads path as a buckets JSON Lines file when its
// decompressed content is one (gzip, zstd, xz or bzip2 on disk or on
// stdin, as the pipeline reads them); isBuckets is false otherwise. For
// "-" *stdin is replaced by a reader of the decompressed standard input
// that still holds what was peeked, and *closer set to release it.
// crashsig's other JSON Lines output (classify --json) is refused with a
// *pipeline.SkipError (SkipOwnOutput).
func readBucketsFile(path string, stdin *io.Reader, closer *func() error) (bs []report.Bucket, isBuckets bool, err error) {
	if path == "-" && *stdin == nil {
		return nil, false, nil
	}
	in, br, head, err := peekInput(path, *stdin)
	switch {
	case err != nil && path == "-":
		return nil, false, err
	case err != nil || in == nil:
		return nil, false, nil // the pipeline says why, or walks the directory
	}
	if path == "-" {
		*stdin, *closer = br, in.Close
	} else {
		defer in.Close()
	}
	switch {
	case report.LooksLikeBuckets(head):
		bs, err = report.ReadBuckets(br)
		if err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return bs, true, err
	case in.Kind == pipeline.ContentOwnJSON:
		return nil, false, &pipeline.SkipError{Name: path, Reason: pipeline.SkipOwnOutput, Detail: "this is crashsig --json output, not a crash log (crashsig report reads buckets --json output and crash logs)"}
	}
	return nil, false, nil
}
