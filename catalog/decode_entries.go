// Decoding of the entries of a catalog file: path rules, defects (with their
// version checks), match alternatives and the stack knowledge section.

package catalog

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

func (d *decoder) rule(n *yaml.Node, field string) PathRule {
	r := PathRule{File: d.file, Line: n.Line}
	var sawPath bool
	d.mapping(n, field, func(key string, k, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case "id":
			r.ID = d.str(v, f)
			if !ruleIDRE.MatchString(r.ID) {
				d.errf(v, f, ErrInvalid, "rule id %q: want lower-case words joined by '-'", r.ID)
			}
		case "path":
			sawPath = true
			r.Path = d.path(v, f)
		case "area":
			r.Area = d.area(v, f)
		case "priority":
			r.Priority = d.int(v, f)
		case "frames":
			r.Frames = d.globs(v, f)
		case "callers":
			r.Callers = d.globs(v, f)
		case "not_callers":
			r.NotCallers = d.globs(v, f)
		case "threads":
			r.Threads = d.globs(v, f)
		case "files":
			r.Files = d.globs(v, f)
		case "modules":
			r.Modules = d.globs(v, f)
		case "types":
			r.Types = d.globs(v, f)
		case "query_id":
			r.QueryID = d.strs(v, f)
			for i, q := range r.QueryID {
				if q != QueryIDPresent && q != QueryIDZero && q != QueryIDAbsent {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "query_id %q: want present, zero or absent", q)
				}
			}
		case "tablet_id":
			r.TabletID = d.strs(v, f)
			for i, q := range r.TabletID {
				if q != QueryIDPresent && q != QueryIDZero && q != QueryIDAbsent {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "tablet_id %q: want present, zero or absent", q)
				}
			}
		case "file_line":
			r.FileLine = d.strs(v, f)
			for i, q := range r.FileLine {
				if q != FileLineHive && q != FileLineLoad {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "file_line %q: want hive or load", q)
				}
			}
		case "task_label":
			r.TaskLabel = d.strs(v, f)
			for i, q := range r.TaskLabel {
				if q != TaskLabelQuery && q != TaskLabelLoad {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "task_label %q: want query or load", q)
				}
			}
		case "freed_by":
			r.FreedBy = d.globs(v, f)
		case "log_context":
			r.LogContext = d.globs(v, f)
		case "sanitizer_bug":
			r.SanitizerBug = d.globs(v, f)
		case "main_thread":
			r.MainThread = d.bool(v, f)
		case "weight":
			r.Weight = d.float(v, f)
			if r.Weight <= 0 || r.Weight > 1 {
				d.errf(v, f, ErrInvalid, "weight %s: want a number in (0, 1]", v.Value)
			}
		case "taught_by":
			r.TaughtBy = d.testPaths(v, f)
		case "names_only":
			r.NamesOnly = d.bool(v, f)
		case "generic":
			r.Generic = d.bool(v, f)
		case "no_query":
			t := d.target(v, f, nil)
			r.NoQuery = &t
		case "on_threads":
			t := &ThreadTarget{}
			t.PathTarget = d.target(v, f, &t.Threads)
			if len(t.Threads) == 0 {
				d.errf(v, f+".threads", ErrMissing, "missing threads")
			}
			r.OnThreads = t
		case "why":
			r.Why = d.str(v, f)
		default:
			d.errf(k, f, ErrUnknownField, "unknown field %q (want id, path, area, priority, frames, callers, not_callers, files, modules, types, threads, query_id, tablet_id, file_line, task_label, freed_by, log_context, sanitizer_bug, main_thread, no_query, on_threads, names_only, generic, weight, taught_by, why)", key)
		}
	})
	if n.Kind != yaml.MappingNode {
		return r
	}
	if r.ID == "" {
		d.errf(n, field+".id", ErrMissing, "missing id")
	}
	if !sawPath {
		d.errf(n, field+".path", ErrMissing, "missing path")
	}
	if r.Area == "" {
		d.errf(n, field+".area", ErrMissing, "missing area")
	}
	frameLevel := len(r.Frames) > 0 || len(r.Files) > 0 || len(r.Modules) > 0 || len(r.Types) > 0
	if !frameLevel && len(r.Threads) == 0 && len(r.QueryID) == 0 && len(r.TabletID) == 0 {
		d.errf(n, field+".frames", ErrMissing, "a path rule needs frames, files, modules or types (or threads, query_id or tablet_id for a weak rule)")
	}
	if !frameLevel && (len(r.Callers) > 0 || len(r.NotCallers) > 0) {
		d.errf(n, field+".callers", ErrInvalid, "callers and not_callers need frames, files, modules or types to be deeper than")
	}
	if r.Why == "" {
		d.errf(n, field+".why", ErrMissing, "missing why: say what the frames mean")
	}
	return r
}

func (d *decoder) defect(n *yaml.Node, field string) Defect {
	df := Defect{File: d.file, Line: n.Line}
	seen := map[string]*yaml.Node{}
	d.mapping(n, field, func(key string, k, v *yaml.Node) {
		f := field + "." + key
		seen[key] = v
		switch key {
		case "id":
			df.ID = d.str(v, f)
			if !idRE.MatchString(df.ID) {
				d.errf(v, f, ErrInvalid, "defect id %q: want <DORIS|SR>-<number>-<slug> (slug: lower-case words joined by '-')", df.ID)
			}
		case "product":
			df.Product = d.str(v, f)
			if df.Product != "doris" && df.Product != "starrocks" {
				d.errf(v, f, ErrInvalid, "product %q: want doris or starrocks", df.Product)
			}
		case "title":
			df.Title = d.str(v, f)
		case "path":
			df.Path = d.path(v, f)
		case "area":
			df.Area = d.area(v, f)
		case "match":
			d.seq(v, f, func(i int, c *yaml.Node) {
				df.Match = append(df.Match, d.match(c, fmt.Sprintf("%s[%d]", f, i)))
			})
		case "affected":
			df.Affected = d.strs(v, f)
			df.affected = parseEach(d, v, f, df.Affected, ParseRange)
		case "fixed":
			df.Fixed = d.strs(v, f)
			df.fixed = parseEach(d, v, f, df.Fixed, func(s string) (Version, error) { return parsePlain(strings.TrimSpace(s)) })
		case "fixed_likely":
			df.FixedLikely = d.strs(v, f)
			df.fixedLikely = parseEach(d, v, f, df.FixedLikely, ParseLikelyFix)
		case "links":
			df.Links = d.strs(v, f)
			for i, s := range df.Links {
				if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "link %q is not an http(s) URL", s)
				}
			}
		case "workaround":
			df.Workaround = d.str(v, f)
		case "confidence":
			df.Confidence = d.str(v, f)
			if df.Confidence != "high" && df.Confidence != "medium" && df.Confidence != "low" {
				d.errf(v, f, ErrInvalid, "confidence %q: want high, medium or low", df.Confidence)
			}
		case "note":
			df.Note = d.str(v, f)
		case "tests":
			df.Tests = d.testPaths(v, f)
		case "taught_by":
			df.TaughtBy = d.testPaths(v, f)
		default:
			d.errf(k, f, ErrUnknownField, "unknown field %q (want id, product, title, path, area, match, affected, fixed, fixed_likely, links, workaround, confidence, note, tests)", key)
		}
	})
	if n.Kind != yaml.MappingNode {
		return df
	}
	for _, req := range []string{"id", "product", "title", "match", "links", "tests"} {
		if seen[req] == nil {
			d.errf(n, field+"."+req, ErrMissing, "missing %s", req)
		}
	}
	if seen["match"] != nil && len(df.Match) == 0 {
		d.errf(seen["match"], field+".match", ErrMissing, "match needs at least one alternative")
	}
	if seen["links"] != nil && len(df.Links) == 0 {
		d.errf(seen["links"], field+".links", ErrMissing, "at least one link is required")
	}
	if seen["tests"] != nil && len(df.Tests) == 0 {
		d.errf(seen["tests"], field+".tests", ErrMissing, "at least one test log is required")
	}
	d.checkVersions(&df, field, seen)
	return df
}

// checkVersions: ranges and fixes must be consistent per branch.
func (d *decoder) checkVersions(df *Defect, field string, seen map[string]*yaml.Node) {
	at := func(key string) *yaml.Node { return seen[key] }
	fixedOn := map[string]Version{}
	for _, fv := range df.fixed {
		if prev, ok := fixedOn[fv.Branch()]; ok {
			d.errf(at("fixed"), field+".fixed", ErrInvalid, "two fixes on branch %s (%s and %s): list only the first fixed version of each branch", fv.Branch(), prev, fv)
		}
		fixedOn[fv.Branch()] = fv
	}
	for _, lf := range df.fixedLikely {
		if prev, ok := fixedOn[lf.Version.Branch()]; ok {
			d.errf(at("fixed_likely"), field+".fixed_likely", ErrInvalid, "branch %s has the fix %s and the likely fix %s: list one (an established fix replaces a likely one)", lf.Version.Branch(), prev, lf.Text)
		}
		fixedOn[lf.Version.Branch()] = lf.Version
	}
	for i, r := range df.affected {
		for j := 0; j < i; j++ {
			if overlaps(df.affected[j], r) {
				d.errf(at("affected"), fmt.Sprintf("%s.affected[%d]", field, i), ErrInvalid, "range %q overlaps %q", r.Text, df.affected[j].Text)
			}
		}
		if r.Kind == RangeSpan {
			if fv, ok := fixedOn[r.From.Branch()]; ok && cmpRelease(fv, r.To) <= 0 {
				d.errf(at("affected"), fmt.Sprintf("%s.affected[%d]", field, i), ErrInvalid, "range %q includes its branch's fix %s", r.Text, fv)
			}
		}
		if r.Kind == RangeBranch {
			if fv, ok := fixedOn[r.From.Branch()]; ok {
				d.errf(at("affected"), fmt.Sprintf("%s.affected[%d]", field, i), ErrInvalid, "range %q is open-ended but branch %s has the fix %s: write \"A - B\" ending before the fix", r.Text, r.From.Branch(), fv)
			}
		}
		if r.Kind == RangeFrom {
			// ">= A" covers A's branch and every later one: a fix on any
			// of them contradicts it (the first such fix is named).
			for _, fv := range fixesInOrder(df) {
				if r.coversBranch(fv) {
					d.errf(at("affected"), fmt.Sprintf("%s.affected[%d]", field, i), ErrInvalid, "range %q is open-ended but branch %s, which it covers, has the fix %s: write \"A - B\" ending before the fix, one range per branch", r.Text, fv.Branch(), fv)
					break
				}
			}
		}
	}
}

// fixesInOrder returns the established and likely fixes of df in file
// order, established first.
func fixesInOrder(df *Defect) []Version {
	out := slices.Clone(df.fixed)
	for _, lf := range df.fixedLikely {
		out = append(out, lf.Version)
	}
	return out
}

func overlaps(a, b Range) bool {
	switch {
	case a.Kind == RangeFrom || b.Kind == RangeFrom:
		f, o := a, b
		if a.Kind != RangeFrom {
			f, o = b, a
		}
		if o.Kind == RangeFrom {
			return true
		}
		end := o.To
		if o.Kind == RangeBranch {
			return o.From.Major > f.From.Major || o.From.Major == f.From.Major && o.From.Minor >= f.From.Minor
		}
		return cmpRelease(end, f.From) >= 0
	case !sameBranch(a.From, b.From):
		return false
	case a.Kind == RangeBranch || b.Kind == RangeBranch:
		return true
	default:
		return cmpRelease(a.From, b.To) <= 0 && cmpRelease(b.From, a.To) <= 0
	}
}

// universalMsg refuses a "*" frame glob in a defect alternative.
const universalMsg = "glob %q matches every frame: it says nothing about the crash, and the frame index never tries it, so the alternative would never match; leave it out"

// frameGlobs decodes the frame globs of a defect alternative (frames,
// callers, near, any_thread): globs, and none of them "*", which the
// frame index leaves to the path rules' conditions.
func (d *decoder) frameGlobs(n *yaml.Node, field string) []string {
	out := d.globs(n, field)
	if n.Kind == yaml.SequenceNode {
		for i, s := range out {
			if g, err := compileGlob(s); err == nil && g.universal && i < len(n.Content) {
				d.errf(n.Content[i], fmt.Sprintf("%s[%d]", field, i), ErrInvalid, universalMsg, s)
			}
		}
	}
	return out
}

func (d *decoder) match(n *yaml.Node, field string) Match {
	m := Match{Line: n.Line}
	d.mapping(n, field, func(key string, k, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case "kind":
			m.Kind = d.str(v, f)
			if _, err := compileGlob(m.Kind); err != nil {
				d.errf(v, f, ErrInvalid, "%v", err)
			}
		case "frames":
			m.Frames = d.frameGlobs(v, f)
		case "callers":
			m.Callers = d.frameGlobs(v, f)
		case "message":
			m.Message = d.str(v, f)
			m.message = d.re2(v, f, m.Message)
		case "check":
			m.Check = d.str(v, f)
			m.check = d.re2(v, f, m.Check)
		case "exception":
			m.Exception = d.str(v, f)
			m.exception = d.re2(v, f, m.Exception)
		case "anchor":
			m.Anchor = d.str(v, f)
			if g, err := compileGlob(m.Anchor); err != nil {
				d.errf(v, f, ErrInvalid, "%v", err)
			} else if g.universal {
				d.errf(v, f, ErrInvalid, universalMsg, m.Anchor)
			}
		case "near":
			m.Near = d.frameGlobs(v, f)
		case "within":
			m.Within = d.int(v, f)
			if m.Within < 1 || m.Within > maxStack {
				d.errf(v, f, ErrInvalid, "within %d: want 1..%d frames", m.Within, maxStack)
			}
		case "any_thread":
			m.AnyThread = d.frameGlobs(v, f)
		case "fault":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "null" {
				m.Fault = FaultNull // `fault: null` reads as YAML null: take the word
			} else {
				m.Fault = d.str(v, f)
			}
			if !validFault(m.Fault) {
				d.errf(v, f, ErrInvalid, "fault %q: want null, not-null or unknown", m.Fault)
			}
		case "attrs":
			m.Attrs = d.globs(v, f)
		case "types":
			m.Types = d.globs(v, f)
		case "key":
			m.Key = d.str(v, f)
		case "threads":
			t := &ThreadMatch{}
			d.mapping(v, f, func(key2 string, k2, v2 *yaml.Node) {
				f2 := f + "." + key2
				switch key2 {
				case "frames":
					t.Frames = d.globs(v2, f2)
				case "name":
					t.Name = d.str(v2, f2)
					if _, err := compileGlob(t.Name); err != nil {
						d.errf(v2, f2, ErrInvalid, "%v", err)
					}
				case "min_count":
					t.MinCount = d.int(v2, f2)
					if t.MinCount < 0 {
						d.errf(v2, f2, ErrInvalid, "min_count must not be negative")
					}
				default:
					d.errf(k2, f2, ErrUnknownField, "unknown field %q (want frames, name, min_count)", key2)
				}
			})
			if v.Kind == yaml.MappingNode && len(t.Frames) == 0 {
				d.errf(v, f+".frames", ErrMissing, "threads needs frames (a thread name alone decides nothing)")
			}
			m.Threads = t
		default:
			d.errf(k, f, ErrUnknownField, "unknown field %q (want kind, frames, anchor, near, within, callers, any_thread, message, check, exception, fault, attrs, types, key, threads)", key)
		}
	})
	if n.Kind != yaml.MappingNode {
		return m
	}
	strong := len(m.Frames) > 0 || m.Anchor != "" || m.Key != "" || m.Threads != nil || m.Message != "" || m.Check != "" || m.Exception != ""
	if !strong && m.Kind == "" && len(m.Callers) == 0 && len(m.Near) == 0 && len(m.AnyThread) == 0 && m.Fault == "" && len(m.Attrs) == 0 {
		d.errf(n, field, ErrMissing, "an alternative needs at least one of kind, frames, anchor, message, check, exception, key, threads")
	} else if !strong {
		d.errf(n, field, ErrInvalid, "kind, callers, near, any_thread, fault and attrs alone would match far too much: add frames, anchor, message, check, exception, key or threads")
	}
	if m.Fault == FaultNull && m.Kind != "" {
		if g, err := compileGlob(m.Kind); err == nil && !g.match("SIGSEGV") {
			d.errf(n, field+".fault", ErrInvalid, "fault null needs a SIGSEGV (the fault=null attribute is only set on one): kind %q can never have it", m.Kind)
		}
	}
	if len(m.Near) > 0 && len(m.Frames) == 0 && m.Anchor == "" {
		d.errf(n, field+".near", ErrInvalid, "near needs an anchor (or frames) to be near")
	}
	if m.Within != 0 && len(m.Near) == 0 {
		d.errf(n, field+".within", ErrInvalid, "within is the reach of near: give near")
	}
	if len(m.Types) > 0 && len(m.Frames) == 0 && m.Anchor == "" {
		d.errf(n, field+".types", ErrInvalid, "types are read from the anchor frame's raw name: give an anchor (or frames)")
	}
	return m
}

// stack decodes the `stack:` section (StackKnowledge).
func (d *decoder) stack(n *yaml.Node, field string) StackKnowledge {
	var k StackKnowledge
	text := func(v *yaml.Node, f string) []string {
		out := d.strs(v, f)
		for i, x := range out {
			if strings.TrimSpace(x) == "" || strings.ContainsFunc(x, func(r rune) bool { return r < ' ' || r == 0x7f }) {
				d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "%q: want a non-empty name without control bytes", x)
			}
		}
		return out
	}
	d.mapping(n, field, func(key string, kn, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case "mechanism_marks":
			k.MechanismMarks = text(v, f)
		case "mechanism_names":
			k.MechanismNames = text(v, f)
		case "toolchain_paths":
			k.ToolchainPaths = text(v, f)
		case "idle_waits", "idle_frames":
			globs := text(v, f)
			for i, g := range globs {
				if _, err := compileGlob(g); err != nil && g != "" {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "%v", err)
				}
			}
			if key == "idle_waits" {
				k.IdleWaits = globs
			} else {
				k.IdleFrames = globs
			}
		case "product_namespaces":
			k.ProductNamespaces = d.strs(v, f)
			for i, ns := range k.ProductNamespaces {
				if !identRE.MatchString(ns) {
					d.errf(v.Content[i], fmt.Sprintf("%s[%d]", f, i), ErrInvalid, "namespace %q: want a C++ identifier (doris, starrocks)", ns)
				}
			}
		default:
			d.errf(kn, f, ErrUnknownField, "unknown field %q (want mechanism_marks, mechanism_names, product_namespaces, toolchain_paths, idle_waits, idle_frames)", key)
		}
	})
	return k
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// parseEach parses every string of a list field (read from the sequence
// node v, named field) with parse; an item that does not parse is reported
// at its own line and left out.
func parseEach[T any](d *decoder, v *yaml.Node, field string, items []string, parse func(string) (T, error)) []T {
	var out []T
	for i, s := range items {
		x, err := parse(s)
		if err != nil {
			d.errf(v.Content[i], fmt.Sprintf("%s[%d]", field, i), ErrInvalid, "%v", err)
			continue
		}
		out = append(out, x)
	}
	return out
}

// target decodes the mapping of a rule's no_query or on_threads: path and
// area, and the thread globs into threads when threads is not nil.
func (d *decoder) target(v *yaml.Node, f string, threads *[]string) PathTarget {
	var t PathTarget
	want := "path, area"
	if threads != nil {
		want = "threads, path, area"
	}
	d.mapping(v, f, func(key2 string, k2, v2 *yaml.Node) {
		switch {
		case key2 == "path":
			t.Path = d.path(v2, f+".path")
		case key2 == "area":
			t.Area = d.area(v2, f+".area")
		case key2 == "threads" && threads != nil:
			*threads = d.globs(v2, f+".threads")
		default:
			d.errf(k2, f+"."+key2, ErrUnknownField, "unknown field %q (want %s)", key2, want)
		}
	})
	if t.Path == "" {
		d.errf(v, f+".path", ErrMissing, "missing path")
	}
	return t
}
