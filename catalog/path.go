package catalog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// Query id bits of compiledRule.queryID.
const (
	qPresent uint16 = 1 << iota
	qZero
	qAbsent
)

// tabletIDBit is the tablet id state's bit, above the query id bits.
func tabletIDBit(state string) uint16 { return queryIDBit(state) << 3 }

// fileLineBit is the StarRocks preamble file line's bit, above the tablet
// id bits (0 for no line).
func fileLineBit(kind string) uint16 {
	switch kind {
	case FileLineHive:
		return 1 << 6
	case FileLineLoad:
		return 1 << 7
	}
	return 0
}

// taskLabelBit is the Doris memory tracker task label's bit, above the file
// line bits (0 for no label): taskLabels holds it with the label.
func taskLabelBit(kind string) uint16 {
	for _, l := range taskLabels {
		if l.kind == kind {
			return l.bit
		}
	}
	return 0
}

// idBits are the crash's query id and tablet id states, its file line kind
// and its task label kind as one bit set.
func idBits(crash *symbolize.Crash) uint16 {
	kind, _ := fileLine(crash)
	task, _ := taskLabel(crash)
	return queryIDBit(queryIDState(crash)) | tabletIDBit(tabletIDState(crash)) | fileLineBit(kind) | taskLabelBit(task)
}

// idsHold reports whether the rule's query id, tablet id, file line and
// task label conditions hold for the crash's id bits.
func (cr *compiledRule) idsHold(bits uint16) bool {
	return (cr.queryID == 0 || cr.queryID&bits != 0) && (cr.tabletID == 0 || cr.tabletID&bits != 0) &&
		(cr.fileLine == 0 || cr.fileLine&bits != 0) && (cr.taskLabel == 0 || cr.taskLabel&bits != 0)
}

func queryIDBit(state string) uint16 {
	switch state {
	case QueryIDPresent:
		return qPresent
	case QueryIDZero:
		return qZero
	case QueryIDAbsent:
		return qAbsent
	}
	return 0
}

// compileRule interns a rule's globs and registers it as their owner.
func (c *Catalog) compileRule(i int, r *PathRule, internAll func([]string) []int32) compiledRule {
	cr := compiledRule{
		frames: internAll(r.Frames), callers: internAll(r.Callers), notCallers: internAll(r.NotCallers),
		files: internAll(r.Files), modules: internAll(r.Modules), types: internAll(r.Types),
		weight: r.Weight, namesOnly: r.NamesOnly, at: where(r.File, r.Line), whyLine: "why " + r.ID + ": " + r.Why,
		freedBy: compileGlobs(r.FreedBy), logContext: compileGlobs(r.LogContext), sanBug: compileGlobs(r.SanitizerBug),
		mainThread: r.MainThread, siteFiles: compileSiteGlobs(r.Files),
	}
	if cr.weight <= 0 || cr.weight > 1 {
		cr.weight = 1
	}
	for _, q := range r.QueryID {
		cr.queryID |= queryIDBit(q)
	}
	for _, q := range r.TabletID {
		cr.tabletID |= tabletIDBit(q)
	}
	for _, q := range r.FileLine {
		cr.fileLine |= fileLineBit(q)
	}
	for _, q := range r.TaskLabel {
		cr.taskLabel |= taskLabelBit(q)
	}
	for _, t := range r.Threads {
		if g, err := compileGlob(t); err == nil {
			cr.threads = append(cr.threads, g)
		}
	}
	if r.OnThreads != nil {
		cr.onThreads = compileGlobs(r.OnThreads.Threads)
	}
	for _, ids := range [][]int32{cr.frames, cr.files, cr.modules, cr.types} {
		for _, id := range ids {
			c.owners[id] = appendOwner(c.owners[id], owner{0, int32(i)})
		}
	}
	for k, f := range r.Frames {
		if strings.Trim(f, "*") == "" {
			c.universal = append(c.universal, i)
			if c.universalGlob == nil {
				c.universalGlob = map[int]int32{}
			}
			c.universalGlob[i] = cr.frames[k]
			break
		}
	}
	if len(cr.frames)+len(cr.files)+len(cr.modules)+len(cr.types) == 0 {
		switch {
		case len(cr.threads) > 0:
			c.weak = append(c.weak, i)
		case cr.queryID != 0 || cr.tabletID != 0:
			c.idRules = append(c.idRules, i)
		}
	}
	return cr
}

// noFrame is where a universal rule holds by a condition that is evidence
// of its own (the preamble's file line) when the crash shows no frame of
// work: it sorts after every frame (better: the innermost frame wins).
const noFrame = maxStack

// hasNamedFrame reports whether the stack has a named frame.
func (s *stackView) hasNamedFrame() bool {
	for _, f := range s.frames {
		if f != "" {
			return true
		}
	}
	return false
}

// hasWorkFrame reports whether a named frame follows the crash mechanism.
func (s *stackView) hasWorkFrame() bool {
	for at := s.start; at < len(s.frames); at++ {
		if s.frames[at] != "" {
			return true
		}
	}
	return false
}

// ruleHold is where and how a rule holds.
type ruleHold struct {
	at int // frame index (-1: a weak rule)
	h  hit
}

// ruleHolds returns the innermost frame at which rule i holds, with the
// evidence that made it hold, or at = -1.
func (c *Catalog) ruleHolds(i int, sv *stackView, qstate uint16) ruleHold {
	cr := &c.crules[i]
	if !cr.conditionsHold(qstate, sv.thread, sv.crash) {
		return ruleHold{at: -1}
	}
	if g, ok := c.universalGlob[i]; ok {
		for at := sv.start; at < len(sv.frames); at++ {
			if sv.frames[at] != "" && c.callersHold(cr, sv, at) {
				return ruleHold{at: at, h: hit{glob: g, frame: int32(at), src: srcName, text: -1}}
			}
		}
	}
	for _, h := range sv.hits {
		if !sv.counts(h) {
			continue
		}
		ok := cr.accepts(h)
		if !ok {
			continue
		}
		if c.callersHold(cr, sv, int(h.frame)) {
			return ruleHold{at: int(h.frame), h: h}
		}
	}
	return ruleHold{at: -1}
}

// retarget gives the verdict a rule's other path (no_query, on_threads):
// its area, or the rule's when it names none, at medium confidence at
// most (a hint chose it, not the frames).
func (v *Verdict) retarget(t PathTarget, ruleArea string) {
	v.Path, v.Area = t.Path, t.Area
	if v.Area == "" {
		v.Area = ruleArea
	}
	if v.PathConfidence == ConfidenceHigh {
		v.PathConfidence = ConfidenceMedium
	}
}

// conditionsHold reports whether the rule's conditions beside its
// evidence hold for the crash: the id states, the crashing thread's name
// and the context conditions (context.go).
func (cr *compiledRule) conditionsHold(qbit uint16, t *symbolize.Thread, crash *symbolize.Crash) bool {
	if !cr.idsHold(qbit) || len(cr.threads) > 0 && !threadMatches(cr.threads, t) {
		return false
	}
	if cr.hasContext() {
		_, _, ok := cr.contextHolds(crash)
		return ok
	}
	return true
}

// accepts reports whether hit h is evidence for the rule: its glob is in
// the rule's list for the hit's source.
func (cr *compiledRule) accepts(h hit) bool {
	switch h.src {
	case srcName:
		return containsID(cr.frames, h.glob)
	case srcOwner:
		return !cr.namesOnly && containsID(cr.frames, h.glob)
	case srcType:
		return containsID(cr.types, h.glob) || !cr.namesOnly && containsID(cr.frames, h.glob)
	case srcFile:
		return containsID(cr.files, h.glob)
	case srcModule:
		return containsID(cr.modules, h.glob)
	}
	return false
}

// callersHold checks a rule's callers and not_callers below frame at.
func (c *Catalog) callersHold(cr *compiledRule, sv *stackView, at int) bool {
	n := len(sv.frames)
	for _, g := range cr.callers {
		if sv.hasCaller(g, at+1, n) < 0 {
			return false
		}
	}
	for _, g := range cr.notCallers {
		if sv.hasCaller(g, at+1, n) >= 0 {
			return false
		}
	}
	return true
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// better orders matching rules: higher priority, then the one that holds
// at the innermost frame (the more specific subsystem: a trash sweep
// inside the sweeper thread), then the stronger evidence, then the
// smaller id.
func better(a *PathRule, aAt int, aw float64, b *PathRule, bAt int, bw float64) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if aAt != bAt {
		return aAt < bAt
	}
	if aw != bw {
		return aw > bw
	}
	return a.ID < b.ID
}

func (c *Catalog) decidePath(v *Verdict, crash *symbolize.Crash, sv *stackView) {
	if !sv.created {
		if n := creationChain(crash, sv.frames); n > 0 {
			why := "frames #0-#" + strconv.Itoa(n-1) + " (down to " + sv.frames[n-1] + ") start a thread and the incident has no signal, sanitizer error, message or exception: the stack is the creation stack of the thread (a sanitizer's `Thread T… created by T… here` block cut from its header), not the crash"
			if !c.decideCreated(v, crash, sv.frames, n, why) {
				v.Path, v.Area, v.PathRule, v.PathConfidence = PathUnknown, "", "", ConfidenceLow
				v.Evidence = append(v.Evidence[:0], "path unknown: "+why+"; "+createdWhy+"; no path rule places the code between them")
			}
			return
		}
		if !sv.hasNamedFrame() {
			if t := creationThread(crash); t != nil {
				sub := crashingOnly(crash, t)
				frames := FrameNames(sub)
				why := "the crashing thread shows no frame and the incident's " + strconv.Quote(t.State) + " is the creation stack of a thread, not the crash"
				if c.decideCreated(v, sub, frames, creationChain(nil, frames), why) {
					return
				}
				*v = v.cleared()
			}
			if t := cutSanitizerStack(crash); t != nil && c.decideFromCut(v, crash, t) {
				return
			}
		}
	}
	qs := queryIDState(crash)
	qbit := idBits(crash)
	best := -1
	var bestHold ruleHold
	bestW := 0.0
	var others []string
	// agree holds, per path, the strongest evidence of any rule that holds
	// for it: a component shared by several paths (a segment reader, a file
	// format reader, a segment writer) decides at medium confidence alone and
	// at high confidence when a root of the same path (a scanner, a load
	// channel) also holds deeper.
	var agree [8]struct {
		path Path
		w    float64
		ri   int
	}
	nAgree := 0
	// Rules with a universal frame glob ("*", e.g. sanitizers' T0) hold at
	// the first named frame after the crash mechanism when their conditions do.
	consider := func(ri int, h hit) {
		r := &c.rules[ri]
		if sv.created && r.Path == PathLifecycle {
			return
		}
		w := h.src.weight() * c.crules[ri].weight
		k := 0
		for k < nAgree && agree[k].path != r.Path {
			k++
		}
		if k == nAgree && k < len(agree) {
			agree[k].path, agree[k].w, agree[k].ri = r.Path, -1, -1
			nAgree++
		}
		if k < nAgree && w > agree[k].w {
			agree[k].w, agree[k].ri = w, ri
		}
		if best < 0 || better(r, int(h.frame), w, &c.rules[best], bestHold.at, bestW) {
			if best >= 0 {
				others = append(others, c.rules[best].ID)
			}
			best, bestHold, bestW = ri, ruleHold{at: int(h.frame), h: h}, w
		} else {
			others = append(others, r.ID)
		}
	}
	// A universal rule with context conditions (freed_by, log_context:
	// context.go) takes its evidence kind and weight from the context.
	var bestCtx ctxHold
	for _, ri := range c.universal {
		cr := &c.crules[ri]
		if !cr.idsHold(qbit) || len(cr.threads) > 0 && !threadMatches(cr.threads, sv.thread) {
			continue
		}
		src := srcName
		var ch ctxHold
		if cr.hasContext() {
			var ok bool
			if ch, src, ok = cr.contextHolds(crash); !ok {
				continue
			}
		}
		held := false
		for at := sv.start; at < len(sv.frames); at++ {
			if sv.frames[at] != "" && c.callersHold(cr, sv, at) {
				prev := best
				consider(ri, hit{glob: c.universalGlob[ri], frame: int32(at), src: src, text: -1})
				if best == ri && prev != ri {
					bestCtx = ch
				}
				held = true
				break
			}
		}
		// A text with no frame after the mechanism gives the rule no frame
		// to hold at: conditions that are evidence alone hold at noFrame.
		if !held && cr.evidentAlone() && len(cr.callers) == 0 && !sv.hasWorkFrame() {
			prev := best
			consider(ri, hit{glob: c.universalGlob[ri], frame: noFrame, src: src, text: -1})
			if best == ri && prev != ri {
				bestCtx = ch
			}
		}
	}
	// One pass over the hits, innermost frame first: the first hit at which
	// a rule holds is where it holds (what ruleHolds computes per rule).
	state := sv.ruleState(len(c.rules))
	for _, h := range sv.hits {
		if !sv.counts(h) {
			continue
		}
		for _, o := range c.owners[h.glob] {
			if o.kind != 0 || state[o.idx] != 0 {
				continue
			}
			ri := int(o.idx)
			cr := &c.crules[ri]
			if !cr.conditionsHold(qbit, sv.thread, crash) {
				state[ri] = 2 // never holds
				continue
			}
			if !cr.accepts(h) || !c.callersHold(cr, sv, int(h.frame)) {
				continue
			}
			state[ri] = 1
			consider(ri, h)
		}
	}
	if best >= 0 && c.rules[best].Generic && !sv.created && sv.thread != nil && sv.thread.Name != "" &&
		bestHold.at < len(sv.frames) && c.productHold(sv, bestHold) {
		// Only a generic frame rule holds, by product evidence (column
		// operations, memory tracking, any product function or type:
		// productHold): code every path runs. The crashing thread's pool name, when a thread rule
		// knows it, says more about the work. A thread running product
		// code is the backend's own, whose name is its pool's; the caveat
		// about names (a JVM thread inherits the name of the native thread
		// that created it) is why JVM and RPC-library frames do not yield.
		if c.genericYields(best, sv.thread, qbit, sv.created) {
			wb := c.weakThreadRule(sv.thread.Name, qbit, sv.created)
			c.decideByThread(v, wb, sv.thread.Name, "only a generic frame rule matched")
			v.Evidence = append(v.Evidence, "generic frame rule "+c.rules[best].ID+" also matched (frame #"+strconv.Itoa(bestHold.at)+" "+sv.frames[bestHold.at]+"): code every path runs, so the thread name decided")
			return
		}
	}
	if best >= 0 {
		r := &c.rules[best]
		v.Path, v.Area, v.PathRule = r.Path, r.Area, r.ID
		v.PathConfidence = confidenceOf(bestW)
		corroborated := -1
		for k := 0; k < nAgree; k++ {
			if agree[k].path == r.Path && agree[k].ri != best && confidenceOf(agree[k].w) == ConfidenceHigh && v.PathConfidence != ConfidenceHigh {
				v.PathConfidence, corroborated = ConfidenceHigh, agree[k].ri
			}
		}
		at, h := bestHold.at, bestHold.h
		// Built by hand: this line is written for every crash and fmt was a
		// fifth of the classification's time.
		var b strings.Builder
		b.Grow(200)
		b.WriteString("path ")
		b.WriteString(string(r.Path))
		b.WriteByte('/')
		b.WriteString(r.Area)
		b.WriteString(" by rule ")
		b.WriteString(r.ID)
		b.WriteString(" (")
		b.WriteString(c.crules[best].at)
		b.WriteString("): ")
		if h.src.isContext() {
			b.WriteString(h.src.String())
			b.WriteByte(' ')
			b.WriteString(strconv.Quote(bestCtx.text))
			b.WriteString(" ~ ")
			b.WriteString(strconv.Quote(bestCtx.glob))
			b.WriteString(" in ")
			b.WriteString(bestCtx.where)
			b.WriteString("; crashing thread ")
		} else if h.src != srcName {
			b.WriteString(h.src.String())
			b.WriteByte(' ')
			b.WriteString(sv.hitText(h))
			b.WriteString(" of ")
		}
		if at == noFrame {
			if h.src.isContext() {
				b.WriteString("has ")
			}
			b.WriteString("no frame after the crash mechanism")
		} else {
			b.WriteString("frame #")
			b.WriteString(strconv.Itoa(at))
			b.WriteByte(' ')
			b.WriteString(sv.frames[at])
			b.WriteString(" ~ ")
			b.WriteString(c.ix.globs[h.glob].quoted)
		}
		if c.crules[best].fileLine != 0 {
			_, line := fileLine(crash)
			b.WriteString(" and the crash preamble's file line ")
			b.WriteString(strconv.Quote(line))
		}
		if c.crules[best].taskLabel != 0 {
			_, label := taskLabel(crash)
			b.WriteString(" and the message's memory tracker task label ")
			b.WriteString(strconv.Quote(label))
		}
		b.WriteString(" (weight ")
		b.WriteString(strconv.FormatFloat(bestW, 'f', 2, 64))
		b.WriteString(", confidence ")
		b.WriteString(string(v.PathConfidence))
		if corroborated >= 0 {
			b.WriteString(", corroborated by rule ")
			b.WriteString(c.rules[corroborated].ID)
		}
		b.WriteByte(')')
		v.Evidence = append(v.Evidence, b.String(), c.crules[best].whyLine)
		if r.OnThreads != nil && !sv.created && threadMatches(c.crules[best].onThreads, sv.thread) {
			v.retarget(r.OnThreads.PathTarget, r.Area)
			v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s instead: thread %q is %s's pool (rule %s's on_threads; confidence %s)", v.Path, v.Area, sv.thread.Name, v.Path, r.ID, v.PathConfidence))
		} else if r.NoQuery != nil && qs == QueryIDZero {
			v.retarget(*r.NoQuery, r.Area)
			v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s instead: query id %q says no query was attached (weak hint, used because rule %s allows it; confidence %s)", v.Path, v.Area, crash.QueryID, r.ID, v.PathConfidence))
		}
		if len(others) > 0 {
			sort.Strings(others)
			v.Evidence = append(v.Evidence, "other path rules matched (lower priority, or same priority at a deeper frame): "+strings.Join(dedupe(others), ", "))
		}
		return
	}
	name := ""
	if sv.thread != nil {
		name = sv.thread.Name
	}
	// The crash site the failure line printed, when no frame rule held:
	// where the check or the undefined behaviour is (site.go).
	if !sv.created && c.decideFromSite(v, crash, sv.thread, qbit) {
		return
	}
	// The product types the crash message names (a failed cast's types):
	// what was being worked on (message.go).
	if !sv.created && c.decideFromMessage(v, crash, sv.thread, qbit) {
		return
	}
	// Weak evidence, only when no frame-level rule matched: the thread
	// name (a rule may require a query id state), then the query id.
	if name != "" {
		if wb := c.weakThreadRule(name, qbit, sv.created); wb >= 0 {
			c.decideByThread(v, wb, name, "no frame rule matched")
			return
		}
	}
	ib := -1
	for _, i := range c.idRules {
		if c.crules[i].idsHold(qbit) && (ib < 0 || better(&c.rules[i], -1, 0, &c.rules[ib], -1, 0)) {
			ib = i
		}
	}
	if ib >= 0 {
		r := &c.rules[ib]
		v.Path, v.Area, v.PathRule = r.Path, r.Area, r.ID
		w := weightQueryID * c.crules[ib].weight
		v.PathConfidence = confidenceOf(w)
		ids := fmt.Sprintf("query id %s (%q)", qs, strings.TrimSpace(crash.QueryID))
		if c.crules[ib].tabletID != 0 {
			ids += fmt.Sprintf(", tablet id %s (%q)", tabletIDState(crash), strings.TrimSpace(crash.TabletID))
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s by id rule %s (%s): %s and no frame or thread rule matched (weight %.2f, confidence %s)", r.Path, r.Area, r.ID, c.crules[ib].at, ids, w, v.PathConfidence), c.crules[ib].whyLine)
		return
	}
	v.Path, v.Area, v.PathConfidence = PathUnknown, "", ConfidenceLow
	v.Evidence = append(v.Evidence, "path unknown: "+c.missing(sv, qs, name))
}

// productHold reports whether a rule holds by product evidence: a product
// frame's name, or a product name in a frame's template arguments or as
// a lambda's owner (not a module, a JVM or an RPC library's frame).
func (c *Catalog) productHold(sv *stackView, h ruleHold) bool {
	switch h.h.src {
	case srcType, srcOwner:
		return true
	case srcName:
		return c.stack.isProductName(sv.frames[h.at])
	}
	return false
}

// genericYields reports whether rule best, when it is marked generic (code
// every path runs), yields to a thread-name rule that knows the crashing
// thread's pool and names another path.
func (c *Catalog) genericYields(best int, thread *symbolize.Thread, qbit uint16, created bool) bool {
	if !c.rules[best].Generic || thread == nil || thread.Name == "" {
		return false
	}
	wb := c.weakThreadRule(thread.Name, qbit, created)
	return wb >= 0 && c.rules[wb].Path != c.rules[best].Path
}

// weakThreadRule returns the best thread-name rule that holds for name and
// the crash's id bits (lifecycle ones not on a creation stack), or -1.
func (c *Catalog) weakThreadRule(name string, qbit uint16, created bool) int {
	wb := -1
	for _, i := range c.weak {
		cr := &c.crules[i]
		if !cr.idsHold(qbit) {
			continue
		}
		if created && c.rules[i].Path == PathLifecycle {
			continue
		}
		for _, g := range cr.threads {
			if g.match(name) && (wb < 0 || better(&c.rules[i], -1, 0, &c.rules[wb], -1, 0)) {
				wb = i
			}
		}
	}
	return wb
}

// decideByThread writes the verdict of thread rule wb for thread name;
// why says what the frames gave.
func (c *Catalog) decideByThread(v *Verdict, wb int, name, why string) {
	r := &c.rules[wb]
	v.Path, v.Area, v.PathRule = r.Path, r.Area, r.ID
	w := weightThread * c.crules[wb].weight
	v.PathConfidence = confidenceOf(w)
	v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s by weak rule %s (%s): thread name %q and %s (weight %.2f, confidence %s)", r.Path, r.Area, r.ID, c.crules[wb].at, name, why, w, v.PathConfidence), c.crules[wb].whyLine)
}

// missing says which evidence the crash lacked, for an unknown path.
func (c *Catalog) missing(sv *stackView, qs, thread string) string {
	if len(sv.frames) == 0 {
		return fmt.Sprintf("the crashing thread has no frames, the query id is %s and no thread-name rule matches %q", qs, thread)
	}
	named := 0
	for _, f := range sv.frames {
		if f != "" {
			named++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no path rule matches the %d frames (%d named)", len(sv.frames), named)
	fmt.Fprintf(&b, ", their %d source paths, %d modules and %d product names in template arguments", sv.nFiles, sv.nModules, sv.nTypes)
	switch qs {
	case QueryIDAbsent:
		b.WriteString("; no query id printed")
	default:
		fmt.Fprintf(&b, "; query id %s and no id rule for it", qs)
	}
	if thread == "" {
		b.WriteString("; no thread name")
	} else {
		fmt.Fprintf(&b, "; thread name %q matches no rule", thread)
	}
	return b.String()
}

// threadMatches reports whether the thread's name matches one of globs.
func threadMatches(globs []glob, t *symbolize.Thread) bool {
	if t == nil || t.Name == "" {
		return false
	}
	for i := range globs {
		if globs[i].match(t.Name) {
			return true
		}
	}
	return false
}

// createdWhy says how a thread-creation stack is read (decideCreated).
const createdWhy = "the code that created the thread's pool is weak evidence of what the thread ran, like a thread name, and the frames of the lifecycle rules (main, ExecEnv init: every pool is created under them) are not evidence"

// decideCreated decides the path of a thread-creation stack (frames, whose
// first n start a thread): the frames below the chain are the code that
// created the thread's pool, weak evidence of the work the thread ran,
// like a thread name. The path rules run on the stack without the chain
// and without the frames a lifecycle rule matches (main, ExecEnv::init:
// every pool is created there), and the lifecycle rules do not hold; what
// they find is low confidence, introduced by why. It reports whether a
// rule placed the stack; v is unspecified when not.
func (c *Catalog) decideCreated(v *Verdict, crash *symbolize.Crash, stack []string, n int, why string) bool {
	cv := c.viewFrom(crash, stack, signature.Signature{}, nil)
	omit := make([]bool, len(cv.frames))
	frames := make([]string, len(cv.frames))
	copy(frames, cv.frames)
	for i := 0; i < n && i < len(omit); i++ {
		omit[i], frames[i] = true, ""
	}
	for _, h := range cv.hits {
		if omit[h.frame] {
			continue
		}
		for _, o := range c.owners[h.glob] {
			if o.kind == 0 && c.rules[o.idx].Path == PathLifecycle && c.crules[o.idx].accepts(h) {
				omit[h.frame], frames[h.frame] = true, ""
				break
			}
		}
	}
	c.releaseView(cv)
	cv = c.viewFrom(crash, frames, signature.Signature{}, omit)
	cv.created = true
	c.decidePath(v, crash, cv)
	c.releaseView(cv)
	if v.Path == PathUnknown || !c.isFrameRule(v.PathRule) {
		return false // the thread name or the ids are not the creation stack's evidence
	}
	v.PathConfidence = ConfidenceLow
	v.Evidence = append([]string{"path " + string(v.Path) + "/" + v.Area + " from a thread-creation stack (weak, confidence low): " + why + "; " + createdWhy}, v.Evidence...)
	return true
}

// crashingOnly is crash with t, one of its auxiliary stacks, as its only
// thread and the crashing one: the path rules then read t as they read a
// crashing stack (a thread-creation stack, a sanitizer stack whose header
// was cut).
func crashingOnly(crash *symbolize.Crash, t *symbolize.Thread) *symbolize.Crash {
	sub := *crash
	th := *t
	th.Crashed = true
	sub.Threads = []symbolize.Thread{th}
	return &sub
}

// cleared is v without its path decision: the catalog revision, the
// signature algorithm and the status kept, everything else empty.
func (v *Verdict) cleared() Verdict {
	return Verdict{CatalogRevision: v.CatalogRevision, SignatureAlgorithm: v.SignatureAlgorithm, Status: v.Status}
}

// cutWhy says how the cut stack of a sanitizer report is read
// (decideFromCut).
const cutWhy = "the crashing stack is missing and the report's first other stack with frames lost its header (the access, freed-by or allocated-by stack of the same memory: a paste that kept only the tail of the report); the code it shows is the work that used the memory, read at low confidence (never as lifecycle: a cut stack under main or ExecEnv::init is most likely a thread-creation stack)"

// decideFromCut decides the path of a sanitizer report whose crashing stack
// is missing from a stack whose header was cut (cutSanitizerStack): the
// path rules run on it as on a crashing stack, and what they find is low
// confidence, introduced by cutWhy. It reports whether a frame rule placed
// the stack; v is left as it was when not.
func (c *Catalog) decideFromCut(v *Verdict, crash *symbolize.Crash, t *symbolize.Thread) bool {
	sub := crashingOnly(crash, t)
	cv := v.cleared()
	sv := c.view(sub, FrameNames(sub), signature.Signature{})
	c.decidePath(&cv, sub, sv)
	c.releaseView(sv)
	if cv.Path == PathUnknown || cv.Path == "" || cv.Path == PathLifecycle || !c.isFrameRule(cv.PathRule) {
		// Lifecycle is not read from a cut stack: every pool thread is
		// created under main or ExecEnv::init, so a cut stack under them
		// is most likely a thread-creation stack that lost its header and
		// its pthread_create frames, which says nothing about the crash.
		return false
	}
	cv.PathConfidence = ConfidenceLow
	cv.Evidence = append([]string{"path " + string(cv.Path) + "/" + cv.Area + " from a sanitizer stack whose header is cut (weak, confidence low): " + cutWhy}, cv.Evidence...)
	*v = cv
	return true
}

// isFrameRule reports whether the rule with this id holds at frames (not a
// thread-name or id rule).
func (c *Catalog) isFrameRule(id string) bool {
	for i := range c.rules {
		if c.rules[i].ID == id {
			return !containsInt(c.weak, i) && !containsInt(c.idRules, i)
		}
	}
	return false
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
