// Command oncall answers the on-call question for one crash — a paste on
// stdin, a be.out, a core: what is it, is it known, what do I do? It
// prints the answer first and the evidence after, from the same
// pipeline.Result that `crashsig classify --json` prints.
//
//	pbpaste | go run ./examples/oncall --version 3.3.9 -
//	go run ./examples/oncall --binary /opt/starrocks/be/lib/starrocks_be core.41237
//
// Exit status, as crashsig's: 0 a crash was found; 1 an input could not be
// read or the answer could not be written, or the run was interrupted (Ctrl-C or SIGTERM: a compressed
// core's temporary copy is removed); 3 every input was read and none held
// a crash ("no crash found in the input"). A skipped input (an
// executable, binary junk) is named on stderr and is not an error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/crashsig/crashsig/pipeline"
)

func main() {
	version := flag.String("version", "", "the version that crashed, when the crash does not print it")
	binary := flag.String("binary", "", "the backend binary, to symbolize raw PCs and cores")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := pipeline.Options{AssumeVersion: *version}
	if *binary != "" {
		opts.Binaries = []string{*binary}
	}
	os.Exit(run(ctx, opts, flag.Args(), os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, opts pipeline.Options, paths []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	p, err := pipeline.New(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "oncall:", err)
		return 1
	}
	defer p.Close()
	out := &firstErr{w: stdout}
	n, failed := 0, false
	for res, err := range p.Run(ctx, stdin, paths...) {
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				continue // said once below
			}
			fmt.Fprintln(stderr, "oncall:", err)
			failed = failed || !errors.Is(err, pipeline.ErrSkipped)
			continue
		}
		n++
		answer(out, res)
	}
	code := 0
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "oncall: interrupted")
		code = 1
	case failed:
		code = 1
	case n == 0:
		fmt.Fprintln(out, "no crash found in the input")
		code = 3
	}
	if out.err != nil {
		fmt.Fprintln(stderr, "oncall: writing the answer:", out.err)
		return 1
	}
	return code
}

// answer prints one incident, the answer first.
func answer(w io.Writer, r *pipeline.Result) {
	v := r.Classification
	fmt.Fprintf(w, "%s (%s:%d)\n", v.Advice, r.Source, r.StartLine)
	fmt.Fprintf(w, "  path %s %s, key %s\n", v.Path, v.Area, r.Signature.ID)
	if d := v.Defect; d != nil {
		fmt.Fprintf(w, "  %s: %s\n  %s\n", d.ID, d.Title, strings.Join(d.Links, " "))
		if d.Workaround != "" {
			fmt.Fprintf(w, "  workaround: %s\n", d.Workaround)
		}
	}
	for _, e := range v.Evidence {
		fmt.Fprintf(w, "  - %s\n", e)
	}
}

// firstErr keeps the first error of writes to w: an answer that could not
// be written (stdout on a full disk) makes the run fail.
type firstErr struct {
	w   io.Writer
	err error
}

func (f *firstErr) Write(b []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(b)
	f.err = err
	return n, err
}
