package catalog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The validation set (testdata/validation/<product>/) holds real crash
// texts no rule was written from (testdata/validation/README.md). This
// file measures the catalog on it; it never reads the texts for anything
// but classification.

type validationLabel struct {
	File        string `json:"file"`
	Path        string `json:"path"`
	DuplicateOf string `json:"duplicate_of"`
}

// valAnswer is one file's answer: the verdict of its first incident with a
// known path (fileVerdict), the signature key of that incident and the
// matched defect ("" when none).
type valAnswer struct {
	Path   Path
	Key    string
	Defect string
	// Confidence is the verdict's path_confidence (not in the before
	// file: "" there).
	Confidence Confidence
	// Evidence-bearing: the text carries a printed query id, a source path
	// or a product frame (a property of the text, not of the answer).
	HasID, HasFile, HasProduct bool
}

var validationProducts = []string{"doris", "starrocks"}

func readValidationLabels(t testing.TB, prod string) []validationLabel {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "testdata", "validation", prod, "labels.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []validationLabel
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l validationLabel
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "%s labels", prod)
		out = append(out, l)
	}
	require.NoError(t, sc.Err())
	return out
}

// answerFor classifies one testdata-relative log ("validation/doris/x.txt").
func answerFor(t testing.TB, c *Catalog, rel string) valAnswer {
	p := parseLog(t, "testdata/"+rel)
	v, i := fileVerdict(c, p)
	a := valAnswer{Path: v.Path, Confidence: v.PathConfidence}
	if i >= 0 {
		a.Key = p.sigs[i].Key
	}
	if v.Defect != nil {
		a.Defect = v.Defect.ID
	}
	for _, cr := range p.crashes {
		if queryIDState(cr) != QueryIDAbsent {
			a.HasID = true
		}
		if th := crashingThread(cr); th != nil {
			for fi := range th.Frames {
				f := &th.Frames[fi]
				if sourcePath(f) != "" {
					a.HasFile = true
				}
				if c.stack.isProductName(f.Name()) {
					a.HasProduct = true
				}
			}
		}
	}
	return a
}

// valFigures are the measured ratios.
type valFigures struct {
	pathRight, pathTotal int
	sbRight, sbTotal     int
	unknownEv, evTotal   int
	pairsShared, pairs   int
	// byConf counts, per path_confidence of a known path, the texts with
	// a path label answered at that confidence and those answered right.
	byConf map[Confidence][2]int
	m      confusion
	misses []string
}

func (f valFigures) line() string {
	return fmt.Sprintf("path=%d/%d sb=%d/%d unknown_with_evidence=%d/%d pairs=%d/%d", f.pathRight, f.pathTotal, f.sbRight, f.sbTotal, f.unknownEv, f.evTotal, f.pairsShared, f.pairs)
}

type labelled struct {
	prod string
	l    validationLabel
}

// measure computes the figures from answers keyed by testdata-relative
// path. Labels whose path is "other" count only in the pairs figure.
func measure(labels []labelled, ans map[string]valAnswer) valFigures {
	f := valFigures{m: confusion{}, byConf: map[Confidence][2]int{}}
	seen := map[string]bool{}
	for _, x := range labels {
		rel := "validation/" + x.prod + "/" + x.l.File
		a, ok := ans[rel]
		if !ok {
			continue
		}
		if a.HasID || a.HasFile || a.HasProduct {
			f.evTotal++
			if a.Path == PathUnknown {
				f.unknownEv++
			}
		}
		if want := Path(x.l.Path); x.l.Path != "other" && validPaths[want] {
			f.pathTotal++
			f.m.add(want, a.Path)
			if a.Path != PathUnknown && a.Confidence != "" {
				n := f.byConf[a.Confidence]
				n[0]++
				if a.Path == want {
					n[1]++
				}
				f.byConf[a.Confidence] = n
			}
			if a.Path == want {
				f.pathRight++
			} else {
				f.misses = append(f.misses, fmt.Sprintf("| %s | %s | %s |", rel, want, a.Path))
			}
			if want == PathScan || want == PathBackground {
				f.sbTotal++
				if a.Path == want {
					f.sbRight++
				}
			}
		}
		if d := x.l.DuplicateOf; d != "" {
			pair := []string{rel, d}
			sort.Strings(pair)
			k := pair[0] + "\x00" + pair[1]
			if seen[k] {
				continue
			}
			seen[k] = true
			b, ok := ans[d]
			if !ok {
				continue
			}
			f.pairs++
			if a.Key != "" && a.Key == b.Key || a.Defect != "" && a.Defect == b.Defect {
				f.pairsShared++
			}
		}
	}
	return f
}

// beforeFile holds the answers of the catalog and signature code before
// issue 14 (commit a1ba7d5) on the same files; regenerate it with
// TestValidationAnswers in a worktree of that commit (CATALOG.md says how).
const beforeFile = "validation-before.tsv"

func readAnswers(t testing.TB, name string) map[string]valAnswer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "catalog", name))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	out := map[string]valAnswer{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "file\t") {
			continue
		}
		col := strings.Split(line, "\t")
		require.Len(t, col, 4, "%s: %q", name, line)
		out[col[0]] = valAnswer{Path: Path(col[1]), Key: col[2], Defect: col[3]}
	}
	return out
}

var figuresRE = regexp.MustCompile(`<!-- figures: (.*) -->`)

// parseFigures reads the figures line of a committed validation.md.
func parseFigures(s string) map[string][2]int {
	m := figuresRE.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	out := map[string][2]int{}
	for _, kv := range strings.Fields(m[1]) {
		k, v, ok := strings.Cut(kv, "=")
		a, b, ok2 := strings.Cut(v, "/")
		if !ok || !ok2 {
			continue
		}
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		out[k] = [2]int{x, y}
	}
	return out
}

// TestValidation measures the default catalog on the validation set:
// path right, scan-vs-background right, unknown answers among texts that
// carry a query id, a source path or a product frame, precision and recall
// per path, the confusion matrix, and whether two reports of one defect
// (duplicate_of) share a key or a defect; before (validation-before.tsv)
// and after. With -update it writes testdata/catalog/validation.md;
// without, it fails when a figure drops below the committed file's on the
// same set (when the set grew, the figure is logged, not compared).
func TestValidation(t *testing.T) {
	var labels []labelled
	for _, prod := range validationProducts {
		for _, l := range readValidationLabels(t, prod) {
			labels = append(labels, labelled{prod, l})
		}
	}
	if len(labels) == 0 {
		t.Skip("no testdata/validation/*/labels.jsonl")
	}
	c := defaultCatalog(t)
	after := map[string]valAnswer{}
	for _, x := range labels {
		for _, rel := range []string{"validation/" + x.prod + "/" + x.l.File, x.l.DuplicateOf} {
			if rel == "" {
				continue
			}
			if _, done := after[rel]; done {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, "testdata", filepath.FromSlash(rel))); err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			after[rel] = answerFor(t, c, rel)
		}
	}
	fa := measure(labels, after)
	before := readAnswers(t, beforeFile)
	var fb valFigures
	if before != nil {
		// The evidence-bearing property belongs to the text: take it from now.
		for k, a := range before {
			if n, ok := after[k]; ok {
				a.HasID, a.HasFile, a.HasProduct = n.HasID, n.HasFile, n.HasProduct
				before[k] = a
			}
		}
		fb = measure(labels, before)
	}
	var b strings.Builder
	b.WriteString("<!-- generated by `go test ./catalog -run TestValidation -update`; do not edit -->\n")
	fmt.Fprintf(&b, "<!-- figures: %s -->\n", fa.line())
	fmt.Fprintf(&b, "Validation set: %d labelled texts (%d with a path label), %d duplicate pairs.\n\n", len(labels), fa.pathTotal, fa.pairs)
	b.WriteString("| figure | before (a1ba7d5) | after |\n|---|---:|---:|\n")
	row := func(name string, x1, y1, x2, y2 int) {
		bs := "–"
		if before != nil {
			bs = fmt.Sprintf("%d/%d (%.1f%%)", x1, y1, pct(x1, y1))
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d (%.1f%%) |\n", name, bs, x2, y2, pct(x2, y2))
	}
	row("path right", fb.pathRight, fb.pathTotal, fa.pathRight, fa.pathTotal)
	row("scan-vs-background right", fb.sbRight, fb.sbTotal, fa.sbRight, fa.sbTotal)
	row("unknown among texts with a query id, source path or product frame", fb.unknownEv, fb.evTotal, fa.unknownEv, fa.evTotal)
	row("two reports of one defect share a key or a defect", fb.pairsShared, fb.pairs, fa.pairsShared, fa.pairs)
	b.WriteString("\nPrecision (when it says P, how often is it P) and recall (of the texts labelled P, how many it calls P), after:\n\n| path | precision | recall |\n|---|---:|---:|\n")
	for _, p := range Paths()[:5] {
		said, right := 0, fa.m[p][p]
		for _, w := range Paths() {
			said += fa.m[w][p]
		}
		total := 0
		for _, g := range Paths() {
			total += fa.m[p][g]
		}
		fmt.Fprintf(&b, "| %s | %d/%d (%.1f%%) | %d/%d (%.1f%%) |\n", p, right, said, pct(right, said), right, total, pct(right, total))
	}
	b.WriteString("\nPath right by the verdict's `path_confidence`, after (texts with a path label answered with a known path; `unknown` answers are in the confusion matrix):\n\n| path_confidence | answered | right |\n|---|---:|---:|\n")
	for _, cf := range []Confidence{ConfidenceHigh, ConfidenceMedium, ConfidenceLow} {
		n := fa.byConf[cf]
		fmt.Fprintf(&b, "| %s | %d | %d (%.1f%%) |\n", cf, n[0], n[1], pct(n[1], n[0]))
	}
	b.WriteString("\nConfusion matrix, after:\n\n")
	b.WriteString(fa.m.markdown())
	if before != nil {
		b.WriteString("\nConfusion matrix, before:\n\n")
		b.WriteString(fb.m.markdown())
	}
	b.WriteString("\nMisses (after; the texts themselves are not used to write rules):\n\n| file | label | got |\n|---|---|---|\n")
	for _, s := range fa.misses {
		b.WriteString(s + "\n")
	}
	t.Logf("after: %s", fa.line())
	if before != nil {
		t.Logf("before: %s", fb.line())
	}
	// path_confidence is calibrated when a higher confidence is right
	// more often: a user who keeps only the high verdicts gets the most
	// reliable ones.
	hi, me, lo := fa.byConf[ConfidenceHigh], fa.byConf[ConfidenceMedium], fa.byConf[ConfidenceLow]
	if pct(hi[1], hi[0]) < pct(me[1], me[0]) || pct(me[1], me[0]) < pct(lo[1], lo[0]) {
		t.Errorf("path_confidence is not calibrated on the validation set: high %d/%d, medium %d/%d, low %d/%d right", hi[1], hi[0], me[1], me[0], lo[1], lo[0])
	}
	if *update {
		golden(t, "validation.md", b.String())
		return
	}
	committed, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "catalog", "validation.md"))
	if err != nil {
		t.Fatalf("%v (run go test ./catalog -run TestValidation -update)", err)
	}
	want := parseFigures(string(committed))
	got := parseFigures(b.String())
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("validation figure %s is no longer computed (committed %d/%d)", k, w[0], w[1])
			continue
		}
		if g[1] != w[1] {
			// The set changed: figures of another set cannot be compared.
			// Adding or moving texts is a reviewed change: regenerate the
			// before column (CATALOG.md) and run -update.
			t.Errorf("validation figure %s: the set changed (%d texts, committed %d): regenerate validation-before.tsv, run -update and review the diff", k, g[1], w[1])
			continue
		}
		higherIsBetter := k != "unknown_with_evidence"
		wp, gp := pct(w[0], w[1]), pct(g[0], g[1])
		if higherIsBetter && gp < wp-1e-9 || !higherIsBetter && gp > wp+1e-9 {
			t.Errorf("validation figure %s dropped: %d/%d (%.1f%%), committed %d/%d (%.1f%%); fix the regression or, if the set changed, review and run -update", k, g[0], g[1], gp, w[0], w[1], wp)
		}
	}
}
