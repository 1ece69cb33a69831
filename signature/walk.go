package signature

import (
	"path"
	"strconv"
	"strings"
)

// This file is the walk over the frame views: rule roles (sentinel,
// irrelevant, prefix, crash site), lambda owners, the app frame, and the
// trace lines of skipped frames.

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
	sh := g.shape
	significant := 0              // significant frames kept
	lead := 0                     // generic frames kept before the first significant frame
	var generics []string         // generic frames seen, for a stack without a significant frame
	var lastGeneric *compiledRule // the rule of the last generic frame seen
	lastResort := ""              // the first frame of a last_resort rule (main)
	n := g.frames
	stop := len(frames) // where the walk stopped
	for i := start; i < len(frames); i++ {
		f := &frames[i]
		// naming: the significant frames are all kept, only a bare lambda
		// at the end may still take its owner's name from the frame below.
		naming := sh.significant > 0 && significant >= sh.significant
		if naming && (len(kept) == 0 || kept[len(kept)-1] != Lambda) {
			t.add("stopped after " + strconv.Itoa(significant) + " significant frame(s); " + strconv.Itoa(len(frames)-i) + " frames below not examined")
			stop = i
			break
		}
		if len(kept) == n && !naming {
			t.add("stopped after " + strconv.Itoa(n) + " frames; " + strconv.Itoa(len(frames)-i) + " frames below not examined")
			stop = i
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
			case f.unsym != "" && naming:
				t.add("stopped after " + strconv.Itoa(significant) + " significant frame(s); the bare lambda keeps no owner")
				i = len(frames)
			case f.unsym != "" && !sh.keepAddress && sh.significant > 0 && significant == 0 && len(kept) == 0 && g.namedBelow(frames, i):
				// An address is stable for one build only; the named
				// function that called it is what a gdb bt without the
				// frame's symbol, another build's dump and a symbolized
				// report of the same defect have in common.
				t.add(skipLine(f, "unsymbolized frame of a position-dependent binary: the named frame below keys (an address names a function in one build only)"))
				attrs = append(attrs, "unsymbolized-crash-frame="+f.unsym)
			case f.unsym != "":
				kept = append(kept, f.unsym)
				significant++
				t.add("kept    #" + strconv.Itoa(f.index) + " " + f.unsym + ": unsymbolized frame of a position-dependent binary (stable per build)" + sh.countNote(significant))
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
		if sh.significant > 0 && g.generic(f) {
			// A thread dump has no crash site: nothing leads its key.
			leads := crashSite && (sh.leadAll || r != nil && r.CrashSite || r == nil && sh.productLead)
			// Socorro's prefix list: generic frames (C library,
			// allocator, memcpy family, libstdc++, the JVM, the products'
			// column and container helpers) name where it crashed but
			// not which defect; they lead the key until the first
			// significant frame, and are skipped below it.
			kn := f.name
			if r != nil {
				kn = r.keyName(f.name)
			}
			// A stack without a significant frame is keyed on its generic
			// frames, one per run of frames of one rule (the allocator's
			// internals, then the C library's, then the JVM's).
			switch {
			case r != nil && r.LastResort:
				if lastResort == "" {
					lastResort = kn
				}
			case len(generics) < sh.fallback && (r == nil || r != lastGeneric):
				generics = append(generics, kn)
			}
			lastGeneric = r
			if r != nil && r.Attribute != "" && significant == 0 && prefixAttr == "" {
				prefixAttr = r.Attribute
				attrs = append(attrs, r.Attribute)
			}
			why := "generic frame (no rule: outside the products' namespaces)"
			if r != nil {
				why = r.describe()
			}
			switch {
			case naming:
				t.add(skipLine(f, why+"; the bare lambda above keeps no owner"))
				i = len(frames)
			case significant > 0:
				t.add(skipLine(f, why+", below the first significant frame"))
			case !crashSite:
				t.add(skipLine(f, why+"; a thread dump has no crash site"))
			case lead > 0 && lead >= sh.lead:
				t.add(skipLine(f, why+"; the key already names the crash site ("+strconv.Itoa(lead)+" generic frame)"))
			case !leads:
				t.add(skipLine(f, why+"; frames of this rule never lead the key"))
			case lead >= sh.lead:
				t.add(skipLine(f, why+"; no generic frame leads the key"))
			case len(kept) > 0 && kept[len(kept)-1] == kn:
				t.add(skipLine(f, "repeats the frame above (recursion or an inlined copy)"))
			default:
				kept = append(kept, kn)
				lead++
				as := ""
				if kn != f.name {
					as = " as " + kn
				}
				t.add("kept    #" + strconv.Itoa(f.index) + " " + f.name + as + ": " + why + ": leads the key until the first significant frame")
			}
			continue
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
			if len(kept) == 0 || leafKept && len(kept) == 1 || sh.significant > 0 && significant == 0 {
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
			if naming {
				continue
			}
		}
		if len(kept) > 0 && kept[len(kept)-1] == Lambda && strings.HasSuffix(f.name, "::"+Lambda) {
			// gdb names a lambda's body `operator() (__closure=…)` without
			// its owner; the std::function invoker below names the closure
			// type: one frame, named as the symbol table names it.
			kept[len(kept)-1] = f.name
			t.add("kept    #" + strconv.Itoa(f.index) + " " + f.name + ": names the lambda of the frame above")
			continue
		}
		if naming {
			t.add("stopped after " + strconv.Itoa(significant) + " significant frame(s); the bare lambda keeps no owner (#" + strconv.Itoa(f.index) + " " + f.name + " does not name it)")
			break
		}
		if f.name == Lambda {
			lambdaAt = i
		}
		kept = append(kept, f.name)
		significant++
		t.add("kept    #" + strconv.Itoa(f.index) + " " + f.name + sh.countNote(significant))
	}
	if crashFrame == "" {
		// The key was complete before any named frame (an unsymbolized
		// frame of the executable): the crash frame is still the first
		// named frame after the mechanism frames.
		above := "" // the innermost named inline frame of the crash site
		for j := stop; j < len(frames); j++ {
			f := &frames[j]
			if f.inlined {
				if above == "" && f.name != "" {
					above = f.name
				}
				continue
			}
			if f.name != "" && (f.rule == nil || f.rule.Role == RolePrefix || f.rule.Role == RoleGeneric) {
				crashFrame = f.name
				if above != "" {
					crashFrame = above
					attrs = append(attrs, "inlined="+above)
				}
				break
			}
			above = ""
		}
	}
	if len(generics) == 0 && lastResort != "" {
		generics = []string{lastResort}
	}
	if sh.significant > 0 && significant == 0 && len(generics) > len(kept) {
		kept = generics
		t.add("no significant frame: keying on the first " + strconv.Itoa(len(kept)) + " generic frame(s)")
	}
	if len(kept) == 0 && len(prefixes) > 0 {
		kept = prefixes
		t.add("no frame outside prefix rules: keying on the prefix frames")
	}
	return kept, crashFrame, attrs
}

// namedBelow reports whether the next physical frame below frame i is a
// named frame that no rule makes mechanism, prefix or generic: a
// significant frame that can key the crash instead of an address.
func (g *Generator) namedBelow(frames []frameView, i int) bool {
	for j := i + 1; j < len(frames); j++ {
		f := &frames[j]
		if f.inlined {
			continue
		}
		return f.name != "" && f.rule == nil && !g.generic(f)
	}
	return false
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

// isAppFrame reports whether name lies in one of the products' own
// namespaces (app_namespaces in rules/default.yaml).
func (g *Generator) isAppFrame(name string) bool {
	for _, p := range g.apps {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// appFrame is the first Doris/StarRocks frame of the stack (physical,
// neither mechanism nor sentinel; generic ones count): a kept
// frame, or one below the key (the JNI caller of a crash inside the JVM,
// the BE caller of a crash in a library), else "".
func (g *Generator) appFrame(kept []string, frames []frameView) string {
	for i := range frames {
		if i == sentinelWindow*2 {
			break
		}
		if n := frames[i].name; !frames[i].inlined && g.isAppFrame(n) && (frames[i].rule == nil || frames[i].rule.Role == RolePrefix || frames[i].rule.Role == RoleGeneric) {
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

// keyShape is the layout of a key's frames (parameters of the algorithm:
// changing one changes keys, hence Algorithm). significant = 0 is the
// layout of crashsig-sig/7: the first Frames frames outside the rules.
type keyShape struct {
	// significant: the key stops after this many significant frames
	// (frames neither mechanism nor generic).
	significant int
	// lead bounds the generic frames kept before the first significant
	// one (the crash site: allocator, memcpy, libstdc++ helpers).
	lead int
	// productOnly: every frame outside the products' namespaces is
	// generic, whether or not a rule names it.
	productOnly bool
	// leadAll: every generic frame may lead the key, not only those of
	// crash-site rules.
	leadAll bool
	// productLead (with productOnly): frames outside the products'
	// namespaces that no rule names (third-party libraries) lead the key
	// like crash-site frames.
	productLead bool
	// kind is kindFull, kindClass or kindNone.
	kind int
	// fallback bounds the generic frames keyed when the stack has no
	// significant frame.
	fallback int
	// keepAddress: an unsymbolized crash frame of the executable is keyed
	// by its address even when a named significant frame follows it
	// (crashsig-sig/8); otherwise the named frame keys.
	keepAddress bool
	// keepCut: a name cut by a line limit keys with its "…" component
	// (crashsig-sig/8); otherwise by the scope before the cut.
	keepCut bool
	// lambdaOwner (measured, not chosen): a lambda keys as its owner.
	lambdaOwner bool
}

// countNote is the trace's note on a significant frame kept.
func (sh keyShape) countNote(n int) string {
	if sh.significant == 0 {
		return ""
	}
	return ": significant frame " + strconv.Itoa(n) + " of " + strconv.Itoa(sh.significant)
}

// generic reports whether a named frame is generic under the shape: a
// generic rule, a crash-site prefix rule, or (productOnly) any frame
// outside the products' namespaces.
func (g *Generator) generic(f *frameView) bool {
	if r := f.rule; r != nil {
		return r.Role == RoleGeneric || r.Role == RolePrefix && r.CrashSite
	}
	return g.shape.productOnly && !g.isAppFrame(f.name)
}

// Kind modes of keyShape.kind: how much of the kind prefix a key keeps.
const (
	kindFull  = iota // the whole kind (CHECK(expr), SIGSEGV, ASAN(bug), …)
	kindClass        // its class: fault, abort, or the kind itself for others
	kindNone         // no kind
)

// keyKind is the kind part of a key under the shape's kind mode.
func (sh keyShape) keyKind(kind string) string {
	switch sh.kind {
	case kindNone:
		return ""
	case kindClass:
		return kindClassOf(kind)
	}
	return kind
}

// kindClassOf maps a kind to its class: a fault (signals of a bad access,
// a sanitizer's report of one, the JVM's report of one, an unknown signal)
// or an abort (SIGABRT, CHECK, LOG(FATAL), assert, terminate); other kinds
// (THREADS, LEAK, TERM) stay themselves.
func kindClassOf(kind string) string {
	head := kind
	if i := strings.IndexByte(kind, '('); i >= 0 {
		head = kind[:i]
	}
	switch head {
	case "ASAN", "MSAN", "UBSAN", "TSAN", "HWASAN":
		// A sanitizer reports a deadly signal by its short name: a
		// CHECK or LOG(FATAL) in a sanitizer build is `ABRT on unknown
		// address` (handle_abort=1), the same abort as a release
		// build's SIGABRT.
		if strings.HasPrefix(kind[len(head):], "(ABRT") {
			return "ABORT"
		}
		return "FAULT"
	case "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "CRASH", "JVM":
		return "FAULT"
	case "SIGABRT", "ABORT", "FATAL", "CHECK", "ASSERT", "terminate":
		return "ABORT"
	}
	return kind
}

// keyScopes names key frames in a scope the products renamed between
// versions by the newer scope (moved_namespaces of the rule files:
// StarRocks 3.0 and Doris 3.x left their `vectorized::` namespaces), so
// that one function keys alike in reports of both eras. The crash frame,
// the app frame and the catalog's frame names keep the printed scope.
//
// A name cut by a line limit (Normalize ends it in the component "…") is
// keyed by the scope before the cut: glog 0.7 cuts a whole signature at
// 256 bytes inside the template arguments of the function
// (`X::evaluate<(starrocks::LogicalType)7, …` → `X::evaluate::…`), and
// another print of the same function shows `X::evaluate`.
func (g *Generator) keyScopes(kept []string, t *tracer) []string {
	for i, k := range kept {
		if !g.shape.keepCut && strings.HasSuffix(k, "::"+truncMark) && len(k) > len("::"+truncMark) {
			kept[i] = strings.TrimSuffix(k, "::"+truncMark)
			t.add("key frame " + k + " named " + kept[i] + ": the name was cut; the scope before the cut keys")
			k = kept[i]
		}
		if g.shape.lambdaOwner {
			for strings.HasSuffix(k, "::"+Lambda) {
				k = strings.TrimSuffix(k, "::"+Lambda)
			}
			kept[i] = k
		}
		for _, m := range g.moved {
			if strings.HasPrefix(k, m.From) {
				kept[i] = m.To + k[len(m.From):]
				t.add("key frame " + k + " named " + kept[i] + ": scope " + m.From + " renamed " + m.To + " (" + m.Why + ")")
				break
			}
		}
	}
	return kept
}
