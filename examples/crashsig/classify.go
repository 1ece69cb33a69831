package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// record is one line of `classify --json`: the parsed incident with the
// keys later stages add. The schema is documented in README.md; keys are
// only ever added, never renamed or removed.
type record struct {
	*symbolize.Crash
	Signature *signature.Signature `json:"signature,omitempty"`
}

func cmdClassify(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON Lines, one object per incident")
	var sf signatureFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: crashsig classify [--json] PATH...   (files, directories, - for stdin, .gz ok)")
		return 2
	}
	gen, err := sf.generator()
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	n := 0
	err = openInputs(fs.Args(), stdin, stderr, func(name string, r io.Reader) error {
		sc := symbolize.NewScanner(r, symbolize.ScanOptions{Source: name})
		for sc.NextContext(ctx) {
			c := sc.Crash()
			n++
			sig := gen.Generate(c)
			rec := record{Crash: c, Signature: &sig}
			if *asJSON {
				if err := enc.Encode(rec); err != nil {
					return err
				}
				continue
			}
			printHuman(stdout, rec)
		}
		return sc.Err()
	})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", ctx.Err())
		}
		return 1
	}
	if !*asJSON && n == 0 {
		fmt.Fprintln(stdout, "no crash found")
	}
	return 0
}

// printHuman writes the readable summary of one incident.
func printHuman(w io.Writer, r record) {
	c := r.Crash
	fmt.Fprintf(w, "%s:%d-%d\n", c.Source, c.StartLine, c.EndLine)
	var head []string
	if c.Product != "" {
		p := string(c.Product)
		if c.Version != "" {
			p += " " + c.Version
		}
		head = append(head, p)
	}
	head = append(head, string(c.Kind))
	if c.Signal != "" {
		s := c.Signal
		if c.HasFaultAddress {
			s += " @" + c.FaultAddress.String()
		}
		if c.SignalReason != "" {
			s += " (" + c.SignalReason + ")"
		}
		head = append(head, s)
	}
	if c.QueryID != "" {
		head = append(head, "query "+c.QueryID)
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(head, ", "))
	if c.ExceptionType != "" {
		fmt.Fprintf(w, "  exception: %s\n", c.ExceptionType)
	}
	if c.Message != "" {
		msg := c.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] + " …"
		}
		fmt.Fprintf(w, "  message: %s\n", clip(msg, 200))
	}
	if c.Corrupted {
		fmt.Fprintf(w, "  CORRUPTED: %s\n", c.CorruptedReason)
	}
	if r.Signature != nil {
		fmt.Fprintf(w, "  signature: %s  [%s]\n", r.Signature.Key, r.Signature.ID)
	}
	if ct := c.CrashingThread(); ct != nil {
		fmt.Fprintf(w, "  crashing thread %d: %d frames\n", ct.ID, len(ct.Frames))
		for i, f := range ct.Frames {
			if i == 12 {
				fmt.Fprintf(w, "    … %d more\n", len(ct.Frames)-i)
				break
			}
			fmt.Fprintf(w, "    %s\n", frameText(f))
		}
	}
	if others := len(c.Threads) - 1; c.CrashingThread() == nil && len(c.Threads) > 0 {
		fmt.Fprintf(w, "  %d threads\n", len(c.Threads))
	} else if others > 0 {
		fmt.Fprintf(w, "  %d other threads\n", others)
	}
	fmt.Fprintln(w)
}

func frameText(f symbolize.Frame) string {
	name := f.Name()
	switch {
	case name != "":
	case f.HasOffset:
		name = fmt.Sprintf("%s+%s", f.Module, f.Offset)
	case f.PC != 0:
		name = f.PC.String()
		if f.Module != "" {
			name += " in " + f.Module
		}
	default:
		name = "??"
	}
	s := fmt.Sprintf("#%-2d %s", f.Index, clip(name, 160))
	if f.File != "" {
		s += fmt.Sprintf(" at %s:%d", f.File, f.Line)
	}
	if f.Inlined {
		s += " (inlined)"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
