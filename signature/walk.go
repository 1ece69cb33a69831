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

// appFrame is the first Doris/StarRocks frame: among the kept frames, else
// the first one in the stack below them (the JNI caller of a crash inside
// the JVM, the BE caller of a crash in a library), else "".
func (g *Generator) appFrame(kept []string, frames []frameView) string {
	for _, k := range kept {
		if g.isAppFrame(k) {
			return k
		}
	}
	for i := range frames {
		if i == sentinelWindow*2 {
			break
		}
		if n := frames[i].name; !frames[i].inlined && g.isAppFrame(n) && (frames[i].rule == nil || frames[i].rule.Role == RolePrefix) {
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
