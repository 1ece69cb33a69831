package cxxname

import "strings"

// This file is the reader of printed names: one pass over the top level of
// the text, balanced groups skipped whole, operator names and debugger
// tails recognised.

// operators are the symbolic operator names, longest first for each prefix.
var operators = [...]string{
	"<=>", "<<=", ">>=", "->*", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=",
	"&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "=", ",",
}

// IsIdent reports whether c may be part of an identifier as printed names
// spell them: letters, digits, `_`, `$` (clang's `$_0`) and any byte of a
// multi-byte UTF-8 sequence.
func IsIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// textParts reads an already-demangled (or plain) name. It is a single pass
// over the top level of the text; bracketed groups are skipped as a whole.
func textParts(s string) []string {
	t := tokenizer{s: repairEatenTemplates(s)}
	t.run()
	if t.functor != "" {
		if p := functorParts(t.parts, t.functor); p != nil {
			return p
		}
	}
	return t.parts
}

// lastTemplateArg returns the last top-level argument of a template
// argument list (the text between `<` and `>`).
func lastTemplateArg(args string) string {
	depth, start := 0, 0
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case '<', '(', '{', '[':
			depth++
		case '>', ')', '}', ']':
			depth--
		case ',':
			if depth == 0 {
				start = i + 1
			}
		}
	}
	return strings.TrimSpace(args[start:])
}

type tokenizer struct {
	s       string
	i       int
	parts   []string
	cur     strings.Builder
	functor string // last template argument of std::_Function_handler
}

func (t *tokenizer) push() {
	p := strings.TrimSpace(t.cur.String())
	t.cur.Reset()
	if p != "" {
		t.parts = append(t.parts, p)
	}
}

func (t *tokenizer) reset() {
	t.parts = t.parts[:0]
	t.cur.Reset()
}

func (t *tokenizer) run() {
	s := t.s
	for t.i < len(s) {
		c := s[t.i]
		switch {
		case c == ':' && t.i+1 < len(s) && s[t.i+1] == ':':
			t.push()
			t.i += 2
		case c == 'o' && strings.HasPrefix(s[t.i:], "operator") && (t.i == 0 || !IsIdent(s[t.i-1])) &&
			(t.i+8 == len(s) || !IsIdent(s[t.i+8])):
			t.operator()
		case c == '<':
			end, ok := skipAngle(s, t.i)
			if !ok {
				t.truncated()
				return
			}
			if t.cur.Len() == 0 && strings.HasPrefix(s[t.i:], "<lambda(") {
				// gdb's name of a closure type: `f(int)::<lambda()>`.
				t.cur.WriteString(Lambda)
				t.i = end
				continue
			}
			if len(t.parts) == 1 && t.parts[0] == "std" && t.cur.String() == "_Function_handler" {
				t.functor = lastTemplateArg(s[t.i+1 : end-1])
			}
			t.i = end
		case c == '(':
			end, ok := skipParen(s, t.i)
			inner := ""
			if ok {
				inner = s[t.i+1 : end-1]
			}
			if ok && (inner == "anonymous namespace" || strings.HasPrefix(s[end:], "::") && t.cur.Len() == 0) {
				t.cur.WriteString("(" + inner + ")")
				t.i = end
				continue
			}
			cur := t.cur.String()
			if ok && cur == "decltype" && len(t.parts) == 0 {
				// A `decltype (expr)` return type (llvm-symbolizer prints
				// it before a template function's name): the blank after
				// it starts the name over.
				t.i = end
				continue
			}
			if ok && isQuotedLambda(cur) {
				t.i = end // the parameter list of 'lambda'(…)
				continue
			}
			if !ok {
				// Cut inside the parameter list: the name is complete.
				t.push()
				return
			}
			// A parameter list. Skip qualifiers after it; a following
			// `::` means a local entity of this function.
			t.i = end
			if !t.afterParams() {
				t.push()
				return
			}
		case c == '{':
			end, ok := SkipBalanced(s, t.i, '{', '}')
			if !ok {
				t.truncated()
				return
			}
			t.cur.WriteString(braceName(s[t.i+1 : end-1]))
			t.i = end
		case c == '[':
			if strings.HasPrefix(s[t.i:], "[clone ") || strings.HasPrefix(s[t.i:], "[abi:") {
				end := strings.IndexByte(s[t.i:], ']')
				if end < 0 {
					t.push()
					return
				}
				t.i += end + 1
				continue
			}
			t.cur.WriteByte(c)
			t.i++
		case c == ' ' || c == '\t':
			j := t.i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			t.i = j
			if isLocationTail(s[j:]) {
				// ` at file.cc:12`, ` in /lib/x.so`, ` from /lib/x.so`:
				// a debugger's location, never part of a name.
				t.push()
				return
			}
			if j == len(s) || s[j] == '(' || s[j] == '[' || s[j] == '<' || s[j] == '{' && t.cur.Len() == 0 {
				continue
			}
			if strings.HasPrefix(s[j:], "const") && (j+5 == len(s) || !IsIdent(s[j+5])) && t.cur.Len() == 0 && len(t.parts) == 0 {
				continue
			}
			// The text so far was a return type, a `thunk to`, `vtable
			// for` or similar prefix: the name starts over.
			t.reset()
		case c == '>' || c == ')' || c == '}' || c == ']':
			t.i++ // stray closer
		default:
			t.cur.WriteByte(c)
			t.i++
		}
	}
	t.push()
}

// truncated ends the name at a cut inside its scope: what was read so far
// plus the truncation component.
func (t *tokenizer) truncated() {
	t.push()
	if len(t.parts) > 0 {
		t.parts = append(t.parts, Trunc)
	}
	t.i = len(t.s)
}

// afterParams skips cv/ref qualifiers, noexcept and clone/abi groups after a
// parameter list; it reports whether a `::` continues the name.
func (t *tokenizer) afterParams() bool {
	s := t.s
	for t.i < len(s) {
		switch {
		case s[t.i] == ' ' || s[t.i] == '&' || s[t.i] == '\t':
			t.i++
		case strings.HasPrefix(s[t.i:], "const"):
			t.i += 5
		case strings.HasPrefix(s[t.i:], "volatile"):
			t.i += 8
		case strings.HasPrefix(s[t.i:], "noexcept"):
			t.i += 8
		case strings.HasPrefix(s[t.i:], "[clone ") || strings.HasPrefix(s[t.i:], "[abi:"):
			end := strings.IndexByte(s[t.i:], ']')
			if end < 0 {
				return false
			}
			t.i += end + 1
		case strings.HasPrefix(s[t.i:], "::"):
			t.push()
			t.i += 2
			return true
		default:
			return false
		}
	}
	return false
}

// operator reads an operator name starting at t.i ("operator").
func (t *tokenizer) operator() {
	s := t.s
	j := t.i + len("operator")
	k := j
	for k < len(s) && s[k] == ' ' {
		k++
	}
	for _, op := range operators {
		if strings.HasPrefix(s[k:], op) {
			// `operator<` followed by template args `operator< <int>` is
			// still operator<; `operator()` vs a parameter list: `()` is
			// the operator name when another `(` follows or at the end.
			t.cur.WriteString("operator" + op)
			t.i = k + len(op)
			return
		}
	}
	for _, w := range [...]string{"new[]", "delete[]", "new", "delete", `""`} {
		if strings.HasPrefix(s[k:], w) && (k+len(w) == len(s) || !IsIdent(s[k+len(w)])) {
			t.cur.WriteString("operator " + w)
			t.i = k + len(w)
			if w == `""` { // user-defined literal: operator"" _x
				for t.i < len(s) && (s[t.i] == ' ' || IsIdent(s[t.i])) {
					t.cur.WriteByte(s[t.i])
					t.i++
				}
			}
			return
		}
	}
	if k == j || k == len(s) {
		// a function really called `operator` or a bare word
		t.cur.WriteString("operator")
		t.i = j
		return
	}
	// Conversion operator: the type runs to the parameter list.
	end := k
	depth := 0
	for end < len(s) {
		c := s[end]
		if c == '<' {
			depth++
		} else if c == '>' && depth > 0 {
			depth--
		} else if c == '(' && depth == 0 {
			break
		}
		end++
	}
	typ := strings.Join(textParts(s[k:end]), "::")
	t.cur.WriteString("operator " + typ)
	t.i = end
}

// isLocationTail reports whether s starts a location that debuggers and
// stack printers append: `at <path>`, `in <path>`, `from <path>`.
func isLocationTail(s string) bool {
	for _, w := range [...]string{"at ", "in ", "from "} {
		if strings.HasPrefix(s, w) {
			r := strings.TrimLeft(s[len(w):], " ")
			return r != "" && (r[0] == '/' || r[0] == '.' || r[0] == '?' || strings.ContainsAny(r, "/"))
		}
	}
	return false
}

func isQuotedLambda(cur string) bool {
	return strings.HasPrefix(cur, "'lambda") && strings.HasSuffix(cur, "'")
}

// braceName names a `{…}` group: `{lambda(int)#1}` → {lambda},
// `{unnamed type#2}` → {unnamed type}, `{default arg#1}` → {default arg}.
func braceName(inner string) string {
	if strings.HasPrefix(inner, "lambda") {
		return Lambda
	}
	if i := strings.IndexAny(inner, "(#"); i >= 0 {
		inner = inner[:i]
	}
	return "{" + strings.TrimSpace(inner) + "}"
}
