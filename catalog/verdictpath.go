package catalog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// This file is the path decision as Classify and PathOf take it: the
// incident kind decides where frames cannot (pathByKind; a thread dump by
// the work of its busy threads, threadDumpPath), else the path rules over
// the stack view (decidePath in path.go), and a thread dump that matched a
// defect takes the defect's path (pathFromDefect).

// pathByKind decides the path from the incident kind where frames of one
// crashing thread cannot: a termination dump (the process was told to
// stop), a leak report (printed at exit) and a thread dump (no crashing
// thread: its busy threads decide, threadDumpPath; groups are its threads
// grouped by threadGroups). It reports whether it did.
func (c *Catalog) pathByKind(v *Verdict, crash *symbolize.Crash, groups []signature.Group) bool {
	switch crash.Kind {
	case symbolize.KindTermination:
		v.Path, v.Area, v.PathConfidence = PathLifecycle, "termination", ConfidenceHigh
		v.Evidence = append(v.Evidence, "path lifecycle/termination: a SIGTERM/SIGINT dump means the process was told to stop; its frames show where the thread was, not a fault")
	case symbolize.KindLeak:
		v.Path, v.Area, v.PathConfidence = PathLifecycle, "leak-report", ConfidenceHigh
		v.Evidence = append(v.Evidence, "path lifecycle/leak-report: LeakSanitizer reports at process exit")
	case symbolize.KindThreadDump:
		c.threadDumpPath(v, crash, groups)
	default:
		return false
	}
	return true
}

// PathOf returns the path and area of a crash without matching defects
// (cheaper than Classify). It is the grouping `crashsig buckets` puts
// before the signature key: bucket by PathOf, then by key. Safe for
// concurrent use.
func (c *Catalog) PathOf(crash *symbolize.Crash) (Path, string) {
	if crash == nil {
		return PathUnknown, ""
	}
	var v Verdict
	if !c.pathByKind(&v, crash, threadGroups(crash, signature.Signature{})) {
		c.decidePath(&v, crash, c.view(crash, Frames(crash), signature.Signature{}))
	}
	return v.Path, v.Area
}

// pathFromDefect places a crash on the path of the defect it matched, if
// the entry names one: a thread dump (no crashing thread; a matched defect
// wins over the busy threads' path), and a crash no frame placed (path
// unknown: a shell's report of the death, a stack no rule names), at low
// confidence.
func (c *Catalog) pathFromDefect(v *Verdict, crash *symbolize.Crash) {
	if v.Defect == nil {
		return
	}
	d, ok := c.Defect(v.Defect.ID)
	if !ok || d.Path == "" || d.Path == PathUnknown {
		return
	}
	switch {
	case crash.Kind == symbolize.KindThreadDump:
		v.Path, v.Area, v.PathConfidence = d.Path, d.Area, ConfidenceMedium
		v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s from the matched defect %s: a thread dump has no crashing thread to place", d.Path, d.Area, d.ID))
	case v.Path == PathUnknown || v.Path == "":
		// Nothing in the stack placed the crash (no frame, or none a rule
		// names), but a known defect matched it by its key, message or
		// check: the defect's path is where that defect happens.
		v.Path, v.Area, v.PathConfidence = d.Path, d.Area, ConfidenceLow
		// The stack's own verdict ("path unknown: …") stays as the reason
		// the defect decides, after the line that says so.
		ev := make([]string, 0, len(v.Evidence)+1)
		ev = append(ev, fmt.Sprintf("path %s/%s from the matched defect %s (confidence low): no frame placed the crash, and the defect it matches happens on that path", d.Path, d.Area, d.ID))
		for _, e := range v.Evidence {
			if rest, ok := strings.CutPrefix(e, "path unknown: "); ok {
				e = "the stack alone placed nothing: " + rest
			}
			ev = append(ev, e)
		}
		v.Evidence = ev
	}
}

// maxDumpGroups bounds the thread groups of one dump that are decided one
// by one (each is a path decision); the rest are counted as not examined.
const maxDumpGroups = 4096

// maxDumpExamples bounds the example frames the evidence names per path.
const maxDumpExamples = 2

// dumpPath is what the busy threads of a dump say about one path.
type dumpPath struct {
	path    Path
	threads int
	// best is the strongest rule any of its threads holds by: highest
	// priority, then more threads, then the smaller id.
	best     int // rule index, -1 for none
	bestN    int
	area     string
	conf     Confidence
	evidence string // the path decision of best's first thread
	thread   string // that thread, as "thread ID (name)"
	areas    map[string]int
	examples []string
}

// threadDumpPath decides a thread dump's path from the work of its busy
// threads (issue 14): a thread dump is taken because the backend hung or
// was slow. Idle threads (pools and daemon loops waiting for work:
// stack.idle_waits/idle_frames, idleOf) say nothing; every other thread
// group gets the ordinary path decision on its representative thread, and
// the answer is the path of the strongest rule any busy thread holds by
// (rule priority as in paths.yaml), at medium confidence at most: low when
// a single thread decides, when the busy threads' paths disagree or when
// the deciding rule is weak itself. No busy thread with evidence: unknown,
// saying what the threads were.
func (c *Catalog) threadDumpPath(v *Verdict, crash *symbolize.Crash, groups []signature.Group) {
	total, idle, noFrames, unplaced, skipped := 0, 0, 0, 0, 0
	idleLoops := map[string]int{}
	var unplacedTops []string
	var paths []*dumpPath
	for gi := range groups {
		g := &groups[gi]
		total += g.Count
		if gi >= maxDumpGroups || g.Representative < 0 || g.Representative >= len(crash.Threads) {
			skipped += g.Count
			continue
		}
		sub := *crash
		sub.Threads = crash.Threads[g.Representative : g.Representative+1]
		frames := FrameNames(&sub)
		named := false
		for _, f := range frames {
			if f != "" {
				named = true
				break
			}
		}
		if !named {
			noFrames += g.Count
			continue
		}
		isIdle, at := c.stack.idle.idleOf(frames)
		if isIdle {
			idle += g.Count
			idleLoops[frames[at]] += g.Count
			continue
		}
		var tv Verdict
		sv := c.view(&sub, frames, signature.Signature{})
		c.decidePath(&tv, &sub, sv)
		c.releaseView(sv)
		top := ""
		if at >= 0 {
			top = frames[at]
		}
		if tv.Path == PathUnknown || tv.Path == "" {
			unplaced += g.Count
			if top != "" && len(unplacedTops) < maxDumpExamples && !contains(unplacedTops, top) {
				unplacedTops = append(unplacedTops, top)
			}
			continue
		}
		var dp *dumpPath
		for _, p := range paths {
			if p.path == tv.Path {
				dp = p
			}
		}
		if dp == nil {
			dp = &dumpPath{path: tv.Path, best: -1, areas: map[string]int{}}
			paths = append(paths, dp)
		}
		dp.threads += g.Count
		dp.areas[tv.Area] += g.Count
		if top != "" && len(dp.examples) < maxDumpExamples && !contains(dp.examples, top) {
			dp.examples = append(dp.examples, top)
		}
		ri := c.ruleIndex(tv.PathRule)
		if dp.best < 0 || ri >= 0 && c.strongerDumpRule(ri, g.Count, dp.best, dp.bestN) {
			dp.best, dp.bestN, dp.area, dp.conf = ri, g.Count, tv.Area, tv.PathConfidence
			dp.evidence = firstOr(tv.Evidence)
			dp.thread = threadLabel(&crash.Threads[g.Representative])
		}
	}
	busy := unplaced
	for _, p := range paths {
		busy += p.threads
	}
	var b strings.Builder
	fmt.Fprintf(&b, "thread dump: %d of %d threads busy", busy, total)
	if len(paths) > 0 {
		sort.SliceStable(paths, func(i, j int) bool { return c.dumpPathBefore(paths[i], paths[j]) })
		b.WriteString(": ")
		for i, p := range paths {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d %s (%s; e.g. %s)", p.threads, p.path, areaCounts(p.areas), strings.Join(p.examples, ", "))
		}
	}
	if unplaced > 0 {
		fmt.Fprintf(&b, "; busy without path evidence: %d (e.g. %s)", unplaced, strings.Join(unplacedTops, ", "))
	}
	fmt.Fprintf(&b, "; idle: %d", idle)
	if idle > 0 {
		fmt.Fprintf(&b, " (%s)", loopCounts(idleLoops))
	}
	if noFrames > 0 {
		fmt.Fprintf(&b, "; without frames: %d", noFrames)
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "; not examined: %d (more than %d stacks)", skipped, maxDumpGroups)
	}
	if len(paths) == 0 {
		v.Path, v.Area, v.PathConfidence = PathUnknown, "", ConfidenceLow
		v.Evidence = append(v.Evidence, "path unknown: no busy thread of the dump carries path evidence; "+b.String())
		return
	}
	w := paths[0]
	decided := 0
	for _, p := range paths {
		decided += p.threads
	}
	conf, why := ConfidenceMedium, "the busy threads agree"
	switch {
	case len(paths) > 1:
		conf, why = ConfidenceLow, "the busy threads disagree: the highest-priority path decides"
	case decided == 1:
		conf, why = ConfidenceLow, "a single thread decides"
	case w.conf == ConfidenceLow:
		conf, why = ConfidenceLow, "the deciding evidence is weak"
	}
	v.Path, v.Area, v.PathConfidence = w.path, w.area, conf
	if w.best >= 0 {
		v.PathRule = c.rules[w.best].ID
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf("path %s/%s from the thread dump's busy threads (confidence %s: %s; a dump is at most medium); %s", w.path, w.area, conf, why, b.String()))
	if w.evidence != "" {
		v.Evidence = append(v.Evidence, w.thread+": "+w.evidence)
	}
}

// strongerDumpRule orders the rules busy threads hold by: higher priority,
// then more threads, then the smaller id.
func (c *Catalog) strongerDumpRule(a, an, b, bn int) bool {
	ra, rb := &c.rules[a], &c.rules[b]
	if ra.Priority != rb.Priority {
		return ra.Priority > rb.Priority
	}
	if an != bn {
		return an > bn
	}
	return ra.ID < rb.ID
}

// dumpPathBefore orders the paths of a dump: the strongest rule first
// (priority), then more threads, then the path name.
func (c *Catalog) dumpPathBefore(a, b *dumpPath) bool {
	pa, pb := -1<<31, -1<<31
	if a.best >= 0 {
		pa = c.rules[a.best].Priority
	}
	if b.best >= 0 {
		pb = c.rules[b.best].Priority
	}
	if pa != pb {
		return pa > pb
	}
	if a.threads != b.threads {
		return a.threads > b.threads
	}
	return a.path < b.path
}

// ruleIndex returns the index of the path rule with that id, or -1.
func (c *Catalog) ruleIndex(id string) int {
	if id == "" {
		return -1
	}
	for i := range c.rules {
		if c.rules[i].ID == id {
			return i
		}
	}
	return -1
}

// threadLabel names a thread in the evidence: "thread 41890 (name)".
func threadLabel(t *symbolize.Thread) string {
	s := "thread " + strconv.FormatInt(t.ID, 10)
	if t.Name != "" {
		s += " (" + t.Name + ")"
	}
	return s
}

// areaCounts writes "scanner×9, segment-read×1" (most first, then by name).
func areaCounts(m map[string]int) string {
	return countList(m, "(no area)")
}

// loopCounts writes the idle loops, most first: "doris::ThreadPool::dispatch_thread×100, …".
func loopCounts(m map[string]int) string {
	return countList(m, "")
}

// maxCountList bounds the entries of a count list.
const maxCountList = 4

func countList(m map[string]int, empty string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for i, k := range keys {
		if i == maxCountList {
			fmt.Fprintf(&b, ", %d more", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		n := m[k]
		if k == "" {
			k = empty
		}
		b.WriteString(k)
		b.WriteString("×")
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
