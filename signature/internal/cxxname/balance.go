package cxxname

import "strings"

// This file holds the bracket scanning shared by the text reader and the
// repair of template argument lists eaten by Markdown or HTML rendering.

// skipAngle returns the index after the `<…>` group opening at i. Parens
// inside are skipped as groups, so `(a>b)` does not close it.
func skipAngle(s string, i int) (int, bool) {
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case '(':
			end, ok := skipParen(s, i)
			if !ok {
				return len(s), false
			}
			i = end
			continue
		}
		i++
	}
	return len(s), false
}

func skipParen(s string, i int) (int, bool) { return SkipBalanced(s, i, '(', ')') }

// SkipBalanced returns the index after the group that opens with open at
// s[i] and closes with the matching close (nested groups of the same pair
// counted), and true; or len(s) and false when the group is not closed.
func SkipBalanced(s string, i int, open, close byte) (int, bool) {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(s), false
}

// repairEatenTemplates removes what is left of template argument lists
// whose opening part Markdown or HTML rendering ate as a tag: pastes show
// `doris::vectorized::PODArray, 15ul, 16ul>::operator[](long)` for
// `PODArray<unsigned char, 4096ul, Allocator<…>, 15ul, 16ul>::operator[]`,
// and `do_process >(…)` for `do_process<…> >(…)`. An unmatched `>` at the
// top level ends the remnant; the remnant starts at the first `,` or blank
// after the last `::` (or `(`) before it. `operator>`, `operator->` and
// `operator>>` are not closers. Text without an unmatched `>` is returned
// unchanged.
func repairEatenTemplates(s string) string {
	if strings.IndexByte(s, '>') < 0 {
		return s
	}
	var b []byte
	angle, paren := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '(':
			paren++
		case ')':
			if paren > 0 {
				paren--
			}
		case '<':
			if !isOperatorChar(s, i) {
				angle++
			}
		case '>':
			if isOperatorChar(s, i) || (i > 0 && s[i-1] == '-') {
				break
			}
			if angle > 0 {
				angle--
				break
			}
			if paren > 0 {
				break // inside a parameter list: skipped whole anyway
			}
			if b == nil {
				b = []byte(s)
			}
			start := remnantStart(string(b[:i]))
			for k := start; k <= i; k++ {
				b[k] = 0
			}
		}
	}
	if b == nil {
		return s
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != 0 {
			out = append(out, c)
		}
	}
	return string(out)
}

// isOperatorChar reports whether the `<` or `>` at i belongs to an
// operator name (`operator<`, `operator<<=`, `operator>`, `operator>>`).
func isOperatorChar(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == '<' || s[j-1] == '>' || s[j-1] == '=') {
		j--
	}
	return strings.HasSuffix(s[:j], "operator")
}

// remnantStart finds where the remnant of an eaten template argument list
// that ends at len(prefix) begins: the first `,` or blank after the last
// `::` or `(` of prefix (zero bytes, already removed, count as absent).
func remnantStart(prefix string) int {
	from := 0
	if k := strings.LastIndex(prefix, "::"); k >= 0 {
		from = k + 2
	}
	if k := strings.LastIndexByte(prefix, '('); k+1 > from {
		from = k + 1
	}
	for k := from; k < len(prefix); k++ {
		if prefix[k] == ',' || prefix[k] == ' ' {
			return k
		}
	}
	return len(prefix)
}
