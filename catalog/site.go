// Crash-site evidence: the source location a failure line printed itself
// (a glog FATAL line's `file.cpp:N]`, UBSAN's `path:N:C: runtime error:`),
// read by the path rules' files globs when no frame decided.

package catalog

import (
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// minSiteLiteral is the least number of literal bytes the last segment of
// a files glob needs to be read against a basename crash site: `*` or
// `*.cpp` says nothing about a file without its directory.
const minSiteLiteral = 5

// siteGlob is the last path segment of a files glob, for basenames.
type siteGlob struct {
	g    glob
	text string // the whole files glob, for the evidence line
}

// compileSiteGlobs returns the basename globs of a rule's files globs: the
// segment after the last '/', when it has minSiteLiteral literal bytes.
func compileSiteGlobs(files []string) []siteGlob {
	var out []siteGlob
	for _, f := range files {
		last := f[strings.LastIndexByte(f, '/')+1:]
		lit := 0
		for i := 0; i < len(last); i++ {
			if last[i] != '*' && last[i] != '?' {
				lit++
			}
		}
		if lit < minSiteLiteral {
			continue
		}
		if g, err := compileGlob(last); err == nil {
			out = append(out, siteGlob{g: g, text: f})
		}
	}
	return out
}

// outsideHold is the best rule so far for evidence read outside the frames
// (the crash site, site.go; the message's types, message.go).
type outsideHold struct {
	rule int
	glob string  // the glob that held, quoted
	w    float64 // evidence weight times the rule's weight
}

// consider makes rule ri the choice when it beats the one held: its
// conditions beside the evidence must hold, and it must need no callers
// (there are no frames to be callers).
func (c *Catalog) consider(best *outsideHold, ri int, glob string, w float64, qbit uint16, thread *symbolize.Thread, crash *symbolize.Crash) {
	cr := &c.crules[ri]
	if len(cr.callers) > 0 || !cr.conditionsHold(qbit, thread, crash) {
		return
	}
	w *= cr.weight
	if best.rule < 0 || better(&c.rules[ri], 0, w, &c.rules[best.rule], 0, best.w) {
		*best = outsideHold{rule: ri, glob: glob, w: w}
	}
}

// place gives v the held rule's path, area and confidence, with an
// evidence line saying what held (what) and the rule's why.
func (c *Catalog) place(v *Verdict, best outsideHold, what string) {
	r := &c.rules[best.rule]
	v.Path, v.Area, v.PathRule = r.Path, r.Area, r.ID
	v.PathConfidence = confidenceOf(best.w)
	v.Evidence = append(v.Evidence,
		"path "+string(r.Path)+"/"+r.Area+" by rule "+r.ID+" ("+c.crules[best.rule].at+"): "+what+" ~ "+best.glob+
			", and no frame rule matched (weight "+strconv.FormatFloat(best.w, 'f', 2, 64)+", confidence "+string(v.PathConfidence)+")",
		c.crules[best.rule].whyLine)
}

// decideFromSite decides the path from the incident's printed crash site
// when no frame rule held (decidePath): the files globs of the path rules
// read the site's path (or, for a basename, the globs' last segments),
// with the rules' id, thread and context conditions. It reports whether a
// rule placed the crash; v is left as it was when not.
func (c *Catalog) decideFromSite(v *Verdict, crash *symbolize.Crash, thread *symbolize.Thread, qbit uint16) bool {
	if crash == nil || crash.SiteFile == "" || c.stack.toolchainPath(crash.SiteFile) {
		return false
	}
	file := crash.SiteFile
	full := strings.IndexByte(file, '/') >= 0
	best := outsideHold{rule: -1}
	if full {
		sc := c.ix.scratchFor()
		buf := c.ix.matches(nil, file, sc)
		c.ix.release(sc)
		for _, g := range buf {
			for _, o := range c.owners[g] {
				if o.kind == 0 && containsID(c.crules[o.idx].files, g) {
					c.consider(&best, int(o.idx), c.ix.globs[g].quoted, weightSite, qbit, thread, crash)
				}
			}
		}
	} else {
		for ri := range c.crules {
			for _, sg := range c.crules[ri].siteFiles {
				if sg.g.match(file) {
					c.consider(&best, ri, strconv.Quote(sg.text), weightSiteBase, qbit, thread, crash)
					break
				}
			}
		}
	}
	if best.rule < 0 {
		return false
	}
	how := "source path"
	if !full {
		how = "source file (a basename, read against the glob's last segment)"
	}
	loc := file
	if crash.SiteLine > 0 {
		loc += ":" + strconv.Itoa(crash.SiteLine)
	}
	c.place(v, best, "crash site "+how+" "+strconv.Quote(loc)+" printed by the failure line")
	return true
}
