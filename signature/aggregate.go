package signature

import (
	"sort"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// Bounds of thread aggregation.
const (
	// maxGroupFrames bounds the normalized stack kept per group.
	maxGroupFrames = 64
	// maxNameSamples bounds the observed thread names kept per group.
	maxNameSamples = 5
	// maxNamePatterns bounds the distinct name patterns kept per group.
	maxNamePatterns = 32
)

// Group is a set of threads of one incident that share a normalized stack.
type Group struct {
	// Frames is the normalized stack (innermost first, at most 64 frames;
	// unsymbolized frames as module+offset or "?").
	Frames []string `json:"frames"`
	// Key is Frames joined; threads with equal Keys are in one group.
	Key string `json:"key"`
	// Count is the number of threads in the group.
	Count int `json:"count"`
	// Crashed is set for the group of the crashing thread.
	Crashed bool `json:"crashed,omitempty"`
	// States are the distinct thread states (jstack), sorted.
	States []string `json:"states,omitempty"`
	// NameSamples are up to 5 observed thread names, in input order.
	// Names are observations only: they never decide the group (a JVM
	// thread inherits the name of the native thread that made it).
	NameSamples []string `json:"name_samples,omitempty"`
	// NamePatterns are the distinct names with digit runs collapsed to
	// <n> (`sdk-ScheduledExecutor-<n>-<n>`), sorted, at most 32.
	NamePatterns []string `json:"name_patterns,omitempty"`
	// Representative is the index in the input of the group's first thread.
	Representative int `json:"representative"`
}

// Aggregate groups the threads of one incident by normalized stack. The
// crashing thread's group comes first, then groups by Count descending,
// ties broken by Key. Java frames of jstack dumps normalize as Java names.
// It is safe for concurrent use.
func Aggregate(threads []symbolize.Thread) []Group {
	return defaultGenerator().Aggregate(threads)
}

// Aggregate is the package-level Aggregate with the generator's name cache.
func (g *Generator) Aggregate(threads []symbolize.Thread) []Group {
	idx := map[string]int{}
	var groups []Group
	patterns := []map[string]bool{}
	states := []map[string]bool{}
	var frames []string
	var b strings.Builder
	for ti := range threads {
		th := &threads[ti]
		frames = frames[:0]
		for fi := range th.Frames {
			if len(frames) == maxGroupFrames {
				break
			}
			frames = append(frames, g.stackName(&th.Frames[fi]))
		}
		b.Reset()
		for i, f := range frames {
			if i > 0 {
				b.WriteString(KeySep)
			}
			b.WriteString(f)
		}
		key := b.String()
		gi, ok := idx[key]
		if !ok {
			gi = len(groups)
			idx[key] = gi
			groups = append(groups, Group{Frames: append([]string(nil), frames...), Key: key, Representative: ti})
			patterns = append(patterns, map[string]bool{})
			states = append(states, map[string]bool{})
		}
		gr := &groups[gi]
		gr.Count++
		if th.Crashed {
			gr.Crashed = true
		}
		if th.State != "" && len(states[gi]) < maxNamePatterns {
			states[gi][bounded(th.State, 64)] = true
		}
		if th.Name != "" {
			if len(gr.NameSamples) < maxNameSamples {
				gr.NameSamples = append(gr.NameSamples, bounded(th.Name, 128))
			}
			if len(patterns[gi]) < maxNamePatterns {
				patterns[gi][NamePattern(th.Name)] = true
			}
		}
	}
	for i := range groups {
		groups[i].NamePatterns = sortedKeys(patterns[i])
		groups[i].States = sortedKeys(states[i])
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := &groups[i], &groups[j]
		if a.Crashed != b.Crashed {
			return a.Crashed
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Key < b.Key
	})
	return groups
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stackName is a frame's name in a whole-stack view: normalized name, or
// module+offset for stable unsymbolized frames, else "?".
func (g *Generator) stackName(f *symbolize.Frame) string {
	if n := f.Name(); f.Module == "" && n != "" && n[0] != '(' && !isUnknownName(n) {
		// Fast path for named frames (jstack dumps have only these).
		if fc := g.classify(n, f.Java); fc.name != "" && hasLetter(fc.name) && !isPath(fc.name) {
			return fc.name
		}
	}
	v := g.view(f, symbolize.ProductUnknown, nil)
	if v.name != "" {
		return v.name
	}
	if v.unsym != "" && v.module != "" {
		return v.unsym
	}
	if v.module != "" {
		return "?@" + v.module
	}
	return "?"
}

// NamePattern collapses every run of digits in a thread name to <n>:
// `sdk-ScheduledExecutor-12-3` → `sdk-ScheduledExecutor-<n>-<n>`.
func NamePattern(name string) string {
	name = bounded(name, 128)
	var b strings.Builder
	inDigits := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= '0' && c <= '9' {
			if !inDigits {
				b.WriteString("<n>")
				inDigits = true
			}
			continue
		}
		inDigits = false
		b.WriteByte(c)
	}
	return b.String()
}

// String summarizes a group on one line.
func (gr Group) String() string {
	top := ""
	if len(gr.Frames) > 0 {
		top = gr.Frames[0]
	}
	return strconv.Itoa(gr.Count) + " × " + top + " (" + strconv.Itoa(len(gr.Frames)) + " frames)"
}
