package catalog

import (
	"fmt"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// DefectNearWithin is the default reach of a defect alternative's `near`
// globs: how many frames deeper than the anchor they may be.
const DefectNearWithin = 8

// compileMatchContext compiles the anchor, near, any_thread, check and
// exception fields of an alternative and adds their specificity.
func compileMatchContext(ca *compiledAlt, m *Match, intern func(string) int32, internAll func([]string) []int32) {
	ca.anchor = -1
	if m.Anchor != "" {
		ca.anchor = intern(m.Anchor)
		ca.specificity += 2
	}
	ca.near = internAll(m.Near)
	ca.within = m.Within
	if ca.within <= 0 {
		ca.within = DefectNearWithin
	}
	ca.anyThread = internAll(m.AnyThread)
	ca.specificity += len(m.Near) + len(m.AnyThread)
	if m.check == nil && m.Check != "" {
		m.check = compileRegexpLoose(m.Check)
	}
	if m.exception == nil && m.Exception != "" {
		m.exception = compileRegexpLoose(m.Exception)
	}
	if m.Check != "" {
		ca.specificity += 2
	}
	if m.Exception != "" {
		ca.specificity += 2
	}
}

// registerContextOwners makes the anchor a frame owner (kind 1: the
// alternative becomes a candidate when it matches) and near globs caller
// owners (kind 2).
func (c *Catalog) registerContextOwners(ca *compiledAlt, idx int32) {
	if ca.anchor >= 0 {
		c.owners[ca.anchor] = appendOwner(c.owners[ca.anchor], owner{1, idx})
	}
	for _, id := range ca.near {
		c.owners[id] = appendOwner(c.owners[id], owner{2, idx})
	}
}

// contextHolds checks the anchor, near, any_thread, check and exception
// parts of an alternative. last is the position of the last of its frames
// (-1: none); it returns the new last position (the deepest of the frames
// and the anchor) for the callers to be deeper than.
func (c *Catalog) contextHolds(ca *compiledAlt, m *Match, crash *symbolize.Crash, sv *stackView, last int, ev *[]string) (int, bool) {
	base := last
	if ca.anchor >= 0 {
		p := sv.has(ca.anchor, sv.w0, sv.w1)
		if p < 0 {
			return last, false
		}
		*ev = append(*ev, fmt.Sprintf("anchor #%d %s ~ %q within the top %d", p, sv.frames[p], m.Anchor, DefectWindow))
		base = p
		last = max(last, p)
	}
	for k, g := range ca.near {
		p := sv.has(g, base+1, min(base+1+ca.within, len(sv.frames)))
		if p < 0 {
			return last, false
		}
		*ev = append(*ev, fmt.Sprintf("near #%d %s ~ %q (within %d frames)", p, sv.frames[p], m.Near[k], ca.within))
	}
	for k, g := range ca.anyThread {
		where, ok := c.anyThreadHas(g, crash, sv)
		if !ok {
			return last, false
		}
		*ev = append(*ev, fmt.Sprintf("%s ~ %q", where, m.AnyThread[k]))
	}
	if m.Check != "" {
		if m.check == nil || crash.CheckExpr == "" || !m.check.MatchString(crash.CheckExpr) {
			return last, false
		}
		*ev = append(*ev, fmt.Sprintf("check %q matches /%s/", crash.CheckExpr, m.Check))
	}
	if m.Exception != "" {
		if m.exception == nil || crash.ExceptionType == "" || !m.exception.MatchString(crash.ExceptionType) {
			return last, false
		}
		*ev = append(*ev, fmt.Sprintf("exception %q matches /%s/", crash.ExceptionType, m.Exception))
	}
	return last, true
}

// anyThreadHas looks for a frame matching glob g in the crashing stack,
// then in every other thread of the incident (normalized on demand).
func (c *Catalog) anyThreadHas(g int32, crash *symbolize.Crash, sv *stackView) (string, bool) {
	if p := sv.has(g, 0, len(sv.frames)); p >= 0 {
		return fmt.Sprintf("crashing thread #%d %s", p, sv.frames[p]), true
	}
	gl := &c.ix.globs[g]
	gen := signature.Default()
	for ti := range crash.Threads {
		t := &crash.Threads[ti]
		if t == sv.thread {
			continue
		}
		for fi := range t.Frames[:min(len(t.Frames), maxStack)] {
			f := &t.Frames[fi]
			var name string
			if f.Java {
				name = signature.NormalizeJava(f.Name())
			} else {
				name = gen.Normalize(f.Name())
			}
			if name != "" && gl.match(name) {
				return fmt.Sprintf("thread %d (%q) #%d %s", ti, t.Name, fi, name), true
			}
		}
	}
	return "", false
}
