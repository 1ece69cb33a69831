package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/crashsig/crashsig/symbolize"
)

// Algorithm is the name and version of the signature algorithm. It changes
// whenever normalization, rules or key layout change any key of the
// golden corpus (testdata/signature/golden.tsv); keys of different
// algorithms are not comparable.
const Algorithm = "crashsig-sig/15"

// DefaultFrames is how many significant frames a key holds: frames that
// are neither mechanism nor generic (see doc.go, "Key shape", for the
// measurement behind it).
const DefaultFrames = 1

// Bounds of a signature.
const (
	// MaxKeyLen bounds Signature.Key in bytes.
	MaxKeyLen = 1024
	// maxKindExpr bounds the expression inside CHECK(...), ASSERT(...).
	maxKindExpr = 120
	// sentinelWindow is how deep sentinels are looked for.
	sentinelWindow = 64
	// maxTrace bounds the number of trace lines.
	maxTrace = 96
	// nullPage is the fault-address bound of the fault=null attribute.
	nullPage = 4096
)

// KeySep separates the kind and the frames of a key.
const KeySep = " | "

// Options configure a Generator. The zero value gives the default rules and
// DefaultFrames.
type Options struct {
	// Rules replaces the default rule set when non-nil.
	Rules []Rule
	// ExtraRules are added to the rule set and win over it within a role.
	ExtraRules []Rule
	// Frames is the number of significant frames in a key (≤ 0:
	// DefaultFrames); the leading generic crash-site frame comes on top.
	Frames int
	// CacheSize bounds the per-generator cache of normalized names
	// (≤ 0: 65536).
	CacheSize int
}

// Generator builds signatures from crashes. It is safe for concurrent use;
// it caches normalized names and their rule decisions (bounded).
type Generator struct {
	rules  *ruleSet
	frames int
	shape  keyShape
	// apps are the products' namespaces (app_namespaces of the default
	// rule files), for Signature.AppFrame.
	apps []string
	// moved are the products' renamed scopes (moved_namespaces of the
	// default rule files): key frames take the newer name.
	moved []MovedNamespace
	// cache and javaCache map printed names to normalized names and rules.
	cache, javaCache *cache[frameClass]
}

// frameClass is the cached result of normalizing and classifying one name.
type frameClass struct {
	name string
	rule *compiledRule
}

// NewGenerator compiles a rule set into a Generator.
func NewGenerator(opts Options) (*Generator, error) {
	base := opts.Rules
	if base == nil {
		base = embeddedRuleFiles().Rules // validated when read, not changed
	} else if err := ValidateRules(base); err != nil {
		return nil, err
	}
	if err := ValidateRules(opts.ExtraRules); err != nil {
		return nil, err
	}
	all := append(append([]Rule(nil), opts.ExtraRules...), base...)
	rs, err := compileRulesUnchecked(all)
	if err != nil {
		return nil, err
	}
	g := &Generator{rules: rs, cache: newCache[frameClass](opts.CacheSize),
		javaCache: newCache[frameClass](opts.CacheSize), apps: defaultAppNamespaces(), moved: defaultMovedNamespaces(), shape: defaultShape()}
	if opts.Frames > 0 {
		g.shape.significant = opts.Frames
	}
	// A key holds at most the leading generic frames and the significant ones.
	g.frames = g.shape.lead + g.shape.significant
	return g, nil
}

// Parameters of the key shape (see doc.go, "Key shape", for the
// measurement behind them).
const (
	// leadFrames bounds the generic crash-site frames (allocator, memcpy,
	// libc, JVM) that lead a key.
	leadFrames = 1
	// fallbackFrames bounds the generic frames keyed when a stack has no
	// significant frame.
	fallbackFrames = 3
)

// defaultShape is the key layout of Algorithm: the crash-site frame when it
// is generic, then DefaultFrames significant frames; the kind's class.
func defaultShape() keyShape {
	return keyShape{significant: DefaultFrames, lead: leadFrames, kind: kindClass, fallback: fallbackFrames}
}

// compileRulesUnchecked compiles rules already validated in parts (extra
// rules may repeat a default name to override it).
func compileRulesUnchecked(rules []Rule) (*ruleSet, error) {
	seen := map[string]bool{}
	for _, r := range rules {
		if seen[r.ID] {
			return nil, fmt.Errorf("%w: rule id %q defined twice", ErrRule, r.ID)
		}
		seen[r.ID] = true
	}
	return compileRulesNoValidate(rules), nil
}

var defaultGenerator = sync.OnceValue(func() *Generator {
	g, err := NewGenerator(Options{})
	if err != nil {
		panic("signature: default rules: " + err.Error())
	}
	return g
})

// Default returns the shared Generator with the default options.
func Default() *Generator { return defaultGenerator() }

// Generate is Default().Generate(c).
func Generate(c *symbolize.Crash) Signature { return defaultGenerator().Generate(c) }

// classify normalizes a frame name and finds its rule, with caching.
func (g *Generator) classify(raw string, java bool) frameClass {
	c := g.cache
	if java {
		c = g.javaCache
	}
	return c.get(raw, func() frameClass {
		n := normalize(raw, java)
		return frameClass{name: n, rule: g.rules.match(n, "")}
	})
}

// Normalize is Normalize with the generator's cache.
func (g *Generator) Normalize(name string) string { return g.classify(name, false).name }

// Generate builds the signature of one crash. It never fails: a crash
// without usable frames gets an EMPTY key (damaged or not).
func (g *Generator) Generate(c *symbolize.Crash) Signature {
	s := Signature{Algorithm: Algorithm}
	t := &tracer{lines: make([]string, 0, 16)}
	if c == nil {
		s.Kind = "EMPTY"
		s.Key = "EMPTY: no crash"
		s.ID = keyID(s.Key)
		s.Trace = []string{"no crash given"}
		return s
	}
	s.Kind = g.kind(c, t)
	if nullFault(c) {
		s.Attributes = append(s.Attributes, "fault=null")
	}
	th := g.pickThread(c, t)
	var frames []frameView
	if th != nil {
		frames = make([]frameView, len(th.Frames))
		maps := symbolize.KernelMappings(c)
		anyPC := anyTextPC(th.Frames)
		for i := range th.Frames {
			frames[i] = g.view(&th.Frames[i], c.Product, maps)
			frames[i].inlined = inlinedAt(th.Frames, i, anyPC)
		}
		if th.Truncated {
			s.Attributes = append(s.Attributes, "stack-truncated")
		}
	}
	// A thread dump has no crash frame: the crash-site rules do not apply.
	kept, crashFrame, attrs := g.walk(frames, t, c.Kind != symbolize.KindThreadDump)
	s.CrashFrame = crashFrame
	s.AppFrame = g.appFrame(kept, frames)
	s.Attributes = append(s.Attributes, attrs...)
	if c.Corrupted {
		s.Attributes = append(s.Attributes, "corrupted")
		t.add("input damaged: " + bounded(c.CorruptedReason, 160))
	}
	kept = g.keyScopes(kept, t)
	s.Frames = kept
	switch {
	case sanitizerRuntimeFailure(c):
		// The sanitizer runtime failed in itself (its own CHECK, its own
		// mmap): that failure is the crash, and the program code that
		// happened to trip it (whatever instrumented code next used a
		// stale stack) or the absence of any stack does not change it.
		s.Key = s.Kind
		t.add("the sanitizer runtime failed in itself (" + bounded(c.SanitizerBug, 80) + "): the key is that failure, not the program frames")
	case len(kept) > 0:
		s.Key = buildKey(g.keyKind(s.Kind, frames, t), kept)
	default:
		// Whether the input was damaged (a dump cut before any frame of
		// the failing code) or the crash printed none, the key is the
		// kind alone: a cut paste of a CHECK and an uncut one that
		// printed no stack are one crash (crashsig-sig/14). The damage
		// stays in the attributes, the trace and the crash's Corrupted.
		s.Key = "EMPTY: " + s.Kind
		if c.Corrupted {
			t.add("no usable frame in damaged input: key EMPTY (the damage is the attribute corrupted, not part of the key)")
		} else {
			t.add("no usable frame: key EMPTY")
		}
	}
	s.ID = keyID(s.Key)
	s.Trace = t.lines
	return s
}

// keyKind is the kind part of the key (keyShape.keyKind); a crash whose
// signal was not printed (kind CRASH) is of the abort class when its stack
// shows the process aborting (a frame of a rule with `aborts: true`).
func (g *Generator) keyKind(kind string, frames []frameView, t *tracer) string {
	k := g.shape.keyKind(kind)
	if g.shape.kind != kindClass || kind == k {
		return k
	}
	if kind == "CRASH" {
		for i := range frames {
			if i == sentinelWindow {
				break
			}
			if r := frames[i].rule; r != nil && r.Aborts {
				t.add("key kind ABORT: no signal printed, and #" + strconv.Itoa(frames[i].index) + " " + frames[i].name + " is rule '" + r.ID + "' (the process aborted)")
				return "ABORT"
			}
		}
	}
	t.add("key kind " + k + " (the class of " + kind + ": the key leaves out what not every report of a crash prints)")
	return k
}

// pickThread returns the thread to key: the crashing one, else the first.
func (g *Generator) pickThread(c *symbolize.Crash, t *tracer) *symbolize.Thread {
	if th := c.CrashingThread(); th != nil {
		t.add("thread: crashing thread " + threadLabel(th) + ", " + strconv.Itoa(len(th.Frames)) + " frames")
		return th
	}
	if c.Kind == symbolize.KindThreadDump && len(c.Threads) > 0 {
		groups := g.Aggregate(c.Threads)
		pick := 0
		for i := range groups {
			if len(groups[i].Frames) > 0 {
				pick = i
				break
			}
		}
		rep := groups[pick].Representative
		t.add("thread dump of " + strconv.Itoa(len(c.Threads)) + " threads in " + strconv.Itoa(len(groups)) +
			" groups: keying the largest group with a stack (" + strconv.Itoa(groups[pick].Count) + " threads)")
		for i := range c.Threads {
			if i == rep {
				return &c.Threads[i]
			}
		}
	}
	if len(c.Threads) > 0 {
		th := &c.Threads[0]
		t.add("thread: no thread marked crashed, using the first (" + threadLabel(th) + ", " + strconv.Itoa(len(th.Frames)) + " frames)")
		return th
	}
	t.add("no threads")
	return nil
}

func threadLabel(th *symbolize.Thread) string {
	var b strings.Builder
	// As glog and gdb print it: the pthread handle in hex, the kernel id
	// as LWP n (a large id with no handle is a handle printed in decimal).
	switch {
	case th.Handle != "" && th.ID > 0 && "0x"+strconv.FormatInt(th.ID, 16) != th.Handle:
		fmt.Fprintf(&b, "%s (LWP %d)", th.Handle, th.ID)
	case th.Handle != "":
		b.WriteString(th.Handle)
	case th.ID > 1<<32:
		fmt.Fprintf(&b, "%#x", th.ID)
	case th.ID > 0:
		fmt.Fprintf(&b, "LWP %d", th.ID)
	}
	if th.Name != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(bounded(th.Name, 64)))
	}
	if b.Len() == 0 {
		return "?"
	}
	return b.String()
}

type tracer struct{ lines []string }

func (t *tracer) add(s string) {
	if len(t.lines) < maxTrace {
		t.lines = append(t.lines, s)
	} else if len(t.lines) == maxTrace {
		t.lines = append(t.lines, "… trace cut")
	}
}

func buildKey(kind string, frames []string) string {
	n := len(kind)
	for _, f := range frames {
		n += len(KeySep) + len(f)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(kind)
	for i, f := range frames {
		if i > 0 || kind != "" {
			b.WriteString(KeySep)
		}
		b.WriteString(f)
	}
	return bounded(b.String(), MaxKeyLen)
}

// keyID is the first 16 hex digits of the SHA-256 of key.
func keyID(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:8])
}

// bounded cuts s to at most n bytes at a rune boundary, marking the cut.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(truncMark)
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + truncMark
}

// sanitizerRuntimeFailure reports whether a sanitizer report is about the
// runtime itself rather than the program: its own CHECK (`AddressSanitizer:
// CHECK failed: …`) or a failed mmap of its own (`failed to allocate … of
// ReadFileToBuffer`), the scanner's F6.check_failed and F6.mmap_failed.
func sanitizerRuntimeFailure(c *symbolize.Crash) bool {
	if c.Kind != symbolize.KindSanitizer {
		return false
	}
	b := c.SanitizerBug
	return strings.HasPrefix(b, "CHECK failed") || strings.HasPrefix(b, "failed to ")
}
