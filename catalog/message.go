// Message evidence: the product types a crash message names (a failed
// cast's source and target types, a down_cast's, an exception's), read by
// the path rules' frame and types globs when no frame rule and no crash
// site decided.

package catalog

import (
	"strconv"

	"github.com/crashsig/crashsig/symbolize"
)

// maxMessageScan bounds the bytes of each message field read for types.
const maxMessageScan = 4096

// decideFromMessage decides the path from the product types the crash's
// message, check expression or exception type names (productTypes: scope
// chains after the product namespaces), when no frame rule held and the
// crash site decided nothing (decidePath): each name is matched against
// the path rules' frames and types globs, with the rules' id, thread and
// context conditions; a rule that needs callers never holds (there are no
// frames to be callers). It reports whether a rule placed the crash; v is
// left as it was when not.
func (c *Catalog) decideFromMessage(v *Verdict, crash *symbolize.Crash, thread *symbolize.Thread, qbit uint16) bool {
	if crash == nil {
		return false
	}
	names := c.messageTypes(crash)
	if len(names) == 0 {
		return false
	}
	best, bestName, bestGlob := -1, "", ""
	bestW := 0.0
	sc := c.ix.scratchFor()
	defer c.ix.release(sc)
	var buf []int32
	for _, name := range names {
		buf = c.ix.matches(buf[:0], name, sc)
		for _, g := range buf {
			for _, o := range c.owners[g] {
				if o.kind != 0 {
					continue
				}
				ri := int(o.idx)
				cr := &c.crules[ri]
				if !containsID(cr.frames, g) && !containsID(cr.types, g) || len(cr.callers) > 0 || cr.namesOnly || !cr.conditionsHold(qbit, thread, crash) {
					continue
				}
				w := weightMessage * cr.weight
				if best < 0 || better(&c.rules[ri], 0, w, &c.rules[best], 0, bestW) {
					best, bestW, bestName, bestGlob = ri, w, name, c.ix.globs[g].quoted
				}
			}
		}
	}
	if best < 0 {
		return false
	}
	if c.rules[best].Generic && thread != nil && thread.Name != "" {
		// A generic rule (column operations, memory tracking: code every
		// path runs) yields to a thread rule that knows the crashing
		// thread's pool and names another path, as it does on frames.
		if wb := c.weakThreadRule(thread.Name, qbit, false); wb >= 0 && c.rules[wb].Path != c.rules[best].Path {
			return false
		}
	}
	r := &c.rules[best]
	v.Path, v.Area, v.PathRule = r.Path, r.Area, r.ID
	v.PathConfidence = confidenceOf(bestW)
	v.Evidence = append(v.Evidence,
		"path "+string(r.Path)+"/"+r.Area+" by rule "+r.ID+" ("+c.crules[best].at+"): the crash message names "+strconv.Quote(bestName)+
			" ~ "+bestGlob+", and no frame rule or crash site matched (weight "+strconv.FormatFloat(bestW, 'f', 2, 64)+
			", confidence "+string(v.PathConfidence)+")",
		c.crules[best].whyLine)
	return true
}

// messageTypes lists the product types named by a crash's message, check
// expression and exception type, each field read up to maxMessageScan
// bytes.
func (c *Catalog) messageTypes(crash *symbolize.Crash) []string {
	var names []string
	for _, f := range []string{crash.Message, crash.CheckExpr, crash.ExceptionType} {
		if f != "" {
			names = c.stack.productTypes(names, f[:min(len(f), maxMessageScan)])
		}
	}
	return names
}
