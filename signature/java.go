package signature

import (
	"strings"
)

// looksJava reports whether s is a Java method name: dotted, no C++ scope,
// no spaces, lowercase package first.
func looksJava(s string) bool {
	if strings.Contains(s, "::") || strings.ContainsAny(s, " <{") {
		return false
	}
	head := s
	if i := strings.IndexByte(s, '('); i >= 0 {
		head = s[:i]
	}
	if strings.Count(head, ".") < 2 {
		return false
	}
	c := head[0]
	return c >= 'a' && c <= 'z'
}

// normalizeJava keeps a Java name's dotted form, drops a `(Source.java:1)`
// tail and collapses lambda and hidden-class numbering
// (`Foo$$Lambda$14/0x0000000800c0b8a8.run` → `Foo$$Lambda.run`).
func normalizeJava(s string) string {
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	s = stripCloneSuffixes(stripSymbolVersion(s))
	for {
		t := stripCloneSuffixes(stripSymbolVersion(s))
		if t == s {
			break
		}
		s = t
	}
	const lam = "$$Lambda"
	if !strings.Contains(s, lam) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, lam)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(lam)
		b.WriteString(s[:j])
		k := j
		for k < len(s) && s[k] != '.' {
			k++
		}
		s = s[k:]
	}
}
