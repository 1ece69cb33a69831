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
	best, bestName := outsideHold{rule: -1}, ""
	sc := c.ix.scratchFor()
	defer c.ix.release(sc)
	var buf []int32
	for _, name := range names {
		buf = c.ix.matches(buf[:0], name, sc)
		for _, g := range buf {
			for _, o := range c.owners[g] {
				if o.kind != 0 {
					continue // a defect alternative's glob
				}
				if cr := &c.crules[o.idx]; cr.namesOnly || !containsID(cr.frames, g) && !containsID(cr.types, g) {
					continue
				}
				held := best
				c.consider(&best, int(o.idx), c.ix.globs[g].quoted, weightMessage, qbit, thread, crash)
				if best != held {
					bestName = name
				}
			}
		}
	}
	if best.rule < 0 || c.genericYields(best.rule, thread, qbit, false) {
		return false
	}
	c.place(v, best, "the crash message names "+strconv.Quote(bestName))
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
