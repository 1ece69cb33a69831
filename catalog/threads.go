package catalog

import (
	"fmt"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// threadGroups groups the threads of a thread-dump incident with
// signature.Aggregate. Only THREADS incidents are grouped: for a crash the
// other threads are bystanders.
func threadGroups(crash *symbolize.Crash, sig signature.Signature) []signature.Group {
	if crash.Kind != symbolize.KindThreadDump && sig.Kind != "THREADS" {
		return nil
	}
	return signature.Aggregate(crash.Threads)
}

// threadsHold reports whether one group satisfies t, and says which.
func (c *Catalog) threadsHold(t *compiledThreads, groups []signature.Group) (string, bool) {
	for gi := range groups {
		g := &groups[gi]
		if g.Count < t.minCount {
			continue
		}
		all := true
		for _, id := range t.frames {
			found := false
			for _, name := range g.Frames {
				if c.ix.globs[id].match(name) {
					found = true
					break
				}
			}
			if !found {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		if t.name != nil {
			named := false
			for _, n := range append(append([]string(nil), g.NameSamples...), g.NamePatterns...) {
				if t.name.match(n) {
					named = true
					break
				}
			}
			if !named {
				continue
			}
		}
		top := ""
		if len(g.Frames) > 0 {
			top = g.Frames[0]
		}
		return fmt.Sprintf("thread group of %d threads (top frame %s) has every thread frame glob (min_count %d)", g.Count, top, t.minCount), true
	}
	return "", false
}
