package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// signatureFlags are the flags explain and buckets share.
type signatureFlags struct {
	rules  string
	frames int
}

func (f *signatureFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.rules, "rules", "", "YAML rule file added to the default frame rules (see signature/rules/default.yaml)")
	fs.IntVar(&f.frames, "frames", 0, "frames per key (default "+strconv.Itoa(signature.DefaultFrames)+"; keys differ from the golden ones when changed)")
}

func (f *signatureFlags) generator() (*signature.Generator, error) {
	var opts signature.Options
	opts.Frames = f.frames
	if f.rules != "" {
		fh, err := os.Open(f.rules)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		extra, err := signature.LoadRules(fh)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.rules, err)
		}
		opts.ExtraRules = extra
	}
	return signature.NewGenerator(opts)
}

// eachCrash parses every input and calls fn for each incident.
func eachCrash(ctx context.Context, paths []string, stdin io.Reader, stderr io.Writer, fn func(c *symbolize.Crash) error) error {
	return openInputs(paths, stdin, stderr, func(name string, r io.Reader) error {
		sc := symbolize.NewScanner(r, symbolize.ScanOptions{Source: name})
		for sc.NextContext(ctx) {
			if err := fn(sc.Crash()); err != nil {
				return err
			}
		}
		return sc.Err()
	})
}

// explainRecord is one line of `explain --json`.
type explainRecord struct {
	Source    string `json:"source"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	signature.Signature
	Groups []signature.Group `json:"groups,omitempty"`
}

// cmdExplain prints, for every incident, its signature key and the trace of
// every decision that made it.
func cmdExplain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON Lines, one object per incident")
	asTSV := fs.Bool("tsv", false, "print file, start line, algorithm, key, id as TSV (input of crashsig diff)")
	var sf signatureFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: crashsig explain [--json|--tsv] [--rules FILE] [--frames N] PATH...   (files, directories, - for stdin, .gz ok)")
		return 2
	}
	gen, err := sf.generator()
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	err = eachCrash(ctx, fs.Args(), stdin, stderr, func(c *symbolize.Crash) error {
		n++
		s := gen.Generate(c)
		switch {
		case *asTSV:
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", tsvField(c.Source), c.StartLine, s.Algorithm, tsvField(s.Key), s.ID)
		case *asJSON:
			rec := explainRecord{Source: c.Source, StartLine: c.StartLine, EndLine: c.EndLine, Signature: s}
			if c.Kind == symbolize.KindThreadDump {
				rec.Groups = gen.Aggregate(c.Threads)
			}
			return enc.Encode(rec)
		default:
			printExplain(w, gen, c, s)
		}
		return nil
	})
	if err != nil {
		return 1
	}
	if !*asJSON && !*asTSV && n == 0 {
		fmt.Fprintln(w, "no crash found")
	}
	return 0
}

func tsvField(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
}

func printExplain(w io.Writer, gen *signature.Generator, c *symbolize.Crash, s signature.Signature) {
	head := c.Source + ":" + strconv.Itoa(c.StartLine) + "-" + strconv.Itoa(c.EndLine)
	if c.Product != "" {
		head += "  " + string(c.Product)
		if c.Version != "" {
			head += " " + c.Version
		}
	}
	fmt.Fprintln(w, head)
	fmt.Fprintf(w, "  key:   %s\n", s.Key)
	fmt.Fprintf(w, "  id:    %s  (%s)\n", s.ID, s.Algorithm)
	if s.CrashFrame != "" {
		fmt.Fprintf(w, "  crash frame: %s\n", s.CrashFrame)
	}
	if len(s.Attributes) > 0 {
		fmt.Fprintf(w, "  attributes:  %s\n", strings.Join(s.Attributes, ", "))
	}
	fmt.Fprintln(w, "  trace:")
	for _, l := range s.Trace {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if c.Kind == symbolize.KindThreadDump {
		groups := gen.Aggregate(c.Threads)
		fmt.Fprintf(w, "  thread groups: %d threads in %d groups\n", len(c.Threads), len(groups))
		for i, g := range groups {
			if i == 10 {
				fmt.Fprintf(w, "    … %d more groups\n", len(groups)-i)
				break
			}
			fmt.Fprintf(w, "    %6d × %s\n", g.Count, clip(strings.Join(firstN(g.Frames, 3), " | "), 160))
			if len(g.NamePatterns) > 0 {
				fmt.Fprintf(w, "           names: %s\n", clip(strings.Join(g.NamePatterns, ", "), 160))
			}
		}
	}
	fmt.Fprintln(w)
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// bucketsOutput is the JSON of `buckets --json`: buckets grouped by the
// catalog's path first, then by signature key.
type bucketsOutput struct {
	Algorithm       string        `json:"algorithm"`
	CatalogRevision string        `json:"catalog_revision"`
	Incidents       int           `json:"incidents"`
	Paths           []pathBuckets `json:"paths"`
}

// pathBuckets is one path's buckets and their near duplicates.
type pathBuckets struct {
	Path           catalog.Path              `json:"path"`
	Incidents      int                       `json:"incidents"`
	Buckets        []signature.Bucket        `json:"buckets"`
	NearDuplicates []signature.NearDuplicate `json:"near_duplicates"`
}

// cmdBuckets groups every incident of the inputs by path (the catalog's
// scan/query/load/background/lifecycle/unknown), then by signature key.
func cmdBuckets(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("buckets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	threshold := fs.Float64("threshold", 0.8, "list bucket pairs whose frames score at least this similarity (0 disables)")
	all := fs.Bool("all", false, "include thread dumps, terminations and leak reports (not crashes)")
	var catalogs stringList
	fs.Var(&catalogs, "catalog", "catalog YAML file merged over the embedded default (repeatable)")
	var sf signatureFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: crashsig buckets [--json] [--threshold F] [--all] [--rules FILE] [--catalog FILE]... PATH...")
		return 2
	}
	gen, cat, err := pipeline(ctx, sf, catalogs)
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 2
	}
	byPath := map[catalog.Path]*signature.Bucketer{}
	counts := map[catalog.Path]int{}
	n := 0
	err = eachCrash(ctx, fs.Args(), stdin, stderr, func(c *symbolize.Crash) error {
		switch c.Kind {
		case symbolize.KindThreadDump, symbolize.KindTermination, symbolize.KindLeak:
			if !*all {
				return nil
			}
		}
		n++
		sig := gen.Generate(c)
		path := cat.Classify(c, sig).Path
		b := byPath[path]
		if b == nil {
			b = signature.NewBucketer(gen)
			byPath[path] = b
		}
		b.AddSignature(c, sig)
		counts[path]++
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return 1
	}
	out := bucketsOutput{Algorithm: signature.Algorithm, CatalogRevision: cat.Revision(), Incidents: n}
	for _, path := range catalog.Paths() {
		b := byPath[path]
		if b == nil {
			continue
		}
		pb := pathBuckets{Path: path, Incidents: counts[path], Buckets: b.Buckets()}
		if *threshold > 0 {
			pb.NearDuplicates = signature.NearDuplicates(pb.Buckets, *threshold)
		}
		out.Paths = append(out.Paths, pb)
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if e := enc.Encode(out); e != nil {
			return 1
		}
	} else {
		buckets := 0
		for _, pb := range out.Paths {
			buckets += len(pb.Buckets)
		}
		fmt.Fprintf(w, "%d incidents in %d buckets (%s, catalog %s)\n", n, buckets, signature.Algorithm, cat.Revision())
		for _, pb := range out.Paths {
			fmt.Fprintf(w, "\n== %s: %d incidents in %d buckets\n", pb.Path, pb.Incidents, len(pb.Buckets))
			for _, bk := range pb.Buckets {
				fmt.Fprintf(w, "%5d  %s  %s\n", bk.Count, bk.ID, bk.Key)
				fmt.Fprintf(w, "       first %s  last %s", bk.First, bk.Last)
				if len(bk.Products) > 0 {
					fmt.Fprintf(w, "  %s", strings.Join(bk.Products, ","))
				}
				if len(bk.Versions) > 0 {
					fmt.Fprintf(w, "  versions %s", clip(strings.Join(bk.Versions, ","), 120))
				}
				fmt.Fprintln(w)
			}
			if len(pb.NearDuplicates) > 0 {
				fmt.Fprintf(w, "  probably the same (similarity ≥ %.2f):\n", *threshold)
				for _, d := range pb.NearDuplicates {
					fmt.Fprintf(w, "  %.2f  %s  %s\n        %s  %s\n", d.Score, d.A, d.KeyA, d.B, d.KeyB)
				}
			}
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// diffRow is one line of a signature TSV (explain --tsv, golden.tsv).
type diffRow struct{ alg, key, id string }

func readSigTSV(path string) (map[string]diffRow, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rows := map[string]diffRow{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	ln := 0
	for sc.Scan() {
		ln++
		t := sc.Text()
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		p := strings.Split(t, "\t")
		if len(p) < 5 {
			return nil, nil, fmt.Errorf("%s:%d: want ≥ 5 tab-separated fields (file, line, algorithm, key, id), got %d", path, ln, len(p))
		}
		loc := p[0] + ":" + p[1]
		if _, dup := rows[loc]; !dup {
			order = append(order, loc)
		}
		rows[loc] = diffRow{alg: p[2], key: p[3], id: p[4]}
	}
	return rows, order, sc.Err()
}

// cmdDiff compares two signature TSV files (crashsig explain --tsv, or
// testdata/signature/golden.tsv) incident by incident: the old and new
// key of each changed incident. Exit status 1 when they differ.
func cmdDiff(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "usage: crashsig diff OLD.tsv NEW.tsv   (from crashsig explain --tsv PATH... or testdata/signature/golden.tsv)")
		return 2
	}
	old, oldOrder, err := readSigTSV(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 2
	}
	cur, curOrder, err := readSigTSV(fs.Arg(1))
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 2
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	locs := append([]string(nil), oldOrder...)
	for _, l := range curOrder {
		if _, ok := old[l]; !ok {
			locs = append(locs, l)
		}
	}
	sort.Strings(locs)
	changed, added, removed, same := 0, 0, 0, 0
	algs := map[string]bool{}
	for _, l := range locs {
		o, inOld := old[l]
		n, inNew := cur[l]
		switch {
		case !inNew:
			removed++
			fmt.Fprintf(w, "%s\n  - %s\n", l, o.key)
		case !inOld:
			added++
			fmt.Fprintf(w, "%s\n  + %s\n", l, n.key)
		case o.key != n.key:
			changed++
			fmt.Fprintf(w, "%s\n  - %s\n  + %s\n", l, o.key, n.key)
		default:
			same++
		}
		if inOld && inNew && o.alg != n.alg {
			algs[o.alg+" → "+n.alg] = true
		}
	}
	fmt.Fprintf(w, "%d unchanged, %d changed, %d only in old, %d only in new\n", same, changed, removed, added)
	for _, a := range sortedSet(algs) {
		fmt.Fprintf(w, "algorithm %s\n", a)
	}
	if changed+added+removed > 0 {
		return 1
	}
	return 0
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
