// Command collector follows a growing be.out (like `tail -F`, also across
// truncation by a restart script) and prints one JSON line per crash as
// soon as it is written: the same pipeline.Result that
// `crashsig classify --json` prints. A crash is reported within
// symbolize.DefaultFollowIdleTimeout (2 s) of its last line, even when the
// crashed process writes nothing after it.
//
//	go run ./examples/collector [--follow=false] [--assume-version 3.3.9] /opt/starrocks/be/log/be.out
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, flag.Arg(0), *follow, pipeline.Options{AssumeVersion: *version}, os.Stdout, os.Stderr))
}

func run(ctx context.Context, path string, follow bool, opts pipeline.Options, stdout, stderr io.Writer) int {
	var r io.Reader = &follower{ctx: ctx, path: path, poll: 200 * time.Millisecond}
	if follow {
		opts.IdleFlush = symbolize.DefaultFollowIdleTimeout
	} else {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, "collector:", err)
			return 1
		}
		defer f.Close()
		r = f
	}
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "collector:", err)
		return 1
	}
	defer p.Close()
	enc := json.NewEncoder(stdout)
	for res, err := range p.Text(ctx, path, r) {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				fmt.Fprintln(stderr, "collector:", err)
				return 1
			}
			break
		}
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(stderr, "collector:", err)
			return 1
		}
	}
	return 0
}

// follower reads a file and, at its end, waits for more instead of
// returning io.EOF. When the file shrinks (the start script truncated it)
// or is replaced (rotated), it starts again from the beginning of the new
// file. Line numbers then count every line read since the start.
type follower struct {
	ctx  context.Context
	path string
	f    *os.File
	off  int64
	poll time.Duration
}

func (r *follower) Read(p []byte) (int, error) {
	for {
		if r.f == nil {
			f, err := os.Open(r.path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return 0, err
			}
			r.f, r.off = f, 0
		}
		if r.f != nil {
			n, err := r.f.Read(p)
			r.off += int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, err
			}
			if st, err := os.Stat(r.path); err != nil || st.Size() < r.off || !sameFile(r.f, st) {
				r.f.Close()
				r.f = nil
				continue
			}
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(r.poll):
		}
	}
}

func sameFile(f *os.File, st os.FileInfo) bool {
	fst, err := f.Stat()
	return err == nil && os.SameFile(fst, st)
}
