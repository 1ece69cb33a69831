package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLikelyFix(t *testing.T) {
	lf, err := ParseLikelyFix(" 2.1.5 (2024-06-21) ")
	require.NoError(t, err)
	assert.Equal(t, "2.1.5", lf.Version.String())
	assert.Equal(t, "2024-06-21", lf.Date)
	assert.Equal(t, "2.1.5 (2024-06-21)", lf.Text)
	for _, bad := range []string{"", "2.1.5", "2.1.5 2024-06-21", "2.1 (2024-06-21)", "2.1.5 (2024-13-01)", "2.1.5 (24-06-21)",
		"2.1.5 (2024-06-21", "v2.1.5 (2024-06-21)", "2.1.5 (2024-06-00)", "2.1.5-rc01 (2024-06-21)"} {
		_, err := ParseLikelyFix(bad)
		assert.Truef(t, errors.Is(err, ErrVersion), "ParseLikelyFix(%q) = %v, want ErrVersion", bad, err)
	}
}

// TestParseLikelyFixLineage: a lineage entry says the date is the trunk's
// (merged, or only the trunk PR's date) and is the branch's first release.
func TestParseLikelyFixLineage(t *testing.T) {
	lf, err := ParseLikelyFix("4.0.0 (master 2025-02-13)")
	require.NoError(t, err)
	assert.Equal(t, "4.0.0", lf.Version.String())
	assert.Equal(t, "2025-02-13", lf.Date)
	assert.Equal(t, "master", lf.Trunk)
	assert.False(t, lf.PR)
	assert.Equal(t, "the fix reached master on 2025-02-13, before branch-4.0 was cut", lf.Said())

	lf, err = ParseLikelyFix("3.3.0 (main PR 2024-01-15)")
	require.NoError(t, err)
	assert.Equal(t, "main", lf.Trunk)
	assert.True(t, lf.PR)
	assert.Equal(t, "the main fix of 2024-01-15, before branch-3.3 was cut", lf.Said())

	lf, err = ParseLikelyFix("2.1.5 (2024-06-21)")
	require.NoError(t, err)
	assert.Empty(t, lf.Trunk)
	assert.Equal(t, "the fix reached branch-2.1 on 2024-06-21", lf.Said())

	for _, bad := range []string{"4.0.1 (master 2025-02-13)", "4.0.0 (branch 2025-02-13)", "4.0.0 (master  2025-02-13)",
		"4.0.0 (master PR)", "4.0.0 (master pr 2025-02-13)", "4.0.0 (trunk 2025-02-13)", "4.0.0 (master 2025-02-13 merged)",
		"4.0.0 (master 2025-02-30x)", "4.0.0 (Master 2025-02-13)", "4.0.0 (PR 2025-02-13)"} {
		_, err := ParseLikelyFix(bad)
		assert.Truef(t, errors.Is(err, ErrVersion), "ParseLikelyFix(%q) = %v, want ErrVersion", bad, err)
	}
}

// TestParseLikelyFixPickAndQualifiers: "branch PR" says only a pick's
// opening date is known; "; base assumed" and "; link inferred" say what
// the value assumes, and Said prints it (review 1, H2 and M3).
func TestParseLikelyFixPickAndQualifiers(t *testing.T) {
	lf, err := ParseLikelyFix("2.1.5 (branch PR 2024-06-17)")
	require.NoError(t, err)
	assert.Equal(t, "2.1.5", lf.Version.String())
	assert.Equal(t, "2024-06-17", lf.Date)
	assert.Empty(t, lf.Trunk)
	assert.True(t, lf.PR)
	assert.True(t, lf.PickOnly())
	assert.Equal(t, "a PR to branch-2.1 was opened on 2024-06-17; its merge date was not seen", lf.Said())
	assert.NotContains(t, lf.Said(), "reached")

	lf, err = ParseLikelyFix("3.0.7 (branch PR 2025-06-26; base assumed; link inferred)")
	require.NoError(t, err)
	assert.True(t, lf.PickOnly())
	assert.True(t, lf.BaseAssumed)
	assert.True(t, lf.LinkInferred)
	assert.Equal(t, "a PR to branch-3.0 was opened on 2025-06-26; its merge date was not seen; the PR's target branch is not shown and is assumed; the fix is tied to this crash by crash site, mechanism or title, not by an issue number", lf.Said())

	lf, err = ParseLikelyFix("4.0.0 (master PR 2024-03-04; base assumed)")
	require.NoError(t, err)
	assert.False(t, lf.PickOnly())
	assert.Equal(t, "master", lf.Trunk)
	assert.Equal(t, "the master fix of 2024-03-04, before branch-4.0 was cut; the PR's target branch is not shown and is assumed", lf.Said())

	lf, err = ParseLikelyFix("1.2.0 (master PR 2021-04-07; link inferred)")
	require.NoError(t, err)
	assert.True(t, lf.LinkInferred)
	assert.False(t, lf.BaseAssumed)

	for _, bad := range []string{"2.1.5 (branch 2024-06-17)", "2.1.5 (branch PR)", "2.1.5 (Branch PR 2024-06-17)",
		"2.1.5 (branch PR 2024-06-17;base assumed)", "2.1.5 (branch PR 2024-06-17; base)", "2.1.5 (branch PR 2024-06-17; )",
		"2.1.5 (branch PR 2024-06-17; link inferred; base assumed)", "2.1.5 (branch PR 2024-06-17; base assumed; base assumed)",
		"2.1.5 (2024-06-17; link inferred; link inferred)", "4.0.1 (master PR 2025-02-13; base assumed)", "2.1.5 (; base assumed)"} {
		_, err := ParseLikelyFix(bad)
		assert.Truef(t, errors.Is(err, ErrVersion), "ParseLikelyFix(%q) = %v, want ErrVersion", bad, err)
	}
}

// TestStatusLikelyPick: a fix known only by a pick's opening date says so,
// gives upgrade advice before it and never raises should-already-be-fixed
// at or past it (the answer is version-unknown with the fix named).
func TestStatusLikelyPick(t *testing.T) {
	d := &Defect{ID: "DORIS-4-p", Affected: []string{"2.1.0 - 2.1.3"},
		FixedLikely: []string{"2.1.5 (branch PR 2024-06-17)", "3.0.7 (branch PR 2025-06-26; base assumed; link inferred)", "4.0.0 (master PR 2024-06-17)"}}
	reparseVersions(d)
	cases := []struct {
		version string
		want    Status
		advice  []string
		not     string
	}{
		{"2.1.2", StatusLikelyFixed, []string{"likely fixed in 2.1.5 (a PR to branch-2.1 was opened on 2024-06-17; its merge date was not seen): upgrade to 2.1.5"}, "reached branch-2.1"},
		{"2.1.4", StatusLikelyFixed, []string{"likely fixed in 2.1.5"}, "reached"},
		{"2.1.5", StatusVersionUnknown, []string{"likely fixed in 2.1.5 (a PR to branch-2.1 was opened on 2024-06-17", "whether 2.1.5 carries the fix is not known", "no regression is claimed"}, "SHOULD ALREADY BE FIXED"},
		{"2.1.9", StatusVersionUnknown, []string{"this crash is from 2.1.9"}, "SHOULD ALREADY BE FIXED"},
		{"3.0.6", StatusLikelyFixed, []string{"likely fixed in 3.0.7", "target branch is not shown and is assumed", "tied to this crash by crash site, mechanism or title"}, "reached"},
		{"3.0.7", StatusVersionUnknown, []string{"not by an issue number"}, "SHOULD ALREADY BE FIXED"},
		// the master-lineage value of the same entry still raises it
		{"4.0.1", StatusFixed, []string{"SHOULD ALREADY BE FIXED (likely)", "the master fix of 2024-06-17, before branch-4.0 was cut"}, "a PR to"},
	}
	for _, c := range cases {
		st, adv, ev := statusFor(mustVersion(t, c.version), d)
		assert.Equalf(t, c.want, st, "%s: %s / %s", c.version, adv, ev)
		for _, a := range c.advice {
			assert.Containsf(t, adv, a, "%s", c.version)
		}
		assert.NotContainsf(t, adv, c.not, "%s", c.version)
		assert.NotContainsf(t, ev, "reached branch", "%s: evidence %s", c.version, ev)
	}
}

// TestStatusLikelyLineage: a lineage entry's verdict says the date is
// master's, before the branch was cut, never that it reached the branch.
func TestStatusLikelyLineage(t *testing.T) {
	d := &Defect{ID: "DORIS-3-z", Affected: []string{"3.0.*"}, FixedLikely: []string{"4.0.0 (master 2025-02-13)", "3.1.0 (master PR 2024-06-17)"}}
	reparseVersions(d)
	cases := []struct {
		version string
		want    Status
		advice  string
	}{
		{"3.0.5", StatusFixedLater, "upgrade to 3.1.0 (likely: the master fix of 2024-06-17, before branch-3.1 was cut)"},
		{"3.1.2", StatusFixed, "likely fixed in 3.1.0 (the master fix of 2024-06-17, before branch-3.1 was cut)"},
		{"4.0.1", StatusFixed, "likely fixed in 4.0.0 (the fix reached master on 2025-02-13, before branch-4.0 was cut)"},
		{"", StatusVersionUnknown, "likely fixed in 3.1.0 (the master fix of 2024-06-17, before branch-3.1 was cut), 4.0.0 (the fix reached master on 2025-02-13, before branch-4.0 was cut)"},
	}
	for _, c := range cases {
		var st Status
		var adv, ev string
		if c.version == "" {
			st, adv, ev = StatusVersionUnknown, fixSummary(d), "-"
		} else {
			st, adv, ev = statusFor(mustVersion(t, c.version), d)
		}
		assert.Equalf(t, c.want, st, "%s: %s / %s", c.version, adv, ev)
		assert.Containsf(t, adv, c.advice, "%s", c.version)
		assert.NotContainsf(t, adv, "reached branch-", "%s", c.version)
	}
	// No release of a branch is before its X.Y.0 (release candidates
	// count as the release), so a lineage fix is never "likely-fixed" on its
	// own branch: the branch's versions should already have it.
	st, adv, _ := statusFor(mustVersion(t, "4.0.0-rc01"), d)
	assert.Equal(t, StatusFixed, st)
	assert.Contains(t, adv, "SHOULD ALREADY BE FIXED (likely): DORIS-3-z is likely fixed in 4.0.0 (the fix reached master on 2025-02-13, before branch-4.0 was cut)")
}

// TestStatusLikely covers the statuses a fixed_likely entry and a fix on a
// later branch lead to.
func TestStatusLikely(t *testing.T) {
	d := &Defect{ID: "DORIS-1-x", Affected: []string{"2.1.0 - 2.1.4", "2.0.*", "3.0.0 - 3.0.2"},
		Fixed: []string{"3.0.3"}, FixedLikely: []string{"2.1.5 (2024-06-21)"}}
	reparseVersions(d)
	cases := []struct {
		version string
		want    Status
		advice  []string
	}{
		{"2.1.3", StatusLikelyFixed, []string{"likely fixed in 2.1.5 (the fix reached branch-2.1 on 2024-06-21)", "upgrade to 2.1.5"}},
		{"doris-2.1.4-rc03", StatusLikelyFixed, []string{"likely fixed in 2.1.5"}},
		{"2.1.5", StatusFixed, []string{"SHOULD ALREADY BE FIXED (likely)", "2024-06-21", "regression"}},
		{"2.1.8", StatusFixed, []string{"SHOULD ALREADY BE FIXED (likely)"}},
		{"3.0.2", StatusAffected, []string{"fixed in 3.0.3: upgrade to 3.0.3"}},
		{"3.0.3", StatusFixed, []string{"SHOULD ALREADY BE FIXED: DORIS-1-x was fixed in 3.0.3"}},
		{"2.0.9", StatusFixedLater, []string{"no fix on branch 2.0", "upgrade to 2.1.5 (likely: the fix reached branch-2.1 on 2024-06-21)"}},
		{"1.2.7", StatusVersionUnknown, []string{"fixed in 3.0.3", "likely fixed in 2.1.5 (the fix reached branch-2.1 on 2024-06-21)"}},
	}
	for _, c := range cases {
		st, adv, ev := statusFor(mustVersion(t, c.version), d)
		assert.Equalf(t, c.want, st, "%s: %s / %s", c.version, adv, ev)
		for _, a := range c.advice {
			assert.Containsf(t, adv, a, "%s", c.version)
		}
		assert.NotEmpty(t, ev)
	}
	// Only a likely fix, and no affected range: a version before it is still
	// placed on the branch.
	only := &Defect{ID: "DORIS-2-y", FixedLikely: []string{"3.0.4 (2025-01-10)"}}
	reparseVersions(only)
	st, adv, _ := statusFor(mustVersion(t, "3.0.1"), only)
	assert.Equal(t, StatusLikelyFixed, st)
	assert.Contains(t, adv, "likely fixed in 3.0.4 (the fix reached branch-3.0 on 2025-01-10)")
	st, adv, _ = statusFor(mustVersion(t, "2.1.9"), only)
	assert.Equal(t, StatusVersionUnknown, st)
	assert.Contains(t, adv, "likely fixed in 3.0.4")
}

func TestVersionEvidence(t *testing.T) {
	cases := []struct {
		d    Defect
		want VersionEvidence
	}{
		{Defect{Fixed: []string{"3.3.9"}, FixedLikely: []string{"3.2.5 (2024-06-21)"}, Affected: []string{"3.3.0 - 3.3.8"}}, EvidenceEstablished},
		{Defect{FixedLikely: []string{"3.2.5 (2024-06-21)"}}, EvidenceLikely},
		{Defect{Affected: []string{"3.3.0 - 3.3.8"}}, EvidenceAffectedOnly},
		{Defect{}, EvidenceNone},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.d.VersionEvidence())
	}
	// The embedded catalog: every defect has a level, and the established
	// ones are exactly those with a fixed version.
	cat, err := Default()
	require.NoError(t, err)
	counts := map[VersionEvidence]int{}
	for _, d := range cat.Defects() {
		counts[d.VersionEvidence()]++
	}
	assert.Equal(t, len(cat.Defects()), counts[EvidenceEstablished]+counts[EvidenceLikely]+counts[EvidenceAffectedOnly]+counts[EvidenceNone])
	assert.Positive(t, counts[EvidenceEstablished])
}

// TestDefaultLineageValues: every default entry whose note derives a
// version by lineage writes at least one fixed_likely value in the trunk
// form, so its verdict does not claim the date on the branch (review: "the
// fix reached branch-4.0 on 2025-02-11" before branch-4.0 existed).
func TestDefaultLineageValues(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	n := 0
	for _, d := range c.Defects() {
		if len(d.FixedLikely) == 0 || !strings.Contains(d.Note, "by lineage") && !strings.Contains(d.Note, "lineage\"): ") {
			continue
		}
		trunk := 0
		for _, s := range d.FixedLikely {
			lf, err := ParseLikelyFix(s)
			require.NoError(t, err, d.ID)
			if lf.Trunk != "" {
				trunk++
			}
		}
		assert.Positivef(t, trunk, "%s: note derives a version by lineage, but %v has no trunk form", d.ID, d.FixedLikely)
		n++
	}
	assert.Greater(t, n, 40, "lineage entries found")
}

// TestStatusLineageLaterBranch: a branch the entry says nothing about
// inherits a fix that was on the main line when an earlier branch was cut
// (that branch's X.Y.0, established or likely by a trunk or branch date);
// not a fix known only by a pick's opening date, nor one the entry itself
// contradicts (a later branch needed a fix after its .0).
func TestStatusLineageLaterBranch(t *testing.T) {
	cases := []struct {
		name    string
		d       *Defect
		version string
		want    Status
		advice  string
	}{
		{"established .0", &Defect{ID: "SR-1-a", Fixed: []string{"2.3.0"}}, "3.3.9", StatusFixed,
			"SHOULD ALREADY BE FIXED (likely, by lineage): SR-1-a was fixed in 2.3.0, the first release of branch 2.3"},
		{"trunk lineage", &Defect{ID: "SR-2-b", FixedLikely: []string{"2.3.0 (main 2022-05-31)"}}, "2.5.4", StatusFixed,
			"branch 2.5 was cut from the main line later and carries it"},
		{"branch date .0", &Defect{ID: "SR-3-c", FixedLikely: []string{"3.1.0 (2025-06-30)"}}, "4.0.2", StatusFixed,
			"by lineage"},
		{"pick only", &Defect{ID: "SR-4-d", FixedLikely: []string{"3.1.0 (branch PR 2025-06-26)"}}, "4.0.2", StatusVersionUnknown,
			"the entry says nothing about branch 4.0"},
		{"after .0 only", &Defect{ID: "SR-5-e", Fixed: []string{"3.3.9"}}, "3.5.1", StatusVersionUnknown,
			"the entry says nothing about branch 3.5"},
		{"contradicted", &Defect{ID: "SR-6-f", Fixed: []string{"3.0.0", "3.2.4"}}, "3.3.1", StatusVersionUnknown,
			"the entry says nothing about branch 3.3"},
		{"earlier branch", &Defect{ID: "SR-7-g", Fixed: []string{"2.3.0"}}, "2.2.7", StatusVersionUnknown,
			"the entry says nothing about branch 2.2"},
		{"listed affected", &Defect{ID: "SR-8-h", Fixed: []string{"2.3.0"}, Affected: []string{"3.3.0 - 3.3.4"}}, "3.3.2", StatusAffectedNoFix,
			"affected 3.3.0 - 3.3.4, no fix known"},
	}
	for _, c := range cases {
		reparseVersions(c.d)
		st, adv, ev := statusFor(mustVersion(t, c.version), c.d)
		assert.Equalf(t, c.want, st, "%s: %s / %s", c.name, adv, ev)
		assert.Containsf(t, adv, c.advice, "%s", c.name)
		assert.NotContainsf(t, ev, "()", "%s: evidence %s", c.name, ev)
	}
}
