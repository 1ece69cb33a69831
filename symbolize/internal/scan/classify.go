// Line classification: which format-table rule a line matches, the idle
// path's cheap tests (inert lines, junk), and which kinds start an incident.

package scan

import "strings"

// mayStart is the pre-filter of the idle state: it says whether a line can
// begin an incident or change scanner state. It must be cheap: most lines of
// a be.out or be.INFO are ordinary log lines.
func (p *parser) mayStart(s string) bool {
	if sev, _, msg, ok := glogLine(s); ok {
		if sev == 'F' {
			return true
		}
		if sev != 'I' && hasMemoryLimit(msg) {
			return true
		}
		return isBannerMsg(msg) || strings.HasPrefix(msg, "DIAGNOSE ") || isLifecycleMsg(msg)
	}
	return true
}

// inert reports whether an idle line that passed mayStart still cannot
// matter: it classifies as nothing that opens an incident or changes state,
// and it holds no collapsed dump or HTML entity to repair. It looks at the
// temporary view only; nothing it returns outlives the call. It also
// returns the line's kind (kOther for lines it did not classify).
//
// With the prefilter, hits (scan(view), when scanned) stand for the
// repairs' tests: a line needs a repair only when it holds an HTML entity
// or a collapsed-paste marker, and with neither, handing it to process
// would change nothing for the kinds inert accepts.
func (p *parser) inert(view string, hits scanHits, scanned bool) (lineKind, bool) {
	if p.pf != nil && !scanned {
		hits, scanned = p.pf.scan(view), true
	}
	k := p.kindOf(view, hits, scanned)
	if (p.pf == nil || hits&hitRepair != 0) && repairable(view) {
		return k, false
	}
	if k == kOther && p.pf != nil {
		// inertKind's first answer for kOther, without its call.
		if t := trimBlanks(view); t == "" || !headerlessStart[t[0]] {
			return k, true
		}
	}
	return k, p.inertKind(k, view)
}

// repairable says whether process may change the line view before it
// classifies it: what process itself looks at first, an `&` (an HTML
// entity to unescape) or a splitCandidate (a collapsed paste to split).
func repairable(view string) bool {
	return strings.IndexByte(view, '&') >= 0 || splitCandidate(view)
}

// needsRepair is repairable given the prefilter's hits in view: hitRepair
// is found by short literals (a `#`, `@ `) that random bytes hold one line
// in five, so it only gates the test.
func needsRepair(hits scanHits, view string) bool {
	return hits&hitRepair != 0 && repairable(view)
}

// inertKind says whether an idle line of kind k leaves everything as it is
// (no incident, no context event, no start marker or banner).
func (p *parser) inertKind(k lineKind, view string) bool {
	switch k {
	case kStart, kBanner:
		return false
	case kOther:
		if t := trimBlanks(view); p.pf != nil && (t == "" || !headerlessStart[t[0]]) {
			return true
		}
	}
	return !isContextEvent(k) && !startsIncident(k, view, p)
}

// headerlessStartBytes are the first bytes (after blanks) of the lines no
// rule recognizes that startsIncident lets open an incident (headerless
// pastes: `0# …`, a fragment's `12# …` (fragment.go), `@ 0x…`,
// `#3 0x… in …`); with the prefilter, other unrecognized lines are not
// shown to it. TestHeaderlessStartBytes (and
// TestPrefilterEquivalence) fail when startsIncident learns a start this
// list lacks.
const headerlessStartBytes = "0123456789@#"

// isJunk says whether a line that is not text (isBinary) is skipped
// between incidents — no recognizer is run on it and it teaches no prefix
// — which it is unless it holds `*** ` (a glog or boost dump header after
// the junk, cut off by headerAnchor) or is a glog line from its first
// byte after blanks. The NUL run a crash leaves in a log file before the
// next process's output does not get here: a run of minHole NULs ends the
// line (holes), and the text after it is classified as a line of its own.
func isJunk(view string) bool {
	if strings.Contains(view, "*** ") {
		return false
	}
	_, _, _, ok := glogLine(trimBlanks(view))
	return !ok
}

// classify returns the kind of a line and the submatches of its rule.
func (p *parser) classify(s string) (lineKind, []string) { return p.classifyHits(s, 0, false) }

// kindOf is classify's kind alone, given the prefilter's hits in s (when
// scanned); it does not build the submatches of the rules that have none.
func (p *parser) kindOf(s string, hits scanHits, scanned bool) lineKind {
	trimmed := trimBlanks(s)
	if trimmed == "" {
		return kBlank
	}
	if glogSeverity[trimmed[0]] {
		if sev, tid, msg, ok := glogLine(trimmed); ok {
			k, _ := p.classifyGlog(trimmed, sev, tid, msg)
			return k
		}
	}
	// Not a glog line: the rules decide.
	if scanned && p.pf != nil && hits&^(hitStars|hitRepair|hitBinary) == 0 && len(p.pf.byFirst[trimmed[0]]) == 0 {
		// No prefix rule for its first byte, no contains rule's anchor:
		// what match answers, without its calls.
		return kOther
	}
	if r, _ := p.match(s, trimmed, hits, scanned); r != nil {
		return r.kind
	}
	return kOther
}

// classifyHits is classify given the prefilter's hits in s (when scanned).
func (p *parser) classifyHits(s string, hits scanHits, scanned bool) (lineKind, []string) {
	trimmed := trimBlanks(s)
	if trimmed == "" {
		return kBlank, nil
	}
	if sev, tid, msg, ok := glogLine(trimmed); ok {
		return p.classifyGlog(trimmed, sev, tid, msg)
	}
	r, m := p.match(s, trimmed, hits, scanned)
	if r == nil {
		return kOther, nil
	}
	if m == nil {
		m = []string{trimmed}
	}
	return r.kind, m
}

// classifyGlog is classifyHits for a glog line (glogLine gave sev, tid and
// msg): FATAL, DIAGNOSE, memory limit, banner, lifecycle or plain glog.
func (p *parser) classifyGlog(trimmed string, sev byte, tid, msg string) (lineKind, []string) {
	if sev == 'F' {
		return kFatal, []string{trimmed, msg, tid}
	}
	if strings.HasPrefix(msg, "DIAGNOSE ") {
		return p.classifyDiagnose(msg)
	}
	if sev != 'I' && hasMemoryLimit(msg) {
		return kMemLimit, []string{trimmed}
	}
	if isBannerMsg(msg) {
		if r, m := p.match(msg, strings.TrimLeft(msg, " "), 0, false); r != nil && r.kind == kBanner {
			return kBanner, m
		}
	}
	if isLifecycleMsg(msg) {
		return kLifecycleLog, []string{trimmed, msg}
	}
	return kGlog, []string{trimmed, msg}
}

// match runs the rules on a line, through the prefilter when there is one.
func (p *parser) match(text, trimmed string, hits scanHits, scanned bool) (*lineRule, []string) {
	if p.pf == nil {
		return allRules.match(text, trimmed, true)
	}
	return p.pf.match(text, trimmed, true, hits, scanned)
}

// startsIncident says whether a line of this kind opens an incident when
// none is open (or after the open one refused it).
func startsIncident(k lineKind, text string, p *parser) bool {
	switch k {
	case kQueryID, kNereids, kTablet, kCommit, kAbortedAt, kSignal, kPC, kSRQuery, kTracker,
		kVersion, kFatal, kCheckHeader, kTerminate, kWhat, kJVMStart, kJVMOOM, kHsErrThread,
		kJstackStart, kJavaThread, kAsanStart, kAsanDeadly, kTsanStart, kUbsanStart,
		kGDBCore, kGDBTerminated, kGDBThread, kGDBCurrent, kJemalloc, kAssert, kKernelSegv, kKernelTrap,
		kDorisAPIStart, kMinidump, kDiagGroup, kCoredumpStart, kCoredumpThread, kSanStack, kMinidumpReason, kMinidumpThread:
		return true
	case kTcmalloc:
		return isFatalAllocatorLine(text)
	case kSanEnd:
		return sanitizerSummaryStarts(p, text) // a SUMMARY line alone (format_sanitizer.go)
	case kShell:
		return shellCrash(text) != nil // a crash with no stack (format_misc.go)
	case kOther:
		// Headerless pastes: a boost frame 0, a glog `@` frame, a gdb frame #0.
		t := trimBlanks(text)
		if len(t) < 3 {
			return false
		}
		switch {
		case t[0] == '0' && t[1] == '#':
			return true
		case isDigit(t[0]):
			// A boost frame numbered above 0: a fragment (fragment.go).
			return fragmentStart(p, t) > 0
		case t[0] == '@' && t[1] == ' ':
			_, _, ok := p.parseAtFrame(t)
			return ok
		case t[0] == '#' && isDigit(t[1]):
			// gdb frames; a paste may start at any frame (`#43 0x… in f (…`).
			f, ok := p.parseGDBFrame(t)
			return ok && (f.Index == 0 || f.PC != 0 || gdbAddresslessOpener(f))
		}
	}
	return false
}
