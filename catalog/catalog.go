package catalog

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/*.yaml
var defaultData embed.FS

// Catalog is a compiled, immutable set of path rules and known defects.
// All methods are safe for concurrent use.
type Catalog struct {
	revision string
	sources  []Source
	rules    []PathRule
	defects  []Defect
	notes    []string

	ix *globIndex
	// compiled rules and alternatives, parallel to rules / defects
	crules   []compiledRule
	weak     []int // rules with threads and no frame-level evidence
	idRules  []int // rules with only query_id evidence
	calts    []compiledAlt
	owners   [][]owner // per glob id: rules and alternatives that use it
	byKey    map[string][]int32
	loose    []int32 // alternatives found neither by glob nor key (message/kind only)
	threaded []int32 // alternatives with thread-dump evidence
	use      []uint8 // per glob id: the evidence sources it is used in
	// universal are rules with a "*" frame glob, evaluated directly (their
	// glob would hit every frame); universalGlob is that glob per rule.
	universal     []int
	universalGlob map[int]int32
	views         sync.Pool
	// stack is the union of the files' `stack:` sections (evidence.go).
	stack *stackTable
}

type compiledRule struct {
	frames, callers, notCallers []int32
	files, modules, types       []int32
	threads                     []glob
	onThreads                   []glob     // PathRule.OnThreads' globs
	siteFiles                   []siteGlob // the files globs' last segments, for a basename crash site (site.go)
	queryID                     uint16     // bit set of queryIDBit; 0 = any
	tabletID                    uint16     // bit set of tabletIDBit; 0 = any
	fileLine                    uint16     // bit set of fileLineBit; 0 = any
	taskLabel                   uint16     // bit set of taskLabelBit; 0 = any
	freedBy, logContext, sanBug []glob     // context globs (context.go); nil = any
	weight                      float64
	namesOnly                   bool   // frames globs only on the frame's own name
	mainThread                  bool   // holds only on the process's main thread (context.go)
	at                          string // where(r.File, r.Line), for the evidence line
	// whyLine is the evidence line after the rule's: "why <id>: <why>",
	// built once (the reasons are long, and copying one into every
	// verdict's evidence line was a tenth of a classification).
	whyLine string
}

type compiledAlt struct {
	defect  int
	alt     int
	kind    *glob
	frames  []int32
	callers []int32
	threads *compiledThreads
	// anchor is the anchor glob (-1: none); near its near globs, within
	// their reach; anyThread globs looked for in every thread.
	anchor    int32
	near      []int32
	within    int
	anyThread []int32
	// specificity ranks several matching defects: more evidence wins.
	specificity int
}

type compiledThreads struct {
	frames   []int32
	name     *glob
	minCount int
}

// owner says which rule (kind 0) or alternative (1 = one of its frames,
// 2 = one of its callers) uses a glob.
type owner struct {
	kind uint8
	idx  int32
}

// DefaultFiles parses the catalog embedded in this package
// (catalog/data/*.yaml).
func DefaultFiles() ([]*File, error) {
	names, err := fs.Glob(defaultData, "data/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var files []*File
	var errs Errors
	for _, n := range names {
		b, err := defaultData.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := Parse("catalog/"+n, b)
		if err != nil {
			errs = append(errs, asErrors(err)...)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return files, nil
}

// Default returns the catalog embedded in this package. It is what the CLI
// uses when no --catalog is given.
func Default() (*Catalog, error) {
	files, err := DefaultFiles()
	if err != nil {
		return nil, err
	}
	return New(files...)
}

// Read parses one catalog file from r, reading at most MaxFileSize bytes.
func Read(name string, r io.Reader) (*File, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, Errors{{File: name, Msg: err.Error(), Err: err}}
	}
	return Parse(name, b)
}

// ReadFiles parses catalog files from disk.
func ReadFiles(ctx context.Context, paths ...string) ([]*File, error) {
	var files []*File
	var errs Errors
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fh, err := os.Open(p)
		if err != nil {
			// The Error names the file: the message is the failure alone
			// ("open: no such file or directory"), not the path again.
			msg := err.Error()
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == p {
				msg = pe.Op + ": " + pe.Err.Error()
			}
			errs = append(errs, &Error{File: p, Msg: msg, Err: err})
			continue
		}
		f, err := Read(p, fh)
		fh.Close()
		if err != nil {
			errs = append(errs, asErrors(err)...)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return files, nil
}

func asErrors(err error) Errors {
	if es, ok := err.(Errors); ok {
		return es
	}
	return Errors{{Msg: err.Error(), Err: err}}
}

// New compiles files into one catalog. Files are parts of one catalog: an
// id defined twice is an error, and all files must carry the same revision.
// Use Merge to lay a user's files over another catalog.
func New(files ...*File) (*Catalog, error) {
	var errs Errors
	revision := ""
	ruleAt := map[string]PathRule{}
	defectAt := map[string]Defect{}
	var rules []PathRule
	var defects []Defect
	var sources []Source
	for _, f := range files {
		if f == nil {
			continue
		}
		sources = append(sources, Source{File: f.Name, Schema: f.Schema, Revision: f.Revision, Rules: len(f.Rules), Defects: len(f.Defects)})
		if revision == "" {
			revision = f.Revision
		} else if f.Revision != revision {
			errs = append(errs, &Error{File: f.Name, Field: "revision", Msg: fmt.Sprintf("revision %q differs from %q of the other files of this catalog", f.Revision, revision), Err: ErrInvalid})
		}
		for _, r := range f.Rules {
			if prev, ok := ruleAt[r.ID]; ok {
				errs = append(errs, &Error{File: r.File, Line: r.Line, Field: "id", Msg: fmt.Sprintf("path rule id %q also defined at %s:%d", r.ID, prev.File, prev.Line), Err: ErrDuplicate})
				continue
			}
			ruleAt[r.ID] = r
			rules = append(rules, r.clone())
		}
		for _, d := range f.Defects {
			if prev, ok := defectAt[d.ID]; ok {
				errs = append(errs, &Error{File: d.File, Line: d.Line, Field: "id", Msg: fmt.Sprintf("defect id %q also defined at %s:%d", d.ID, prev.File, prev.Line), Err: ErrDuplicate})
				continue
			}
			defectAt[d.ID] = d
			defects = append(defects, d.clone())
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c := compile(revision, sources, rules, defects, nil)
	c.stack = newStackTable(stackOf(files)...)
	return c, nil
}

// Merge returns a new catalog: base with the rules and defects of files
// laid over it. A rule or defect whose id is already in base replaces it,
// and the replacement is recorded in Notes (and in every Verdict that uses
// it). The merged revision is base's revision and each file's, joined by "+".
func Merge(base *Catalog, files ...*File) (*Catalog, error) {
	if base == nil {
		return New(files...)
	}
	rules := append([]PathRule(nil), base.rules...)
	defects := append([]Defect(nil), base.defects...)
	sources := append([]Source(nil), base.sources...)
	notes := append([]string(nil), base.notes...)
	revs := []string{base.revision}
	for _, f := range files {
		if f == nil {
			continue
		}
		sources = append(sources, Source{File: f.Name, Schema: f.Schema, Revision: f.Revision, Rules: len(f.Rules), Defects: len(f.Defects)})
		revs = append(revs, f.Revision)
		rules = overlay(rules, cloneRules(f.Rules), func(r *PathRule) (string, string) { return r.ID, where(r.File, r.Line) }, "path rule", &notes)
		defects = overlay(defects, cloneDefects(f.Defects), func(d *Defect) (string, string) { return d.ID, where(d.File, d.Line) }, "defect", &notes)
	}
	c := compile(strings.Join(dedupe(revs), "+"), sources, rules, defects, notes)
	c.stack = newStackTable(append([]StackKnowledge{base.stack.know}, stackOf(files)...)...)
	return c, nil
}

// overlay lays add over base: an item whose id is already in base replaces
// it in place (noted), others are appended in order.
func overlay[T any](base, add []T, key func(*T) (id, at string), kind string, notes *[]string) []T {
	pos := make(map[string]int, len(base))
	for i := range base {
		id, _ := key(&base[i])
		pos[id] = i
	}
	for i := range add {
		id, at := key(&add[i])
		if j, ok := pos[id]; ok {
			_, was := key(&base[j])
			*notes = append(*notes, fmt.Sprintf("%s %s from %s overrides the one from %s", kind, id, at, was))
			base[j] = add[i]
			continue
		}
		pos[id] = len(base)
		base = append(base, add[i])
	}
	return base
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// compile interns every glob, builds the index and the owner lists.
func compile(revision string, sources []Source, rules []PathRule, defects []Defect, notes []string) *Catalog {
	c := &Catalog{revision: revision, sources: sources, rules: rules, defects: defects, notes: notes, byKey: map[string][]int32{}, stack: newStackTable()}
	var globs []glob
	ids := map[string]int32{}
	intern := func(s string) int32 {
		if id, ok := ids[s]; ok {
			return id
		}
		g, err := compileGlob(s)
		if err != nil { // Parse rejected it already; a hand-built File may not have
			g = glob{text: s, segs: []string{"\x00never\x00"}, literal: "\x00never\x00"}
		}
		id := int32(len(globs))
		globs = append(globs, g)
		ids[s] = id
		c.owners = append(c.owners, nil)
		return id
	}
	internAll := func(ss []string) []int32 {
		out := make([]int32, len(ss))
		for i, s := range ss {
			out[i] = intern(s)
		}
		return out
	}
	for i := range rules {
		c.crules = append(c.crules, c.compileRule(i, &rules[i], internAll))
	}
	for di := range defects {
		d := &defects[di]
		d.Match = append([]Match(nil), d.Match...) // compile writes into it; never into a caller's or base's slice
		if d.affected == nil && len(d.Affected) > 0 || d.fixed == nil && len(d.Fixed) > 0 || d.fixedLikely == nil && len(d.FixedLikely) > 0 {
			reparseVersions(d)
		}
		for ai := range d.Match {
			m := &d.Match[ai]
			if m.message == nil && m.Message != "" {
				m.message = compileRegexpLoose(m.Message)
			}
			ca := compiledAlt{defect: di, alt: ai, frames: internAll(m.Frames), callers: internAll(m.Callers)}
			if m.Kind != "" {
				if g, err := compileGlob(m.Kind); err == nil {
					ca.kind = &g
				}
			}
			if m.Threads != nil {
				ct := &compiledThreads{frames: internAll(m.Threads.Frames), minCount: m.Threads.MinCount}
				if m.Threads.Name != "" {
					if g, err := compileGlob(m.Threads.Name); err == nil {
						ct.name = &g
					}
				}
				ca.threads = ct
			}
			ca.specificity = 2*len(m.Frames) + len(m.Callers)
			if m.Key != "" {
				ca.specificity += 20
			}
			if m.Message != "" {
				ca.specificity += 2
			}
			if m.Kind != "" {
				ca.specificity++
			}
			compileMatchContext(&ca, m, intern, internAll)
			idx := int32(len(c.calts))
			c.calts = append(c.calts, ca)
			for _, id := range ca.frames {
				c.owners[id] = appendOwner(c.owners[id], owner{1, idx})
			}
			for _, id := range ca.callers {
				c.owners[id] = appendOwner(c.owners[id], owner{2, idx})
			}
			c.registerContextOwners(&ca, idx)
			switch {
			case ca.threads != nil:
				c.threaded = append(c.threaded, idx)
			case len(ca.frames) > 0 || ca.anchor >= 0:
			case m.Key != "":
				c.byKey[m.Key] = append(c.byKey[m.Key], idx)
			default:
				c.loose = append(c.loose, idx)
			}
		}
	}
	c.ix = buildGlobIndex(globs)
	c.computeUse()
	return c
}

func appendOwner(os []owner, o owner) []owner {
	for _, x := range os {
		if x == o {
			return os
		}
	}
	return append(os, o)
}

// reparseVersions fills the parsed ranges of a Defect built by hand
// (rather than by Parse); bad entries are ignored here and reported by Lint.
func reparseVersions(d *Defect) {
	d.affected, d.fixed, d.fixedLikely = nil, nil, nil
	for _, s := range d.Affected {
		if r, err := ParseRange(s); err == nil {
			d.affected = append(d.affected, r)
		}
	}
	for _, s := range d.Fixed {
		if v, err := parsePlain(strings.TrimSpace(s)); err == nil {
			d.fixed = append(d.fixed, v)
		}
	}
	for _, s := range d.FixedLikely {
		if lf, err := ParseLikelyFix(s); err == nil {
			d.fixedLikely = append(d.fixedLikely, lf)
		}
	}
}

// Revision returns the catalog revision ("2026.11.29", or joined with "+"
// after a Merge).
func (c *Catalog) Revision() string { return c.revision }

// Sources lists the files the catalog was built from, in order.
func (c *Catalog) Sources() []Source { return append([]Source(nil), c.sources...) }

// Rules returns a copy of the path rules.
func (c *Catalog) Rules() []PathRule { return cloneRules(c.rules) }

// Defects returns a copy of the defects, in catalog order.
func (c *Catalog) Defects() []Defect { return cloneDefects(c.defects) }

// Notes returns the overrides recorded by Merge.
func (c *Catalog) Notes() []string { return append([]string(nil), c.notes...) }

// Defect returns the defect with the given id.
func (c *Catalog) Defect(id string) (Defect, bool) {
	for _, d := range c.defects {
		if d.ID == id {
			return d.clone(), true
		}
	}
	return Defect{}, false
}

// where formats file:line of a rule or defect.
func where(file string, line int) string {
	if file == "" {
		return "(built in code)"
	}
	return path.Clean(file) + ":" + strconv.Itoa(line)
}
