package scan

import (
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// The literal prefilter (issue 11). Most lines of a be.out are ordinary log
// lines that no rule recognizes; before it, every such line went through
// every rule (a substring search per `contains` rule, a regular expression
// per rule whose first byte matched). The prefilter makes one pass over the
// line looking for the anchors of every rule at once, and a rule only runs
// on a line holding one of its anchors.
//
// Anchors are derived from the format tables, never written by hand:
//
//   - a prefix rule is looked up by the first byte of the line (ruleSet's
//     index) and its prefix compared; before its regular expression runs,
//     the line must hold one of the literals the expression requires
//     (`*** S` of the signal line has the bare form `S`, which every
//     `SLF4J: …` line starts with: the expression requires `) received by
//     PID `, which no such line holds);
//   - a contains rule is gated by the scan: its literal, or a longer one its
//     expression requires (`]: segfault at ` for `segfault at `);
//   - the repairs of the idle path have anchors too, derived from their own
//     tables: the HTML entities (htmlEntities), the markers of a collapsed
//     paste (collapsedMarker, which also covers the headerless starts `0#`,
//     `#N`, `@ ` of startsIncident), and the `*** ` of headerAnchor.
//
// requiredLiterals reads the literals out of a regular expression
// (regexp/syntax), so a table entry added tomorrow (format_coredump.go, a
// kernel line) is covered without anyone listing its anchors. The tests
// check the promise behind it: the scanner with and without the prefilter
// gives identical incidents on every corpus and format file and on random
// mutations of them (TestPrefilterEquivalence, FuzzPrefilter).
//
// The scan literals are made digit-free (a literal with digits is replaced
// by its longest digit-free piece, still a required substring), so that two
// lines equal but for their digits have the same anchors.

// scanHits is the result of one scan: a bit per contains rule (bits
// 0..maxRuleBit, in table order; the rules from the 61st on share bit
// maxRuleBit, which then only says that one of them may match: match
// still checks each rule's literal), and the structural bits 61..63.
type scanHits uint64

const (
	hitStars   scanHits = 1 << 63 // `*** `: headerAnchor
	hitRepair  scanHits = 1 << 62 // an HTML entity or a collapsed-paste marker
	hitBinary  scanHits = 1 << 61 // the line is not text (binaryWeight); the scan stopped there
	maxRuleBit          = 60      // the last rule bit, below the structural ones
)

// pfRule is a rule of the tables with the literals its expression needs.
type pfRule struct {
	r    *lineRule
	need []string // the expression's best required literals (one must occur); nil: none better than the prefix
	bit  scanHits // contains rules: their scan bit
}

// needs reports whether s holds one of the literals the rule's expression
// requires.
func (pr *pfRule) needs(s string) bool {
	if pr.need == nil {
		return true
	}
	for _, n := range pr.need {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// pfCand is one scan literal under its chosen byte.
type pfCand struct {
	lit  string
	off  int // offset of the chosen byte in lit
	bits scanHits
}

// prefilter is the anchored view of a ruleSet plus the one-pass scan.
type prefilter struct {
	byFirst [256][]pfRule
	// bySecond[c][d], when bySecond[c] is not nil, has bit i set when
	// rule i of byFirst[c] may match a line starting with c then d (its
	// prefix or its bare form does not say otherwise): match tries the
	// others not (their prefix tests fail). nil when byFirst[c] is empty
	// or has more than 16 rules.
	bySecond [256]*[256]uint16
	contains []pfRule
	// tab marks the chosen byte of every scan literal (pfCandByte) and
	// holds the binaryWeight of control bytes; cands lists the literals
	// under a chosen byte.
	tab   [256]uint8
	cands [256][]pfCand
	// next[c] is the set of bytes that may follow a chosen byte c in one
	// of its literals (all bytes when c ends one): most chosen bytes met
	// in a line are then dismissed with one more lookup.
	next [256][4]uint64
	// prev[c] is the set of bytes that may come before a chosen byte c in
	// one of its literals (all bytes when c begins one): follows tests it
	// too, so that a chosen byte inside a common word (`java` for
	// `invalid`) costs no verify.
	prev [256][4]uint64
	// pairA and pairB filter eight positions at once (scanFrom): pairA[c]
	// has the bit of c when c is a chosen byte (pairBit) and pairCtl when
	// c weighs (binaryWeight); pairB[d] has the bit of every chosen byte
	// d may follow (next), and pairCtl. A position i needs a look only
	// when pairA[s[i]]&pairB[s[i+1]] != 0.
	pairA, pairB [256]uint32
	pairBits     int // chosen bytes given a bit of their own so far
	// vec are the tables of the vector pair filter (prefilter_vec.go),
	// used when vector (the CPU has it).
	vec    pairTables
	vector bool
	lits   []pfCand // every scan literal, for tests and docs
	// always are the bits of contains rules without a digit-free literal:
	// they run on every line.
	always scanHits
}

// mayStartWith reports whether a line starting with the bytes c, d may
// start with s (s shorter than two bytes compares only what it has).
func mayStartWith(s string, c, d byte) bool {
	return s == "" || s[0] == c && (len(s) < 2 || s[1] == d)
}

// htmlEntities are the entities unescapeHTML undoes (scraped pastes).
var htmlEntities = []string{"&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&#39;", "'"}

// logByteRank orders the bytes of log text from the most to the least
// common (measured on the crash corpus plus, weighted three times, the
// JVM, Hadoop and glog chatter of a be.out; bytes not listed are the
// rarest). The scan looks for the least common byte of each
// literal, so that ordinary lines rarely stop it.
const logByteRank = " e0aornit1:dc2s.3lp45-m/ghub_697,8x]fSjkyCIGBFv[NP*T()Dq=wLzARE@OHJWMU#!><V\";+&~ZKQ$X'`{|}\t?Y"

func newPrefilter(rs *ruleSet) *prefilter {
	pf := &prefilter{}
	anchor := func(r *lineRule) []string {
		var terms [][]string
		if r.re != nil {
			terms = requiredLiterals(r.re)
		}
		return bestTerm(terms)
	}
	for c := range rs.byFirst {
		for _, r := range rs.byFirst[c] {
			pr := pfRule{r: r}
			if need := anchor(r); need != nil && minLen(need) > len(r.bare) && minLen(need) > len(r.prefix) {
				pr.need = need
			}
			pf.byFirst[c] = append(pf.byFirst[c], pr)
		}
		if n := len(pf.byFirst[c]); n > 0 && n <= 16 {
			t := new([256]uint16)
			for d := range 256 {
				for i, pr := range pf.byFirst[c] {
					if mayStartWith(pr.r.prefix, byte(c), byte(d)) || pr.r.bare != "" && mayStartWith(pr.r.bare, byte(c), byte(d)) {
						t[d] |= 1 << i
					}
				}
			}
			pf.bySecond[c] = t
		}
	}
	for i, r := range rs.contains {
		bit := scanHits(1) << min(i, maxRuleBit)
		pr := pfRule{r: r, bit: bit}
		lits := []string{digitFree(r.contains)}
		if need := anchor(r); need != nil && minLen(need) > len(lits[0]) {
			pr.need = need
			lits = need
		}
		if lits[0] == "" {
			pf.always |= bit
			lits = nil
		}
		for _, l := range lits {
			pf.addLit(l, bit)
		}
		pf.contains = append(pf.contains, pr)
	}
	for c := range 256 {
		pf.tab[c] |= binaryWeight[c]
		if binaryWeight[c] != 0 {
			pf.pairA[c] |= pairCtl
		}
		pf.pairB[c] |= pairCtl
	}
	for i := 0; i < len(htmlEntities); i += 2 {
		pf.addLit(digitFree(htmlEntities[i]), hitRepair)
	}
	for _, l := range bestTerm(requiredLiterals(collapsedMarker)) {
		pf.addLit(l, hitRepair)
	}
	pf.addLit("*** ", hitStars)
	pf.buildPairTables()
	pf.vector = hasAVX2
	return pf
}

// addLit adds a scan literal under its least common byte.
func (pf *prefilter) addLit(lit string, bits scanHits) {
	if lit == "" {
		// An anchor that is no literal would let every line through:
		// newPrefilter's callers make sure this cannot happen (test).
		panic("symbolize: empty anchor")
	}
	best := 0
	for i := 1; i < len(lit); i++ {
		if byteRank(lit[i]) > byteRank(lit[best]) {
			best = i
		}
	}
	c := lit[best]
	pf.tab[c] |= pfCandByte
	if pf.pairA[c]&^pairCtl == 0 {
		// Chosen bytes share bits past the 31st: a shared bit only lets
		// more positions through to the exact test.
		pf.pairA[c] |= 1 << (pf.pairBits % 31)
		pf.pairBits++
	}
	bit := pf.pairA[c] &^ pairCtl
	for i := range pf.cands[c] {
		if pf.cands[c][i].lit == lit {
			pf.cands[c][i].bits |= bits
			return
		}
	}
	cand := pfCand{lit: lit, off: best, bits: bits}
	pf.cands[c] = append(pf.cands[c], cand)
	if best > 0 {
		pb := lit[best-1]
		pf.prev[c][pb>>6] |= 1 << (pb & 63)
	} else {
		pf.prev[c] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	}
	if best+1 < len(lit) {
		nb := lit[best+1]
		pf.next[c][nb>>6] |= 1 << (nb & 63)
		pf.pairB[nb] |= bit
	} else {
		pf.next[c] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		for d := range pf.pairB {
			pf.pairB[d] |= bit
		}
	}
	pf.lits = append(pf.lits, cand)
}

// byteRank is how rare c is in log text (higher is rarer).
func byteRank(c byte) int {
	if i := strings.IndexByte(logByteRank, c); i >= 0 {
		return i
	}
	return len(logByteRank)
}

// pfCandByte marks a chosen byte in prefilter.tab.
const pfCandByte = 0x80

// pairCtl is the bit of the bytes that weigh in pairA (all of pairB).
const pairCtl = 1 << 31

// Binary junk (a core or a compressed file cat'ed into the log, the NUL
// run a crash leaves in a log file): a line is not text when its control
// bytes weigh binaryLimit or more — a NUL weighs binaryLimit, another
// control byte (not tab, CR, form feed or the ESC of colour codes) one.
// The weight does not depend on where the bytes are or on the digits, so
// two lines equal but for their digits are both text or both junk.
const binaryLimit = 8

var binaryWeight = func() (w [256]uint8) {
	for c := range 0x20 {
		switch c {
		case '\t', '\n', '\r', '\f', 0x1b:
		case 0:
			w[c] = binaryLimit
		default:
			w[c] = 1
		}
	}
	w[0x7f] = 1
	return w
}()

// isBinary reports whether s is not text (binaryWeight), looking at all of
// it: the reference the scan's early stop is tested against.
func isBinary(s string) bool {
	w := 0
	for i := 0; i < len(s); i++ {
		w += int(binaryWeight[s[i]])
	}
	return w >= binaryLimit
}

// scan returns the anchors found anywhere in s (and hitBinary when s is
// not text).
func (pf *prefilter) scan(s string) scanHits { return pf.scanFrom(s, true) }

// scanFrom is scan that, unless full, stops as soon as s turns out not to
// be text, returning hitBinary with what it found so far.

func (pf *prefilter) scanFrom(s string, full bool) scanHits {
	h := pf.always
	tab := &pf.tab
	w := 0
	i := 0
	if pf.vector && len(s) >= pairScanMin {
		// 32 positions at a time (prefilter_vec.go); the loops below do
		// the rest, under a block and a byte.
		var stop bool
		if i, h, w, stop = pf.vectorScan(s, full, h); stop {
			return h
		}
	}
	pa, pb := &pf.pairA, &pf.pairB
	for ; i+9 <= len(s); i += 8 {
		// Eight positions and the byte after them: a chosen byte followed
		// by a byte that may follow it, or a byte that weighs.
		b := s[i : i+9]
		if pa[b[0]]&pb[b[1]]|pa[b[1]]&pb[b[2]]|pa[b[2]]&pb[b[3]]|pa[b[3]]&pb[b[4]]|
			pa[b[4]]&pb[b[5]]|pa[b[5]]&pb[b[6]]|pa[b[6]]&pb[b[7]]|pa[b[7]]&pb[b[8]] == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if v := tab[s[j]]; v != 0 {
				if v&pfCandByte != 0 && pf.follows(s, j) {
					h |= pf.verify(s, j)
				}
				if w += int(v &^ pfCandByte); w >= binaryLimit && !full {
					return h | hitBinary
				}
			}
		}
	}
	for ; i < len(s); i++ {
		if v := tab[s[i]]; v != 0 {
			if v&pfCandByte != 0 && pf.follows(s, i) {
				h |= pf.verify(s, i)
			}
			if w += int(v &^ pfCandByte); w >= binaryLimit && !full {
				return h | hitBinary
			}
		}
	}
	if w >= binaryLimit {
		h |= hitBinary
	}
	return h
}

// follows reports whether the byte after s[i] may follow it in one of the
// literals chosen under s[i] (at the end of s: yes), and the byte before
// it may come before it in one of them (at the start of s: yes).
func (pf *prefilter) follows(s string, i int) bool {
	c := s[i]
	if i > 0 {
		if pb := s[i-1]; pf.prev[c][pb>>6]&(1<<(pb&63)) == 0 {
			return false
		}
	}
	if i+1 >= len(s) {
		return true
	}
	nb := s[i+1]
	return pf.next[c][nb>>6]&(1<<(nb&63)) != 0
}

// verify checks the literals whose chosen byte is at s[i].
func (pf *prefilter) verify(s string, i int) scanHits {
	var h scanHits
	for _, c := range pf.cands[s[i]] {
		st, n := i-c.off, len(c.lit)
		if st >= 0 && st+n <= len(s) && s[st] == c.lit[0] && s[st+n-1] == c.lit[n-1] && s[st:st+n] == c.lit {
			h |= c.bits
		}
	}
	return h
}

// applyPrefixed is apply for a prefix rule: only when trimmed begins with
// the rule's prefix or its bare form.
func (pr *pfRule) applyPrefixed(trimmed string) ([]string, bool) {
	r := pr.r
	if !strings.HasPrefix(trimmed, r.prefix) && !(r.bare != "" && strings.HasPrefix(trimmed, r.bare)) {
		return nil, false
	}
	return pr.apply(trimmed)
}

// match is ruleSet.match with the anchors: the same rule wins (a rule is
// skipped only when it cannot match), but expressions and substring
// searches run only where their anchors are. hits are scan(text) when
// scanned; else match scans text itself if it gets to the contains rules.
func (pf *prefilter) match(text, trimmed string, tryContains bool, hits scanHits, scanned bool) (*lineRule, []string) {
	if trimmed == "" {
		return nil, nil
	}
	rules := pf.byFirst[trimmed[0]]
	if t := pf.bySecond[trimmed[0]]; t != nil && len(trimmed) > 1 {
		// The rules whose prefix or bare form may begin with the line's
		// first two bytes, in order (the others' prefix tests fail).
		for m := t[trimmed[1]]; m != 0; m &= m - 1 {
			pr := &rules[bits.TrailingZeros16(m)]
			if sub, ok := pr.applyPrefixed(trimmed); ok {
				return pr.r, sub
			}
		}
	} else {
		for i := range rules {
			if sub, ok := rules[i].applyPrefixed(trimmed); ok {
				return rules[i].r, sub
			}
		}
	}
	if !tryContains {
		return nil, nil
	}
	if !scanned {
		hits = pf.scan(text)
	}
	if hits&^(hitStars|hitRepair|hitBinary) == 0 {
		return nil, nil
	}
	for i := range pf.contains {
		pr := &pf.contains[i]
		if hits&pr.bit == 0 {
			continue
		}
		if !strings.Contains(text, pr.r.contains) {
			continue
		}
		if m, ok := pr.apply(trimmed); ok {
			return pr.r, m
		}
	}
	return nil, nil
}

// apply runs pr's rule on a line whose prefix or literal already matched:
// a rule without a regular expression matches (nil submatches); else the
// expression runs if the line holds every literal it needs.
func (pr *pfRule) apply(trimmed string) ([]string, bool) {
	if pr.r.re == nil {
		return nil, true
	}
	if !pr.needs(trimmed) {
		return nil, false
	}
	m := pr.r.re.FindStringSubmatch(trimmed)
	return m, m != nil
}

// anchored is the prefilter over allRules.
var anchored = newPrefilter(allRules)

func minLen(ss []string) int {
	n := -1
	for _, s := range ss {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return max(n, 0)
}

// digitFree returns the longest piece of s without ASCII digits: a line
// holding s holds it too.
func digitFree(s string) string {
	best, start := "", 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || isDigit(s[i]) {
			if i-start > len(best) {
				best = s[start:i]
			}
			start = i + 1
		}
	}
	return best
}

// bestTerm picks, among alternative sets of required literals, the most
// selective one to look for: the set whose weakest literal scores best
// (litScore), then the one with the fewest literals. It returns nil when
// no set is made of non-empty literals. Literals are made digit-free first.
func bestTerm(terms [][]string) []string {
	var best []string
	bestScore := 0
	for _, t := range terms {
		var d []string
		score := -1
		for _, l := range t {
			f := digitFree(l)
			if f == "" {
				d = nil
				break
			}
			d = append(d, f)
			if s := litScore(f); score < 0 || s < score {
				score = s
			}
		}
		if d == nil {
			continue
		}
		if best == nil || score > bestScore || score == bestScore && len(d) < len(best) {
			best, bestScore = d, score
		}
	}
	return best
}

// litScore is how selective a literal is: longer first, then rarer.
func litScore(l string) int {
	r := 0
	for i := 0; i < len(l); i++ {
		r = max(r, byteRank(l[i]))
	}
	return len(l)*256 + r
}

// requiredLiterals returns what any match of re contains: a list of sets,
// every set holding a literal of which the match contains at least one.
// It is conservative: an expression part it cannot read adds nothing.
func requiredLiterals(re *regexp.Regexp) [][]string {
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	info := litInfo(p.Simplify())
	terms := info.terms
	if t := info.exactTerm(); t != nil {
		terms = append(terms, t)
	}
	return terms
}

// maxExact bounds the exact sets litInfo keeps.
const maxExact = 16

// reLits is what litInfo knows of a subexpression: the exact strings it
// matches (when few, else nil) and sets of required literals.
type reLits struct {
	exact []string
	known bool // exact is the full set of strings the part matches
	terms [][]string
}

// exactTerm turns the exact set into a required set, or nil when one of
// the strings is empty (nothing is required then).
func (l reLits) exactTerm() []string {
	if !l.known || len(l.exact) == 0 {
		return nil
	}
	for _, s := range l.exact {
		if s == "" {
			return nil
		}
	}
	return l.exact
}

func litInfo(re *syntax.Regexp) reLits {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return reLits{}
		}
		return reLits{exact: []string{string(re.Rune)}, known: true}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return reLits{exact: []string{""}, known: true}
	case syntax.OpCharClass:
		var ex []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(ex) >= maxExact || !utf8.ValidRune(r) {
					return reLits{}
				}
				ex = append(ex, string(r))
			}
		}
		return reLits{exact: ex, known: true}
	case syntax.OpCapture:
		return litInfo(re.Sub[0])
	case syntax.OpQuest:
		sub := litInfo(re.Sub[0])
		if sub.known && len(sub.exact) < maxExact {
			return reLits{exact: append(sub.exact, ""), known: true}
		}
		return reLits{}
	case syntax.OpPlus:
		sub := litInfo(re.Sub[0])
		return reLits{terms: withExact(sub)}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			sub := litInfo(re.Sub[0])
			return reLits{terms: withExact(sub)}
		}
		return reLits{}
	case syntax.OpConcat:
		// run is the exact set of the current run of exact parts; an
		// inexact part ends it (what it matched is then required).
		run, known := []string{""}, true
		var terms [][]string
		flush := func() {
			if t := (reLits{exact: run, known: true}).exactTerm(); t != nil {
				terms = append(terms, t)
			}
		}
		for _, s := range re.Sub {
			sub := litInfo(s)
			terms = append(terms, sub.terms...)
			if sub.known && len(run)*len(sub.exact) <= maxExact {
				var ex []string
				for _, a := range run {
					for _, b := range sub.exact {
						ex = append(ex, a+b)
					}
				}
				run = ex
				continue
			}
			flush()
			known = false
			run = []string{""}
			if sub.known {
				run = sub.exact
			}
		}
		if known {
			return reLits{exact: run, known: true, terms: terms}
		}
		flush()
		return reLits{terms: terms}
	case syntax.OpAlternate:
		var ex []string
		all := true
		var alt []string
		for _, s := range re.Sub {
			sub := litInfo(s)
			if all && sub.known && len(ex)+len(sub.exact) <= maxExact {
				ex = append(ex, sub.exact...)
			} else {
				all = false
			}
			if t := bestTerm(withExact(sub)); t != nil && (alt != nil || s == re.Sub[0]) {
				alt = append(alt, t...)
			} else {
				alt = nil
			}
			if !all && alt == nil {
				break
			}
		}
		if all {
			return reLits{exact: ex, known: true}
		}
		if alt != nil {
			return reLits{terms: [][]string{alt}}
		}
		return reLits{}
	}
	return reLits{}
}

// withExact is sub's required sets plus its exact set as one.
func withExact(sub reLits) [][]string {
	terms := sub.terms
	if t := sub.exactTerm(); t != nil {
		terms = append(terms, t)
	}
	return terms
}
