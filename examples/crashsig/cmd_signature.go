package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// signatureFlags are the flags that change signature keys (part of
// pipelineFlags).
type signatureFlags struct {
	rules  string
	frames int
}

func (f *signatureFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.rules, "rules", "", "YAML rule file added to the default frame rules (see signature/rules/default.yaml)")
	fs.IntVar(&f.frames, "frames", signature.DefaultFrames, "significant frames per key, N ≥ 1: frames neither mechanism nor generic (keys differ from the golden ones when changed)")
}

// generator builds the signature generator; its errors are bad flag
// values.
func (f *signatureFlags) generator() (*signature.Generator, error) {
	if f.frames < 1 {
		return nil, fmt.Errorf("--frames %d: want 1 or more", f.frames)
	}
	var opts signature.Options
	opts.Frames = f.frames
	if f.rules != "" {
		fh, err := os.Open(f.rules)
		if err != nil {
			return nil, fmt.Errorf("--rules: %w", err)
		}
		defer fh.Close()
		extra, err := signature.LoadRules(fh)
		if err != nil {
			return nil, fmt.Errorf("--rules: %s: %w", f.rules, err)
		}
		opts.ExtraRules = extra
	}
	return signature.NewGenerator(opts)
}

// eachResult runs the pipeline pf describes over paths and calls fn for
// each Result; it reports input errors like classify and returns the
// run's status.
func eachResult(ctx context.Context, pf *pipelineFlags, paths []string, stdin io.Reader, stderr io.Writer, fn func(r *pipeline.Result)) (*pipeline.Pipeline, runStatus, int) {
	st := runStatus{stderr: stderr}
	var prog pipeline.Progress
	p, code, err := pf.open(ctx, stderr, &prog, paths)
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return nil, st, code
	}
	stop := startProgress(stderr, &prog)
	defer stop()
	for res, err := range p.Run(ctx, stdin, paths...) {
		if err != nil {
			if !st.report(ctx, err) {
				break
			}
			continue
		}
		st.got(res)
		fn(res)
	}
	st.noteBinary(paths)
	return p, st, 0
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
	var pf pipelineFlags
	pf.registerInput(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig explain [--json|--tsv] [--rules FILE] [--frames N] [input flags of classify] PATH...   (files, directories, - for stdin, compressed files, cores)")
		fmt.Fprintln(stderr, exitStatusText)
		fs.PrintDefaults()
	}
	paths, code, ok := parsePaths(fs, args)
	if !ok {
		return code
	}
	out := newOutput(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	n := 0
	p, st, code := eachResult(ctx, &pf, paths, stdin, stderr, func(r *pipeline.Result) {
		n++
		c, s := r.Crash, *r.Signature
		switch {
		case *asTSV:
			fmt.Fprintf(out, "%s\t%d\t%s\t%s\t%s\n", tsvField(c.Source), c.StartLine, s.Algorithm, tsvField(s.Key), s.ID)
		case *asJSON:
			rec := explainRecord{Source: c.Source, StartLine: c.StartLine, EndLine: c.EndLine, Signature: s}
			if c.Kind == symbolize.KindThreadDump {
				rec.Groups = r.ThreadGroups
			}
			enc.Encode(rec)
		default:
			printExplain(out, r)
		}
	})
	if p == nil {
		return code
	}
	defer p.Close()
	st.incidents = n
	if !*asJSON && !*asTSV && n == 0 && !st.failed {
		fmt.Fprintln(out, "no crash found")
	}
	return out.close(stderr, st.code())
}

func tsvField(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
}

func printExplain(w io.Writer, r *pipeline.Result) {
	c, s := r.Crash, r.Signature
	head := c.Source // a core file has no lines
	if c.EndLine > 0 {
		head += ":" + strconv.Itoa(c.StartLine) + "-" + strconv.Itoa(c.EndLine)
	}
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
		groups := r.ThreadGroups
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

// cmdBuckets groups every incident of the inputs into pipeline.Buckets:
// by path (the catalog's scan/query/load/background/lifecycle/unknown),
// signature key and defect.
func cmdBuckets(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("buckets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON Lines, one pipeline.Bucket per bucket (schema: pipeline/result.schema.json, $defs/bucket)")
	threshold := fs.Float64("threshold", 0.8, thresholdUsage)
	all := fs.Bool("all", false, "include thread dumps, terminations and leak reports (not crashes)")
	var pf pipelineFlags
	pf.registerInput(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig buckets [--json] [--threshold F] [--all] [--rules FILE] [--catalog FILE]... [input flags of classify] PATH...")
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
	b := pipeline.NewBucketer()
	n := 0
	p, st, code := eachResult(ctx, &pf, paths, stdin, stderr, func(r *pipeline.Result) {
		switch r.Kind {
		case symbolize.KindThreadDump, symbolize.KindTermination, symbolize.KindLeak:
			if !*all {
				return
			}
		}
		n++
		b.Add(r)
	})
	if p == nil {
		return code
	}
	defer p.Close()
	st.incidents = n
	buckets := b.Buckets(*threshold)
	out := newOutput(stdout)
	if *asJSON {
		enc := pipeline.NewEncoder(out)
		for _, bk := range buckets {
			enc.Encode(bk)
		}
		return out.close(stderr, st.code())
	}
	fmt.Fprintf(out, "%d incidents in %d buckets (%s, catalog %s)\n", n, len(buckets), signature.Algorithm, p.Catalog().Revision())
	for i, bk := range buckets {
		if i == 0 || buckets[i-1].Path != bk.Path {
			fmt.Fprintf(out, "\n== %s\n", bk.Path)
		}
		defect := "no known defect"
		if bk.Defect != nil {
			defect = bk.Defect.ID
		}
		fmt.Fprintf(out, "%5d  %s  %s\n", bk.Count, bk.ID, bk.Key)
		fmt.Fprintf(out, "       %s [%s]", defect, bk.Status)
		if bk.Area != "" {
			fmt.Fprintf(out, "  area %s", bk.Area)
		}
		fmt.Fprintln(out)
		fmt.Fprintf(out, "       first %s  last %s", bk.First, bk.Last)
		if len(bk.Products) > 0 {
			fmt.Fprintf(out, "  %s", strings.Join(bk.Products, ","))
		}
		if len(bk.Versions) > 0 {
			fmt.Fprintf(out, "  versions %s", clip(strings.Join(bk.Versions, ","), 120))
		}
		fmt.Fprintln(out)
		for _, s := range bk.Similar {
			fmt.Fprintf(out, "       probably the same as %s (similarity %.2f)  %s\n", s.ID, s.Score, clip(s.Key, 100))
		}
	}
	return out.close(stderr, st.code())
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

const diffUsage = `usage: crashsig diff OLD NEW
OLD and NEW are two signature TSV files (crashsig explain --tsv PATH..., or
testdata/signature/golden.tsv), or two directories: their *.tsv files of the
same relative name are compared, and a file on one side only is named.
Prints the old and the new key of every incident (file:line) whose key
changed, was added or was removed, then the counts.
Exit status: 0 no difference, 1 the keys differ (or an input could not be
read or is not a signature TSV; stderr says so), 2 usage.`

// cmdDiff compares two signature TSV files (crashsig explain --tsv, or
// testdata/signature/golden.tsv), or two directories of them, incident by
// incident: the old and new key of each changed incident. Exit status 1
// when they differ or an input cannot be read.
func cmdDiff(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, diffUsage) }
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		fs.Usage()
		return exitUsage
	}
	pairs, onlyOld, onlyNew, code, err := diffPairs(pos[0], pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return code
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	var total diffCounts
	for _, pr := range pairs {
		old, oldOrder, err := readSigTSV(pr[0])
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			return exitInput
		}
		cur, curOrder, err := readSigTSV(pr[1])
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			return exitInput
		}
		total.add(diffTSV(w, old, oldOrder, cur, curOrder))
	}
	for _, f := range onlyOld {
		fmt.Fprintf(w, "only in %s: %s\n", pos[0], f)
	}
	for _, f := range onlyNew {
		fmt.Fprintf(w, "only in %s: %s\n", pos[1], f)
	}
	if len(pairs) != 1 || len(onlyOld)+len(onlyNew) > 0 {
		fmt.Fprintf(w, "%d file(s) compared, %d file(s) only in old, %d file(s) only in new\n", len(pairs), len(onlyOld), len(onlyNew))
	}
	fmt.Fprintf(w, "%d unchanged, %d changed, %d only in old, %d only in new\n", total.same, total.changed, total.removed, total.added)
	for _, a := range sortedSet(total.algs) {
		fmt.Fprintf(w, "algorithm %s\n", a)
	}
	if total.changed+total.added+total.removed+len(onlyOld)+len(onlyNew) > 0 {
		return 1
	}
	return 0
}

// diffPairs returns the file pairs to compare for the arguments OLD and
// NEW: the two files, or the *.tsv files of the same relative name under
// two directories, and the relative names found on one side only. A
// missing or unreadable argument is an input error; a file against a
// directory is a usage error.
func diffPairs(oldPath, newPath string) (pairs [][2]string, onlyOld, onlyNew []string, code int, err error) {
	so, err := os.Stat(oldPath)
	if err != nil {
		return nil, nil, nil, exitInput, err
	}
	sn, err := os.Stat(newPath)
	if err != nil {
		return nil, nil, nil, exitInput, err
	}
	switch {
	case !so.IsDir() && !sn.IsDir():
		return [][2]string{{oldPath, newPath}}, nil, nil, 0, nil
	case so.IsDir() != sn.IsDir():
		return nil, nil, nil, exitUsage, fmt.Errorf("diff: %s and %s: want two files or two directories", oldPath, newPath)
	}
	of, err := tsvFiles(oldPath)
	if err != nil {
		return nil, nil, nil, exitInput, err
	}
	nf, err := tsvFiles(newPath)
	if err != nil {
		return nil, nil, nil, exitInput, err
	}
	for _, rel := range of {
		if slices.Contains(nf, rel) {
			pairs = append(pairs, [2]string{filepath.Join(oldPath, rel), filepath.Join(newPath, rel)})
		} else {
			onlyOld = append(onlyOld, rel)
		}
	}
	for _, rel := range nf {
		if !slices.Contains(of, rel) {
			onlyNew = append(onlyNew, rel)
		}
	}
	return pairs, onlyOld, onlyNew, 0, nil
}

// tsvFiles lists the *.tsv files under dir (recursively, hidden entries
// skipped) by their path relative to dir, sorted.
func tsvFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".tsv") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// diffCounts sums what diffTSV found.
type diffCounts struct {
	changed, added, removed, same int
	algs                          map[string]bool
}

func (c *diffCounts) add(o diffCounts) {
	c.changed += o.changed
	c.added += o.added
	c.removed += o.removed
	c.same += o.same
	if c.algs == nil {
		c.algs = map[string]bool{}
	}
	for a := range o.algs {
		c.algs[a] = true
	}
}

// diffTSV prints the incidents of two signature TSVs whose key changed,
// appeared or disappeared, in location order.
func diffTSV(w io.Writer, old map[string]diffRow, oldOrder []string, cur map[string]diffRow, curOrder []string) diffCounts {
	locs := append([]string(nil), oldOrder...)
	for _, l := range curOrder {
		if _, ok := old[l]; !ok {
			locs = append(locs, l)
		}
	}
	sort.Strings(locs)
	c := diffCounts{algs: map[string]bool{}}
	for _, l := range locs {
		o, inOld := old[l]
		n, inNew := cur[l]
		switch {
		case !inNew:
			c.removed++
			fmt.Fprintf(w, "%s\n  - %s\n", l, o.key)
		case !inOld:
			c.added++
			fmt.Fprintf(w, "%s\n  + %s\n", l, n.key)
		case o.key != n.key:
			c.changed++
			fmt.Fprintf(w, "%s\n  - %s\n  + %s\n", l, o.key, n.key)
		default:
			c.same++
		}
		if inOld && inNew && o.alg != n.alg {
			c.algs[o.alg+" → "+n.alg] = true
		}
	}
	return c
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
