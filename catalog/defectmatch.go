package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// DefectNearWithin is the default reach of a defect alternative's `near`
// globs: how many frames deeper than the anchor they may be.
const DefectNearWithin = 8

// Values of Match.Fault.
const (
	// FaultNull: the signature has the attribute fault=null (a SIGSEGV
	// whose fault address is in the null page).
	FaultNull = "null"
	// FaultNotNull: the crash printed a fault address outside the null
	// page (a wild or dangling pointer, not a null one).
	FaultNotNull = "not-null"
	// FaultUnknown: the crash printed no fault address (gdb bt, abort,
	// CHECK, exception).
	FaultUnknown = "unknown"
)

func validFault(s string) bool {
	return s == FaultNull || s == FaultNotNull || s == FaultUnknown
}

// compileMatchContext compiles the anchor, near, any_thread, check,
// exception, fault and attrs fields of an alternative and adds their
// specificity (fault null/not-null and each attrs glob 1; fault unknown is
// the absence of evidence and adds nothing).
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
	if m.Fault == FaultNull || m.Fault == FaultNotNull {
		ca.specificity++
	}
	if m.attrs == nil {
		m.attrs = compileGlobs(m.Attrs)
	}
	ca.specificity += len(m.Attrs)
	if m.types == nil {
		m.types = compileGlobs(m.Types)
	}
	ca.specificity += 2 * len(m.Types)
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
func (c *Catalog) contextHolds(ca *compiledAlt, m *Match, crash *symbolize.Crash, sig *signature.Signature, sv *stackView, last int, ev *[]string) (int, bool) {
	if !faultHolds(m, crash, sig, ev) || !attrsHold(m, sig, ev) {
		return last, false
	}
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
	if len(m.Types) > 0 {
		lo, hi := sv.w0, sv.w1 // frames without an anchor: the defect window
		if ca.anchor >= 0 {
			lo, hi = base, base+1
		}
		if !c.typesHold(m, sv, lo, hi, ev) {
			return last, false
		}
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

// typesHold checks the types globs: all of them match product names found
// in the raw name of one frame in [lo, hi) (productTypes: template
// arguments, lambda owners).
func (c *Catalog) typesHold(m *Match, sv *stackView, lo, hi int, ev *[]string) bool {
	if len(m.types) != len(m.Types) || sv.thread == nil {
		return false // a hand-built entry with a bad glob never matches
	}
	hi = min(hi, len(sv.thread.Frames))
	var types []string
	for i := max(lo, 0); i < hi; i++ {
		f := &sv.thread.Frames[i]
		if f.Java {
			continue
		}
		types = c.stack.productTypes(types[:0], f.Name())
		all := true
		var found []string
		for k := range m.types {
			j := slices.IndexFunc(types, m.types[k].match)
			if j < 0 {
				all = false
				break
			}
			found = append(found, fmt.Sprintf("%s ~ %q", types[j], m.Types[k]))
		}
		if all {
			*ev = append(*ev, fmt.Sprintf("types in #%d %s: %s", i, sv.frames[i], strings.Join(found, ", ")))
			return true
		}
	}
	return false
}

// anyThreadHas looks for a frame matching glob g in the crashing stack,
// then in every other thread of the incident (normalized on demand).
func (c *Catalog) anyThreadHas(g int32, crash *symbolize.Crash, sv *stackView) (string, bool) {
	if p := sv.has(g, 0, len(sv.frames)); p >= 0 {
		return fmt.Sprintf("crashing thread #%d %s", p, sv.frames[p]), true
	}
	gl := &c.ix.globs[g]
	// The default generator only lends its name cache: a normalized name
	// does not depend on the signature rules (they decide which frames
	// enter a key, not how a frame is named), so a caller's own generator
	// would give the same names (TestAnyThreadCustomRules), and the
	// crashing thread's names (FrameNames) are made the same way.
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

// faultHolds checks the fault condition: the signature's fault=null
// attribute, or a printed fault address outside the null page, or none.
func faultHolds(m *Match, crash *symbolize.Crash, sig *signature.Signature, ev *[]string) bool {
	if m.Fault == "" {
		return true
	}
	null := slices.Contains(sig.Attributes, "fault=null")
	var ok bool
	switch m.Fault {
	case FaultNull:
		ok = null
	case FaultNotNull:
		ok = crash.HasFaultAddress && !null
	case FaultUnknown:
		ok = !crash.HasFaultAddress && !null
	}
	if !ok {
		return false
	}
	if crash.HasFaultAddress {
		*ev = append(*ev, fmt.Sprintf("fault %s (address %s)", m.Fault, crash.FaultAddress))
	} else {
		*ev = append(*ev, fmt.Sprintf("fault %s", m.Fault))
	}
	return true
}

// attrsHold checks that each attrs glob matches one of the signature's
// attributes.
func attrsHold(m *Match, sig *signature.Signature, ev *[]string) bool {
	if len(m.Attrs) > 0 && len(m.attrs) != len(m.Attrs) {
		return false // a hand-built entry with a bad glob never matches
	}
	for k := range m.attrs {
		found := ""
		for _, a := range sig.Attributes {
			if m.attrs[k].match(a) {
				found = a
				break
			}
		}
		if found == "" {
			return false
		}
		*ev = append(*ev, fmt.Sprintf("attribute %s ~ %q", found, m.Attrs[k]))
	}
	return true
}
