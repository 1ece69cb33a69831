package signature

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed rules/*.yaml
var embeddedRules embed.FS

// Role is what a rule makes of a frame it matches.
type Role string

// Rule roles.
const (
	// RoleIrrelevant frames are skipped: pure mechanism (signal handlers,
	// abort path, glog, terminate, sanitizer runtime, thread trampolines).
	RoleIrrelevant Role = "irrelevant"
	// RolePrefix frames are skipped but remembered: where a fault shows,
	// not where it was made (memcpy family, allocator, locks). They are
	// keyed only when nothing else remains, or when the rule is a
	// CrashSite rule and the frame is the crash frame; the first one
	// before the first kept frame adds the rule's Attribute.
	RolePrefix Role = "prefix"
	// RoleSentinel frames restart the signature: it begins after the last
	// sentinel found near the top of the stack (the signal handler).
	RoleSentinel Role = "sentinel"
	// RoleGeneric frames are code every defect passes through (libstdc++
	// containers and algorithms, the C library, the JVM, the products'
	// column and container helpers): Socorro's prefix list. Before the
	// first significant frame they lead the key (where it crashed); below
	// it they are skipped, and they never count as significant.
	RoleGeneric Role = "generic"
)

// Rule is one frame rule. A frame matches when its normalized name equals
// one of Names, starts with one of Prefixes, or is matched whole by
// Regexp; or, for a frame without a name, when its module's base name is
// matched whole by Module.
type Rule struct {
	// ID names the rule in traces; unique across a rule set.
	ID string `yaml:"id" json:"id"`
	// Role is irrelevant, prefix or sentinel.
	Role Role `yaml:"role" json:"role"`
	// Why is the reason for the rule, shown in traces. Mandatory.
	Why string `yaml:"why" json:"why"`
	// Names, Prefixes, Regexp and Module are the patterns (see Rule).
	Names    []string `yaml:"names,omitempty" json:"names,omitempty"`
	Prefixes []string `yaml:"prefixes,omitempty" json:"prefixes,omitempty"`
	Regexp   string   `yaml:"regexp,omitempty" json:"regexp,omitempty"`
	Module   string   `yaml:"module,omitempty" json:"module,omitempty"`
	// Attribute is added to the signature when a prefix rule matched the
	// leaf (e.g. leaf=memcpy-family, suspected-heap-corruption).
	Attribute string `yaml:"attribute,omitempty" json:"attribute,omitempty"`
	// Trampoline, on a sentinel, also skips the first unsymbolized frame
	// after it: the kernel's signal trampoline.
	Trampoline bool `yaml:"trampoline,omitempty" json:"trampoline,omitempty"`
	// CrashSite, on a prefix rule, keeps a matching frame in the key when
	// it is the crash frame (the first frame after the mechanism frames):
	// the key then names where it crashed (allocator, memcpy family,
	// libc) followed by the frames below it that the key keeps, as
	// Socorro's prefix list does. Further prefix frames between it and
	// the first kept frame are skipped.
	CrashSite bool `yaml:"crash_site,omitempty" json:"crash_site,omitempty"`
	// Aborts, on an irrelevant rule, says that its frames are the
	// process aborting (abort, assert, LOG(FATAL), terminate): a crash
	// whose signal was not printed (gdb's bt of a core) is then of the
	// abort class in the key (see doc.go, "Kind in the key").
	Aborts bool `yaml:"aborts,omitempty" json:"aborts,omitempty"`
	// KeyNames, on a crash-site or generic rule, name a kept frame in the
	// key by its function rather than by the variant the C library picked
	// for the CPU or the glibc version (`__memmove_avx_unaligned_erms`,
	// `__memcpy_ssse3_back` → memcpy) or by the spelling one printer
	// chose (a sanitizer's unscoped `partition_right`, gdb's
	// `pdqsort_detail::partition_right`): the first whose regexp matches
	// the whole normalized name wins; other names stay as they are.
	KeyNames []KeyName `yaml:"key_names,omitempty" json:"key_names,omitempty"`
	// LastResort, on a generic rule, keys its frames only when a stack
	// has no other frame to key (main: the bottom of the startup thread,
	// below whatever failed).
	LastResort bool `yaml:"last_resort,omitempty" json:"last_resort,omitempty"`
}

// KeyName maps the frame names matched whole by Regexp to Name.
type KeyName struct {
	Regexp string `yaml:"regexp" json:"regexp"`
	Name   string `yaml:"name" json:"name"`
}

type ruleFile struct {
	Rules []Rule `yaml:"rules"`
	// AppNamespaces are the top-level namespaces of the products' own code
	// (`doris::`): Signature.AppFrame is the first frame in one of them.
	// Only the embedded default files set them: Options has no field that
	// would carry a caller's, so LoadRules and LoadRulesFS refuse them.
	AppNamespaces []string `yaml:"app_namespaces"`
	// MovedNamespaces are scopes the products renamed between versions
	// (`doris::vectorized::` → `doris::`): key frames are named by the
	// newer scope, so one function keys alike across the versions. Only
	// the embedded default files set them, like AppNamespaces.
	MovedNamespaces []MovedNamespace `yaml:"moved_namespaces"`
}

// MovedNamespace is one scope renamed between versions of a product: a key
// frame beginning with From is named with To instead.
type MovedNamespace struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
	Why  string `yaml:"why"`
}

// ErrRule is wrapped by every error about an invalid rule or rule file.
var ErrRule = errors.New("signature: invalid rule")

// maxRuleFile bounds a rule file (the embedded default is about 33 KB): a
// larger one is refused with ErrRule rather than read in part.
const maxRuleFile = 4 << 20

// DefaultRules returns a copy of the embedded default rule set
// (signature/rules/*.yaml).
func DefaultRules() []Rule {
	return cloneRules(embeddedRuleFiles().Rules)
}

// cloneRules copies rules and the lists they hold.
func cloneRules(rules []Rule) []Rule {
	out := slices.Clone(rules)
	for i := range out {
		out[i].Names = slices.Clone(out[i].Names)
		out[i].Prefixes = slices.Clone(out[i].Prefixes)
		out[i].KeyNames = slices.Clone(out[i].KeyNames)
	}
	return out
}

// embeddedRuleFiles returns the embedded rule files, read and validated
// once (decoding and validating them was a quarter of the CLI's
// start-up, done three times: for the rules, the app namespaces and the
// moved namespaces). Callers must not change what it returns.
var embeddedRuleFiles = sync.OnceValue(func() ruleFile {
	f, err := loadRuleFiles(embeddedRules, "rules")
	if err != nil {
		// The embedded files are validated by the package tests.
		panic("signature: embedded rules: " + err.Error())
	}
	return f
})

// defaultAppNamespaces are the embedded files' app_namespaces, read once
// and never changed.
var defaultAppNamespaces = sync.OnceValue(func() []string {
	return embeddedRuleFiles().AppNamespaces
})

// defaultMovedNamespaces are the embedded files' moved_namespaces, read
// once and never changed.
var defaultMovedNamespaces = sync.OnceValue(func() []MovedNamespace {
	return embeddedRuleFiles().MovedNamespaces
})

// errAppNamespaces refuses app_namespaces outside the embedded defaults.
var errAppNamespaces = fmt.Errorf("%w: app_namespaces, moved_namespaces: only the embedded default rules (signature/rules/default.yaml) name the products' namespaces", ErrRule)

// LoadRules reads a YAML rule file (a top-level `rules:` list, see
// signature/rules/default.yaml) and validates it.
func LoadRules(r io.Reader) ([]Rule, error) {
	f, err := decodeRuleFile(r)
	if err != nil {
		return nil, err
	}
	if len(f.AppNamespaces) > 0 || len(f.MovedNamespaces) > 0 {
		return nil, errAppNamespaces
	}
	return f.Rules, nil
}

// decodeRuleFile reads and validates one rule file.
func decodeRuleFile(r io.Reader) (ruleFile, error) {
	var f ruleFile
	b, err := io.ReadAll(io.LimitReader(r, maxRuleFile+1))
	if err != nil {
		return f, err
	}
	if len(b) > maxRuleFile {
		// Cut, a YAML list may still parse and silently lose rules.
		return f, fmt.Errorf("%w: rule file larger than %d bytes", ErrRule, maxRuleFile)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return f, fmt.Errorf("%w: %v", ErrRule, err)
	}
	if err := ValidateRules(f.Rules); err != nil {
		return f, err
	}
	if err := validateAppNamespaces(f.AppNamespaces); err != nil {
		return f, err
	}
	if err := validateMovedNamespaces(f.MovedNamespaces); err != nil {
		return f, err
	}
	return f, nil
}

// validateAppNamespaces checks that every namespace is a top-level scope
// written as a prefix (`doris::`), listed once.
func validateAppNamespaces(ns []string) error {
	seen := map[string]bool{}
	for _, n := range ns {
		if !strings.HasSuffix(n, "::") || len(n) < 3 || strings.Contains(n[:len(n)-2], ":") || strings.ContainsAny(n, " <>(){}") {
			return fmt.Errorf("%w: app_namespaces: %q is not a top-level namespace written `name::`", ErrRule, n)
		}
		if seen[n] {
			return fmt.Errorf("%w: app_namespaces: %q listed twice", ErrRule, n)
		}
		seen[n] = true
	}
	return nil
}

// validateMovedNamespaces checks that every moved namespace is a scope
// written `a::b::`, renamed to a shorter or other scope `a::`, with a
// reason, listed once.
func validateMovedNamespaces(ms []MovedNamespace) error {
	seen := map[string]bool{}
	scope := func(s string) bool {
		return strings.HasSuffix(s, "::") && len(s) > 2 && !strings.ContainsAny(s, " <>(){}") && !strings.Contains(s, ":::")
	}
	for _, m := range ms {
		if !scope(m.From) || !scope(m.To) || m.From == m.To {
			return fmt.Errorf("%w: moved_namespaces: %q → %q is not a rename of a scope written `name::`", ErrRule, m.From, m.To)
		}
		if strings.TrimSpace(m.Why) == "" {
			return fmt.Errorf("%w: moved_namespaces: %q has no why", ErrRule, m.From)
		}
		if seen[m.From] {
			return fmt.Errorf("%w: moved_namespaces: %q listed twice", ErrRule, m.From)
		}
		seen[m.From] = true
	}
	return nil
}

// LoadRulesFS reads every *.yaml file of dir in fsys, in name order.
func LoadRulesFS(fsys fs.FS, dir string) ([]Rule, error) {
	f, err := loadRuleFiles(fsys, dir)
	if err != nil {
		return nil, err
	}
	if len(f.AppNamespaces) > 0 || len(f.MovedNamespaces) > 0 {
		return nil, errAppNamespaces
	}
	return f.Rules, nil
}

// loadRuleFiles reads every *.yaml file of dir in fsys, in name order, into
// one rule file.
func loadRuleFiles(fsys fs.FS, dir string) (ruleFile, error) {
	var all ruleFile
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return all, err
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := fsys.Open(n)
		if err != nil {
			return all, err
		}
		rf, err := decodeRuleFile(f)
		f.Close()
		if err != nil {
			return all, fmt.Errorf("%s: %w", n, err)
		}
		all.Rules = append(all.Rules, rf.Rules...)
		all.AppNamespaces = append(all.AppNamespaces, rf.AppNamespaces...)
		all.MovedNamespaces = append(all.MovedNamespaces, rf.MovedNamespaces...)
	}
	if err := ValidateRules(all.Rules); err != nil {
		return all, err
	}
	if err := validateAppNamespaces(all.AppNamespaces); err != nil {
		return all, err
	}
	if err := validateMovedNamespaces(all.MovedNamespaces); err != nil {
		return all, err
	}
	return all, nil
}

// ValidateRules checks a rule set: ids present and unique, known roles, a
// reason for every rule, at least one pattern, patterns that compile, no
// name or prefix listed twice.
func ValidateRules(rules []Rule) error {
	ids := map[string]bool{}
	pats := map[string]string{}
	for i, r := range rules {
		where := fmt.Sprintf("rule %d (%q)", i, r.ID)
		if r.ID == "" {
			return fmt.Errorf("%w: %s: no id", ErrRule, where)
		}
		if ids[r.ID] {
			return fmt.Errorf("%w: %s: duplicate id", ErrRule, where)
		}
		ids[r.ID] = true
		switch r.Role {
		case RoleIrrelevant, RolePrefix, RoleSentinel, RoleGeneric:
		default:
			return fmt.Errorf("%w: %s: unknown role %q", ErrRule, where, r.Role)
		}
		if strings.TrimSpace(r.Why) == "" {
			return fmt.Errorf("%w: %s: no why", ErrRule, where)
		}
		if r.CrashSite && r.Role != RolePrefix && r.Role != RoleGeneric {
			return fmt.Errorf("%w: %s: crash_site is only meaningful on a prefix or generic rule", ErrRule, where)
		}
		if r.Aborts && r.Role != RoleIrrelevant {
			return fmt.Errorf("%w: %s: aborts is only meaningful on an irrelevant rule", ErrRule, where)
		}
		if len(r.KeyNames) > 0 && !r.CrashSite && r.Role != RoleGeneric {
			return fmt.Errorf("%w: %s: key_names need crash_site or a generic rule", ErrRule, where)
		}
		if r.LastResort && r.Role != RoleGeneric {
			return fmt.Errorf("%w: %s: last_resort is only meaningful on a generic rule", ErrRule, where)
		}
		for _, kn := range r.KeyNames {
			if kn.Name == "" || kn.Regexp == "" {
				return fmt.Errorf("%w: %s: a key name needs regexp and name", ErrRule, where)
			}
			if _, err := regexp.Compile("^(?:" + kn.Regexp + ")$"); err != nil {
				return fmt.Errorf("%w: %s: key name %q: %v", ErrRule, where, kn.Name, err)
			}
		}
		if len(r.Names)+len(r.Prefixes) == 0 && r.Regexp == "" && r.Module == "" {
			return fmt.Errorf("%w: %s: no pattern", ErrRule, where)
		}
		for _, re := range []string{r.Regexp, r.Module} {
			if re == "" {
				continue
			}
			if _, err := regexp.Compile("^(?:" + re + ")$"); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrRule, where, err)
			}
		}
		for _, n := range r.Names {
			if n == "" {
				return fmt.Errorf("%w: %s: empty name", ErrRule, where)
			}
			if prev, dup := pats["n:"+n]; dup {
				return fmt.Errorf("%w: %s: name %q already in %s", ErrRule, where, n, prev)
			}
			pats["n:"+n] = r.ID
		}
		for _, p := range r.Prefixes {
			if p == "" {
				return fmt.Errorf("%w: %s: empty prefix", ErrRule, where)
			}
			if prev, dup := pats["p:"+p]; dup {
				return fmt.Errorf("%w: %s: prefix %q already in %s", ErrRule, where, p, prev)
			}
			pats["p:"+p] = r.ID
		}
	}
	return nil
}

// compiledRule is a Rule ready for matching.
type compiledRule struct {
	Rule
	re       *regexp.Regexp
	mod      *regexp.Regexp
	keyNames []*regexp.Regexp // parallel to Rule.KeyNames
}

// keyName is the name a kept crash-site frame takes in the key.
func (r *compiledRule) keyName(name string) string {
	for i, re := range r.keyNames {
		if re.MatchString(name) {
			return r.KeyNames[i].Name
		}
	}
	return name
}

// ruleSet matches normalized names against rules. Exact names are a map
// lookup; prefixes and regexps are tried in rule order. Sentinels win over
// irrelevant rules, which win over prefix rules.
type ruleSet struct {
	rules []*compiledRule
	exact map[string]*compiledRule
}

func compileRulesNoValidate(rules []Rule) *ruleSet {
	rs := &ruleSet{exact: map[string]*compiledRule{}}
	// Order by role priority so the first match is the strongest.
	order := map[Role]int{RoleSentinel: 0, RoleIrrelevant: 1, RolePrefix: 2, RoleGeneric: 3}
	sorted := append([]Rule(nil), rules...)
	sort.SliceStable(sorted, func(i, j int) bool { return order[sorted[i].Role] < order[sorted[j].Role] })
	for _, r := range sorted {
		cr := &compiledRule{Rule: r}
		if r.Regexp != "" {
			cr.re = regexp.MustCompile("^(?:" + r.Regexp + ")$")
		}
		if r.Module != "" {
			cr.mod = regexp.MustCompile("^(?:" + r.Module + ")$")
		}
		for _, kn := range r.KeyNames {
			cr.keyNames = append(cr.keyNames, regexp.MustCompile("^(?:"+kn.Regexp+")$"))
		}
		rs.rules = append(rs.rules, cr)
		for _, n := range r.Names {
			if prev, ok := rs.exact[n]; !ok || order[prev.Role] > order[r.Role] {
				rs.exact[n] = cr
			}
		}
	}
	return rs
}

// match returns the rule for a normalized name (module: base name of the
// frame's object, used only when name is empty), or nil.
func (rs *ruleSet) match(name, module string) *compiledRule {
	if name != "" {
		if r, ok := rs.exact[name]; ok {
			// An exact hit of a weaker role may still lose to a stronger
			// prefix/regexp rule; rules are sorted by strength.
			for _, s := range rs.rules {
				if s == r {
					return r
				}
				if s.matchesPattern(name) {
					return s
				}
			}
			return r
		}
		for _, r := range rs.rules {
			if r.matchesPattern(name) {
				return r
			}
		}
		return nil
	}
	if module == "" {
		return nil
	}
	for _, r := range rs.rules {
		if r.mod != nil && r.mod.MatchString(module) {
			return r
		}
	}
	return nil
}

func (r *compiledRule) matchesPattern(name string) bool {
	for _, p := range r.Prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return r.re != nil && r.re.MatchString(name)
}
