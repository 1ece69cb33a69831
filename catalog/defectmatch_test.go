package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// faultCatalog is a two-defect catalog written like SR-43793 and SR-51292:
// both pk_dump crashes, told apart by the fault address.
const faultCatalog = `schema: 1
revision: r
defects:
  - id: SR-1-dangling
    product: starrocks
    title: dangling shard
    match:
      - kind: "SIGSEGV*"
        anchor: "starrocks::*Index::pk_dump"
        fault: not-null
    links: ["https://e.com/1"]
    tests: ["t.txt"]
  - id: SR-2-null
    product: starrocks
    title: null index
    match:
      - kind: "SIGSEGV*"
        anchor: "starrocks::*Index::pk_dump"
        fault: null
      - anchor: "starrocks::*Index::pk_dump"
        attrs: ["inlined=*"]
        fault: unknown
    links: ["https://e.com/2"]
    tests: ["t.txt"]
`

func TestDefectFaultAndAttrs(t *testing.T) {
	f, err := Parse("fault.yaml", []byte(faultCatalog))
	require.NoError(t, err)
	require.Equal(t, FaultNotNull, f.Defects[0].Match[0].Fault)
	require.Equal(t, FaultNull, f.Defects[1].Match[0].Fault, "`fault: null` (a YAML null) reads as the word")
	c, err := New(f)
	require.NoError(t, err)

	// Real logs: corpus starrocks/016 faults at 0x100000001 (a dangling
	// shard), starrocks/015 at 0x0 (the unloaded index).
	p := parseLog(t, "testdata/corpus/starrocks/016-pk-dump-persistentindex-immutable-shard.txt")
	v := c.Classify(p.crashes[0], p.sigs[0])
	require.NotNil(t, v.Defect)
	assert.Equal(t, "SR-1-dangling", v.Defect.ID)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "fault not-null (address 0x100000001)")

	p = parseLog(t, "testdata/corpus/starrocks/015-pk-dump-primaryindex-null-fullsig.txt")
	require.Contains(t, p.sigs[0].Attributes, "fault=null")
	v = c.Classify(p.crashes[0], p.sigs[0])
	require.NotNil(t, v.Defect)
	assert.Equal(t, "SR-2-null", v.Defect.ID)
	assert.Equal(t, 0, v.Defect.Match)

	// The gdb variant prints no fault address and no inline frame: neither
	// the null nor the not-null alternative holds, nor the attrs one.
	p = parseLog(t, "testdata/defects/starrocks/variants/015-pk-dump-primaryindex-null-fullsig.variant.txt")
	require.False(t, p.crashes[0].HasFaultAddress)
	assert.Nil(t, c.Classify(p.crashes[0], p.sigs[0]).Defect)
	// ... and with an inline attribute the unknown-fault alternative does.
	sig := p.sigs[0]
	sig.Attributes = append(sig.Attributes, "inlined=starrocks::PrimaryIndex::size")
	v = c.Classify(p.crashes[0], sig)
	require.NotNil(t, v.Defect)
	assert.Equal(t, "SR-2-null", v.Defect.ID)
	assert.Equal(t, 1, v.Defect.Match)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), `attribute inlined=starrocks::PrimaryIndex::size ~ "inlined=*"`)
}

func TestDefectFaultDecodeErrors(t *testing.T) {
	for name, m := range map[string]string{
		"unknown fault value":  "anchor: \"a\"\n        fault: maybe",
		"empty fault":          "anchor: \"a\"\n        fault: ~",
		"fault alone":          "fault: null",
		"attrs alone":          `attrs: ["fault=null"]`,
		"bad attrs glob":       "anchor: \"a\"\n        attrs: [\"a**\"]",
		"null on an abort":     "anchor: \"a\"\n        kind: \"SIGABRT\"\n        fault: null",
		"types without anchor": "message: \"x\"\n        types: [\"doris::RowsetId\"]",
		"bad types glob":       "anchor: \"a\"\n        types: [\"a**\"]",
	} {
		y := "schema: 1\nrevision: r\ndefects:\n  - id: SR-1-x\n    product: starrocks\n    title: t\n    match:\n      - " + m + "\n    links: [\"https://e.com/1\"]\n    tests: [\"t.txt\"]\n"
		_, err := Parse("bad.yaml", []byte(y))
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, ErrInvalid), "%s: %v", name, err)
	}
}

// TestDefectTypes: `types` reads the product names inside the anchor
// frame's raw name (template arguments, a lambda's owner), which the
// normalized name drops: a lookup in a std hash table holds for the table of
// the type the rule names and for no other table.
func TestDefectTypes(t *testing.T) {
	const y = `schema: 1
revision: r
defects:
  - id: DORIS-1-rowset-id-set
    product: doris
    title: rowset id set
    match:
      - kind: "SIGSEGV*"
        anchor: "std::_Hashtable::find"
        types: ["doris::RowsetId"]
    links: ["https://e.com/1"]
    tests: ["t.txt"]
stack:
  product_namespaces: ["doris"]
`
	f, err := Parse("types.yaml", []byte(y))
	require.NoError(t, err)
	c, err := New(f)
	require.NoError(t, err)
	dump := func(typ string) string {
		return "*** SIGSEGV address not mapped to object (@0x0) received by PID 1 (TID 2 OR 0x7f0000000000) from PID 0; stack trace: ***\n" +
			" 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /src/be/src/common/signal_handler.h:421\n" +
			" 1# 0x00007FEE2C7EA520 in /lib/x86_64-linux-gnu/libc.so.6\n" +
			" 2# std::_Hashtable<" + typ + ", " + typ + ", std::allocator<" + typ + ">, std::__detail::_Identity, std::equal_to<" + typ + ">, std::hash<" + typ + "> >::find(" + typ + " const&) at /usr/include/c++/11/bits/hashtable.h:1577\n" +
			" 3# start_thread in /lib64/libpthread.so.0\n"
	}
	classify := func(text string) Verdict {
		cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "t"})
		require.NoError(t, err)
		require.Len(t, cs, 1)
		return c.Classify(cs[0], signature.Generate(cs[0]))
	}
	v := classify(dump("doris::RowsetId"))
	require.NotNil(t, v.Defect, "%v", v.Evidence)
	assert.Equal(t, "DORIS-1-rowset-id-set", v.Defect.ID)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), `doris::RowsetId ~ "doris::RowsetId"`)
	assert.Nil(t, classify(dump("doris::TabletUid")).Defect, "a table of another type")
}

// TestAnyThreadCustomRules: any_thread looks at other threads' normalized
// names, which a caller's own signature rules do not change (rules decide
// what enters the key): a user rule that makes the other thread's frame
// irrelevant still leaves it visible to any_thread, with the user's
// generator's signature as with the default one (review: any_thread
// normalizes with signature.Default()).
func TestAnyThreadCustomRules(t *testing.T) {
	c := evidenceCat(t)
	gen, err := signature.NewGenerator(signature.Options{ExtraRules: []signature.Rule{{
		ID: "user-other-work", Role: signature.RoleIrrelevant, Why: "user rule", Names: []string{"starrocks::Other::work"},
	}}})
	require.NoError(t, err)
	const other = "starrocks::Other::work()"
	assert.Equal(t, signature.Default().Normalize(other), gen.Normalize(other), "names do not depend on rules")
	crash := &symbolize.Crash{Threads: []symbolize.Thread{
		{Crashed: true, Frames: []symbolize.Frame{{Function: "starrocks::Foo::crash()"}, {Function: "starrocks::Foo::caller()"}}},
		{Name: "worker", Frames: []symbolize.Frame{{Function: other}}},
	}}
	for _, g := range []*signature.Generator{gen, signature.Default()} {
		v := c.Classify(crash, g.Generate(crash))
		require.NotNil(t, v.Defect)
		assert.Equal(t, "SR-1-anchor", v.Defect.ID)
		assert.Contains(t, strings.Join(v.Evidence, "\n"), `thread 1 ("worker") #0 starrocks::Other::work ~ "starrocks::Other::work"`)
	}
	// Without the other thread the alternative does not hold.
	crash.Threads = crash.Threads[:1]
	v := c.Classify(crash, gen.Generate(crash))
	assert.Nil(t, v.Defect)
}

// referenceCatalog returns a second copy of the catalog files' catalog
// whose glob index tries every glob in turn (globIndex.reference).
func referenceCatalog(t testing.TB, fast *Catalog, build func(testing.TB) *Catalog) *Catalog {
	t.Helper()
	ref := build(t)
	ref.ix.reference = true
	require.Equal(t, len(fast.ix.globs), len(ref.ix.globs))
	return ref
}

// assertSameClassification classifies every incident of logs with the fast
// catalog and its reference copy: the glob hits of the crashing stack (in
// order) and the whole verdict must be the same.
func assertSameClassification(t *testing.T, fast, ref *Catalog, cases []benchCase, names []string) {
	t.Helper()
	hitsOf := func(c *Catalog, bc *benchCase) []hit {
		sv := c.view(bc.crash, bc.frames, bc.sig)
		defer c.releaseView(sv)
		// never nil: a pooled view keeps an empty slice where a new one
		// has nil, and the pool may drop views at any time (-race does)
		return append([]hit{}, sv.hits...)
	}
	for i := range cases {
		bc := &cases[i]
		require.Equal(t, hitsOf(ref, bc), hitsOf(fast, bc), "%s: glob hits", names[i])
		require.Equal(t, ref.Classify(bc.crash, bc.sig), fast.Classify(bc.crash, bc.sig), "%s: verdict", names[i])
	}
}

// TestIndexAgreesWithReferenceOnCorpus: the automaton (with its node layout
// and shape checks) and the straightforward evaluation of every glob give
// the same hits and verdicts on every corpus incident and every test log,
// with the default catalog and with 2,000 generated defects added.
func TestIndexAgreesWithReferenceOnCorpus(t *testing.T) {
	var cases []benchCase
	var names []string
	add := func(rel string) {
		p := parseLog(t, rel)
		for i, c := range p.crashes {
			cases = append(cases, benchCase{c, p.sigs[i], FrameNames(c)})
			names = append(names, fmt.Sprintf("%s#%d", rel, i))
		}
	}
	for _, rel := range testLogs(t) { // the corpus and the defects' test logs
		add(rel)
	}
	require.Greater(t, len(cases), 200)
	fast := defaultCatalog(t)
	assertSameClassification(t, fast, referenceCatalog(t, fast, defaultCatalog), cases, names)

	gen := func(t testing.TB) *Catalog { return generatedCatalog(t, 2000) }
	fastGen := gen(t)
	bench := benchCrashes(t)
	benchNames := make([]string, len(bench))
	for i := range bench {
		benchNames[i] = fmt.Sprintf("bench case %d", i)
	}
	assertSameClassification(t, fastGen, referenceCatalog(t, fastGen, gen), bench, benchNames)
}

// TestGlobIndexOrderAndShapes: for globs sharing a literal (an exact glob,
// which the index keeps in a map, beside prefix, suffix, contains and
// general ones), matches returns the ids the reference evaluation returns,
// in the same order, for names where the literal is the whole name, a
// prefix, a suffix, inside, repeated or absent.
func TestGlobIndexOrderAndShapes(t *testing.T) {
	texts := []string{"*foo", "foo", "foo*", "*foo*", "f?o*", "*o", "*oo", "oo", "*fo*o*", "foofoo", "*foo::*", "x*foo", "*"}
	var globs []glob
	for _, s := range texts {
		g, err := compileGlob(s)
		require.NoError(t, err)
		globs = append(globs, g)
	}
	assert.Equal(t, shapeSuffix, globs[0].shape)
	assert.Equal(t, shapeExact, globs[1].shape)
	assert.Equal(t, shapePrefix, globs[2].shape)
	assert.Equal(t, shapeContains, globs[3].shape)
	assert.Equal(t, shapeGeneral, globs[4].shape)
	ix := buildGlobIndex(globs)
	require.Len(t, ix.exact, 3) // foo, oo, foofoo
	ref := buildGlobIndex(globs)
	ref.reference = true
	sc := ix.scratchFor()
	for _, name := range []string{"foo", "oo", "o", "foofoo", "xfoo", "foox", "xfoox", "xfoo::y", "fxo", "", "foo::foo", "ofoo", "foofo"} {
		want := ref.matches(nil, name, nil)
		got := ix.matches(nil, name, sc)
		assert.Equal(t, want, got, "%q", name)
		for id, g := range globs {
			assert.Equal(t, g.match(name), slices.Contains(got, int32(id)), "%q ~ %q", texts[id], name)
		}
	}
}

// TestPredicateCreatorThrowOnly: DORIS-57100 is std::stod's uncaught throw
// in a storage predicate creator; a fault in a creator is not it.
func TestPredicateCreatorThrowOnly(t *testing.T) {
	c := defaultCatalog(t)
	gen := signature.Default()
	creator := "doris::IntegerPredicateCreator<(doris::PrimitiveType)9, (doris::PredicateType)1>::create(doris::TabletColumn const&, int, std::string const&, bool, doris::vectorized::Arena*)"
	thrown := &symbolize.Crash{Product: symbolize.ProductDoris, Kind: symbolize.KindSignal, Signal: "SIGABRT", Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed(
		"__GI_raise", "__GI_abort", "__gnu_cxx::__verbose_terminate_handler()", "std::terminate()", "__cxa_throw", "std::__throw_out_of_range(char const*)", creator, "doris::parse_to_predicate(doris::TabletColumn const&, unsigned int, doris::TCondition const&, doris::vectorized::Arena*, bool)")}}}
	v := c.Classify(thrown, gen.Generate(thrown))
	require.NotNil(t, v.Defect, "%v", v.Evidence)
	assert.Equal(t, "DORIS-57100-float-predicate-stod-out-of-range", v.Defect.ID)

	fault := &symbolize.Crash{Product: symbolize.ProductDoris, Kind: symbolize.KindSignal, Signal: "SIGSEGV", Threads: []symbolize.Thread{{Crashed: true, Frames: framesNamed(
		creator, "doris::parse_to_predicate(doris::TabletColumn const&, unsigned int, doris::TCondition const&, doris::vectorized::Arena*, bool)")}}}
	v = c.Classify(fault, gen.Generate(fault))
	if v.Defect != nil {
		assert.NotEqual(t, "DORIS-57100-float-predicate-stod-out-of-range", v.Defect.ID)
	}
}
