package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// This file is the status decision: a matched defect's version ranges and
// fixes against the crash's version give the Status, the Advice sentence and
// one evidence line (the statuses are listed in doc.go and on Status).

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

// Statuses decided from fixed_likely entries and cross-branch fixes (the
// others are declared above).
const (
	// StatusLikelyFixed: the crash's version is before the likely fix of its
	// branch (fixed_likely: only the date the fix reached the branch, a
	// pick's opening date, or the trunk's date before the branch was cut,
	// is known). Advice: "likely fixed in 2.1.5 (the fix reached branch-2.1
	// on 2024-06-21)", "likely fixed in 2.1.5 (a PR to branch-2.1 was
	// opened on 2024-06-20; its merge date was not seen)", or by lineage
	// "likely fixed in 4.0.0 (the fix reached master on 2025-02-13, before
	// branch-4.0 was cut)" (see LikelyFix.Said). A version at or past a
	// likely fix is should-already-be-fixed, except past a pick known only
	// by its opening date: that is version-unknown.
	StatusLikelyFixed Status = "likely-fixed"
	// StatusFixedLater: the crash's version is affected, its branch has no
	// known fix, and a later branch has one: upgrade across branches.
	StatusFixedLater Status = "fixed-in-a-later-version"
)

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

// branchName is how the products name a release branch ("branch-2.1").
func branchName(v Version) string { return "branch-" + v.Branch() }

// fixOn is the fix a defect records for one branch: established (Fixed) or
// likely (FixedLikely); nil when the branch has none.
type fixOn struct {
	ver    Version
	likely *LikelyFix
}

func (f fixOn) String() string {
	if f.likely != nil {
		return fmt.Sprintf("%s (likely: %s)", f.ver, f.likely.Said())
	}
	return f.ver.String()
}

// fixesOf lists every fix of d, established and likely, by release.
func fixesOf(d *Defect) []fixOn {
	out := make([]fixOn, 0, len(d.fixed)+len(d.fixedLikely))
	for _, f := range d.fixed {
		out = append(out, fixOn{ver: f})
	}
	for i := range d.fixedLikely {
		out = append(out, fixOn{ver: d.fixedLikely[i].Version, likely: &d.fixedLikely[i]})
	}
	sort.SliceStable(out, func(i, j int) bool { return cmpRelease(out[i].ver, out[j].ver) < 0 })
	return out
}

// fixSummary names every known fix, for advice that cannot place a version.
func fixSummary(d *Defect) string {
	fs := fixesOf(d)
	if len(fs) == 0 {
		if d.Workaround != "" {
			return "no fix known; workaround: " + d.Workaround
		}
		return "no fix known"
	}
	var est, lik []string
	for _, f := range fs {
		if f.likely != nil {
			lik = append(lik, fmt.Sprintf("%s (%s)", f.ver, f.likely.Said()))
		} else {
			est = append(est, f.ver.String())
		}
	}
	var parts []string
	if len(est) > 0 {
		parts = append(parts, "fixed in "+strings.Join(est, ", "))
	}
	if len(lik) > 0 {
		parts = append(parts, "likely fixed in "+strings.Join(lik, ", "))
	}
	return strings.Join(parts, "; ") + ": check whether your version is at or past the fix of its branch"
}

// statusFor is the version logic: see the Status constants. It returns the
// status, the advice and one evidence line.
func statusFor(ver Version, d *Defect) (Status, string, string) {
	var own *fixOn
	var later []fixOn
	for _, f := range fixesOf(d) {
		switch {
		case sameBranch(f.ver, ver):
			f := f
			own = &f
		case f.ver.Major > ver.Major || f.ver.Major == ver.Major && f.ver.Minor > ver.Minor:
			later = append(later, f)
		}
	}
	if own != nil && cmpRelease(ver, own.ver) >= 0 {
		if own.likely != nil && own.likely.PickOnly() {
			// Only the pick's opening date is known: the release it first
			// reached is an estimate, too weak to call this a regression.
			return StatusVersionUnknown,
				fmt.Sprintf("known defect %s: likely fixed in %s (%s), and this crash is from %s: whether %s carries the fix is not known, so no regression is claimed; if your build has the fix, this is a regression, an incomplete fix or a different bug with the same stack: report it with this log", d.ID, own.ver, own.likely.Said(), ver, own.ver),
				fmt.Sprintf("status version-unknown: %s >= likely fix %s on branch %s, but only the pick's opening date is known (%s): should-already-be-fixed is not raised on it", ver, own.ver, ver.Branch(), own.likely.Said())
		}
		if own.likely != nil {
			return StatusFixed,
				fmt.Sprintf("SHOULD ALREADY BE FIXED (likely): %s is likely fixed in %s (%s), and this crash is from %s: unless your build predates the fix, this is a regression, an incomplete fix or a different bug with the same stack; report it with this log", d.ID, own.ver, own.likely.Said(), ver),
				fmt.Sprintf("status should-already-be-fixed: %s >= likely fix %s on branch %s (%s)", ver, own.ver, ver.Branch(), own.likely.Said())
		}
		return StatusFixed,
			fmt.Sprintf("SHOULD ALREADY BE FIXED: %s was fixed in %s and this crash is from %s: possible regression or incomplete fix (or a different bug with the same stack); report it with this log", d.ID, own.ver, ver),
			fmt.Sprintf("status should-already-be-fixed: %s >= fix %s on branch %s", ver, own.ver, ver.Branch())
	}
	var in *Range
	for i := range d.affected {
		if d.affected[i].Contains(ver) {
			in = &d.affected[i]
			break
		}
	}
	if in == nil && own != nil {
		// Before the branch's fix but outside every listed range.
		for i := range d.affected {
			if d.affected[i].coversBranch(ver) {
				in = &d.affected[i]
			}
		}
		if in != nil && in.Kind == RangeSpan && cmpRelease(ver, in.From) < 0 {
			return StatusVersionUnknown,
				fmt.Sprintf("known defect %s, but %s is before the first affected version %s of its branch: a different bug with the same stack is possible; %s", d.ID, ver, in.From, fixSummary(d)),
				fmt.Sprintf("status version-unknown: %s is before affected range %q", ver, in.Text)
		}
		if in == nil {
			return ownFix(d, ver, *own, nil)
		}
	}
	if in == nil && own == nil {
		// After the last version listed affected on a branch with no known
		// fix: the defect may persist or have been fixed unrecorded.
		for i := range d.affected {
			r := &d.affected[i]
			if r.Kind == RangeSpan && r.coversBranch(ver) && cmpRelease(ver, r.To) > 0 {
				return StatusVersionUnknown,
					fmt.Sprintf("known defect %s: branch %s is listed affected up to %s and no fix is known on it; %s is after the last version known affected, so it is likely still affected unless a fix went unrecorded: %s", d.ID, ver.Branch(), r.To, ver, fixSummary(d)),
					fmt.Sprintf("status version-unknown: %s is after affected range %q and branch %s has no listed fix", ver, r.Text, ver.Branch())
			}
		}
	}
	if in == nil && own == nil {
		if f, ok := lineageFix(d, ver); ok {
			return StatusFixed,
				fmt.Sprintf("SHOULD ALREADY BE FIXED (likely, by lineage): %s was fixed in %s, the first release of branch %s, so the fix was on the main line when that branch was cut; branch %s was cut from the main line later and carries it, and this crash is from %s: unless your build is a fork without it, this is a regression, an incomplete fix or a different bug with the same stack; report it with this log", d.ID, f, f.ver.Branch(), ver.Branch(), ver),
				fmt.Sprintf("status should-already-be-fixed: branch %s has no listed fix, but %s (%s) was on the main line before branch %s was cut, and branch %s was cut later", ver.Branch(), f.ver, lineageWhy(f), f.ver.Branch(), ver.Branch())
		}
	}
	if in == nil {
		return StatusVersionUnknown,
			fmt.Sprintf("known defect %s, but the entry says nothing about branch %s: %s", d.ID, ver.Branch(), fixSummary(d)),
			fmt.Sprintf("status version-unknown: %s and branch %s has no listed fix", noRange(ver, d), ver.Branch())
	}
	switch {
	case own != nil:
		return ownFix(d, ver, *own, in)
	case len(later) > 0:
		return StatusFixedLater,
			fmt.Sprintf("known defect %s, affected %s; no fix on branch %s: fixed in a later version, upgrade to %s or later", d.ID, in.Text, ver.Branch(), later[0]),
			fmt.Sprintf("status fixed-in-a-later-version: %s in range %q; no fix on branch %s, first later fix %s", ver, in.Text, ver.Branch(), later[0])
	default:
		adv := fmt.Sprintf("known defect %s, affected %s, no fix known", d.ID, in.Text)
		if d.Workaround != "" {
			adv += "; workaround: " + d.Workaround
		}
		return StatusAffectedNoFix, adv, fmt.Sprintf("status affected-no-fix: %s in range %q and no fix on branch %s or later", ver, in.Text, ver.Branch())
	}
}

// ownFix is the verdict for a version before the fix of its own branch;
// in is the affected range holding the version (nil: none lists it, but it
// is before the fix on its branch).
func ownFix(d *Defect, ver Version, own fixOn, in *Range) (Status, string, string) {
	why := "no affected range lists " + ver.String() + ", but it is before the fix on its branch"
	if in != nil {
		why = fmt.Sprintf("in range %q", in.Text)
	}
	if own.likely != nil {
		return StatusLikelyFixed,
			fmt.Sprintf("known defect %s: likely fixed in %s (%s): upgrade to %s or later", d.ID, own.ver, own.likely.Said(), own.ver),
			fmt.Sprintf("status likely-fixed: %s %s; likely fix %s on branch %s (%s)", ver, why, own.ver, ver.Branch(), own.likely.Said())
	}
	if in == nil {
		return StatusAffected,
			fmt.Sprintf("upgrade to %s: %s is fixed there (no affected range lists %s, but it is before the fix on its branch)", own.ver, d.ID, ver),
			fmt.Sprintf("status affected: %s < fix %s on branch %s (not in any listed range)", ver, own.ver, ver.Branch())
	}
	return StatusAffected,
		fmt.Sprintf("known defect %s, affected %s, fixed in %s: upgrade to %s or later", d.ID, in.Text, own.ver, own.ver),
		fmt.Sprintf("status affected: %s in range %q; fix on branch %s is %s", ver, in.Text, ver.Branch(), own.ver)
}

// lineageFix finds a fix that a version on a branch the entry says
// nothing about inherits from the main line: a fix in the first release of
// an earlier branch (X.Y.0, established, or likely by its trunk or branch
// date) was on the main line when that branch was cut, and both products
// cut their release branches from the main line in version order, so every
// later branch carries it. Not when only a pick's opening date is known
// (PickOnly), and not when the entry lists a fix released after .0 on a
// branch later than the first one (that branch lacked it at its cut,
// which the main line then did too: the lineage is contradicted).
func lineageFix(d *Defect, ver Version) (fixOn, bool) {
	if ver.Dev != "" || ver.Major == 0 && ver.Minor == 0 && ver.Patch == 0 {
		return fixOn{}, false
	}
	fs := fixesOf(d)
	for i, f := range fs {
		if !earlierBranch(f.ver, ver) || f.ver.Patch != 0 || f.likely != nil && f.likely.PickOnly() {
			continue
		}
		for _, g := range fs[i+1:] {
			if earlierBranch(f.ver, g.ver) && g.ver.Patch != 0 {
				return fixOn{}, false
			}
		}
		return f, true
	}
	return fixOn{}, false
}

// earlierBranch reports whether a's release branch comes before b's.
func earlierBranch(a, b Version) bool {
	return a.Major < b.Major || a.Major == b.Major && a.Minor < b.Minor
}

// lineageWhy says how the fix of lineageFix is known.
func lineageWhy(f fixOn) string {
	if f.likely != nil {
		return "likely: " + f.likely.Said()
	}
	return "established"
}

// noRange says that ver is in none of the entry's affected ranges.
func noRange(ver Version, d *Defect) string {
	if len(d.Affected) == 0 {
		return "the entry lists no affected range"
	}
	return fmt.Sprintf("%s is in no affected range (%s)", ver, strings.Join(d.Affected, ", "))
}
