package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// record is one line of `classify --json`: the parsed incident with the
// keys later stages add. The schema is documented in README.md; keys are
// only ever added, never renamed or removed.
type record struct {
	*symbolize.Crash
	Signature      *signature.Signature    `json:"signature,omitempty"`
	Classification *catalog.Verdict        `json:"classification,omitempty"`
	Symbolization  *symbolize.FramesReport `json:"symbolization,omitempty"`
	// Groups aggregates the threads of thread dumps and cores by
	// normalized stack, largest first (the crashing thread's group first).
	Groups []signature.Group `json:"thread_groups,omitempty"`
}

// pipeline builds the signature generator (default rules plus --rules)
// and the catalog (embedded default plus --catalog files) a command uses.
func pipeline(ctx context.Context, sf signatureFlags, catalogs []string) (*signature.Generator, *catalog.Catalog, error) {
	gen, err := sf.generator()
	if err != nil {
		return nil, nil, err
	}
	cat, err := loadCatalog(ctx, catalogs)
	if err != nil {
		return nil, nil, err
	}
	return gen, cat, nil
}

func cmdClassify(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON Lines, one object per incident")
	var sf signatureFlags
	sf.register(fs)
	var catalogs, binaries, debugDirs stringList
	fs.Var(&catalogs, "catalog", "catalog YAML file merged over the embedded default (repeatable)")
	fs.Var(&binaries, "binary", "backend binary (or shared library) to symbolize frames and cores with (repeatable)")
	fs.Var(&debugDirs, "debug-dir", "directory of separate debug files (.build-id/xx/rest.debug, debuglink) (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig classify [--json] [--catalog FILE]... [--binary FILE]... [--debug-dir DIR]... PATH...")
		fmt.Fprintln(stderr, "PATH: files, directories (recursively), - for stdin; .gz is read transparently; ELF cores are unwound")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	gen, cat, err := pipeline(ctx, sf, catalogs)
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 2
	}
	for _, n := range cat.Notes() {
		fmt.Fprintf(stderr, "crashsig: catalog: %s\n", n)
	}
	var mods []symbolize.Module
	for _, path := range binaries {
		b, err := symbolize.OpenBinary(path, symbolize.BinaryOptions{DebugDirs: debugDirs})
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			return 2
		}
		defer b.Close()
		for _, w := range b.Warnings() {
			fmt.Fprintf(stderr, "crashsig: %s: warning: %v\n", path, w)
		}
		mods = append(mods, symbolize.Module{Binary: b})
	}
	// Split-DWARF units whose .dwo the lookups needed but did not find.
	defer func() {
		for i, m := range mods {
			if err := m.Binary.MissingDWO(); err != nil {
				fmt.Fprintf(stderr, "crashsig: %s: warning: %v\n", binaries[i], err)
			}
		}
	}()
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	n := 0
	emit := func(c *symbolize.Crash) error {
		n++
		rec := record{Crash: c}
		if len(mods) > 0 && c.Threads != nil && !isCoreCrash(c) {
			rep, err := symbolize.Frames(ctx, c, mods...)
			if err != nil {
				return err
			}
			rec.Symbolization = &rep
		}
		sig := gen.Generate(c)
		v := cat.Classify(c, sig)
		rec.Signature, rec.Classification = &sig, &v
		if len(c.Threads) > 1 && (c.Kind == symbolize.KindThreadDump || isCoreCrash(c) || slices.Contains(c.Formats, "F7")) {
			rec.Groups = gen.Aggregate(c.Threads)
		}
		if *asJSON {
			return enc.Encode(rec)
		}
		printHuman(stdout, rec)
		return nil
	}
	in := inputs{
		text: func(name string, r io.Reader) error {
			sc := symbolize.NewScanner(r, symbolize.ScanOptions{Source: name})
			for sc.NextContext(ctx) {
				if err := emit(sc.Crash()); err != nil {
					return err
				}
			}
			return sc.Err()
		},
		core: func(name, path string) error {
			c, err := symbolize.OpenCore(ctx, path, symbolize.CoreOptions{Binaries: binaries, DebugDirs: debugDirs})
			if err != nil {
				return err
			}
			defer c.Close()
			cr, err := c.Crash(ctx)
			if err != nil {
				return err
			}
			cr.Source = name
			for _, m := range c.Mismatches {
				fmt.Fprintf(stderr, "crashsig: %s: warning: %v\n", name, m)
			}
			return emit(cr)
		},
	}
	err = in.open(fs.Args(), stdin, stderr)
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

// isCoreCrash reports whether a crash came from a core (already symbolized
// by the core reader).
func isCoreCrash(c *symbolize.Crash) bool { return slices.Contains(c.Formats, "core") }

// printHuman writes the readable summary of one incident, leading with the
// answer.
func printHuman(w io.Writer, r record) {
	c := r.Crash
	if c.EndLine > 0 {
		fmt.Fprintf(w, "%s:%d-%d\n", c.Source, c.StartLine, c.EndLine)
	} else {
		fmt.Fprintf(w, "%s\n", c.Source) // a core file has no lines
	}
	if v := r.Classification; v != nil {
		fmt.Fprintf(w, "  answer: %s\n", v.Advice)
		where := string(v.Path)
		if v.Area != "" {
			where += " (" + v.Area + ")"
		}
		fmt.Fprintf(w, "  path:   %s\n", where)
		if v.Defect != nil {
			fmt.Fprintf(w, "  defect: %s — %s [%s]\n", v.Defect.ID, v.Defect.Title, v.Status)
			if len(v.Defect.Links) > 0 {
				fmt.Fprintf(w, "          %s\n", strings.Join(v.Defect.Links, " "))
			}
		} else {
			fmt.Fprintf(w, "  defect: none known [%s]\n", v.Status)
			for _, s := range v.Similar {
				fmt.Fprintf(w, "          similar: %s %.2f — %s\n", s.ID, s.Score, s.Title)
			}
		}
	}
	if r.Signature != nil {
		fmt.Fprintf(w, "  key:    %s  [%s]\n", r.Signature.Key, r.Signature.ID)
	}
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
	fmt.Fprintf(w, "  crash:  %s\n", strings.Join(head, ", "))
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
	} else if others == 1 {
		fmt.Fprintln(w, "  1 other thread")
	} else if others > 1 {
		fmt.Fprintf(w, "  %d other threads\n", others)
	}
	if len(r.Groups) > 0 {
		fmt.Fprintf(w, "  threads by stack (%d groups):\n", len(r.Groups))
		for i, g := range r.Groups {
			if i == 5 {
				fmt.Fprintf(w, "    … %d more groups\n", len(r.Groups)-i)
				break
			}
			top := "(no frames)"
			if len(g.Frames) > 0 {
				top = g.Frames[0]
			}
			names := strings.Join(g.NamePatterns, ", ")
			if len(g.NamePatterns) > 3 {
				names = strings.Join(g.NamePatterns[:3], ", ") + ", …"
			}
			fmt.Fprintf(w, "    %6d  %s  [%s]\n", g.Count, clip(top, 100), clip(names, 80))
		}
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
