// Command collector shows a crash-collector loop built on the crashsig
// library: it follows a growing be.out (like `tail -F`, also across
// truncation by a restart script) and prints one JSON line per crash as
// soon as the incident is complete, with its signature and verdict.
//
//	go run ./examples/collector /opt/starrocks/be/log/be.out
//
// Without --follow it reads the file once and exits. Line numbers count
// every line read since the collector started, across truncations. A
// truncation followed by new output within one poll interval (500 ms) is
// not noticed when the new file is already as long as the old offset.
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

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// follower reads a file and, at its end, waits for more instead of
// returning io.EOF. When the file shrinks (the start script truncated it)
// or is replaced (rotated), it starts again from the beginning of the new
// file.
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

func main() {
	follow := flag.Bool("follow", true, "keep reading as the file grows")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: collector [--follow=false] be.out")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cat, err := catalog.Default()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gen := signature.Default()
	var r io.Reader
	if *follow {
		r = &follower{ctx: ctx, path: flag.Arg(0), poll: 500 * time.Millisecond}
	} else {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		r = f
	}
	enc := json.NewEncoder(os.Stdout)
	sc := symbolize.NewScanner(r, symbolize.ScanOptions{Source: flag.Arg(0)})
	for sc.NextContext(ctx) {
		c := sc.Crash()
		sig := gen.Generate(c)
		v := cat.Classify(c, sig)
		enc.Encode(struct {
			Source         string          `json:"source"`
			Line           int             `json:"start_line"`
			Time           time.Time       `json:"time,omitzero"`
			Signature      string          `json:"signature"`
			ID             string          `json:"id"`
			Classification catalog.Verdict `json:"classification"`
		}{c.Source, c.StartLine, c.Time, sig.Key, sig.ID, v})
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
