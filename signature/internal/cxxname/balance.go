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
// top level ends a remnant, which starts, in this order of preference:
// where the previous remnant began, when the list it closed was followed
// by `,` or `>` (one eaten list holding several: continuesList); at the
// first top-level `,` since the previous remnant (a name has commas only
// inside argument lists); else at the first `,` or blank after the last
// `::` or `(` before the closer (remnantStart). `operator>`, `operator->`
// and `operator>>` are not closers. Text without an unmatched `>` is
// returned unchanged.
func repairEatenTemplates(s string) string {
	if strings.IndexByte(s, '>') < 0 {
		return s
	}
	var b []byte
	angle, paren, pending, comma := 0, 0, -1, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ',':
			if angle == 0 && paren == 0 && comma < 0 {
				// A name has commas only inside argument lists: one
				// at the top level is inside an eaten list, whose
				// remnant it begins.
				comma = i
			}
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
			start := pending
			switch {
			case start >= 0:
			case comma >= 0:
				start = comma
			default:
				start = remnantStart(string(b[:i]))
			}
			comma = -1
			for k := start; k <= i; k++ {
				b[k] = 0
			}
			// A `,` or another `>` after the closer (continuesList):
			// the list that closed was itself an argument of an eaten
			// list (`format_arg_store, char>, std::basic_string, …>::`),
			// whose next unmatched `>` ends the same remnant.
			pending = -1
			if continuesList(s, i+1) {
				pending = start
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

// continuesList reports whether the text at i, after a closing `>`,
// continues an argument list: a `,` or another `>`, possibly after the
// type's cv-qualifiers and declarator marks (`> const, …`, `>&>`). A blank
// before a name (`value, char>> fmt::…`: the return type ended) does not.
func continuesList(s string, i int) bool {
	for i < len(s) {
		switch {
		case s[i] == ',' || s[i] == '>':
			return true
		case s[i] == ' ' || s[i] == '&' || s[i] == '*':
			i++
		case strings.HasPrefix(s[i:], "const"):
			i += len("const")
		case strings.HasPrefix(s[i:], "volatile"):
			i += len("volatile")
		default:
			return false
		}
	}
	return false
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
// `::` or unmatched `(` of prefix (zero bytes, already removed, count as
// absent). A `::` or `(` inside a balanced parenthesised group is a
// template argument's own (a cast `(fmt::v7::detail::type)1` among the
// arguments), not the scope the list belongs to, and is passed over.
func remnantStart(prefix string) int {
	from, depth := 0, 0
back:
	for k := len(prefix) - 1; k >= 0; k-- {
		switch prefix[k] {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				from = k + 1
				break back
			}
			depth--
		case ':':
			if depth == 0 && k > 0 && prefix[k-1] == ':' {
				from = k + 1
				break back
			}
		}
	}
	for k := from; k < len(prefix); k++ {
		if prefix[k] == ',' || prefix[k] == ' ' {
			return k
		}
	}
	return len(prefix)
}
