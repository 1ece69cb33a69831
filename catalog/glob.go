package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// maxGlobLen bounds a frame glob.
const maxGlobLen = 1024

// glob is a compiled frame glob: `*` matches any run of characters
// (including `::`), `?` exactly one byte, everything else itself. Matching is
// case-sensitive and anchored at both ends.
type glob struct {
	text   string
	quoted string   // strconv.Quote(text), for evidence lines
	segs   []string // text split at '*'; a segment may contain '?'
	// literal is the longest run of the glob without a wildcard; every name
	// the glob matches contains it, which is what the index looks for.
	literal string
	// universal is set for "*": it matches everything.
	universal bool
	// shape says how a name containing literal is checked (index.go): the
	// common shapes need no full match.
	shape globShape
}

// globShape is a glob's form relative to its literal.
type globShape uint8

const (
	shapeGeneral  globShape = iota // anything else: full match
	shapeExact                     // "lit": the name is the literal
	shapePrefix                    // "lit*"
	shapeSuffix                    // "*lit"
	shapeContains                  // "*lit*": containing the literal is matching
)

// shapeOf classifies g by its segments and literal.
func shapeOf(g *glob) globShape {
	lit, segs := g.literal, g.segs
	switch {
	case lit == "" || g.universal:
		return shapeGeneral
	case len(segs) == 1 && segs[0] == lit:
		return shapeExact
	case len(segs) == 2 && segs[0] == lit && segs[1] == "":
		return shapePrefix
	case len(segs) == 2 && segs[0] == "" && segs[1] == lit:
		return shapeSuffix
	case len(segs) == 3 && segs[0] == "" && segs[1] == lit && segs[2] == "":
		return shapeContains
	}
	return shapeGeneral
}

func compileGlob(s string) (glob, error) {
	if s == "" {
		return glob{}, fmt.Errorf("empty glob")
	}
	if len(s) > maxGlobLen {
		return glob{}, fmt.Errorf("glob longer than %d bytes", maxGlobLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return glob{}, fmt.Errorf("glob %q has a control character", s)
		}
	}
	if strings.Contains(s, "**") {
		// harmless but a sign of a regex-minded author; "*" already spans "::"
		return glob{}, fmt.Errorf("glob %q: \"**\" is redundant, \"*\" already matches any run including \"::\"", s)
	}
	g := glob{text: s, quoted: strconv.Quote(s), segs: strings.Split(s, "*"), universal: strings.Trim(s, "*") == ""}
	best := -1 << 30
	for i, seg := range g.segs {
		for _, lit := range strings.Split(seg, "?") {
			if sc := literalScore(lit, i == 0 && len(g.segs) > 1); sc > best {
				best, g.literal = sc, lit
			}
		}
	}
	g.shape = shapeOf(&g)
	return g, nil
}

// literalScore ranks a glob's wildcard-free runs for the index: the longest
// wins, except that a leading namespace prefix (`starrocks::` of
// `starrocks::*Iterator::*`) counts less, since nearly every frame of a
// product contains it and the glob would be matched in full on all of them.
func literalScore(lit string, leading bool) int {
	if lit == "" {
		return -100
	}
	if leading && strings.HasSuffix(lit, "::") && !strings.ContainsAny(lit, "<>()") {
		return len(lit) - 8
	}
	return len(lit)
}

// match reports whether name matches the whole glob.
func (g *glob) match(name string) bool {
	if g.universal {
		return true
	}
	segs := g.segs
	if len(segs) == 1 {
		return len(name) == len(segs[0]) && segMatchAt(name, 0, segs[0])
	}
	first, last := segs[0], segs[len(segs)-1]
	if len(name) < len(first)+len(last) {
		return false
	}
	if !segMatchAt(name, 0, first) || !segMatchAt(name, len(name)-len(last), last) {
		return false
	}
	pos, end := len(first), len(name)-len(last)
	for _, seg := range segs[1 : len(segs)-1] {
		if seg == "" {
			continue
		}
		i := segIndex(name[pos:end], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	return true
}

// segMatchAt reports whether seg (with '?') matches name at offset off.
func segMatchAt(name string, off int, seg string) bool {
	if off < 0 || off+len(seg) > len(name) {
		return false
	}
	if strings.IndexByte(seg, '?') < 0 {
		return name[off:off+len(seg)] == seg
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] != '?' && seg[i] != name[off+i] {
			return false
		}
	}
	return true
}

// segIndex returns the leftmost offset where seg matches in s, or -1.
// Leftmost matching of each middle segment is optimal for '*' globs.
func segIndex(s, seg string) int {
	if strings.IndexByte(seg, '?') < 0 {
		return strings.Index(s, seg)
	}
	for i := 0; i+len(seg) <= len(s); i++ {
		if segMatchAt(s, i, seg) {
			return i
		}
	}
	return -1
}
