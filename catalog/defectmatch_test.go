package catalog

import (
	"errors"
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
		"unknown fault value": "anchor: \"a\"\n        fault: maybe",
		"empty fault":         "anchor: \"a\"\n        fault: ~",
		"fault alone":         "fault: null",
		"attrs alone":         `attrs: ["fault=null"]`,
		"bad attrs glob":      "anchor: \"a\"\n        attrs: [\"a**\"]",
		"null on an abort":    "anchor: \"a\"\n        kind: \"SIGABRT\"\n        fault: null",
	} {
		y := "schema: 1\nrevision: r\ndefects:\n  - id: SR-1-x\n    product: starrocks\n    title: t\n    match:\n      - " + m + "\n    links: [\"https://e.com/1\"]\n    tests: [\"t.txt\"]\n"
		_, err := Parse("bad.yaml", []byte(y))
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, ErrInvalid), "%s: %v", name, err)
	}
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
