package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/crashsig/crashsig/signature/internal/cxxname"
	"github.com/crashsig/crashsig/symbolize"
)

// Algorithm is the name and version of the signature algorithm. It changes
// whenever normalization, rules or key layout change any key of the
// golden corpus (testdata/signature/golden.tsv); keys of different
// algorithms are not comparable.
const Algorithm = "crashsig-sig/7"

// DefaultFrames is how many meaningful frames a key holds (see doc.go for
// the measurement behind it).
const DefaultFrames = 4

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
	// Frames is the number of meaningful frames in a key (≤ 0: DefaultFrames).
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
		base = DefaultRules()
	}
	if err := ValidateRules(base); err != nil {
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
	g := &Generator{rules: rs, frames: opts.Frames, cache: newCache[frameClass](opts.CacheSize),
		javaCache: newCache[frameClass](opts.CacheSize)}
	if g.frames <= 0 {
		g.frames = DefaultFrames
	}
	return g, nil
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

// frameView is what the walk needs of one frame.
type frameView struct {
	index  int
	name   string // normalized; "" when unsymbolized
	rule   *compiledRule
	module string // base name
	unsym  string // "module+0xoff" when unsymbolized and stable, else ""
	why    string // why an unsymbolized frame is not stable
	glibc  bool   // frame in libc/libpthread (module or glibc source path)
	raw    string
	file   string // source file and line, when printed
	line   int
	// inlined: the compiler inlined this frame into the next physical
	// frame (see physicalMask); keys use physical frames only.
	inlined bool
}

// unknownNames are printed in place of a missing symbol.
func isUnknownName(s string) bool {
	switch s {
	case "", "??", "(unknown)", "<unknown>", "(nil)", "<unknown module>", "(<unknown module>)":
		return true
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// mainBinary is the executable of a product, for frames without a module.
func mainBinary(p symbolize.Product) string {
	switch p {
	case symbolize.ProductStarRocks:
		return "starrocks_be"
	case symbolize.ProductDoris:
		return "doris_be"
	}
	return "be"
}

// nonPIELimit: a PC below it with no module is an address in a non-PIE
// executable (StarRocks, Doris 0.x are linked at 0x400000); PIE
// executables and shared objects load far above it.
const nonPIELimit = 1 << 32

func (g *Generator) view(f *symbolize.Frame, product symbolize.Product, maps []symbolize.KernelMapping) frameView {
	v := frameView{index: f.Index, raw: f.Name(), file: f.File, line: f.Line}
	mod := f.Module
	offset, hasOffset := f.Offset, f.HasOffset
	name := f.Name()
	// `(/lib/libc.so.6+0x4251f)` printed as the name by glog.
	if mod == "" && len(name) > 4 && name[0] == '(' && name[len(name)-1] == ')' {
		if i := strings.LastIndex(name, "+0x"); i > 0 {
			if off, err := strconv.ParseUint(name[i+3:len(name)-1], 16, 64); err == nil {
				mod, offset, hasOffset = name[1:i], symbolize.Addr(off), true
				name = ""
			}
		}
	}
	mod = unMarkdownLink(mod)
	v.module = path.Base(mod)
	if mod == "" {
		v.module = ""
	}
	v.glibc = isGlibc(v.module) || strings.HasPrefix(f.File, "./") || strings.Contains(f.File, "/glibc")
	if !isUnknownName(name) {
		fc := g.classify(name, f.Java)
		if !isUnknownName(fc.name) && hasLetter(fc.name) && !isPath(fc.name) {
			v.name, v.rule = fc.name, fc.rule
			return v
		}
	}
	// Unsymbolized.
	if v.module == "" && f.PC == 0 && !hasOffset {
		v.why = "no address"
		return v
	}
	if v.module != "" && isSharedObject(v.module) {
		v.why = "in shared object " + v.module + " (offsets differ between builds of it)"
		if r := g.rules.match("", v.module); r != nil {
			v.rule = r
		}
		return v
	}
	switch {
	case hasOffset:
		m := v.module
		if m == "" {
			m = mainBinary(product)
		}
		if glogFrame(f) {
			// glog prints the offset of PC-1; keys name the PC's offset,
			// as the absolute addresses of other sources do.
			offset++
		}
		v.unsym = m + "+" + offset.String()
	default:
		m := v.module
		if m == "" {
			m = mainBinary(product)
		}
		// Position independence is read from the addresses, never from the
		// module's name: the kernel line's mapping base when it names one
		// for this PC, else the PC itself (fixed-address executables are
		// linked far below 4 GiB, PIE executables load far above it).
		base, known := mappingBase(maps, v.module, f.PC)
		switch {
		case known && base >= nonPIELimit:
			v.why = "absolute address " + f.PC.String() + " of a position-independent binary (mapped at " + base.String() + " by the kernel line) differs per run"
		case f.PC < nonPIELimit:
			// Fixed-address executable: the absolute address is the file address.
			v.unsym = m + "+" + f.PC.String()
		default:
			v.why = "absolute address " + f.PC.String() + " of a position-independent binary differs per run"
		}
	}
	return v
}

// mappingBase returns the base of the kernel-line mapping that holds pc
// in module (any module when module is "").
func mappingBase(maps []symbolize.KernelMapping, module string, pc symbolize.Addr) (symbolize.Addr, bool) {
	for _, m := range maps {
		if (module == "" || m.Module == module) && pc >= m.Base && pc-m.Base < m.Size {
			return m.Base, true
		}
	}
	return 0, false
}

// glogFrame: a frame parsed from a glog `    @ 0x… sym` line.
func glogFrame(f *symbolize.Frame) bool {
	t := strings.TrimLeft(f.Raw, " \t")
	return len(t) > 1 && t[0] == '@' && t[1] == ' '
}

// unMarkdownLink turns a pasted `/lib/[libjvm.so](http://libjvm.so/)`
// back into `/lib/libjvm.so`.
func unMarkdownLink(m string) string {
	i := strings.IndexByte(m, '[')
	if i < 0 {
		return m
	}
	j := strings.Index(m[i:], "](")
	if j < 0 {
		return m
	}
	return m[:i] + m[i+1:i+j]
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80 {
			return true
		}
	}
	return false
}

// isPath: a file path printed where a name belongs (damaged frame line).
func isPath(s string) bool {
	return (s[0] == '/' || s[0] == '.') && strings.Contains(s, "/")
}

// isSharedObject: a module named like a shared object (`libc.so.6`,
// `libjvm.so`); anything else is taken as the executable.
func isSharedObject(m string) bool {
	return strings.HasSuffix(m, ".so") || strings.Contains(m, ".so.")
}

func isGlibc(m string) bool {
	return strings.HasPrefix(m, "libc.") || strings.HasPrefix(m, "libc-") || strings.HasPrefix(m, "libpthread") ||
		strings.HasPrefix(m, "ld-linux") || strings.HasPrefix(m, "libdl")
}

// Generate builds the signature of one crash. It never fails: a crash
// without usable frames gets an EMPTY or CORRUPTED key.
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
	s.AppFrame = appFrame(kept, frames)
	s.Attributes = append(s.Attributes, attrs...)
	if c.Corrupted {
		s.Attributes = append(s.Attributes, "corrupted")
		t.add("input damaged: " + bounded(c.CorruptedReason, 160))
	}
	s.Frames = kept
	switch {
	case len(kept) > 0:
		s.Key = buildKey(s.Kind, kept)
	case c.Corrupted:
		s.Key = "CORRUPTED: " + s.Kind
		t.add("no usable frame in damaged input: key CORRUPTED")
	default:
		s.Key = "EMPTY: " + s.Kind
		t.add("no usable frame: key EMPTY")
	}
	s.ID = keyID(s.Key)
	s.Trace = t.lines
	return s
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
	if th.ID != 0 {
		b.WriteString(strconv.FormatInt(th.ID, 10))
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

// walk applies the rules to the frames, innermost first, and returns the
// kept frames, the crash frame and attributes.
func (g *Generator) walk(frames []frameView, t *tracer, crashSite bool) (kept []string, crashFrame string, attrs []string) {
	// 1. The last sentinel near the top restarts the signature.
	start, sentinel := 0, (*compiledRule)(nil)
	for i := 0; i < len(frames) && i < sentinelWindow; i++ {
		if r := frames[i].rule; r != nil && r.Role == RoleSentinel {
			start, sentinel = i+1, r
		}
	}
	if sentinel != nil {
		for i := 0; i < start; i++ {
			f := &frames[i]
			if i == start-1 {
				t.add(skipLine(f, "sentinel '"+sentinel.ID+"' ("+sentinel.Why+"): signature restarts after it"))
			} else if f.rule != nil && f.rule.Role == RoleSentinel {
				t.add(skipLine(f, "sentinel '"+f.rule.ID+"', superseded by a later sentinel"))
			} else {
				t.add(skipLine(f, "above sentinel '"+sentinel.ID+"'"))
			}
		}
	}
	trampoline := sentinel != nil && sentinel.Trampoline
	abortPath := false
	var prefixes []string
	prefixAttr := ""
	leafKept := false  // kept[0] is a crash-site prefix frame
	inlinedAbove := "" // the innermost named inline frame since the last physical frame
	lambdaAt := -1     // index of the last bare {lambda} kept
	n := g.frames
	for i := start; i < len(frames); i++ {
		f := &frames[i]
		if len(kept) == n {
			t.add("stopped after " + strconv.Itoa(n) + " frames; " + strconv.Itoa(len(frames)-i) + " frames below not examined")
			break
		}
		if f.inlined {
			// Only DWARF-based sources (cores, gdb, symbolized addresses)
			// show inline frames; glog's and boost's symbolizers print the
			// physical function. Keys use physical frames so that every
			// source of one crash gives one key.
			t.add(skipLine(f, "inlined into the physical frame below (keys use physical frames)"))
			if inlinedAbove == "" && f.name != "" {
				inlinedAbove = f.name
			}
			continue
		}
		inlined := inlinedAbove
		inlinedAbove = ""
		if f.name == "" { // unsymbolized
			switch {
			case trampoline && len(kept) == 0:
				t.add(skipLine(f, "signal trampoline: first unsymbolized frame after handler '"+sentinel.ID+"'"))
				trampoline = false
			case len(kept) == 0 && sandwiched(frames, i, start):
				t.add(skipLine(f, "unsymbolized frame between mechanism frames"))
			case f.unsym != "":
				kept = append(kept, f.unsym)
				t.add("kept    #" + strconv.Itoa(f.index) + " " + f.unsym + ": unsymbolized frame of a position-dependent binary (stable per build)")
			case f.rule != nil:
				t.add(skipLine(f, f.rule.describe()))
			default:
				t.add(skipLine(f, "unsymbolized, "+f.why))
			}
			continue
		}
		r := f.rule
		if r != nil && r.Role == RoleSentinel {
			t.add(skipLine(f, "sentinel '"+r.ID+"' below the search window, treated as irrelevant"))
			continue
		}
		if r != nil && r.Role == RoleIrrelevant {
			t.add(skipLine(f, r.describe()))
			if r.ID == "abort-path" || r.ID == "assert-path" {
				abortPath = true
			}
			continue
		}
		trampoline = false
		if abortPath && len(kept) == 0 && f.glibc {
			t.add(skipLine(f, "glibc frame on the abort path (cold code is often mis-symbolized)"))
			continue
		}
		isCrashFrame := crashFrame == ""
		if isCrashFrame {
			// The crash frame is where the crash showed: the innermost
			// inline frame of the crash site when the source shows them.
			crashFrame = f.name
			if inlined != "" {
				crashFrame = inlined
				attrs = append(attrs, "inlined="+inlined)
			}
		}
		if r != nil && r.Role == RolePrefix {
			if isCrashFrame && crashSite && r.CrashSite && len(kept) == 0 {
				kn := r.keyName(f.name)
				kept = append(kept, kn)
				leafKept = true
				if r.Attribute != "" {
					prefixAttr = r.Attribute
					attrs = append(attrs, r.Attribute)
				}
				as := ""
				if kn != f.name {
					as = " as " + kn
				}
				t.add("kept    #" + strconv.Itoa(f.index) + " " + f.name + as + ": crash frame in " + r.describe() + "; the key names where it crashed, then the frames below")
				continue
			}
			t.add(skipLine(f, r.describe()))
			if len(kept) == 0 || leafKept && len(kept) == 1 {
				if len(prefixes) < n {
					prefixes = append(prefixes, f.name)
				}
				if prefixAttr == "" && r.Attribute != "" {
					prefixAttr = r.Attribute
					attrs = append(attrs, r.Attribute)
				}
			}
			continue
		}
		if len(kept) > 0 && kept[len(kept)-1] == f.name {
			t.add(skipLine(f, "repeats the frame above (recursion or an inlined copy)"))
			continue
		}
		if len(kept) > 0 && kept[len(kept)-1] == Lambda && lambdaAt >= 0 && lambdaOwner(&frames[lambdaAt], f) {
			// gdb names a lambda's body `operator() (__closure=…)` without
			// its owner. A frame below in the same source file, calling
			// from a few lines after the lambda's body, is the function
			// that defines it and runs it in place (std::visit,
			// algorithms, scope guards): name the lambda after it, as
			// the symbol table does.
			kept[len(kept)-1] = f.name + "::" + Lambda
			t.add("kept    #" + strconv.Itoa(frames[lambdaAt].index) + " " + kept[len(kept)-1] + ": the bare lambda above is defined in " + f.name +
				" (" + path.Base(f.file) + ":" + strconv.Itoa(frames[lambdaAt].line) + " runs in it at line " + strconv.Itoa(f.line) + ")")
		}
		if len(kept) > 0 && kept[len(kept)-1] == Lambda && strings.HasSuffix(f.name, "::"+Lambda) {
			// gdb names a lambda's body `operator() (__closure=…)` without
			// its owner; the std::function invoker below names the closure
			// type: one frame, named as the symbol table names it.
			kept[len(kept)-1] = f.name
			t.add("kept    #" + strconv.Itoa(f.index) + " " + f.name + ": names the lambda of the frame above")
			continue
		}
		if f.name == Lambda {
			lambdaAt = i
		}
		kept = append(kept, f.name)
		t.add("kept    #" + strconv.Itoa(f.index) + " " + f.name)
	}
	if len(kept) == 0 && len(prefixes) > 0 {
		kept = prefixes
		t.add("no frame outside prefix rules: keying on the prefix frames")
	}
	return kept, crashFrame, attrs
}

// lambdaWindow bounds how many lines after a lambda's body its owner may
// call it from (lambdaOwner).
const lambdaWindow = 100

// lambdaOwner reports whether frame f, kept right below a bare {lambda}
// frame lam, is the function that defines the lambda: the same source
// file, and f calls from at most lambdaWindow lines after the lambda's
// line. A lambda run elsewhere (a thread pool in another file) stays bare.
func lambdaOwner(lam, f *frameView) bool {
	return lam.file != "" && lam.file == f.file && lam.line > 0 && f.line >= lam.line && f.line-lam.line <= lambdaWindow &&
		!strings.HasSuffix(f.name, Lambda)
}

// appNamespaces are the top-level namespaces of the backends' own code.
var appNamespaces = [...]string{"doris::", "starrocks::", "doris_udf::", "starrocks_udf::"}

func isAppFrame(name string) bool {
	for _, p := range appNamespaces {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// appFrame is the first Doris/StarRocks frame: among the kept frames, else
// the first one in the stack below them (the JNI caller of a crash inside
// the JVM, the BE caller of a crash in a library), else "".
func appFrame(kept []string, frames []frameView) string {
	for _, k := range kept {
		if isAppFrame(k) {
			return k
		}
	}
	for i := range frames {
		if i == sentinelWindow*2 {
			break
		}
		if n := frames[i].name; !frames[i].inlined && isAppFrame(n) && (frames[i].rule == nil || frames[i].rule.Role == RolePrefix) {
			return n
		}
	}
	return ""
}

// sandwiched reports whether the unsymbolized frame i lies between
// irrelevant frames (e.g. inlined glog code between LogMessage frames and
// abort): the nearest named frames on both sides are irrelevant.
func sandwiched(frames []frameView, i, start int) bool {
	before := false
	for j := i - 1; j >= start; j-- {
		if frames[j].name != "" {
			before = frames[j].rule != nil && frames[j].rule.Role == RoleIrrelevant
			break
		}
	}
	if !before {
		return false
	}
	for j := i + 1; j < len(frames); j++ {
		if frames[j].name != "" {
			return frames[j].rule != nil && frames[j].rule.Role == RoleIrrelevant && frames[j].rule.ID != "thread-start"
		}
	}
	return false
}

func (r *compiledRule) describe() string {
	return string(r.Role) + " rule '" + r.ID + "' (" + r.Why + ")"
}

func skipLine(f *frameView, why string) string {
	name := f.name
	if name == "" {
		name = f.unsym
		if name == "" {
			name = bounded(f.raw, 80)
			if name == "" {
				name = "(unknown)"
			}
			if f.module != "" {
				name += " in " + f.module
			}
		}
	}
	return "skipped #" + strconv.Itoa(f.index) + " " + name + ": " + why
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
	for _, f := range frames {
		b.WriteString(KeySep)
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

// kind returns the kind prefix of a crash.
func (g *Generator) kind(c *symbolize.Crash, t *tracer) string {
	sig := signalName(c.Signal)
	var k string
	switch c.Kind {
	case symbolize.KindCheck:
		expr := checkExpr(c.CheckExpr, c.Message)
		if expr != "" {
			k = "CHECK(" + expr + ")"
		} else {
			k = "FATAL"
		}
	case symbolize.KindTerminate:
		if c.ExceptionType != "" {
			k = "terminate(" + g.Normalize(c.ExceptionType) + ")"
		} else {
			k = "terminate"
		}
	case symbolize.KindSanitizer:
		k = sanitizerTool(c) + "(" + bounded(strings.TrimSpace(c.SanitizerBug), 64) + ")"
		if c.SanitizerBug == "" {
			k = sanitizerTool(c)
		}
	case symbolize.KindLeak:
		k = "LEAK"
	case symbolize.KindJVM:
		if sig == "" {
			sig = "error"
		}
		k = "JVM(" + sig + ")"
	case symbolize.KindAssert:
		if expr := assertExpr(c); expr != "" {
			k = "ASSERT(" + expr + ")"
		} else if sig != "" {
			k = sig
		} else {
			k = "ABORT"
		}
	case symbolize.KindTermination:
		if sig == "" {
			sig = "SIGTERM"
		}
		k = "TERM(" + sig + ")"
	case symbolize.KindThreadDump:
		k = "THREADS"
	default:
		k = sig
		if k == "" {
			k = "CRASH"
		}
	}
	t.add("kind: " + k + " (incident kind " + kindName(c.Kind) + ", signal " + orDash(c.Signal) + ")")
	if nullFault(c) {
		// gdb's bt and boost dumps of older Doris versions do not print the
		// fault address: null-ness is an attribute, never part of the key.
		t.add("attribute fault=null (fault address " + c.FaultAddress.String() + " < 4096; not in the key: not every source prints it)")
	}
	return k
}

// nullFault reports a SIGSEGV whose printed fault address lies in the
// null page.
func nullFault(c *symbolize.Crash) bool {
	return signalName(c.Signal) == "SIGSEGV" && c.HasFaultAddress && c.FaultAddress < nullPage &&
		c.Kind != symbolize.KindTermination
}

// physicalMask tells, for each frame of a thread, whether the compiler
// inlined it into the next (physical) frame. Symbolized and core frames
// carry Frame.Inlined. gdb text needs reading: after #0, gdb prints
// `0xADDR in` only on the innermost frame of each inline group and no
// address on the other frames of the group, whose last one is the
// physical function; with `set print frame-info location-and-address` it
// prints the same address on every frame of the group, whose last one is
// again the physical function. So a parsed frame is inlined exactly when
// the next frame continues its group: an address-less frame (the scanner
// marks those Inlined), or a frame printing the same address.
//
// Text whose frames print no address at all (hand-written or abbreviated
// pastes) has no grouping to read: its frames are taken as physical.
func physicalMask(fs []symbolize.Frame) []bool {
	inl := make([]bool, len(fs))
	anyPC := anyTextPC(fs)
	for i := range fs {
		inl[i] = inlinedAt(fs, i, anyPC)
	}
	return inl
}

// anyTextPC reports a parsed (not symbolized) frame printing an address
// or a module offset.
func anyTextPC(fs []symbolize.Frame) bool {
	for i := range fs {
		if (fs[i].PC != 0 || fs[i].HasOffset) && !fs[i].Symbolized {
			return true
		}
	}
	return false
}

// inlinedAt is physicalMask's answer for frame i (anyPC: anyTextPC(fs)).
func inlinedAt(fs []symbolize.Frame, i int, anyPC bool) bool {
	f := &fs[i]
	if !anyPC && !f.Symbolized {
		return f.Inlined && f.PC != 0
	}
	continues := i+1 < len(fs) && (gdbLike(&fs[i+1]) || sameTextPC(fs, i))
	if f.Symbolized || f.Java || !continues && !gdbLike(f) {
		return f.Inlined
	}
	return continues
}

// gdbLike: a parsed gdb frame (`#N …`) that printed no address, or one
// the scanner marked inlined without an address: a frame of an inline
// group after its first. The grouping is read from the addresses, so it
// holds whichever frames of a group the scanner marks.
func gdbLike(f *symbolize.Frame) bool {
	if f.PC != 0 || f.HasOffset || f.Symbolized || f.Java {
		return false
	}
	t := strings.TrimLeft(f.Raw, " \t")
	return f.Inlined || len(t) > 1 && t[0] == '#' && t[1] >= '0' && t[1] <= '9'
}

// sameTextPC: parsed frames i and i+1 print the same non-zero address (or
// module offset) under different names: gdb's location-and-address form
// of an inline group, and sanitizers, which print every frame of an
// inline chain with its physical frame's address. Recursion repeats the
// name and is collapsed later anyway.
func sameTextPC(fs []symbolize.Frame, i int) bool {
	if i+1 >= len(fs) {
		return false
	}
	a, b := &fs[i], &fs[i+1]
	same := a.PC != 0 && a.PC == b.PC ||
		a.PC == 0 && b.PC == 0 && a.HasOffset && b.HasOffset && a.Offset != 0 && a.Offset == b.Offset && a.Module == b.Module // TSAN prints offsets only
	return same && !a.Symbolized && !b.Symbolized && !a.Java && !b.Java &&
		a.Name() != b.Name() && a.Function != "<signal handler called>" && b.Function != "<signal handler called>"
}

// assertExpr is the expression of a C assert() failure: CheckExpr, else
// the text between "Assertion `" and "' failed" in the message.
func assertExpr(c *symbolize.Crash) string {
	if c.CheckExpr != "" {
		return checkExpr(c.CheckExpr, "")
	}
	m := c.Message
	i := strings.Index(m, "Assertion `")
	if i < 0 {
		return ""
	}
	m = m[i+len("Assertion `"):]
	j := strings.Index(m, "' failed")
	if j < 0 {
		return ""
	}
	return bounded(strings.Join(strings.Fields(m[:j]), " "), maxKindExpr)
}

func kindName(k symbolize.Kind) string {
	if k == "" {
		return "unknown"
	}
	return string(k)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var signalNumbers = map[string]string{
	"4": "SIGILL", "6": "SIGABRT", "7": "SIGBUS", "8": "SIGFPE", "11": "SIGSEGV",
	"5": "SIGTRAP", "15": "SIGTERM", "2": "SIGINT", "9": "SIGKILL", "3": "SIGQUIT", "31": "SIGSYS",
}

// signalName turns `SIGSEGV`, `Signal 11`, `11`, `sigsegv` into SIGSEGV.
func signalName(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	u := strings.TrimPrefix(strings.ToUpper(s), "SIGNAL ")
	if strings.HasPrefix(u, "SIG") {
		if i := strings.IndexAny(u, " ("); i > 0 {
			u = u[:i]
		}
		return u
	}
	if n, ok := signalNumbers[u]; ok {
		return n
	}
	return "SIGNAL(" + bounded(u, 16) + ")"
}

func sanitizerTool(c *symbolize.Crash) string {
	m := c.Message
	switch {
	case strings.Contains(m, "ThreadSanitizer"):
		return "TSAN"
	case strings.Contains(m, "UndefinedBehaviorSanitizer") || strings.Contains(m, "runtime error"):
		return "UBSAN"
	case strings.Contains(m, "MemorySanitizer"):
		return "MSAN"
	case strings.Contains(m, "LeakSanitizer"):
		return "LSAN"
	}
	return "ASAN"
}

// checkExpr returns the normalized expression of a check failure: without
// the `Check failed:` prefix, the printed values `(1 vs. 2)`, a message
// after it, and with whitespace collapsed.
func checkExpr(expr, message string) string {
	if expr == "" {
		m := message
		i := strings.Index(m, "Check failed: ")
		if i < 0 {
			return ""
		}
		expr = m[i+len("Check failed: "):]
	}
	expr = strings.TrimPrefix(strings.TrimSpace(expr), "Check failed: ")
	expr = cutExpr(bounded(expr, 4096))
	expr = strings.Join(strings.Fields(expr), " ")
	expr = strings.TrimSuffix(expr, ".")
	return bounded(expr, maxKindExpr)
}

// cutExpr returns the leading C++ expression of a check message. glog
// prints `CHECK(cond) << msg` as `cond msg` and CHECK_EQ as
// `a == b (1 vs. 2)`; the expression ends where an operand follows an
// operand (`"Orphan" If you…`, `false bthread_… is called`), at a
// top-level comma, or at a parenthesis after a blank (the values).
func cutExpr(e string) string {
	i, lastEnd := 0, 0
	expectOperand := true
	for i < len(e) {
		c := e[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == ',' || c == ';':
			return strings.TrimSpace(e[:lastEnd])
		case c == '(' || c == '[':
			if !expectOperand && i > 0 && e[i-1] == ' ' && c == '(' {
				return strings.TrimSpace(e[:lastEnd])
			}
			closer := byte(')')
			if c == '[' {
				closer = ']'
			}
			end, ok := cxxname.SkipBalanced(e, i, c, closer)
			if !ok {
				if lastEnd == 0 {
					return strings.TrimSpace(e)
				}
				return strings.TrimSpace(e[:lastEnd])
			}
			i, lastEnd, expectOperand = end, end, false
		case c == '"' || c == '\'':
			if !expectOperand {
				return strings.TrimSpace(e[:lastEnd])
			}
			j := i + 1
			for j < len(e) && e[j] != c {
				if e[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(e) {
				return strings.TrimSpace(e)
			}
			i, lastEnd, expectOperand = j+1, j+1, false
		case cxxname.IsIdent(c):
			if !expectOperand {
				return strings.TrimSpace(e[:lastEnd])
			}
			j := i
			for j < len(e) && (cxxname.IsIdent(e[j]) || e[j] == ':' && j+1 < len(e) && e[j+1] == ':' || e[j] == ':' && j > 0 && e[j-1] == ':') {
				j++
			}
			i, lastEnd, expectOperand = j, j, false
		case strings.IndexByte("=!<>&|+-*/%^~?:.", c) >= 0:
			j := i
			for j < len(e) && strings.IndexByte("=!<>&|+-*/%^~?:.", e[j]) >= 0 {
				j++
			}
			op := e[i:j]
			if !(op == "++" || op == "--") || expectOperand {
				expectOperand = true
			}
			i = j
		default:
			if lastEnd == 0 {
				return strings.TrimSpace(e)
			}
			return strings.TrimSpace(e[:lastEnd])
		}
	}
	if expectOperand { // ends in an operator: keep the whole text
		return strings.TrimSpace(e)
	}
	return strings.TrimSpace(e[:lastEnd])
}
