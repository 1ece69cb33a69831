package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/signature"
)

// loadCatalog returns the embedded default catalog with the given user
// files merged over it (same id overrides; the override is noted in every
// verdict that uses it). classify uses it for its --catalog flags.
func loadCatalog(ctx context.Context, files []string) (*catalog.Catalog, error) {
	base, err := catalog.Default()
	if err != nil {
		return nil, fmt.Errorf("embedded catalog: %w", err)
	}
	if len(files) == 0 {
		return base, nil
	}
	parsed, err := catalog.ReadFiles(ctx, files...)
	if err != nil {
		return nil, err
	}
	return catalog.Merge(base, parsed...)
}

// cmdCatalog implements `crashsig catalog lint FILE...` and
// `crashsig catalog show [--catalog FILE]...`.
func cmdCatalog(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		catalogUsage(stderr)
		return 2
	}
	switch args[0] {
	case "lint":
		return catalogLint(ctx, args[1:], stdout, stderr)
	case "show":
		return catalogShow(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		catalogUsage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "crashsig catalog: unknown subcommand %q\n", args[0])
	catalogUsage(stderr)
	return 2
}

func catalogUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: crashsig catalog lint [--over-default] [--root DIR | --no-tests] [-v] [FILE...]")
	fmt.Fprintln(w, "       crashsig catalog show [--catalog FILE]... [--paths] [--json]")
	fmt.Fprintln(w, "lint with no FILE lints the embedded default catalog; inside the crashsig repository")
	fmt.Fprintln(w, "(or with --root) it also checks that every defect's test logs exist and match it;")
	fmt.Fprintln(w, "-v lists every defect matched only by the log it was written from (default: a count).")
	fmt.Fprintln(w, "Exit status: 0 no problem (lint) or the catalog shown, 1 a problem or a file that")
	fmt.Fprintln(w, "failed to load, 2 usage. `crashsig catalog lint -h` lists lint's flags.")
}

func catalogLint(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("catalog lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "repository root the defects' test log paths are relative to (default: found from the current directory)")
	noTests := fs.Bool("no-tests", false, "do not check the defects' test logs")
	overDefault := fs.Bool("over-default", false, "lint the files as a user catalog laid over the embedded default (ids may override)")
	verbose := fs.Bool("v", false, "list every defect matched only by the log it was written from (default: one count line)")
	fs.Usage = func() {
		catalogUsage(stderr)
		fs.PrintDefaults()
	}
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	opts := catalog.LintOptions{}
	if !*noTests {
		dir := *root
		if dir == "" {
			dir = findRepoRoot()
		}
		if dir != "" {
			opts.Root = os.DirFS(dir)
		}
	}
	var errs catalog.Errors
	var files []*catalog.File
	var failed []string // files that could not be loaded
	if *overDefault {
		base, err := catalog.Default()
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: embedded catalog: %v\n", err)
			return 1
		}
		opts.Base = base
	}
	if len(pos) == 0 {
		def, err := catalog.DefaultFiles()
		if err != nil {
			errs = append(errs, asCatalogErrors(err)...)
		}
		files = def
		errs = append(errs, catalog.Lint(ctx, files, opts)...)
	} else {
		// catalog.LintFiles, keeping which files failed to load.
		for _, p := range pos {
			fl, err := catalog.ReadFiles(ctx, p)
			if err != nil {
				errs = append(errs, asCatalogErrors(err)...)
				failed = append(failed, p)
				continue
			}
			files = append(files, fl...)
		}
		errs = append(errs, catalog.Lint(ctx, files, opts)...)
	}
	for _, e := range errs {
		fmt.Fprintln(stdout, e)
	}
	// defects matched only by their own log are often single reports:
	// counted in one line unless -v
	lone := 0
	for _, w := range catalog.LintWarnings(ctx, files, opts) { // rules that only their own log matches
		if !*verbose && strings.HasPrefix(w.Field, "defects[") {
			lone++
			continue
		}
		fmt.Fprintln(stdout, "warning:", w)
	}
	if lone > 0 {
		fmt.Fprintf(stdout, "warning: %d defect(s) are matched only by the log they were written from (variants not counted; use -v to list)\n", lone)
	}
	rules, defects, rev := 0, 0, map[string]bool{}
	for _, f := range files {
		rules += len(f.Rules)
		defects += len(f.Defects)
		rev[f.Revision] = true
	}
	revs := make([]string, 0, len(rev))
	for r := range rev {
		revs = append(revs, r)
	}
	tests := "test logs checked"
	if opts.Root == nil {
		tests = "test logs NOT checked (not inside the repository; use --root)"
	}
	status := "ok"
	if len(errs) > 0 {
		status = fmt.Sprintf("%d problem(s)", len(errs))
	}
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "%d of %d file(s) failed to load: %s: %d problem(s)\n", len(failed), len(pos), strings.Join(failed, ", "), len(errs))
	}
	if len(files) > 0 || len(failed) == 0 {
		fmt.Fprintf(stdout, "catalog revision %s, signature algorithm %s: %d file(s), %d path rule(s), %d defect(s), %s: %s\n",
			strings.Join(sortedStrings(revs), "+"), signature.Algorithm, len(files), rules, defects, tests, status)
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}

func asCatalogErrors(err error) catalog.Errors {
	if es, ok := err.(catalog.Errors); ok {
		return es
	}
	return catalog.Errors{{Msg: err.Error(), Err: err}}
}

func sortedStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// findRepoRoot walks up from the current directory to the crashsig module
// root (go.mod naming github.com/crashsig/crashsig); "" when not inside it.
func findRepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for i := 0; i < 64; i++ {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			ok := sc.Scan() && strings.TrimSpace(sc.Text()) == "module github.com/crashsig/crashsig"
			f.Close()
			if ok {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// showRecord is one line of `catalog show --json`.
type showRecord struct {
	CatalogRevision    string            `json:"catalog_revision"`
	SignatureAlgorithm string            `json:"signature_algorithm"`
	Defect             *catalog.Defect   `json:"defect,omitempty"`
	Rule               *catalog.PathRule `json:"path_rule,omitempty"`
}

func catalogShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("catalog show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files stringList
	fs.Var(&files, "catalog", "catalog `FILE` merged over the embedded default (repeatable)")
	paths := fs.Bool("paths", false, "list the path rules instead of the defects")
	asJSON := fs.Bool("json", false, "print JSON Lines")
	fs.Usage = func() {
		catalogUsage(stderr)
		fs.PrintDefaults()
	}
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "crashsig: catalog show: unexpected argument %q (use --catalog FILE)\n", pos[0])
		return exitUsage
	}
	c, err := loadCatalog(ctx, files)
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if *paths {
			for _, r := range c.Rules() {
				r := r
				if err := enc.Encode(showRecord{c.Revision(), signature.Algorithm, nil, &r}); err != nil {
					return 1
				}
			}
			return 0
		}
		for _, d := range c.Defects() {
			d := d
			if err := enc.Encode(showRecord{c.Revision(), signature.Algorithm, &d, nil}); err != nil {
				return 1
			}
		}
		return 0
	}
	fmt.Fprintf(stdout, "catalog revision %s, signature algorithm %s\n", c.Revision(), signature.Algorithm)
	for _, s := range c.Sources() {
		fmt.Fprintf(stdout, "  %s: revision %s, %d path rule(s), %d defect(s)\n", s.File, s.Revision, s.Rules, s.Defects)
	}
	for _, n := range c.Notes() {
		fmt.Fprintf(stdout, "  note: %s\n", n)
	}
	fmt.Fprintln(stdout)
	if *paths {
		for _, r := range c.Rules() {
			fmt.Fprintf(stdout, "%-28s %-10s %-16s prio %3d  %s\n", r.ID, r.Path, r.Area, r.Priority, clip(r.Why, 100))
		}
		return 0
	}
	for _, d := range c.Defects() {
		where := string(d.Path)
		if d.Area != "" {
			where += "/" + d.Area
		}
		fixed := fixText(d.Fixed, d.FixedLikely)
		affected := "affected: not established"
		if len(d.Affected) > 0 {
			affected = "affected " + strings.Join(d.Affected, ", ")
		}
		fmt.Fprintf(stdout, "%s  [%s] %s\n    %s; %s; %s; confidence %s\n    %s\n", d.ID, d.Product, clip(d.Title, 120), where, affected, fixed, orDash(d.Confidence), firstLink(d.Links))
	}
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLink(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return l[0]
}

// fixText says which versions fix a defect: the established fixes, then the
// likely ones ("likely fixed in 2.1.5 (the fix reached branch-2.1 on
// 2024-06-21)", "likely fixed in 4.0.0 (the fix reached master on
// 2025-02-13, before branch-4.0 was cut)"), or "no fix known" when there is
// neither.
func fixText(fixed, likely []string) string {
	var parts []string
	if len(fixed) > 0 {
		parts = append(parts, "fixed "+strings.Join(fixed, ", "))
	}
	for _, l := range likely {
		lf, err := catalog.ParseLikelyFix(l)
		if err != nil { // a loaded catalog's entries parse; keep the text if not
			parts = append(parts, "likely fixed "+l)
			continue
		}
		parts = append(parts, fmt.Sprintf("likely fixed in %s (%s)", lf.Version, lf.Said()))
	}
	if len(parts) == 0 {
		return "no fix known"
	}
	return strings.Join(parts, "; ")
}
