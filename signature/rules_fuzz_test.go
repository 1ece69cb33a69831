package signature

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

// FuzzLoadRules: a caller's rule file (LoadRules) never panics; it is
// refused with ErrRule or yields rules that ValidateRules accepts, that a
// Generator compiles as ExtraRules (or refuses with ErrRule: an id of the
// defaults), and that give a bounded key; loading the same bytes again gives
// the same rules.
//
//	go test ./signature -run XXX -fuzz FuzzLoadRules -fuzztime 60s
func FuzzLoadRules(f *testing.F) {
	f.Add([]byte("rules:\n  - id: site-wrapper\n    role: irrelevant\n    why: our in-house crash reporter wraps every handler\n    names: [\"acme::report_crash\"]\n"))
	f.Add([]byte("rules:\n  - id: x\n    role: generic\n    why: a b c d\n    regexp: 'a(b|c)*'\n"))
	f.Add([]byte("rules:\n  - id: x\n    role: prefix\n    why: a b c d\n    prefixes: [\"acme::\"]\n    module: 'libacme\\.so'\n"))
	f.Add([]byte("moved_namespaces: [{from: \"a::b::\", to: \"a::\", why: w}]\n"))
	f.Add([]byte("rules: [{id: a, role: sentinel, trampoline: true, why: w, names: [x]}]\n"))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Add([]byte(defaultRulesText(f)))
	crash := &symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGSEGV", Threads: []symbolize.Thread{{Crashed: true, Frames: []symbolize.Frame{
		{Function: "acme::report_crash()"}, {Function: "memcpy"}, {Function: "doris::segment_v2::ColumnReader::read_page()"}, {Function: "start_thread"},
	}}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := LoadRules(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrRule) {
				t.Fatalf("error without ErrRule: %v", err)
			}
			return
		}
		if err := ValidateRules(rules); err != nil {
			t.Fatalf("loaded rules do not validate: %v", err)
		}
		again, err := LoadRules(bytes.NewReader(data))
		if err != nil || !reflect.DeepEqual(rules, again) {
			t.Fatalf("second load differs (err %v)", err)
		}
		g, err := NewGenerator(Options{ExtraRules: rules})
		if err != nil {
			if !errors.Is(err, ErrRule) {
				t.Fatalf("generator error without ErrRule: %v", err)
			}
			return
		}
		s := g.Generate(crash)
		if len(s.Key) > 4096 || len(s.Frames) > g.frames+fallbackFrames {
			t.Fatalf("unbounded key: %d bytes, %d frames", len(s.Key), len(s.Frames))
		}
	})
}

// defaultRulesText is the embedded default rule file, as a seed.
func defaultRulesText(tb testing.TB) string {
	b, err := embeddedRules.ReadFile("rules/default.yaml")
	require.NoError(tb, err)
	return string(b)
}

// TestLoadRulesTooLarge: a rule file over the limit is refused, not read
// in part (a cut YAML list may parse and silently lose its last rules).
func TestLoadRulesTooLarge(t *testing.T) {
	rule := "rules:\n  - id: site-wrapper\n    role: irrelevant\n    why: our in-house crash reporter wraps every handler\n    names: [\"acme::report_crash\"]\n"
	// A valid file padded with a comment to exactly the limit loads.
	pad := "# " + strings.Repeat("x", maxRuleFile-len(rule)-3) + "\n"
	at := rule + pad
	require.Len(t, at, maxRuleFile)
	rules, err := LoadRules(strings.NewReader(at))
	require.NoError(t, err)
	require.Len(t, rules, 1)
	assert.Equal(t, "site-wrapper", rules[0].ID)

	// One byte more is refused by its size, before the YAML is read.
	_, err = LoadRules(strings.NewReader(at + "\n"))
	require.ErrorIs(t, err, ErrRule)
	assert.Contains(t, err.Error(), "larger than")
}
