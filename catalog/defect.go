package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// This file is the defect decision: which alternatives of which defects
// hold for a crash (candidates from the glob automaton's hits, the exact
// keys, the loose and thread-dump alternatives), and the most specific one
// wins. The context clauses (anchor, near, callers, any_thread, check,
// exception) are in defectmatch.go, thread groups in threads.go, near misses
// in similar.go; the status of the winner is decided in status.go.

// DefectWindow is how many meaningful frames (from the signature's first
// frame on) a defect's frames must fall within.
const DefectWindow = 10

// altMatch is one matching alternative with what it matched.
type altMatch struct {
	alt      int32
	evidence []string
}

func (c *Catalog) decideDefect(v *Verdict, crash *symbolize.Crash, sig signature.Signature, sv *stackView, groups []signature.Group) {
	order := c.altCandidates(sv, 1)
	order = append(order, c.byKey[sig.Key]...)
	order = append(order, c.loose...)
	if len(groups) > 0 {
		order = append(order, c.threaded...)
	}
	order = sortedUnique(order)
	var matched []altMatch
	for _, a := range order {
		if ev, ok := c.altHolds(a, crash, sig, sv, groups); ok {
			matched = append(matched, altMatch{a, ev})
		}
	}
	if len(matched) == 0 {
		v.Status = StatusNoKnownDefect
		v.Similar = c.similar(sv, sig.Frames)
		if len(v.Similar) > 0 {
			v.Advice = fmt.Sprintf("new: no known defect matches; closest is %s at %.2f", v.Similar[0].ID, v.Similar[0].Score)
		} else {
			v.Advice = "new: no known defect matches and none shares a frame with this crash"
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("defect: none of the catalog's %d defects matches (%d alternatives tried)", len(c.defects), len(order)))
		return
	}
	// Most specific alternative wins; ties by defect id.
	sort.SliceStable(matched, func(i, j int) bool {
		a, b := &c.calts[matched[i].alt], &c.calts[matched[j].alt]
		if a.specificity != b.specificity {
			return a.specificity > b.specificity
		}
		return c.defects[a.defect].ID < c.defects[b.defect].ID
	})
	win := matched[0]
	ca := &c.calts[win.alt]
	d := &c.defects[ca.defect]
	v.Defect = &DefectRef{ID: d.ID, Title: d.Title, Links: slices.Clone(d.Links), Affected: slices.Clone(d.Affected), Fixed: slices.Clone(d.Fixed),
		FixedLikely: slices.Clone(d.FixedLikely), Workaround: d.Workaround, Confidence: d.Confidence, Match: ca.alt} // the verdict's own: a caller may write into it
	v.Evidence = append(v.Evidence, fmt.Sprintf("defect %s (%s) alternative %d: %s", d.ID, where(d.File, d.Line), ca.alt, strings.Join(win.evidence, "; ")))
	var also, twins []string
	for _, m := range matched[1:] {
		o := &c.defects[c.calts[m.alt].defect]
		if o.ID == d.ID {
			continue
		}
		if c.calts[m.alt].specificity == ca.specificity && o.Product != d.Product && crash.Product == symbolize.ProductUnknown {
			// The crash does not name its product and another product's
			// entry matches it as well: the id order chose, not the text.
			twins = append(twins, o.ID+" ("+o.Product+")")
			continue
		}
		also = append(also, o.ID)
	}
	if len(twins) > 0 {
		twins = dedupe(twins)
		v.Evidence = append(v.Evidence, "the crash does not name its product; as specific for another product: "+strings.Join(twins, ", "))
	}
	if len(also) > 0 {
		v.Evidence = append(v.Evidence, "less specific defects also matched: "+strings.Join(dedupe(also), ", "))
	}
	if d.Path != "" && v.Path != PathUnknown && d.Path != v.Path {
		v.Evidence = append(v.Evidence, fmt.Sprintf("note: the defect entry says path %s, the path rules say %s", d.Path, v.Path))
	}
	for _, n := range c.notes {
		if strings.HasPrefix(n, "defect "+d.ID+" ") {
			v.Evidence = append(v.Evidence, n)
		}
	}
	decideStatus(v, crash, d)
	if len(twins) > 0 {
		v.Advice += fmt.Sprintf(" (the crash does not name its product: this is %s's entry; for another product see %s)", d.Product, strings.Join(twins, ", "))
	}
}

// altCandidates returns the alternatives owning a glob that matched the
// stack in the given role (1: frames), unsorted, possibly repeated.
func (c *Catalog) altCandidates(sv *stackView, kind uint8) []int32 {
	var out []int32
	for _, h := range sv.hits {
		for _, o := range c.owners[h.glob] {
			if o.kind == kind {
				out = append(out, o.idx)
			}
		}
	}
	return out
}

// sortedUnique sorts ids and drops repeats, in place.
func sortedUnique(ids []int32) []int32 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// altHolds evaluates alternative a; on success it returns what matched.
func (c *Catalog) altHolds(a int32, crash *symbolize.Crash, sig signature.Signature, sv *stackView, groups []signature.Group) ([]string, bool) {
	ca := &c.calts[a]
	d := &c.defects[ca.defect]
	m := &d.Match[ca.alt]
	if d.Product != "" && crash.Product != symbolize.ProductUnknown && string(crash.Product) != d.Product {
		return nil, false
	}
	var ev []string
	if ca.kind != nil {
		if !ca.kind.match(sig.Kind) {
			return nil, false
		}
		ev = append(ev, fmt.Sprintf("kind %s matches %q", sig.Kind, m.Kind))
	}
	if m.Key != "" {
		if sig.Key != m.Key {
			return nil, false
		}
		ev = append(ev, "signature key equals "+quoteShort(m.Key))
	}
	last := -1
	if len(ca.frames) > 0 {
		pos := sv.w0 - 1
		var got []string
		for k, g := range ca.frames {
			p := sv.has(g, pos+1, sv.w1)
			if p < 0 {
				return nil, false
			}
			pos = p
			got = append(got, fmt.Sprintf("#%d %s ~ %q", p, sv.frames[p], m.Frames[k]))
		}
		last = pos
		ev = append(ev, "frames in order within the top "+fmt.Sprint(DefectWindow)+": "+strings.Join(got, ", "))
	}
	last, ok := c.contextHolds(ca, m, crash, &sig, sv, last, &ev)
	if !ok {
		return nil, false
	}
	for k, g := range ca.callers {
		p := sv.has(g, last+1, len(sv.frames))
		if p < 0 {
			return nil, false
		}
		ev = append(ev, fmt.Sprintf("caller #%d %s ~ %q", p, sv.frames[p], m.Callers[k]))
	}
	if m.message != nil {
		field, ok := "", false
		for _, f := range []struct{ name, text string }{{"message", crash.Message}, {"check", crash.CheckExpr}, {"exception", crash.ExceptionType}, {"sanitizer", crash.SanitizerBug}} {
			if f.text != "" && m.message.MatchString(f.text) {
				field, ok = f.name, true
				break
			}
		}
		if !ok {
			return nil, false
		}
		ev = append(ev, fmt.Sprintf("%s matches /%s/", field, m.Message))
	} else if m.Message != "" {
		return nil, false // a hand-built entry with a bad expression never matches
	}
	if ca.threads != nil {
		g, ok := c.threadsHold(ca.threads, groups)
		if !ok {
			return nil, false
		}
		ev = append(ev, g)
	}
	return ev, true
}

func quoteShort(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf("%q", s)
}

func compileRegexpLoose(s string) *regexp.Regexp {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil
	}
	return re
}
