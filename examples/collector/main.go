// Command collector follows a growing be.out (like `tail -F`, also across
// truncation by a restart script and rotation) and prints one JSON line per
// crash as soon as it is written: the same pipeline.Result that
// `crashsig classify --json` prints. A crash is reported within
// symbolize.DefaultFollowIdleTimeout (2 s) of its last line, even when the
// crashed process writes nothing after it. Ctrl-C or SIGTERM (systemd,
// docker stop) stops it once it has reported the crash it was reading.
//
//	go run ./examples/collector [--follow=false] [--assume-version 3.3.9] /opt/starrocks/be/log/be.out
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	var r io.ReadCloser
	if follow {
		r = pipeline.Follow(ctx, path, 100*time.Millisecond) // io.EOF once ctx is done
		opts.IdleFlush = symbolize.DefaultFollowIdleTimeout
	} else {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, "collector:", err)
			return 1
		}
		r = f
	}
	defer r.Close()
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "collector:", err)
		return 1
	}
	defer p.Close()
	enc := pipeline.NewEncoder(stdout) // the bytes classify --json prints
	for res, err := range p.Text(ctx, path, r) {
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
