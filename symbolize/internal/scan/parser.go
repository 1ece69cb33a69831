// The parser: the per-line state machine between the Scanner's line reader
// and the incidents (physical and logical lines, context events, the startup
// banner, prefix learning, opening and closing incidents).

package scan

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/crashsig/crashsig/symbolize/internal/demangler"
)

// parser holds the state across lines of one input.
type parser struct {
	// stable says that the physical line being read stays in the
	// Scanner's read buffer until the Scanner syncs it (the synchronous
	// reader): the prefix learner may keep it without a copy
	// (prefixLearner.setPrevFrom).
	stable bool
	opts   ScanOptions
	dem    *demangler.Demangler
	lineNo int
	cur    *incident
	out    []*Crash
	banner banner
	// pending holds context events seen since the last incident.
	pending []Event
	// pfx is the line prefix learned from the input (lines.go).
	pfx prefixLearner
	// pf is the literal prefilter (prefilter.go); nil runs every rule on
	// every line, the reference the tests compare it with.
	pf *prefilter
}

// maxPendingEvents bounds the context lines kept for the next incident.
const maxPendingEvents = 8

func isContextEvent(k lineKind) bool {
	return k == kMemLimit || k == kOOMKill || k == kShell || k == kInstrCheck || k == kMinidump || k == kLifecycleLog
}

func eventKind(k lineKind) string {
	switch k {
	case kMemLimit:
		return "memory-limit"
	case kOOMKill:
		return "oom-kill"
	case kShell:
		return "shell"
	case kInstrCheck:
		return "startup"
	case kMinidump:
		return "minidump"
	case kLifecycleLog:
		return EventLifecycleLog
	}
	return "other"
}

// hasMemoryLimit says whether a WARNING/ERROR glog message reports a
// memory limit (F8.2, the kMemLimit rules of format_misc.go): context for
// a crash that may follow.
func hasMemoryLimit(msg string) bool {
	for _, r := range memLimitRules {
		if strings.Contains(msg, r.contains) {
			return true
		}
	}
	return false
}

// banner is product/version information seen outside a dump (startup
// banners in be.INFO); it applies to later incidents of the same process
// lifetime.
type banner struct {
	product Product
	version string
	build   string
	btype   string
}

func (p *parser) init(opts ScanOptions) {
	p.opts = opts
	p.lineNo = max(opts.FirstLine, 1) - 1
	p.dem = demangler.New(4096)
	p.pf = anchored
}

// text handles the text of one physical line (all of it, or a piece
// between NUL runs): repair, prefixes, split collapsed pastes, and hand
// each logical line to the assembler. nulFree says that b holds no NUL
// (physical looked), so that the tests for one need not look again.
func (p *parser) text(b []byte, truncated, nulFree bool) {
	text, rl, prefixed := normalizeLine(b)
	stripped := false
	if p.pfx.mayStrip(text) {
		text, stripped = p.pfx.stripShape(text)
	}
	if stripped {
		var rl2 bool
		text, rl2, _ = normalizeLine(text)
		rl, prefixed = rl || rl2, true
	}
	idle := p.cur == nil && !truncated
	// hits are the prefilter's anchors in text, while scanned. same: text
	// is the previous line but for its digits; differs: the two were
	// compared and are not (learnPrefix need not compare them again).
	var hits scanHits
	scanned, same, differs := false, false, false
	if idle {
		// Idle fast path: look at the line through a temporary view and
		// copy it only when it may start an incident.
		if len(text) == 0 {
			return
		}
		// mayStart is false only for a glog line (glogSeverity: its
		// first byte), tested without a call for the others.
		if !stripped && glogSeverity[text[0]] && !p.mayStart(unsafe.String(&text[0], len(text))) {
			p.pfx.hasPrev = false
			return
		}
	}
	if p.cur != nil && len(text) > 0 {
		// Inside an incident a line that is binary (a NUL, or control
		// bytes weighing binaryLimit: weighsBinary, which stops as soon as
		// the weight is reached) and junk between incidents (isJunk) ends
		// the incident and is skipped: binary junk cuts a dump, and it
		// must not start another one (`#0 00\x00` or `#0 \x17…` after a gdb
		// line started a backtrace that its span alone does not give:
		// FuzzScan's invariant, crashers in testdata/fuzz/FuzzScan).
		if view := unsafe.String(&text[0], len(text)); weighsBinary(view) && isJunk(view) {
			p.closeCurrent()
			p.pfx.hasPrev = false
			return
		}
	}
	if p.cur == nil && len(text) > 0 {
		view := unsafe.String(&text[0], len(text))
		bin := false
		if p.pf != nil && idle && !stripped {
			same, differs = p.pfx.sameAsPrevCmp(text, p.lineNo)
		}
		switch {
		case p.pf == nil:
			bin = isBinary(view)
		case same:
			// Equal to the line before but for its digits: the same
			// anchors (they have no digits), and nothing to learn.
			hits, scanned, same = p.pfx.prevHits, true, true
		case !nulFree && strings.IndexByte(view, 0) >= 0:
			// A NUL alone makes junk (binaryWeight); found at memory speed.
			bin, scanned = true, true
		default:
			hits, scanned = p.pf.scanFrom(view, false), true
			bin = hits&hitBinary != 0
		}
		if bin {
			if isJunk(view) {
				p.pfx.hasPrev = false
				return
			}
			if p.pf != nil {
				hits = p.pf.scan(view)
			}
		}
	}
	if !stripped && len(text) > 0 && (!scanned || hits&hitStars != 0) {
		// A dump header after other text: that text is a prefix, whatever
		// its length.
		view := unsafe.String(&text[0], len(text))
		if k := headerAnchor(view); k > 0 && strings.TrimLeft(view[:k], " \t") != "" && !collapsedMarker.MatchString(view[:k]) && !glogContent(view, k) {
			text, prefixed, stripped = text[k:], true, true
			scanned = false
			if p.pfx.learnAnchored(strings.Clone(view[:k])) && p.cur == nil {
				p.reprocessPrev()
			}
		}
	}
	if idle && p.cur == nil {
		view := unsafe.String(&text[0], len(text))
		if (stripped || !scanned) && !p.mayStart(view) {
			p.pfx.hasPrev = false
			return
		}
		k, inert := p.inert(view, hits, scanned)
		learned := 0
		if learnable(k) && !stripped {
			if same && !stripped {
				p.pfx.keep(text, p.lineNo, true, p.stable)
			} else {
				learned = p.pfx.learnCmp(text, p.lineNo, true, differs, p.stable)
			}
			if learned == 0 && scanned {
				p.pfx.prevHits, p.pfx.prevScanned = hits, true
			}
		} else if !learnable(k) {
			p.pfx.hasPrev = false
		}
		if learned == 0 {
			if inert {
				return
			}
			if k == kStart && scanned && !needsRepair(hits, view) {
				// What logical does with a start marker between incidents,
				// without copying the line.
				p.banner = banner{}
				p.pending = p.pending[:0]
				return
			}
		} else {
			// The line before taught nothing alone; with the prefix known
			// it may be the first line of a dump.
			p.reprocessPrev()
			text, _, _ = normalizeLine(text[learned:])
			prefixed = true
			if len(text) == 0 {
				return
			}
			view = unsafe.String(&text[0], len(text))
			sh, ss := p.subHits(hits, scanned)
			if p.cur == nil {
				if !p.mayStart(view) {
					return
				}
				// view is a piece of the text scanned above (subHits).
				if _, inert := p.inert(view, sh, ss); inert {
					return
				}
			}
		}
	} else if !stripped && len(text) > 0 {
		view := unsafe.String(&text[0], len(text))
		var k lineKind
		if scanned {
			k = p.kindOf(view, hits, scanned)
		} else {
			k, _ = p.classify(view)
		}
		e := 0
		if learnable(k) {
			if e = p.pfx.learn(text, p.lineNo, false); e > 0 {
				text, _, _ = normalizeLine(text[e:])
				prefixed = true
			}
		} else {
			p.pfx.hasPrev = false
		}
		if e == 0 && scanned && p.cur == nil && !needsRepair(hits, view) && p.inertKind(k, view) {
			// A cut line between incidents that cannot start one:
			// process would change nothing.
			return
		}
	}
	p.process(text, lineInfo{no: p.lineNo, runtimeLogger: rl, prefixed: prefixed, truncated: truncated})
	if p.pfx.prevNo == p.lineNo {
		// An incident holds it, or none does (one that saw it may have
		// ended before it: format_misc.go numberedStart).
		p.pfx.prevIdle = p.cur == nil && !truncated
	}
}

// process hands one repaired physical line to the assembler, split into
// logical lines when it holds a collapsed paste.
func (p *parser) process(text []byte, ln lineInfo) {
	s := string(text)
	if strings.IndexByte(s, '&') >= 0 {
		s = unescapeHTML(s)
	}
	if parts := splitCollapsed(s); parts != nil {
		repaired := repairFirstPart(parts)
		for _, part := range parts {
			ln.text = part
			p.logical(ln)
		}
		if p.cur != nil {
			p.cur.note("split a line holding %d collapsed dump lines", len(parts))
			if repaired {
				p.cur.note("the collapsed paste starts inside a gdb frame: numbered it before the next one")
			}
		}
		return
	}
	ln.text = s
	p.logical(ln)
}

// logical classifies one logical line and feeds the assembler.
func (p *parser) logical(ln lineInfo) {
	k, m := p.classify(ln.text)
	if k == kStart {
		if p.cur != nil {
			p.cur.cutBy = "a process start marker"
		}
		p.closeCurrent()
		p.banner = banner{}
		p.pending = p.pending[:0]
		return
	}
	if k == kBanner {
		p.setBanner(m)
		if p.cur == nil {
			return
		}
	}
	if p.cur == nil && isContextEvent(k) && !(k == kShell && shellCrash(ln.text) != nil) {
		// Memory-limit, OOM-kill and shell lines seen between incidents
		// are context for the next incident of the same process lifetime.
		p.pending = append(p.pending, Event{Line: ln.no, Kind: eventKind(k), Text: strings.TrimSpace(ln.text)})
		if len(p.pending) > maxPendingEvents {
			p.pending = p.pending[len(p.pending)-maxPendingEvents:]
		}
		return
	}
	var preamble, shell *incident
	if p.cur != nil {
		if p.cur.accept(p, ln, k, m) {
			if p.cur != nil && p.cur.complete {
				p.closeCurrent()
			}
			return
		}
		if p.cur != nil && k != kSRQuery && k != kTracker && p.cur.srPreambleOnly() && startsIncident(k, ln.text, p) {
			// A StarRocks preamble is printed right before its dump
			// (format_srcontext.go): the dump starting here is its crash.
			preamble, p.cur = p.cur, nil
		}
		if p.cur != nil && p.cur.shellOnly && (k == kGDBCore || k == kGDBTerminated) {
			// gdb on the core the shell said was dumped: the shell's
			// report and the backtrace are one crash (format_misc.go).
			shell, p.cur = p.cur, nil
		}
		if p.cur != nil {
			p.cur.cutBy = fmt.Sprintf("line %d, which it cannot hold", ln.no)
		}
		p.closeCurrent()
	}
	if startsIncident(k, ln.text, p) {
		p.cur = newIncident(p, ln)
		if preamble != nil {
			p.cur.adoptPreamble(preamble)
		}
		if shell != nil {
			p.cur.shell, shell = shell, nil // decided when it closes (closeCurrent)
		}
		if k == kOther {
			p.cur.fragment = fragmentStart(p, ln.text)
		}
		if len(p.pending) > 0 {
			p.cur.c.Events = append(p.cur.c.Events, p.pending...)
			p.pending = p.pending[:0]
		}
		if !p.cur.accept(p, ln, k, m) {
			shell, p.cur = p.cur.shell, nil
		}
	}
	if shell != nil {
		// The line that closed the shell's report opened nothing after
		// all: the report stands alone.
		if c := shell.finish(p); c != nil {
			p.out = append(p.out, c)
		}
	}
}

// trimBlanks is strings.TrimLeft(s, " \t") without building a set.
func trimBlanks(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

func (p *parser) setBanner(m []string) {
	if len(m) < 2 {
		return
	}
	v := m[1]
	b := banner{version: v}
	switch {
	case strings.HasPrefix(v, "doris-"), strings.HasPrefix(v, "palo-"):
		b.product = ProductDoris
	}
	if len(m) > 3 {
		b.btype, b.build = m[2], m[3]
	}
	p.banner = b
}

// closeCurrent finishes the open incident, if any.
func (p *parser) closeCurrent() {
	if p.cur == nil {
		return
	}
	if sh := p.cur.shell; sh != nil {
		// A gdb session on a core right after the shell's report of a
		// death alone: the same crash when gdb names the shell's signal
		// or none; else the shell's report is another crash's, before it.
		p.cur.shell = nil
		if p.cur.c.Signal == "" || p.cur.c.Signal == sh.c.Signal {
			p.cur.adoptShell(sh)
		} else if c := sh.finish(p); c != nil {
			p.out = append(p.out, c)
		}
	}
	if c := p.cur.finish(p); c != nil {
		p.out = append(p.out, c)
	}
	p.cur = nil
}

// finish closes the input: the open incident ends at EOF (eof) or because
// the caller stopped the scan.
func (p *parser) finish(eof bool) []*Crash {
	if p.cur != nil {
		p.cur.eof = eof
		if eof {
			p.cur.cutBy = "the end of the input"
		} else {
			p.cur.note("scan stopped by the caller while the incident was open")
		}
	}
	p.closeCurrent()
	out := p.out
	p.out = nil
	return out
}

// repairFirstPart handles a collapsed paste that starts inside its first
// frame: gdb (`0x… in f (…) at x.h:372 #1 <signal handler called> #2 …` or
// `f (this=…) at x.cpp:1 #1 0x… in g …`) or boost (`f(…) at x.cpp:420 10#
// g() at y.cpp:104 11# …`, a paste whose frame numbers were cut off with
// the lines above): the text before the first marker is the frame just
// before it, so it gets that frame's number in the family of the next
// frame. It reports whether it changed parts.
func repairFirstPart(parts []string) bool {
	if len(parts) < 2 {
		return false
	}
	first := strings.TrimSpace(parts[0])
	next := strings.TrimLeft(parts[1], " ")
	if first == "" || first[0] == '#' || first[0] == '*' || len(next) < 2 {
		return false
	}
	boost := boostNumbered(next)
	if !boost && (next[0] != '#' || !isDigit(next[1])) {
		return false
	}
	if !strings.Contains(first, " at ") && !strings.Contains(first, " in ") {
		return false
	}
	first = first[framePrefix(first):]
	digits := next[1:] // after gdb's `#`
	if boost {
		digits = next
	}
	n := atoi(digits[:digitRunEnd(digits, 0)])
	if n < 1 {
		return false
	}
	if boost {
		name := first
		if i := strings.IndexByte(name, '('); i >= 0 {
			name = name[:i]
		}
		if boostNumbered(first) || strings.ContainsAny(name, " \t") {
			return false // numbered already, or words before the name
		}
		parts[0] = strconv.Itoa(n-1) + "# " + first
		return true
	}
	parts[0] = "#" + strconv.Itoa(n-1) + "  " + first
	return true
}

// isBannerMsg says whether a glog message may be the startup version
// banner (` version doris-2.1.6-rc04(AVX2) RELEASE (build …)`), which
// glog prints at the start of the message.
func isBannerMsg(msg string) bool {
	return strings.HasPrefix(strings.TrimLeft(msg, " "), "version ")
}

// idle is called when the live input has been quiet for the idle timeout:
// the open incident is complete as far as anyone can tell, so it is
// emitted now rather than when a later line arrives.
func (p *parser) idle() {
	if p.cur == nil {
		return
	}
	p.cur.note("emitted after %s without input", p.opts.IdleTimeout)
	p.closeCurrent()
}

// learnable says whether a line of this kind may carry a prefix no table
// knows: unrecognized lines, and lines recognized by a rule that looks
// anywhere in the line rather than at its start.
func learnable(k lineKind) bool {
	switch k {
	case kOther, kShell, kMemLimit, kOOMKill, kTcmalloc, kKernelSegv, kKernelTrap, kBanner:
		return true
	}
	return false
}

// gdbAddrIn finds the `0x… in ` that starts a gdb frame body.
var gdbAddrIn = mustCompile(`0x[0-9a-fA-F]+ in `)

// framePrefix returns the length of a log prefix before the gdb frame body
// a collapsed paste starts with (`host | 0x… in f (…) at x.h:372`): up to
// its `0x… in `, else up to the last separator (`: `, `| `, `] `, a tab)
// before the argument list, else a leading timestamp. A one-line paste
// has no other line to learn its prefix from.
func framePrefix(first string) int {
	if loc := gdbAddrIn.FindStringIndex(first); loc != nil {
		return loc[0]
	}
	limit := strings.IndexByte(first, '(')
	if limit < 0 {
		limit = len(first)
	}
	end := 0
	for i := 0; i+1 < limit; i++ {
		switch {
		case first[i] == '\t':
			end = i + 1
		case (first[i] == ':' || first[i] == '|' || first[i] == ']') && first[i+1] == ' ':
			end = i + 2
		}
	}
	if end > 0 {
		return end
	}
	digits := 0
	for i := 0; i < limit; i++ {
		c := first[i]
		if strings.IndexByte(timestampChars, c) < 0 {
			break
		}
		if isDigit(c) {
			digits++
		}
		if c == ' ' && digits >= 4 {
			end = i + 1
		}
	}
	return end
}
