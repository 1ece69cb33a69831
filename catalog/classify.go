package catalog

import (
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// maxSimilar is how many near misses a Verdict lists.
const maxSimilar = 3

// Verdict is the answer for one crash. It is the `classification` object
// of the CLI's JSON output.
type Verdict struct {
	// Path is the work that crashed (scan, query, load, background,
	// lifecycle) or PathUnknown when the crash carries no evidence; the
	// Evidence says which rule decided it or what was missing.
	Path Path `json:"path"`
	// Area is the subsystem within the path the deciding rule names
	// ("segment-read", "compaction", …; "" when unknown).
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
	// Status is what the crash's version says against the defect's
	// affected and fixed versions (StatusNoKnownDefect when none matched).
	Status Status `json:"status"`
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

// Frames is the former name of FrameNames.
//
// Deprecated: use FrameNames (it returns names and changes nothing).
func Frames(crash *symbolize.Crash) []string { return FrameNames(crash) }

// FrameNames returns the normalized names of the crashing thread's frames,
// innermost first, as path rules and defects see them. Frames without a
// name are kept as "" so positions stay those of the thread.
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
	return c.ClassifyFrames(crash, sig, FrameNames(crash))
}

// ClassifyFrames is Classify with the normalized crashing stack given by the
// caller (as returned by FrameNames), for callers that already have it.
func (c *Catalog) ClassifyFrames(crash *symbolize.Crash, sig signature.Signature, frames []string) Verdict {
	if crash == nil {
		crash = &symbolize.Crash{}
	}
	v := Verdict{CatalogRevision: c.revision, SignatureAlgorithm: sig.Algorithm, Status: StatusNoKnownDefect}
	sv := c.view(crash, frames, sig)
	defer c.releaseView(sv)
	groups := threadGroups(crash, sig)
	if !c.pathByKind(&v, crash, groups) {
		c.decidePath(&v, crash, sv)
	}
	c.decideDefect(&v, crash, sig, sv, groups)
	c.pathFromDefect(&v, crash)
	return v
}
