package signature

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/crashsig/crashsig/symbolize"
)

// The key-shape measurement (doc.go, "Key shape"): on TRAINING data only
// (testdata/validation is held out and never read here), how often two
// reports of one defect share a key, and how often reports of different
// defects collide on one.
//
// Pairs of one defect:
//   - corpus: testdata/corpus/*/labels.jsonl `duplicate_of`;
//   - catalog: two real logs named in `tests:` of one entry of
//     catalog/data/defects-*.yaml (variants and validation texts excluded);
//   - variants: testdata/defects/*/variants/*.txt against the log named on
//     their first line (frames elided, another print format, another
//     inlining).
//
// Collisions: two logs named by different catalog defects with one key
// (each defect pair counted once), and two corpus texts labelled with
// different defects (not duplicate_of each other, not tests of one catalog
// defect) with one key. EMPTY keys (and sig/13's CORRUPTED ones) neither share nor collide.

type shapePair struct{ a, b, why string }

type shapeData struct {
	crashes map[string]*symbolize.Crash // testdata-relative path → primary incident
	pairs   []shapePair
	// defectLogs: catalog defect id → its logs (real and variants).
	defectLogs map[string][]string
	// corpusDefect: corpus file → its labelled defect; sameDefect links
	// corpus files known to be one defect (duplicate_of, one catalog entry).
	corpusDefect map[string]string
	sameDefect   map[[2]string]bool
}

var variantHeadRE = regexp.MustCompile(`^\[crashsig (?:generated|hand-written) variant of ([^:]+):`)

func loadShapeData(t testing.TB) *shapeData {
	t.Helper()
	d := &shapeData{crashes: map[string]*symbolize.Crash{}, defectLogs: map[string][]string{},
		corpusDefect: map[string]string{}, sameDefect: map[[2]string]bool{}}
	link := func(a, b string) {
		if a > b {
			a, b = b, a
		}
		d.sameDefect[[2]string{a, b}] = true
	}
	held := func(rel string) bool { return strings.HasPrefix(rel, "validation/") }
	// Corpus labels.
	for _, l := range readLabels(t) {
		rel, err := filepath.Rel(filepath.Join("..", "testdata"), filepath.Join(l.dir, l.File))
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		d.corpusDefect[rel] = l.Defect
		if l.DuplicateOf != nil {
			dup := filepath.ToSlash(filepath.Join(filepath.Dir(rel), *l.DuplicateOf))
			d.pairs = append(d.pairs, shapePair{rel, dup, "corpus"})
			link(rel, dup)
		}
	}
	// Catalog defects.
	files, err := filepath.Glob(filepath.Join("..", "catalog", "data", "defects-*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, fn := range files {
		b, err := os.ReadFile(fn)
		require.NoError(t, err)
		var cf struct {
			Defects []struct {
				ID    string   `yaml:"id"`
				Tests []string `yaml:"tests"`
			} `yaml:"defects"`
		}
		require.NoError(t, yaml.Unmarshal(b, &cf), fn)
		for _, df := range cf.Defects {
			var real []string
			for _, p := range df.Tests {
				rel := strings.TrimPrefix(p, "testdata/")
				if held(rel) {
					continue
				}
				d.defectLogs[df.ID] = append(d.defectLogs[df.ID], rel)
				if !strings.Contains(rel, "/variants/") {
					real = append(real, rel)
				}
			}
			for i := range real {
				for j := i + 1; j < len(real); j++ {
					d.pairs = append(d.pairs, shapePair{real[i], real[j], "catalog"})
				}
			}
			for i, a := range d.defectLogs[df.ID] {
				for _, b := range d.defectLogs[df.ID][i+1:] {
					link(a, b)
				}
			}
		}
	}
	// Variants.
	vs, err := filepath.Glob(filepath.Join("..", "testdata", "defects", "*", "variants", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, vs)
	for _, v := range vs {
		b, err := os.ReadFile(v)
		require.NoError(t, err)
		m := variantHeadRE.FindSubmatch(b)
		require.NotNil(t, m, "%s: no variant header", v)
		src := strings.TrimPrefix(string(m[1]), "testdata/")
		rel, err := filepath.Rel(filepath.Join("..", "testdata"), v)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		if held(src) {
			continue
		}
		d.pairs = append(d.pairs, shapePair{src, rel, "variant"})
		link(src, rel)
	}
	need := map[string]bool{}
	for _, p := range d.pairs {
		need[p.a], need[p.b] = true, true
	}
	for _, logs := range d.defectLogs {
		for _, l := range logs {
			need[l] = true
		}
	}
	for f := range d.corpusDefect {
		need[f] = true
	}
	for f := range need {
		require.False(t, held(f), "training data names a held-out text: %s", f)
		d.crashes[f] = primary(parseTestdata(t, f))
	}
	return d
}

// shapeResult is the measurement of one shape.
type shapeResult struct {
	shared, pairs   map[string]int // by pair source (corpus, catalog, variant)
	catalogCollide  int            // defect pairs with a common key
	corpusCollide   int            // corpus file pairs of different defects with one key
	corpusKeys      int            // distinct keys over the corpus
	collisionKeys   []string
	missed          []string
	meanFrames      float64
	catalogDefPairs int
}

func (r shapeResult) total() (int, int) {
	s, p := 0, 0
	for k := range r.pairs {
		s += r.shared[k]
		p += r.pairs[k]
	}
	return s, p
}

func keyed(k string) bool {
	return k != "" && !strings.HasPrefix(k, "EMPTY") && !strings.HasPrefix(k, "CORRUPTED")
}

func measureShape(t testing.TB, d *shapeData, g *Generator) shapeResult {
	keys := map[string]string{}
	frames := 0
	for f, c := range d.crashes {
		if c == nil {
			continue
		}
		s := g.Generate(c)
		keys[f] = s.Key
		frames += len(s.Frames)
	}
	r := shapeResult{shared: map[string]int{}, pairs: map[string]int{}, meanFrames: float64(frames) / float64(len(keys))}
	for _, p := range d.pairs {
		r.pairs[p.why]++
		if ka := keys[p.a]; keyed(ka) && ka == keys[p.b] {
			r.shared[p.why]++
		} else {
			r.missed = append(r.missed, fmt.Sprintf("%s %s: %q / %q", p.why, p.a, keys[p.a], keys[p.b]))
		}
	}
	// Catalog collisions: defect pairs with a common key among their logs.
	byKey := map[string]map[string]bool{}
	for id, logs := range d.defectLogs {
		for _, l := range logs {
			if k := keys[l]; keyed(k) {
				if byKey[k] == nil {
					byKey[k] = map[string]bool{}
				}
				byKey[k][id] = true
			}
		}
	}
	pairSeen := map[[2]string]bool{}
	for k, ids := range byKey {
		if len(ids) < 2 {
			continue
		}
		var l []string
		for id := range ids {
			l = append(l, id)
		}
		sort.Strings(l)
		for i := range l {
			for j := i + 1; j < len(l); j++ {
				if !pairSeen[[2]string{l[i], l[j]}] {
					pairSeen[[2]string{l[i], l[j]}] = true
					r.catalogCollide++
				}
			}
		}
		r.collisionKeys = append(r.collisionKeys, "catalog "+k+" "+strings.Join(l, ","))
	}
	// Corpus collisions.
	var corpus []string
	for f := range d.corpusDefect {
		corpus = append(corpus, f)
	}
	sort.Strings(corpus)
	ck := map[string]bool{}
	for i, a := range corpus {
		if keyed(keys[a]) {
			ck[keys[a]] = true
		}
		for _, b := range corpus[i+1:] {
			if !keyed(keys[a]) || keys[a] != keys[b] || d.sameDefect[[2]string{a, b}] || d.corpusDefect[a] == d.corpusDefect[b] {
				continue
			}
			r.corpusCollide++
			r.collisionKeys = append(r.collisionKeys, "corpus "+keys[a]+" "+a+" "+b)
		}
	}
	r.corpusKeys = len(ck)
	sort.Strings(r.collisionKeys)
	sort.Strings(r.missed)
	return r
}

// shapeCandidate names a key shape for the measurement.
type shapeCandidate struct {
	name   string
	frames int
	shape  keyShape
}

func shapeCandidates() []shapeCandidate {
	var out []shapeCandidate
	kinds := []string{"full", "class", "none"}
	for n := 1; n <= 4; n++ {
		for k := kindFull; k <= kindClass; k++ {
			out = append(out, shapeCandidate{fmt.Sprintf("sig/7 layout N=%d kind=%s", n, kinds[k]), n, keyShape{kind: k}})
		}
	}
	for _, s := range []int{1, 2, 3} {
		for _, lead := range []int{0, 1, 2} {
			for k := kindFull; k <= kindNone; k++ {
				out = append(out, shapeCandidate{fmt.Sprintf("generic S=%d lead=%d kind=%s", s, lead, kinds[k]), 4, keyShape{significant: s, lead: lead, kind: k, fallback: 4}})
			}
		}
		out = append(out, shapeCandidate{fmt.Sprintf("generic S=%d lead=1 all kind=class", s), 4, keyShape{significant: s, lead: 1, leadAll: true, kind: kindClass, fallback: 4}})
	}
	for _, fb := range []int{1, 2, 3, 4} {
		out = append(out, shapeCandidate{fmt.Sprintf("generic S=1 lead=1 kind=class fallback=%d", fb), 4, keyShape{significant: 1, lead: 1, kind: kindClass, fallback: fb}})
	}
	for _, s := range []int{1, 2} {
		out = append(out, shapeCandidate{fmt.Sprintf("product-only S=%d lead=1 third-party leads kind=class", s), 4,
			keyShape{significant: s, lead: 1, productOnly: true, productLead: true, kind: kindClass, fallback: 3}})
		for _, lead := range []int{0, 1} {
			out = append(out, shapeCandidate{fmt.Sprintf("product-only S=%d lead=%d kind=class", s, lead), 4, keyShape{significant: s, lead: lead, productOnly: true, kind: kindClass, fallback: 4}})
		}
	}
	return out
}

// TestMeasureKeyShapes prints the training figures of every candidate
// shape (SHAPEVERBOSE=1 also lists misses and collisions) and checks the
// default shape's figures against the floor recorded in EVIDENCE.md.
func TestMeasureKeyShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("parses every training log")
	}
	d := loadShapeData(t)
	// The default shape (Algorithm's) first: its figures are checked.
	def := measureShape(t, d, Default())
	s, p := def.total()
	t.Logf("default (%s): shared %d/%d (%.1f%%), collisions: catalog %d defect pairs, corpus %d pairs over %d keys",
		Algorithm, s, p, 100*float64(s)/float64(p), def.catalogCollide, def.corpusCollide, def.corpusKeys)
	// Floors from the measurements in EVIDENCE.md (crashsig-sig/8 at
	// a864548: 188/209 shared, 3 catalog defect pairs and 4 corpus pairs
	// colliding; crashsig-sig/9 on 2026-12-01: 218/243, the same
	// collisions): two
	// reports of one defect share a key ≥ 85%, reports of different
	// defects collide on ≤ 3% of the corpus keys.
	assert.GreaterOrEqual(t, 100*s, 85*p, "pair sharing of the default shape fell below 85%%")
	assert.LessOrEqual(t, 100*def.corpusCollide, 3*def.corpusKeys, "corpus collisions %v", def.collisionKeys)
	verbose := os.Getenv("SHAPEVERBOSE") != ""
	for _, c := range shapeCandidates() {
		g, err := NewGenerator(Options{Frames: c.frames})
		require.NoError(t, err)
		g.shape = c.shape
		if c.shape.significant == 0 {
			g.frames = c.frames // crashsig-sig/7: the first N frames outside the rules
		} else {
			g.frames = c.shape.lead + c.shape.significant
		}
		r := measureShape(t, d, g)
		s, p := r.total()
		t.Logf("%-38s shared %3d/%3d (corpus %d/%d, catalog %d/%d, variant %d/%d)  collisions: catalog %d defect pairs, corpus %d pairs  corpus keys %d  mean frames %.2f",
			c.name, s, p, r.shared["corpus"], r.pairs["corpus"], r.shared["catalog"], r.pairs["catalog"], r.shared["variant"], r.pairs["variant"],
			r.catalogCollide, r.corpusCollide, r.corpusKeys, r.meanFrames)
		if verbose && strings.Contains(c.name, os.Getenv("SHAPEVERBOSE")) {
			for _, m := range r.missed {
				t.Logf("    miss %s", m)
			}
			for _, k := range r.collisionKeys {
				t.Logf("    collide %s", k)
			}
		}
	}
	// Ablation: the default shape without one normalisation of
	// crashsig-sig/9 at a time, and without all of them.
	for _, ab := range []struct {
		name string
		edit func(g *Generator)
	}{
		{"without moved_namespaces", func(g *Generator) { g.moved = nil }},
		{"without the named frame below an address", func(g *Generator) { g.shape.keepAddress = true }},
		{"without cut names keyed by their scope", func(g *Generator) { g.shape.keepCut = true }},
		{"with lambdas keyed as their owner (rejected)", func(g *Generator) { g.shape.lambdaOwner = true }},
		{"without all sig/9 normalisations (sig/8 walk)", func(g *Generator) { g.moved = nil; g.shape.keepAddress = true; g.shape.keepCut = true }},
	} {
		ng := *Default()
		ab.edit(&ng)
		r := measureShape(t, d, &ng)
		s, p := r.total()
		t.Logf("%-48s shared %3d/%3d  collisions: catalog %d defect pairs, corpus %d pairs over %d keys", ab.name, s, p, r.catalogCollide, r.corpusCollide, r.corpusKeys)
		if verbose && strings.Contains(ab.name, os.Getenv("SHAPEVERBOSE")) {
			for _, m := range r.missed {
				t.Logf("    miss %s", m)
			}
		}
	}
	// Ablation: the default shape without one generic rule at a time.
	for _, drop := range DefaultRules() {
		if drop.Role != RoleGeneric {
			continue
		}
		var rules []Rule
		for _, r := range DefaultRules() {
			if r.ID != drop.ID {
				rules = append(rules, r)
			}
		}
		g, err := NewGenerator(Options{Rules: rules})
		require.NoError(t, err)
		r := measureShape(t, d, g)
		s, p := r.total()
		t.Logf("without generic rule %-20s shared %3d/%3d  collisions: catalog %d defect pairs, corpus %d pairs", drop.ID, s, p, r.catalogCollide, r.corpusCollide)
		if verbose && strings.Contains("without "+drop.ID, os.Getenv("SHAPEVERBOSE")) {
			for _, m := range r.missed {
				t.Logf("    miss %s", m)
			}
		}
	}
}

// TestKindClass: the key carries the class of the kind; a crash whose
// signal was not printed is of the abort class when its stack aborts.
func TestKindClass(t *testing.T) {
	for kind, want := range map[string]string{
		"SIGSEGV": "FAULT", "SIGBUS": "FAULT", "SIGFPE": "FAULT", "CRASH": "FAULT", "ASAN(heap-use-after-free)": "FAULT", "JVM(SIGSEGV)": "FAULT",
		"ASAN(ABRT on unknown address)": "ABORT", "UBSAN(ABRT on unknown address)": "ABORT", "ASAN(SEGV on unknown address)": "FAULT",
		"SIGABRT": "ABORT", "FATAL": "ABORT", "CHECK(a == b)": "ABORT", "ASSERT(p != nullptr)": "ABORT", "terminate(std::bad_alloc)": "ABORT",
		"THREADS": "THREADS", "LEAK": "LEAK", "TERM(SIGTERM)": "TERM(SIGTERM)",
	} {
		assert.Equal(t, want, kindClassOf(kind), kind)
	}
	// gdb's bt of a core prints no signal: the abort path says ABORT.
	c := crash(symbolize.KindUnknown, "", fr("raise", "abort", "doris::Foo::bar()"))
	s := Generate(c)
	assert.Equal(t, "CRASH", s.Kind)
	assert.Equal(t, "ABORT | doris::Foo::bar", s.Key)
	assert.True(t, hasTrace(s, "key kind ABORT: no signal printed, and #0 raise is rule 'abort-path'"), strings.Join(s.Trace, "\n"))
	s = Generate(crash(symbolize.KindUnknown, "", fr("doris::Foo::bar()")))
	assert.Equal(t, "FAULT | doris::Foo::bar", s.Key)
	// The same CHECK printed with and without its message keys alike.
	chk := crash(symbolize.KindCheck, "SIGABRT", fr("google::LogMessage::Fail()", "doris::Foo::bar()"))
	chk.CheckExpr = "a == b"
	plain := crash(symbolize.KindSignal, "SIGABRT", fr("google::LogMessage::Fail()", "doris::Foo::bar()"))
	assert.Equal(t, Generate(chk).Key, Generate(plain).Key)
	assert.NotEqual(t, Generate(chk).Kind, Generate(plain).Kind)
}

// TestGenericFrames: generic frames lead the key only at the crash site
// and only for crash-site rules; below the first significant frame they
// are skipped; a thread dump has no crash site.
func TestGenericFrames(t *testing.T) {
	g2, err := NewGenerator(Options{Frames: 2})
	require.NoError(t, err)
	c := crash(symbolize.KindSignal, "SIGSEGV", fr(
		"std::_Hashtable<long, std::pair<long const, int> >::find(long const&)", // libstdc++: never leads
		"starrocks::Tablet::rowset_with_max_version()",
		"std::vector<unsigned int, std::allocator<unsigned int> >::_M_range_insert()", // libstdc++ below the first significant frame: skipped
		"starrocks::TabletManager::find_best_tablet_to_compaction()",
	))
	s := g2.Generate(c)
	assert.Equal(t, "FAULT | starrocks::Tablet::rowset_with_max_version | starrocks::TabletManager::find_best_tablet_to_compaction", s.Key, strings.Join(s.Trace, "\n"))
	assert.Equal(t, "std::_Hashtable::find", s.CrashFrame)
	assert.True(t, hasTrace(s, "skipped #0 std::_Hashtable::find: generic rule 'libstdcxx'"), strings.Join(s.Trace, "\n"))
	assert.True(t, hasTrace(s, "below the first significant frame"), strings.Join(s.Trace, "\n"))
	// The JVM is a crash-site rule: its crash frame leads, the BE's JNI caller follows.
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("JNIEnv_::DeleteGlobalRef(_jobject*)", "jni_DeleteGlobalRef", "doris::JdbcConnector::close()")))
	assert.Equal(t, "FAULT | JNIEnv_::DeleteGlobalRef | doris::JdbcConnector::close", s.Key)
	td := crash(symbolize.KindThreadDump, "", fr("JNIEnv_::CallVoidMethod(_jobject*, _jmethodID*, ...)", "doris::Foo::bar()"))
	td.Threads[0].Crashed = false
	s = Generate(td)
	assert.Equal(t, "THREADS | doris::Foo::bar", s.Key)
	assert.True(t, hasTrace(s, "a thread dump has no crash site"), strings.Join(s.Trace, "\n"))
}
