package catalog

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// LintOptions configure Lint.
type LintOptions struct {
	// Root is the repository root that defects' test log paths are
	// relative to (os.DirFS of a checkout). Nil skips the test-log checks:
	// outside the repository the logs are not there.
	Root fs.FS
	// Base is the catalog the files are laid over (see Merge); nil lints
	// the files as one catalog on their own.
	Base *Catalog
	// MaxTestLogSize bounds each test log read (0: 64 MiB).
	MaxTestLogSize int64
}

// DefectMatch is one defect that matches a crash.
type DefectMatch struct {
	ID       string   `json:"id"`
	Match    int      `json:"match"`
	Evidence []string `json:"evidence"`
}

// Matches returns every defect that matches the crash (not only the one
// Classify picks), most specific first. Safe for concurrent use.
func (c *Catalog) Matches(crash *symbolize.Crash, sig signature.Signature) []DefectMatch {
	if crash == nil {
		crash = &symbolize.Crash{}
	}
	sv := c.view(crash, Frames(crash), sig)
	groups := threadGroups(crash, sig)
	var out []DefectMatch
	seen := map[int]bool{}
	for a := range c.calts {
		ca := &c.calts[a]
		if seen[ca.defect] {
			continue
		}
		if ev, ok := c.altHolds(int32(a), crash, sig, sv, groups); ok {
			seen[ca.defect] = true
			out = append(out, DefectMatch{ID: c.defects[ca.defect].ID, Match: ca.alt, Evidence: ev})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// LintFiles reads, parses and lints catalog files from disk: see Lint.
func LintFiles(ctx context.Context, paths []string, opts LintOptions) (Errors, []*File) {
	var errs Errors
	var files []*File
	for _, p := range paths {
		fl, err := ReadFiles(ctx, p)
		if err != nil {
			errs = append(errs, asErrors(err)...)
			continue
		}
		files = append(files, fl...)
	}
	errs = append(errs, Lint(ctx, files, opts)...)
	return errs, files
}

// Lint checks parsed catalog files beyond what Parse checks: ids unique
// across the files, one revision, and (with Root) that every defect's test
// logs exist and match the defect. It returns nil when all is well.
func Lint(ctx context.Context, files []*File, opts LintOptions) Errors {
	var errs Errors
	var c *Catalog
	var err error
	if opts.Base != nil {
		// ids unique among the new files themselves; overriding the base is allowed
		if _, err := New(files...); err != nil {
			for _, e := range asErrors(err) {
				if errors.Is(e, ErrDuplicate) {
					errs = append(errs, e)
				}
			}
		}
		c, err = Merge(opts.Base, files...)
	} else {
		c, err = New(files...)
	}
	if err != nil {
		errs = append(errs, asErrors(err)...)
		return errs
	}
	errs = append(errs, taughtByValidation(files)...)
	for _, f := range files {
		for i, r := range f.Rules {
			if r.Priority < 0 || r.Priority > 1000 {
				errs = append(errs, &Error{File: f.Name, Line: r.Line, Field: fmt.Sprintf("paths[%d].priority", i), Msg: "priority outside 0..1000", Err: ErrInvalid})
			}
		}
		for i, d := range f.Defects {
			for k := 1; k < len(d.affected); k++ {
				if cmpRelease(d.affected[k-1].From, d.affected[k].From) > 0 {
					errs = append(errs, &Error{File: f.Name, Line: d.Line, Field: fmt.Sprintf("defects[%d].affected[%d]", i, k), Msg: fmt.Sprintf("ranges out of order: %q after %q (list oldest first)", d.affected[k].Text, d.affected[k-1].Text), Err: ErrInvalid})
				}
			}
			for k := 1; k < len(d.fixed); k++ {
				if cmpRelease(d.fixed[k-1], d.fixed[k]) > 0 {
					errs = append(errs, &Error{File: f.Name, Line: d.Line, Field: fmt.Sprintf("defects[%d].fixed[%d]", i, k), Msg: fmt.Sprintf("fixed versions out of order: %s after %s (list oldest first)", d.fixed[k], d.fixed[k-1]), Err: ErrInvalid})
				}
			}
			if d.Product == "doris" && !strings.HasPrefix(d.ID, "DORIS-") || d.Product == "starrocks" && !strings.HasPrefix(d.ID, "SR-") {
				errs = append(errs, &Error{File: f.Name, Line: d.Line, Field: fmt.Sprintf("defects[%d].id", i), Msg: fmt.Sprintf("id %s does not fit product %s", d.ID, d.Product), Err: ErrInvalid})
			}
		}
	}
	if opts.Root == nil {
		return sortErrors(errs)
	}
	limit := opts.MaxTestLogSize
	if limit <= 0 {
		limit = 64 << 20
	}
	for _, f := range files {
		for i, d := range f.Defects {
			for k, t := range d.Tests {
				if err := ctx.Err(); err != nil {
					return append(errs, &Error{File: f.Name, Msg: err.Error(), Err: err})
				}
				field := fmt.Sprintf("defects[%d].tests[%d]", i, k)
				if msg := checkTestLog(ctx, c, opts.Root, t, d, limit); msg != "" {
					errs = append(errs, &Error{File: f.Name, Line: d.Line, Field: field, Msg: msg, Err: ErrTestLog})
				}
			}
		}
	}
	return sortErrors(errs)
}

// checkTestLog returns "" when a crash of the log matches defect d.
func checkTestLog(ctx context.Context, c *Catalog, root fs.FS, name string, d Defect, limit int64) string {
	fh, err := root.Open(name)
	if err != nil {
		return fmt.Sprintf("test log %s: %v", name, err)
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(fh)
		if err != nil {
			return fmt.Sprintf("test log %s: %v", name, err)
		}
		defer zr.Close()
		r = zr
	}
	crashes, err := symbolize.ParseAll(ctx, io.LimitReader(r, limit), symbolize.ScanOptions{Source: name})
	if err != nil {
		return fmt.Sprintf("test log %s: %v", name, err)
	}
	if len(crashes) == 0 {
		return fmt.Sprintf("test log %s: no incident found in it", name)
	}
	var got []string
	for _, cr := range crashes {
		sig := signature.Generate(cr)
		for _, m := range c.Matches(cr, sig) {
			if m.ID == d.ID {
				return ""
			}
			got = append(got, m.ID)
		}
		if len(got) == 0 {
			got = append(got, "nothing ("+sig.Key+")")
		}
	}
	return fmt.Sprintf("test log %s does not match %s; its %d incident(s) matched %s", name, d.ID, len(crashes), strings.Join(dedupe(got), ", "))
}

func sortErrors(es Errors) Errors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].File != es[j].File {
			return es[i].File < es[j].File
		}
		return es[i].Line < es[j].Line
	})
	if len(es) == 0 {
		return nil
	}
	return es
}

// validationDir holds the logs no rule may be written from.
const validationDir = "testdata/validation/"

// taughtByValidation reports every taught_by entry naming a validation log.
func taughtByValidation(files []*File) Errors {
	var errs Errors
	check := func(f *File, line int, field string, logs []string) {
		for k, l := range logs {
			if strings.HasPrefix(strings.TrimPrefix(l, "./"), validationDir) {
				errs = append(errs, &Error{File: f.Name, Line: line, Field: fmt.Sprintf("%s.taught_by[%d]", field, k), Msg: fmt.Sprintf("%s is a validation log: no rule may be written from it (move it to testdata/corpus and collect a replacement)", l), Err: ErrTaughtByValidation})
			}
		}
	}
	for _, f := range files {
		for i, r := range f.Rules {
			check(f, r.Line, fmt.Sprintf("paths[%d]", i), r.TaughtBy)
		}
		for i, d := range f.Defects {
			check(f, d.Line, fmt.Sprintf("defects[%d]", i), d.TaughtBy)
		}
	}
	return errs
}

// trainingDirs are the log folders LintWarnings classifies.
var trainingDirs = []string{"testdata/corpus", "testdata/defects"}

// LintWarnings returns warnings (ErrOverfit) about path rules and defects
// with taught_by whose only matching logs under testdata/corpus and
// testdata/defects of opts.Root are the logs they were taught by (at most
// one): such a rule names one crash, not a subsystem. Generated and
// hand-written variants (any file under a variants/ folder) are not read:
// they are derived from a taught log, so they are no independent evidence.
// Validation logs are never read. It returns nil without opts.Root.
func LintWarnings(ctx context.Context, files []*File, opts LintOptions) Errors {
	if opts.Root == nil {
		return nil
	}
	var c *Catalog
	var err error
	if opts.Base != nil {
		c, err = Merge(opts.Base, files...)
	} else {
		c, err = New(files...)
	}
	if err != nil {
		return nil // Lint reports it
	}
	type subject struct {
		file, field, kind, id string
		line                  int
		taught                []string
		rule                  int // index in c.rules, or -1
		matched               map[string]bool
	}
	var subs []*subject
	ruleAt := map[string]int{}
	for i := range c.rules {
		ruleAt[c.rules[i].ID] = i
	}
	for _, f := range files {
		for i, r := range f.Rules {
			if len(r.TaughtBy) > 0 {
				subs = append(subs, &subject{f.Name, fmt.Sprintf("paths[%d]", i), "path rule", r.ID, r.Line, r.TaughtBy, ruleAt[r.ID], map[string]bool{}})
			}
		}
		for i, d := range f.Defects {
			if len(d.TaughtBy) > 0 {
				subs = append(subs, &subject{f.Name, fmt.Sprintf("defects[%d]", i), "defect", d.ID, d.Line, d.TaughtBy, -1, map[string]bool{}})
			}
		}
	}
	if len(subs) == 0 {
		return nil
	}
	limit := opts.MaxTestLogSize
	if limit <= 0 {
		limit = 64 << 20
	}
	for _, dir := range trainingDirs {
		_ = fs.WalkDir(opts.Root, dir, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || ctx.Err() != nil {
				return nil
			}
			if isVariant(p) {
				return nil // derived from another log: no second witness
			}
			base := strings.TrimSuffix(p, ".gz")
			if !strings.HasSuffix(base, ".txt") && !strings.HasSuffix(base, ".log") && !strings.HasSuffix(base, ".out") {
				return nil
			}
			crashes := readLog(ctx, opts.Root, p, limit)
			for _, cr := range crashes {
				sig := signature.Generate(cr)
				sv := c.view(cr, Frames(cr), sig)
				qbit := idBits(cr)
				var ids map[string]bool
				for _, s := range subs {
					if s.rule >= 0 {
						if c.ruleHolds(s.rule, sv, qbit).at >= 0 {
							s.matched[p] = true
						}
						continue
					}
					if ids == nil {
						ids = map[string]bool{}
						for _, m := range c.Matches(cr, sig) {
							ids[m.ID] = true
						}
					}
					if ids[s.id] {
						s.matched[p] = true
					}
				}
			}
			return nil
		})
	}
	var out Errors
	for _, s := range subs {
		others := 0
		for p := range s.matched {
			if !slices.Contains(s.taught, p) {
				others++
			}
		}
		if others == 0 && len(s.matched) <= 1 {
			out = append(out, &Error{File: s.file, Line: s.line, Field: s.field + ".taught_by", Msg: fmt.Sprintf("%s %s matches %d log(s) under %s (variants not counted: they derive from the taught log), none but the one it was taught by: make it name the subsystem or defect, not one crash", s.kind, s.id, len(s.matched), strings.Join(trainingDirs, " and ")), Err: ErrOverfit})
		}
	}
	return sortErrors(out)
}

// isVariant reports whether a training log is a variant of another log
// (testdata/defects/<product>/variants/…).
func isVariant(p string) bool {
	return strings.Contains("/"+p, "/variants/")
}

// readLog parses a log of root (gzip-aware); unreadable logs give nothing.
func readLog(ctx context.Context, root fs.FS, name string, limit int64) []*symbolize.Crash {
	fh, err := root.Open(name)
	if err != nil {
		return nil
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(fh)
		if err != nil {
			return nil
		}
		defer zr.Close()
		r = zr
	}
	crashes, _ := symbolize.ParseAll(ctx, io.LimitReader(r, limit), symbolize.ScanOptions{Source: name})
	return crashes
}
