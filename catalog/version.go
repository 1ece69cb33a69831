package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrVersion is wrapped by every error of ParseVersion and ParseRange.
var ErrVersion = errors.New("catalog: bad version")

// maxVersionText bounds the text ParseVersion looks at.
const maxVersionText = 512

// Version is a product version as printed by a Doris or StarRocks backend.
//
// Only Major.Minor.Patch take part in range checks: Doris release binaries
// print their release tag (`doris-2.1.6-rc04`), so an rcNN suffix is the
// tag a release was cut from, not a pre-release; StarRocks prints the
// edition (`3.5.11-ee`) or the short commit (`3.3.5-6d81f75`). Dev builds
// (`main`, `master`, `trunk`) have no number and are never inside a range.
type Version struct {
	// Major, Minor and Patch are the release numbers (zero for a dev build).
	Major, Minor, Patch int
	// RC is the Doris release-candidate number (`-rc04` → 4); zero if none.
	RC int `json:",omitempty"`
	// Edition is a StarRocks edition suffix such as "ee"; empty if none.
	Edition string `json:",omitempty"`
	// Commit is a build hash found in the text, if any.
	Commit string `json:",omitempty"`
	// Dev names a development branch build (`main`, `master`); such a
	// version has no numbers.
	Dev string `json:",omitempty"`
	// Raw is the text the version was parsed from (trimmed, bounded).
	Raw string `json:",omitempty"`
}

// IsDev reports whether v is a development branch build without a release number.
func (v Version) IsDev() bool { return v.Dev != "" }

// Branch returns the release branch "X.Y" (or the dev branch name).
func (v Version) Branch() string {
	if v.IsDev() {
		return v.Dev
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// String returns "X.Y.Z" (or the dev branch name).
func (v Version) String() string {
	if v.IsDev() {
		return v.Dev
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// Compare orders two versions by Major, Minor, Patch, then RC. Dev builds
// sort after every release and equal to each other. It returns -1, 0 or +1.
func Compare(a, b Version) int {
	if a.IsDev() || b.IsDev() {
		switch {
		case a.IsDev() && b.IsDev():
			return 0
		case a.IsDev():
			return 1
		default:
			return -1
		}
	}
	for _, d := range [...]int{a.Major - b.Major, a.Minor - b.Minor, a.Patch - b.Patch, a.RC - b.RC} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// cmpRelease compares Major.Minor.Patch only (what ranges use).
func cmpRelease(a, b Version) int {
	a.RC, b.RC = 0, 0
	return Compare(a, b)
}

func sameBranch(a, b Version) bool { return a.Major == b.Major && a.Minor == b.Minor }

// ParseVersion parses the version strings both products print:
//
//	doris-2.1.6-rc04(AVX2) RELEASE (build git://host@4f5a6b7)
//	doris-4.1.3-rc02-7126cf65d96
//	2.1.6, 1.2.3, 0.13.15, 2.1 (patch taken as 0)
//	3.3.19 RELEASE (build 5e6f7a8 distro ubuntu arch x86_64)
//	3.3.5-6d81f75, 3.5.11-ee, v3.2.1
//	main DEBUG (build 1a2b3c4), master, branch-3.2 (dev builds: no release number)
//	selectdb-doris 2.0.3-rc04
//
// It looks at the first whitespace-separated word (after a `doris-` or
// `StarRocks-` prefix); a build hash is taken from `(build …)` or
// `@hash)` when present. Errors wrap ErrVersion.
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxVersionText {
		s = s[:maxVersionText]
	}
	v := Version{Raw: s}
	if s == "" {
		return v, fmt.Errorf("%w: empty", ErrVersion)
	}
	fields := strings.Fields(s)
	word := fields[0]
	switch strings.ToLower(word) { // "selectdb-doris 2.0.3-rc04", "StarRocks 3.3.1"
	case "doris", "apache-doris", "selectdb-doris", "starrocks", "version":
		if len(fields) > 1 {
			word = fields[1]
		}
	}
	v.Commit = buildHash(s)
	low := strings.ToLower(word)
	for _, p := range []string{"apache-doris-", "doris-", "starrocks-", "selectdb-doris-"} {
		if strings.HasPrefix(low, p) {
			word, low = word[len(p):], low[len(p):]
			break
		}
	}
	if i := strings.IndexByte(word, '('); i >= 0 { // doris-2.1.6-rc04(AVX2)
		word, low = word[:i], low[:i]
	}
	switch {
	case low == "main" || low == "master" || low == "trunk" || low == "dev" || low == "head":
		v.Dev = low
		return v, nil
	case strings.HasPrefix(low, "branch-") && len(low) > len("branch-"):
		// a build of a release branch: the branch is known, the release is not
		v.Dev = low
		return v, nil
	}
	if strings.HasPrefix(low, "v") {
		word = word[1:]
	}
	// Numeric part: up to the first '-' or '+' or '_'.
	num, rest := word, ""
	if i := strings.IndexAny(word, "-+_"); i >= 0 {
		num, rest = word[:i], word[i+1:]
	}
	parts := strings.Split(num, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return v, fmt.Errorf("%w: %q is not X.Y.Z", ErrVersion, word)
	}
	var nums [3]int
	for i, p := range parts {
		if i >= 3 { // a fourth component (vendor builds like 1.2.4.2) is ignored
			if _, err := atoiSmall(p); err != nil {
				return v, fmt.Errorf("%w: %q: %v", ErrVersion, word, err)
			}
			continue
		}
		n, err := atoiSmall(p)
		if err != nil {
			return v, fmt.Errorf("%w: %q: %v", ErrVersion, word, err)
		}
		nums[i] = n
	}
	v.Major, v.Minor, v.Patch = nums[0], nums[1], nums[2]
	for _, f := range strings.FieldsFunc(rest, func(r rune) bool { return r == '-' || r == '+' || r == '_' }) {
		lf := strings.ToLower(f)
		switch {
		case strings.HasPrefix(lf, "rc"):
			if n, err := atoiSmall(lf[2:]); err == nil {
				v.RC = n
			}
		case lf == "ee" || lf == "ce" || lf == "enterprise":
			v.Edition = lf
		case isHex(lf) && len(lf) >= 7:
			if v.Commit == "" {
				v.Commit = lf
			}
		}
	}
	return v, nil
}

func atoiSmall(s string) (int, error) {
	if s == "" || len(s) > 6 {
		return 0, errors.New("bad number")
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("bad number")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// buildHash extracts the commit hash of "(build <hash> ...)" or "...@<hash>)".
func buildHash(s string) string {
	if i := strings.Index(s, "(build "); i >= 0 {
		f := strings.Fields(s[i+len("(build "):])
		if len(f) > 0 {
			h := strings.TrimRight(f[0], ")")
			if j := strings.LastIndexByte(h, '@'); j >= 0 {
				h = h[j+1:]
			}
			if isHex(strings.ToLower(h)) && len(h) >= 7 {
				return strings.ToLower(h)
			}
		}
	}
	return ""
}

// RangeKind says how a Range bounds versions.
type RangeKind int

// Range kinds.
const (
	RangeSpan   RangeKind = iota // "A - B": A..B inclusive, one branch
	RangeBranch                  // "X.Y.*": the whole branch
	RangeFrom                    // ">= A": A and later on A's branch and every later branch
)

// Range is one affected range of a defect, on one release branch (or open
// ended from a version on, for RangeFrom).
type Range struct {
	// Kind says how the range bounds versions.
	Kind RangeKind
	// From and To bound a RangeSpan; RangeFrom uses From only; RangeBranch
	// holds X.Y.0 in From.
	From, To Version
	// Text is the range as written.
	Text string
}

// ParseRange parses "A - B", "X.Y.*" or ">= A" with plain X.Y.Z versions.
func ParseRange(s string) (Range, error) {
	t := strings.TrimSpace(s)
	r := Range{Text: t}
	switch {
	case strings.HasPrefix(t, ">="):
		v, err := parsePlain(strings.TrimSpace(t[2:]))
		if err != nil {
			return r, err
		}
		r.Kind, r.From = RangeFrom, v
		return r, nil
	case strings.HasSuffix(t, ".*"):
		parts := strings.Split(strings.TrimSuffix(t, ".*"), ".")
		if len(parts) != 2 {
			return r, fmt.Errorf("%w: %q: want X.Y.*", ErrVersion, t)
		}
		maj, err1 := atoiSmall(parts[0])
		minr, err2 := atoiSmall(parts[1])
		if err1 != nil || err2 != nil {
			return r, fmt.Errorf("%w: %q: want X.Y.*", ErrVersion, t)
		}
		r.Kind, r.From = RangeBranch, Version{Major: maj, Minor: minr}
		return r, nil
	}
	a, b, ok := strings.Cut(t, " - ")
	if !ok {
		return r, fmt.Errorf("%w: %q: want \"A - B\", \"X.Y.*\" or \">= A\"", ErrVersion, t)
	}
	from, err := parsePlain(strings.TrimSpace(a))
	if err != nil {
		return r, err
	}
	to, err := parsePlain(strings.TrimSpace(b))
	if err != nil {
		return r, err
	}
	if !sameBranch(from, to) {
		return r, fmt.Errorf("%w: %q spans branches %s and %s; write one range per branch", ErrVersion, t, from.Branch(), to.Branch())
	}
	if cmpRelease(from, to) > 0 {
		return r, fmt.Errorf("%w: %q: %s is after %s", ErrVersion, t, from, to)
	}
	r.Kind, r.From, r.To = RangeSpan, from, to
	return r, nil
}

// parsePlain parses a catalog version: exactly X.Y.Z with decimal numbers.
func parsePlain(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("%w: %q: want plain X.Y.Z", ErrVersion, s)
	}
	var n [3]int
	for i, p := range parts {
		x, err := atoiSmall(p)
		if err != nil {
			return Version{}, fmt.Errorf("%w: %q: want plain X.Y.Z", ErrVersion, s)
		}
		n[i] = x
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], Raw: s}, nil
}

// Contains reports whether release v lies in r. Dev builds are never contained.
func (r Range) Contains(v Version) bool {
	if v.IsDev() {
		return false
	}
	switch r.Kind {
	case RangeBranch:
		return sameBranch(r.From, v)
	case RangeFrom:
		return cmpRelease(v, r.From) >= 0
	default:
		return sameBranch(r.From, v) && cmpRelease(v, r.From) >= 0 && cmpRelease(v, r.To) <= 0
	}
}

// covers reports whether r says anything about v's branch.
func (r Range) coversBranch(v Version) bool {
	switch r.Kind {
	case RangeFrom:
		return v.Major > r.From.Major || v.Major == r.From.Major && v.Minor >= r.From.Minor
	default:
		return sameBranch(r.From, v)
	}
}

// String returns the range as written.
func (r Range) String() string { return r.Text }

// LikelyFix is one fixed_likely entry: Version is the first release of its
// branch after Date. Nothing stronger is known: no release note or
// maintainer names the version. Where the date applies is said by Trunk
// and PR:
//
//   - "2.1.5 (2024-06-21)": the day the fix reached the branch itself (a
//     backport's merge seen, a commit pushed); Trunk is "", PR is false.
//   - "2.1.5 (branch PR 2024-06-20)": only the day a pick (backport) PR to
//     the branch was opened is known; its merge date was not seen, so the
//     release it first reached is an estimate (RESEARCH rule: a release
//     frozen within a week of the opening is not claimed). Trunk is "", PR
//     is true. Such an entry never raises should-already-be-fixed on its
//     own: a version at or past it is answered version-unknown.
//   - "4.0.0 (master 2025-02-13)": lineage. The fix reached the trunk
//     (master, or main for StarRocks) on that day, before the branch was cut
//     from it, so the branch's first release X.Y.0 carries it; Trunk is
//     "master" or "main".
//   - "4.0.0 (master PR 2025-02-11)": lineage, but only the trunk PR's date
//     is known (opened or approved, the merge date is not shown); Trunk is
//     set and PR is true.
//
// After the date, qualifiers separated by "; " say what the value assumes,
// and verdicts print them (LikelyFix.Said): "base assumed" (the PR's
// target branch is not shown; it is taken to be the branch, or master) and
// "link inferred" (the PR is tied to this crash by crash site, mechanism or
// title, not by an issue number): "3.0.7 (branch PR 2025-06-26; base
// assumed; link inferred)".
type LikelyFix struct {
	// Version is the likely first fixed release (plain X.Y.Z; X.Y.0 when
	// Trunk is set).
	Version Version
	// Date is YYYY-MM-DD: when the fix reached the branch, or the trunk
	// when Trunk is set, or the PR's date when PR is set.
	Date string
	// Trunk is "" when Date applies to the version's branch, else the trunk
	// the branch was cut from ("master" or "main").
	Trunk string
	// PR: Date is a PR's date (the trunk PR's when Trunk is set, else the
	// opening date of a pick to the branch), not the day its fix was merged.
	PR bool
	// BaseAssumed: the PR's target branch is not shown; it is assumed.
	BaseAssumed bool `json:",omitempty"`
	// LinkInferred: the fix is tied to the crash by inference (crash site,
	// mechanism, title or author), not by an issue number.
	LinkInferred bool `json:",omitempty"`
	// Text is the entry as written.
	Text string
}

// Qualifiers of a fixed_likely value, written after the date.
const (
	qualBaseAssumed  = "base assumed"
	qualLinkInferred = "link inferred"
)

// PickOnly reports whether only the opening date of a pick to the branch is
// known (the "branch PR" form): such a fix is named, but it never makes a
// version at or past it should-already-be-fixed.
func (lf LikelyFix) PickOnly() bool { return lf.Trunk == "" && lf.PR }

// Said is how verdicts say where the likely fix comes from: "the fix
// reached branch-2.1 on 2024-06-21", "a PR to branch-2.1 was opened on
// 2024-06-20; its merge date was not seen", "the fix reached master on
// 2025-02-13, before branch-4.0 was cut" or "the master fix of 2025-02-11,
// before branch-4.0 was cut", followed by what the value assumes.
func (lf LikelyFix) Said() string {
	var s string
	switch {
	case lf.Trunk == "" && lf.PR:
		s = fmt.Sprintf("a PR to %s was opened on %s; its merge date was not seen", branchName(lf.Version), lf.Date)
	case lf.Trunk == "":
		s = fmt.Sprintf("the fix reached %s on %s", branchName(lf.Version), lf.Date)
	case lf.PR:
		s = fmt.Sprintf("the %s fix of %s, before %s was cut", lf.Trunk, lf.Date, branchName(lf.Version))
	default:
		s = fmt.Sprintf("the fix reached %s on %s, before %s was cut", lf.Trunk, lf.Date, branchName(lf.Version))
	}
	if lf.BaseAssumed {
		s += "; the PR's target branch is not shown and is assumed"
	}
	if lf.LinkInferred {
		s += "; the fix is tied to this crash by crash site, mechanism or title, not by an issue number"
	}
	return s
}

// likelyForm is the accepted syntax, for error messages.
const likelyForm = `want "X.Y.Z (YYYY-MM-DD)" (the first release after the date the fix reached the branch), "X.Y.Z (branch PR YYYY-MM-DD)" (only the opening date of a pick to the branch is known), "X.Y.0 (master YYYY-MM-DD)" (the fix reached master, or main, before branch X.Y was cut) or "X.Y.0 (master PR YYYY-MM-DD)" (only the master PR's date is known), optionally followed by "; base assumed" and "; link inferred"`

// ParseLikelyFix parses a fixed_likely entry: "X.Y.Z (YYYY-MM-DD)",
// "X.Y.Z (branch PR YYYY-MM-DD)", "X.Y.0 (master YYYY-MM-DD)" or
// "X.Y.0 (master PR YYYY-MM-DD)" ("main" in place of "master" too), each
// optionally followed by "; base assumed" and "; link inferred"; see
// LikelyFix. Errors wrap ErrVersion.
func ParseLikelyFix(s string) (LikelyFix, error) {
	t := strings.TrimSpace(s)
	lf := LikelyFix{Text: t}
	ver, rest, ok := strings.Cut(t, " ")
	rest = strings.TrimSpace(rest)
	if !ok || len(rest) < len("(2006-01-02)") || rest[0] != '(' || rest[len(rest)-1] != ')' {
		return lf, fmt.Errorf("%w: %q: %s", ErrVersion, t, likelyForm)
	}
	parts := strings.Split(rest[1:len(rest)-1], "; ")
	inner := parts[0]
	for _, q := range parts[1:] {
		switch {
		case q == qualBaseAssumed && !lf.BaseAssumed && !lf.LinkInferred:
			lf.BaseAssumed = true
		case q == qualLinkInferred && !lf.LinkInferred:
			lf.LinkInferred = true
		default:
			return lf, fmt.Errorf("%w: %q: qualifier %q: %s", ErrVersion, t, q, likelyForm)
		}
	}
	date := inner
	if len(inner) != len("2006-01-02") {
		words := strings.Split(inner, " ")
		switch {
		case len(words) == 2 && (words[0] == "master" || words[0] == "main"):
			lf.Trunk, date = words[0], words[1]
		case len(words) == 3 && (words[0] == "master" || words[0] == "main") && words[1] == "PR":
			lf.Trunk, lf.PR, date = words[0], true, words[2]
		case len(words) == 3 && words[0] == "branch" && words[1] == "PR":
			lf.PR, date = true, words[2]
		default:
			return lf, fmt.Errorf("%w: %q: %s", ErrVersion, t, likelyForm)
		}
	}
	v, err := parsePlain(ver)
	if err != nil {
		return lf, err
	}
	if !validDate(date) {
		return lf, fmt.Errorf("%w: %q: %q is not a YYYY-MM-DD date", ErrVersion, t, date)
	}
	if lf.Trunk != "" && v.Patch != 0 {
		return lf, fmt.Errorf("%w: %q: a fix that reached %s before the branch was cut is in the branch's first release %d.%d.0, not %s", ErrVersion, t, lf.Trunk, v.Major, v.Minor, v)
	}
	lf.Version, lf.Date = v, date
	return lf, nil
}

func validDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, e1 := atoiSmall(s[:4])
	m, e2 := atoiSmall(s[5:7])
	d, e3 := atoiSmall(s[8:])
	return e1 == nil && e2 == nil && e3 == nil && y >= 2000 && m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// VersionEvidence says how much a defect's entry knows about versions; it is
// what `crashsig catalog show` groups defects by ("status of evidence").
type VersionEvidence string

// The evidence levels, strongest first.
const (
	// EvidenceEstablished: at least one first fixed version (Fixed) read in
	// release notes or stated by a maintainer.
	EvidenceEstablished VersionEvidence = "established-fix"
	// EvidenceLikely: no established fix, but a FixedLikely entry (the date
	// a fix reached a branch).
	EvidenceLikely VersionEvidence = "likely-fix"
	// EvidenceAffectedOnly: no fix known, but affected versions are.
	EvidenceAffectedOnly VersionEvidence = "affected-only"
	// EvidenceNone: the entry knows no version.
	EvidenceNone VersionEvidence = "no-versions"
)

// VersionEvidence returns the strongest kind of version evidence the entry has.
func (d *Defect) VersionEvidence() VersionEvidence {
	switch {
	case len(d.Fixed) > 0:
		return EvidenceEstablished
	case len(d.FixedLikely) > 0:
		return EvidenceLikely
	case len(d.Affected) > 0:
		return EvidenceAffectedOnly
	default:
		return EvidenceNone
	}
}
