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

// Status is the answer about a crash's version against a matched defect.
type Status string

// The statuses. Exactly one is set on every Verdict.
const (
	// StatusAffected: the crash matches a known defect and its version is in
	// an affected range (or before the branch's fix). Advice names the
	// version to upgrade to: the fix on the crash's own branch, else the
	// first fix on a later branch.
	StatusAffected Status = "affected"
	// StatusAffectedNoFix: the crash matches a known defect, its version is
	// affected, and no fix is known for its branch or any later branch.
	StatusAffectedNoFix Status = "affected-no-fix"
	// StatusFixed: the crash matches a known defect but its version already
	// has the fix (should-already-be-fixed). Either the fix is incomplete,
	// this is a regression, or it is a different bug with the same stack:
	// Advice says so loudly.
	StatusFixed Status = "should-already-be-fixed"
	// StatusVersionUnknown: the crash matches a known defect but its version
	// is not known (not printed, unparseable, a dev build), or lies on a
	// branch (or before the first affected version) the entry says nothing about.
	StatusVersionUnknown Status = "version-unknown"
	// StatusNoKnownDefect: no defect of the catalog matches.
	StatusNoKnownDefect Status = "no-known-defect"
)

// DefectWindow is how many meaningful frames (from the signature's first
// frame on) a defect's frames must fall within.
const DefectWindow = 10

// maxSimilar is how many near misses a Verdict lists.
const maxSimilar = 3

// Verdict is the answer for one crash. It is the `classification` object
// of the CLI's JSON output.
type Verdict struct {
	Path Path   `json:"path"`
	Area string `json:"area"`
	// PathRule is the id of the rule that decided Path ("" when unknown).
	PathRule string `json:"path_rule,omitempty"`
	// PathConfidence says how much the path rests on: high (a frame name
	// or lambda owner of a known subsystem), medium (a source path, module,
	// template type, a frame shared by every path, or the no-query hint
	// changed the answer), low (thread name or query id only, or unknown).
	PathConfidence Confidence `json:"path_confidence"`
	// Defect is the matched defect, nil when none matched.
	Defect *DefectRef `json:"defect"`
	Status Status     `json:"status"`
	// Advice is one sentence an operator can act on.
	Advice string `json:"advice"`
	// Evidence lists every decision taken, in order.
	Evidence []string `json:"evidence"`
	// Similar lists up to three defects that share frames with the crash,
	// best first, when no defect matched.
	Similar []Similar `json:"similar,omitempty"`
	// Version is the crash's version as parsed ("" when unknown).
	Version string `json:"version,omitempty"`
	// CatalogRevision and SignatureAlgorithm state what produced the verdict.
	CatalogRevision    string `json:"catalog_revision"`
	SignatureAlgorithm string `json:"signature_algorithm"`
}

// Summary is the one-line answer for an operator, e.g. "scan path
// (segment-read); known defect SR-1-x: ... upgrade to 3.3.9 or later" or
// "background path (vacuum); new: no known defect matches; closest is
// SR-2-y at 0.71".
func (v Verdict) Summary() string {
	where := string(v.Path) + " path"
	if v.Area != "" {
		where += " (" + v.Area + ")"
	}
	return where + "; " + v.Advice
}

// DefectRef is the matched defect as shown in a Verdict.
type DefectRef struct {
	ID          string   `json:"id"`                     // the defect id
	Title       string   `json:"title"`                  // one line
	Links       []string `json:"links"`                  // issues and PRs
	Affected    []string `json:"affected,omitempty"`     // affected ranges as written
	Fixed       []string `json:"fixed,omitempty"`        // first fixed versions
	FixedLikely []string `json:"fixed_likely,omitempty"` // likely first fixed versions with the date the fix reached the branch
	Workaround  string   `json:"workaround,omitempty"`   // free text
	Confidence  string   `json:"confidence,omitempty"`   // high, medium, low
	// Match is the index of the alternative that matched.
	Match int `json:"match"`
}

// Similar is a near miss: a defect sharing frames with the crash.
type Similar struct {
	ID    string  `json:"id"`    // the defect id
	Title string  `json:"title"` // its title
	Score float64 `json:"score"` // signature.Similarity in [0,1], rounded to 0.01
	// Shared lists the defect's frame globs found in the crash.
	Shared []string `json:"shared"`
}

// FrameNames returns the normalized names of the crashing thread's frames,
// innermost first, as path rules and defects see them. Frames without a
// name are kept as "" so positions stay those of the thread.
// Frames is the former name of FrameNames.
//
// Deprecated: use FrameNames (it returns names and changes nothing).
func Frames(crash *symbolize.Crash) []string { return FrameNames(crash) }

func FrameNames(crash *symbolize.Crash) []string {
	t := crashingThread(crash)
	if t == nil {
		return nil
	}
	n := min(len(t.Frames), maxStack)
	out := make([]string, 0, n)
	gen := signature.Default() // shared, cached normalizer
	for i := range t.Frames[:n] {
		f := &t.Frames[i]
		if f.Java {
			out = append(out, signature.NormalizeJava(f.Name()))
		} else {
			out = append(out, gen.Normalize(f.Name()))
		}
	}
	return out
}

func crashingThread(crash *symbolize.Crash) *symbolize.Thread {
	if crash == nil {
		return nil
	}
	if t := crash.CrashingThread(); t != nil {
		return t
	}
	if len(crash.Threads) > 0 {
		return &crash.Threads[0]
	}
	return nil
}

// maxStack bounds the frames looked at (deep recursion is cut).
const maxStack = 512

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func indexOf(s []string, x string) int {
	for i, y := range s {
		if y == x {
			return i
		}
	}
	return -1
}

// Classify puts a crash on a path, matches it against the known defects and
// decides the status from its version. sig is the crash's signature (its
// Frames fix where the meaningful frames start, its Key and Kind are
// matched). Classify never fails: what it could not decide is said in the
// Evidence. Safe for concurrent use.
func (c *Catalog) Classify(crash *symbolize.Crash, sig signature.Signature) Verdict {
	return c.ClassifyFrames(crash, sig, Frames(crash))
}

// ClassifyFrames is Classify with the normalized crashing stack given by the
// caller (as returned by Frames), for callers that already have it.
func (c *Catalog) ClassifyFrames(crash *symbolize.Crash, sig signature.Signature, frames []string) Verdict {
	if crash == nil {
		crash = &symbolize.Crash{}
	}
	v := Verdict{CatalogRevision: c.revision, SignatureAlgorithm: sig.Algorithm, Status: StatusNoKnownDefect}
	sv := c.view(crash, frames, sig)
	defer c.releaseView(sv)
	if !pathByKind(&v, crash) {
		c.decidePath(&v, crash, sv)
	}
	groups := threadGroups(crash, sig)
	c.decideDefect(&v, crash, sig, sv, groups)
	if crash.Kind == symbolize.KindThreadDump && v.Defect != nil {
		if d, ok := c.Defect(v.Defect.ID); ok && d.Path != "" {
			v.Path, v.Area, v.PathConfidence = d.Path, d.Area, ConfidenceMedium
			v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s from the matched defect %s: a thread dump has no crashing thread to place", d.Path, d.Area, d.ID))
		}
	}
	return v
}

// pathByKind decides the path from the incident kind where frames cannot:
// a termination dump (the process was told to stop), a leak report (printed
// at exit) and a thread dump (no crashing thread). It reports whether it did.
func pathByKind(v *Verdict, crash *symbolize.Crash) bool {
	switch crash.Kind {
	case symbolize.KindTermination:
		v.Path, v.Area, v.PathConfidence = PathLifecycle, "termination", ConfidenceHigh
		v.Evidence = append(v.Evidence, "path lifecycle/termination: a SIGTERM/SIGINT dump means the process was told to stop; its frames show where the thread was, not a fault")
	case symbolize.KindLeak:
		v.Path, v.Area, v.PathConfidence = PathLifecycle, "leak-report", ConfidenceHigh
		v.Evidence = append(v.Evidence, "path lifecycle/leak-report: LeakSanitizer reports at process exit")
	case symbolize.KindThreadDump:
		v.Path, v.Area, v.PathConfidence = PathUnknown, "", ConfidenceLow
		v.Evidence = append(v.Evidence, "path unknown: a thread dump is diagnostics with no crashing thread (a matched defect may place it)")
	default:
		return false
	}
	return true
}

// PathOf returns the path and area of a crash without matching defects
// (cheaper than Classify). It is the grouping `crashsig buckets` puts
// before the signature key: bucket by PathOf, then by key. Safe for
// concurrent use.
func (c *Catalog) PathOf(crash *symbolize.Crash) (Path, string) {
	if crash == nil {
		return PathUnknown, ""
	}
	var v Verdict
	if !pathByKind(&v, crash) {
		c.decidePath(&v, crash, c.view(crash, Frames(crash), signature.Signature{}))
	}
	return v.Path, v.Area
}

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
	v.Defect = &DefectRef{ID: d.ID, Title: d.Title, Links: d.Links, Affected: d.Affected, Fixed: d.Fixed, FixedLikely: d.FixedLikely, Workaround: d.Workaround, Confidence: d.Confidence, Match: ca.alt}
	v.Evidence = append(v.Evidence, fmt.Sprintf("defect %s (%s) alternative %d: %s", d.ID, where(d.File, d.Line), ca.alt, strings.Join(win.evidence, "; ")))
	var also []string
	for _, m := range matched[1:] {
		id := c.defects[c.calts[m.alt].defect].ID
		if id != d.ID {
			also = append(also, id)
		}
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
	last, ok := c.contextHolds(ca, m, crash, sv, last, &ev)
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

// decideStatus compares the crash's version with the defect's ranges.
func decideStatus(v *Verdict, crash *symbolize.Crash, d *Defect) {
	if strings.TrimSpace(crash.Version) == "" {
		v.Status = StatusVersionUnknown
		v.Advice = fmt.Sprintf("known defect %s; the crash does not say its version: %s", d.ID, fixSummary(d))
		v.Evidence = append(v.Evidence, "status version-unknown: no version in the input")
		return
	}
	ver, err := ParseVersion(crash.Version)
	if err != nil || ver.IsDev() {
		v.Status = StatusVersionUnknown
		why := "a development build has no release number"
		if err != nil {
			why = err.Error()
		}
		v.Advice = fmt.Sprintf("known defect %s; version %q cannot be placed: %s", d.ID, crash.Version, fixSummary(d))
		v.Evidence = append(v.Evidence, fmt.Sprintf("status version-unknown: %q: %s", crash.Version, why))
		return
	}
	v.Version = ver.String()
	st, advice, ev := statusFor(ver, d)
	v.Status, v.Advice = st, advice
	v.Evidence = append(v.Evidence, ev)
}

func compileRegexpLoose(s string) *regexp.Regexp {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil
	}
	return re
}
