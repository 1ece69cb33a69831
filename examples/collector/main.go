// Command collector follows a growing be.out (like `tail -F`, also across
// truncation by a restart script and rotation) and prints one JSON line per
// crash as soon as it is written: the same pipeline.Result that
// `crashsig classify --json` prints. A crash is reported within
// symbolize.DefaultFollowIdleTimeout (2 s) of its last line, even when the
// crashed process writes nothing after it. Ctrl-C or SIGTERM (systemd,
// docker stop) stops it once it has reported the crash it was reading.
// With --follow=false it reads the file once, as classify does (a rotated
// be.out.1.gz, a core), and exits.
//
//	go run ./examples/collector [--follow=false] [--assume-version 3.3.9] /opt/starrocks/be/log/be.out
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

func main() {
	follow := flag.Bool("follow", true, "keep reading as the file grows")
	version := flag.String("assume-version", "", "version of the crashes that do not print one")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: collector [--follow=false] [--assume-version V] be.out")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, flag.Arg(0), *follow, pipeline.Options{AssumeVersion: *version}, os.Stdout, os.Stderr))
}

func run(ctx context.Context, path string, follow bool, opts pipeline.Options, stdout, stderr io.Writer) int {
	if follow {
		opts.IdleFlush = symbolize.DefaultFollowIdleTimeout
	}
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "collector:", err)
		return 1
	}
	defer p.Close()
	// Once, the file is read as classify reads it (compressed, a core;
	// binary junk refused); followed, it is a live text stream.
	results := p.File(ctx, path)
	if follow {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "collector: %s does not exist yet; waiting for it\n", path)
		}
		r := pipeline.Follow(ctx, path, 100*time.Millisecond) // io.EOF once ctx is done
		defer r.Close()
		results = p.Text(ctx, path, r)
	}
	enc := pipeline.NewEncoder(stdout) // the bytes classify --json prints
	for res, err := range results {
		if err == nil {
			err = enc.Encode(res)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "collector:", err)
			return 1
		}
	}
	return 0
}
