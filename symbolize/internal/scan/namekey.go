package scan

import "strings"

// NameKey reduces a demangled function name to its qualified name: no
// parameter list, no return type, no clone suffix, no cv-qualifiers.
func NameKey(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " [clone "); i >= 0 {
		s = s[:i]
	}
	// Cut at the parameter list: the first '(' at template depth 0 that
	// is not part of "operator()" or an "(anonymous namespace)".
	depth := 0
	cut := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			if !strings.HasSuffix(s[:i], "operator") && !strings.HasSuffix(s[:i], "operator<") {
				depth++
			}
		case '>':
			if depth > 0 && !strings.HasSuffix(s[:i], "operator-") && !strings.HasSuffix(s[:i], "operator") && !strings.HasSuffix(s[:i], "operator>") {
				depth--
			}
		case '(':
			if depth != 0 {
				continue
			}
			if strings.HasPrefix(s[i:], "(anonymous namespace)") {
				i += len("(anonymous namespace)") - 1
				continue
			}
			if strings.HasSuffix(s[:i], "operator") && strings.HasPrefix(s[i:], "()") {
				i++
				continue
			}
			if strings.HasPrefix(s[i:], "{lambda(") || i > 0 && s[i-1] == '{' {
				continue
			}
			cut = i
			i = len(s)
		case '{':
			// {lambda(...)#1}: skip to the matching brace.
			if j := strings.IndexByte(s[i:], '}'); j > 0 {
				i += j
			}
		}
	}
	s = s[:cut]
	// Drop a return type: the last space at depth 0.
	depth = 0
	last := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case '(':
			if strings.HasPrefix(s[i:], "(anonymous namespace)") {
				i += len("(anonymous namespace)") - 1
			}
		case ' ':
			if depth == 0 && !strings.HasSuffix(s[:i], "operator") {
				last = i
			}
		}
	}
	if last >= 0 {
		s = s[last+1:]
	}
	return s
}
