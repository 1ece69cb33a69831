// The stack view: per crash, which globs of the catalog hold at which frame
// of the crashing thread and from which evidence source (name, template type,
// source file, module), computed once and shared by the path rules and the
// defect rules.

package catalog

import (
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// stackView is the normalized crashing stack and what matched it.
type stackView struct {
	frames []string // normalized, innermost first
	hits   []hit    // (glob, frame, source) in frame order
	w0, w1 int      // defect window [w0, w1)
	// evidence found beside the names, for the "unknown" reason
	nFiles, nModules, nTypes int
	thread                   *symbolize.Thread
	// crash is the incident the view is of (context evidence, context.go).
	crash *symbolize.Crash
	// start is the first frame after the crash mechanism (signal handler,
	// abort, glog): path evidence is taken from there on.
	start int
	// typeStart <= start: product types in template arguments count from
	// there on. The library frames the signature skips above its crash frame
	// (std:: invokers and containers, the allocator) are work, and the
	// product types in their template arguments name it
	// (stackTable.workStart); their own names say nothing.
	typeStart int
	// created marks the view of a thread-creation stack with its creation
	// chain blanked (decideCreated): lifecycle rules do not hold there.
	created bool
	texts   []string
	// nameHits are the hits on frame names alone (what defects look at).
	nameHits []hit
	state    []uint8
	buf      []int32
	types    []string
	mods     []modHits
}

type modHits struct {
	module string
	hits   []int32
}

// Glob use bits: in which evidence sources a glob is looked for.
const (
	useName uint8 = 1 << iota
	useType
	useFile
	useModule
)

// computeUse records, per glob, the evidence sources it is used in.
func (c *Catalog) computeUse() {
	c.use = make([]uint8, len(c.owners))
	set := func(ids []int32, b uint8) {
		for _, id := range ids {
			c.use[id] |= b
		}
	}
	for i := range c.crules {
		cr := &c.crules[i]
		set(cr.frames, useName|useType)
		set(cr.callers, useName|useType)
		set(cr.notCallers, useName|useType)
		set(cr.types, useType)
		set(cr.files, useFile)
		set(cr.modules, useModule)
	}
	for i := range c.calts {
		ca := &c.calts[i]
		set(ca.frames, useName)
		set(ca.callers, useName)
		set(ca.near, useName)
		set(ca.anyThread, useName) // the crashing thread's frames are looked up in the view
		if ca.anchor >= 0 {
			c.use[ca.anchor] |= useName
		}
	}
}

// addHits appends the hits of the globs that matched s, keeping those
// used for source src.
func (c *Catalog) addHits(v *stackView, globs []int32, frame int, src evidenceSource, text string) {
	var bit uint8
	switch src {
	case srcName, srcOwner:
		bit = useName
	case srcType:
		bit = useType
	case srcFile:
		bit = useFile
	default:
		bit = useModule
	}
	ti := int32(-1)
	for _, g := range globs {
		if c.use[g]&bit == 0 || c.ix.globs[g].universal {
			continue // "*" holds everywhere: decidePath evaluates its rules directly
		}
		if src == srcName {
			v.nameHits = append(v.nameHits, hit{glob: g, frame: int32(frame), src: src, text: -1})
		}
		if text != "" && ti < 0 {
			ti = int32(len(v.texts))
			v.texts = append(v.texts, text)
		}
		v.hits = append(v.hits, hit{glob: g, frame: int32(frame), src: src, text: ti})
	}
}

// hitText is the string a hit matched (the frame name for name hits).
func (s *stackView) hitText(h hit) string {
	if h.text >= 0 && int(h.text) < len(s.texts) {
		return s.texts[h.text]
	}
	return s.frames[h.frame]
}

// releaseView gives a view's buffers back for reuse.
func (c *Catalog) releaseView(v *stackView) {
	if v == nil {
		return
	}
	*v = stackView{hits: v.hits[:0], nameHits: v.nameHits[:0], texts: v.texts[:0], state: v.state, buf: v.buf[:0], types: v.types[:0], mods: v.mods[:0]}
	c.views.Put(v)
}

type hit struct {
	glob  int32
	frame int32
	// text indexes stackView.texts: the string the glob matched when it is
	// not the frame name (the owner, type, source path or module).
	text int32
	src  evidenceSource
}

// has returns the first frame in [from, to) whose name glob g matched, or -1.
func (s *stackView) has(g int32, from, to int) int {
	for _, h := range s.nameHits {
		if h.glob == g && int(h.frame) >= from && int(h.frame) < to {
			return int(h.frame)
		}
	}
	return -1
}

// counts reports whether hit h is path evidence: every source from the
// first frame after the crash mechanism on, and product types in template
// arguments from typeStart on.
func (s *stackView) counts(h hit) bool {
	return int(h.frame) >= s.start || h.src == srcType && int(h.frame) >= s.typeStart
}

// hasCaller is has for rule callers: a frame name, a lambda owner or a
// template type counts.
func (s *stackView) hasCaller(g int32, from, to int) int {
	for _, h := range s.hits {
		if h.glob == g && h.src <= srcType && int(h.frame) >= from && int(h.frame) < to {
			return int(h.frame)
		}
	}
	return -1
}

func (c *Catalog) view(crash *symbolize.Crash, frames []string, sig signature.Signature) *stackView {
	return c.viewFrom(crash, frames, sig, nil)
}

// viewFrom is view without reading the frames omit marks (nil: none): they
// give no evidence, neither their names nor the product types in them (a
// thread-creation chain and the frames it was created under,
// decideCreated).
func (c *Catalog) viewFrom(crash *symbolize.Crash, frames []string, sig signature.Signature, omit []bool) *stackView {
	if len(frames) > maxStack {
		frames = frames[:maxStack]
	}
	v, _ := c.views.Get().(*stackView)
	if v == nil {
		v = &stackView{}
	}
	v.frames = frames
	v.crash = crash
	v.created = false
	var th []symbolize.Frame
	if crash != nil {
		if t := crashingThread(crash); t != nil {
			v.thread = t
			if len(t.Frames) >= len(frames) {
				th = t.Frames[:len(frames)]
			}
		}
	}
	buf, types, mods := v.buf, v.types, v.mods
	sc := c.ix.scratchFor()
	defer c.ix.release(sc)
	// Source paths and modules count only from the crash frame on: the
	// signal handler chain above it (the JVM's handler in libjvm.so, the
	// BE's signal_handler.h) says nothing about the work.
	start := c.stack.mechanismEnd(frames, sig)
	v.start = start
	v.typeStart = c.stack.workStart(frames, start)
	for i, name := range frames {
		if i < len(omit) && omit[i] {
			continue
		}
		if name != "" {
			buf = c.ix.matches(buf[:0], name, sc)
			c.addHits(v, buf, i, srcName, "")
			if owner := lambdaOwner(name); owner != "" {
				buf = c.ix.matches(buf[:0], owner, sc)
				c.addHits(v, buf, i, srcOwner, owner)
			}
		}
		if th == nil {
			continue
		}
		f := &th[i]
		if raw := f.Name(); !f.Java && !c.stack.isProductName(name) && (isMangledText(raw) || strings.IndexByte(raw, '<') >= 0) {
			// product names hide in template arguments (and mangled names)
			types = c.stack.productTypes(types[:0], raw)
			for _, t := range types {
				v.nTypes++
				buf = c.ix.matches(buf[:0], t, sc)
				c.addHits(v, buf, i, srcType, t)
			}
		}
		if raw := f.Name(); !f.Java && name != "" && c.stack.isProductName(name) && strings.IndexByte(raw, '<') >= 0 {
			// a lambda passed to a product template (a thread pool's
			// submit_func<…::$_0>, Defer<…>): its owner submitted the work
			types = c.stack.lambdaArgOwners(types[:0], raw, name)
			for _, t := range types {
				buf = c.ix.matches(buf[:0], t, sc)
				c.addHits(v, buf, i, srcOwner, t)
			}
		}
		if i < start {
			continue
		}
		if p := sourcePath(f); p != "" && !c.stack.toolchainPath(p) {
			v.nFiles++
			buf = c.ix.matches(buf[:0], p, sc)
			c.addHits(v, buf, i, srcFile, p)
		}
		if m := f.Module; m != "" {
			v.nModules++
			k := -1
			for j := range mods {
				if mods[j].module == m {
					k = j
					break
				}
			}
			if k < 0 {
				var prev []int32
				if len(mods) < cap(mods) {
					prev = mods[:len(mods)+1][len(mods)].hits[:0]
				}
				buf = c.ix.matches(buf[:0], m, sc)
				mods = append(mods, modHits{module: m, hits: append(prev, buf...)})
				k = len(mods) - 1
			}
			c.addHits(v, mods[k].hits, i, srcModule, m)
		}
	}
	v.buf, v.types, v.mods = buf, types, mods
	// The defect window starts at the signature's crash frame (the first
	// frame after the mechanism frames, memcpy and allocator frames
	// included) or else its first key frame; when neither is in the stack
	// (an EMPTY signature, a hand-built one) it is the top 2×DefectWindow.
	v.w0, v.w1 = 0, min(2*DefectWindow, len(frames))
	for _, anchor := range []string{sig.CrashFrame, firstOr(sig.Frames)} {
		if anchor == "" {
			continue
		}
		if i := indexOf(frames, anchor); i >= 0 {
			v.w0, v.w1 = i, min(i+DefectWindow, len(frames))
			break
		}
	}
	return v
}

// ruleState returns a zeroed per-rule state slice from the view's buffer.
func (s *stackView) ruleState(n int) []uint8 {
	if cap(s.state) < n {
		s.state = make([]uint8, n)
	}
	s.state = s.state[:n]
	clear(s.state)
	return s.state
}
