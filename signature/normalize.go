package signature

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ianlancetaylor/demangle"
)

// Bounds of Normalize. Real function names are far shorter than
// maxNormalizeInput; anything longer is damage and is cut first.
// Normalized names longer than MaxNameLen are cut at a rune boundary and
// end in "…".
const (
	maxNormalizeInput = 4096
	// MaxNameLen is the longest normalized frame name Normalize returns, in bytes.
	MaxNameLen = 256
)

// Lambda is the one form every lambda and closure takes in a normalized
// name: GCC `{lambda(int)#2}`, clang `$_0`, llvm-symbolizer `'lambda'(…)`
// and the mangled `UlvE_` all become `{lambda}`. A following
// `::operator()` (the call operator of the closure) or `::_FUN` (GCC's
// static invoker used when the lambda decays to a function pointer) is
// dropped: both are the lambda's body, and old glog builds print them
// inconsistently. So
// `starrocks::EvHttpServer::start()::{lambda()#1}::operator()() const` and
// `_ZZN9starrocks12EvHttpServer5startEvENKUlvE_clEv` both normalize to
// `starrocks::EvHttpServer::start::{lambda}`.
const Lambda = "{lambda}"

// truncMark is appended (as a last component) to a name that was cut inside
// its scope or template arguments, so the name is visibly incomplete.
const truncMark = "…"

// Normalize turns a printed, demangled or mangled C++ (or C, or Java) function
// name into the canonical short form used in signatures: scope-qualified
// name without return type, parameters, cv/ref qualifiers, template
// arguments, ABI tags, clone suffixes and symbol versions, with lambdas in
// one form (see Lambda) and Markdown damage repaired.
//
//	starrocks::Status starrocks::ColumnReader<(starrocks::LogicalType)5>::read_page<true>(starrocks::PageHeader const*) [clone .isra.0]
//	→ starrocks::ColumnReader::read_page
//
// Mangled names (`_Z…`) are demangled and walked as a syntax tree; printed
// names are read by a tolerant tokenizer that balances `<>`, `()`, `{}`
// and knows `operator<`, `operator()`, `operator->` and friends. Names cut
// short (glog 0.7 truncates at 256 bytes) keep what is sound: a cut inside
// the parameter list loses nothing, a cut inside the scope ends the name
// with the component "…". Java names (`a.b.C$D.m`) keep their dots.
//
// Normalize never panics, returns at most MaxNameLen bytes, and is
// idempotent: Normalize(Normalize(x)) == Normalize(x). It is safe for
// concurrent use.
func Normalize(name string) string {
	return normalize(name, false)
}

// NormalizeJava normalizes a Java frame name (`pkg.Class$Inner.method`,
// optionally with a `(File.java:12)` tail): hidden-class and lambda
// suffixes (`$$Lambda$12/0x0000…`) are collapsed to `$$Lambda`.
func NormalizeJava(name string) string {
	return normalize(name, true)
}

func normalize(name string, java bool) string {
	out := normalizeOnce(name, java)
	// Safety net for idempotency on damaged input: the rules above are
	// meant to reach their fixpoint in one pass; a few more are cheap.
	for i := 0; i < 3; i++ {
		again := normalizeOnce(out, java)
		if again == out {
			break
		}
		out = again
	}
	return out
}

func normalizeOnce(name string, java bool) string {
	s := clean(name)
	if s == "" {
		return ""
	}
	if s[0] == '<' && s[len(s)-1] == '>' {
		// gdb's `<signal handler called>` and similar markers.
		return bound(s)
	}
	if !java && looksJava(s) {
		java = true
	}
	var out string
	if java {
		out = normalizeJava(s)
	} else {
		parts := nameParts(s)
		out = finish(parts)
	}
	return bound(out)
}

// clean removes what no name contains: control bytes, invalid UTF-8, HTML
// entities of scraped pages, symbol versions and GCC clone suffixes of C
// names, and bounds the input.
func clean(s string) string {
	if len(s) > maxNormalizeInput {
		s = s[:maxNormalizeInput]
	}
	s = strings.TrimSpace(s)
	if strings.IndexByte(s, '&') >= 0 {
		s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
	}
	needs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			needs = true
			break
		}
	}
	if needs {
		var b strings.Builder
		for _, r := range s {
			if r == utf8.RuneError || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				continue
			}
			b.WriteRune(r)
		}
		s = strings.TrimSpace(b.String())
	}
	for {
		t := stripCloneSuffixes(stripSymbolVersion(s))
		if t == s {
			return s
		}
		s = t
	}
}

// stripSymbolVersion drops `@GLIBC_2.2.5`, `@@GLIBCXX_3.4` at the end
// (repeatedly).
func stripSymbolVersion(s string) string {
	for {
		t := stripOneSymbolVersion(s)
		if t == s {
			return s
		}
		s = t
	}
}

func stripOneSymbolVersion(s string) string {
	i := strings.LastIndexByte(s, '@')
	if i <= 0 {
		return s
	}
	j := i
	for j > 0 && s[j-1] == '@' {
		j--
	}
	v := s[i+1:]
	if v == "" || !isVersionTag(v) {
		return s
	}
	return strings.TrimSpace(s[:j])
}

func isVersionTag(v string) bool {
	if v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	hasUnderscore := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.':
		case c == '_':
			hasUnderscore = true
		default:
			return false
		}
	}
	return hasUnderscore
}

// cloneSuffixes are GCC/LLVM suffixes of compiler-made copies of a function.
// Those with a number take `.<digits>` after them.
var cloneSuffixes = [...]struct{ s string }{
	{".cold"}, {".part"}, {".isra"}, {".constprop"}, {".lto_priv"}, {".llvm"}, {".localalias"}, {".specialized"},
}

// stripCloneSuffixes removes trailing `.cold`, `.part.N`, `.isra.N`,
// `.cold.0` … from a symbol (any number of them, in any order).
func stripCloneSuffixes(s string) string {
	for {
		t := s
		// an optional trailing .<digits>
		j := len(t)
		for j > 0 && t[j-1] >= '0' && t[j-1] <= '9' {
			j--
		}
		base := t
		if j < len(t) && j > 0 && t[j-1] == '.' {
			base = t[:j-1]
		}
		for _, c := range cloneSuffixes {
			if strings.HasSuffix(base, c.s) && len(base) > len(c.s) && true {
				t = base[:len(base)-len(c.s)]
				break
			}
		}
		if t == s || t == "" {
			return s
		}
		s = t
	}
}

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

// nameParts splits a name into its normalized scope components.
func nameParts(s string) []string {
	if isMangled(s) {
		if p, ok := mangledParts(s); ok {
			return p
		}
	}
	return textParts(s)
}

func isMangled(s string) bool {
	return len(s) > 2 && s[0] == '_' && s[1] == 'Z'
}

// mangledParts demangles s and walks the syntax tree.
func mangledParts(s string) (parts []string, ok bool) {
	a, err := demangle.ToAST(s, demangle.MaxLength(16))
	if err != nil {
		// A clone suffix the demangler does not know (glog prints `.cold`
		// glued on): retry without anything after the first '.'.
		if i := strings.IndexByte(s, '.'); i > 0 {
			a, err = demangle.ToAST(s[:i], demangle.MaxLength(16))
		}
		if err != nil {
			return mangledPrefix(s)
		}
	}
	w := astWalker{}
	w.walk(a, 0)
	if w.bad || len(w.parts) == 0 {
		return nil, false
	}
	if w.functor != "" {
		if p := functorParts(w.parts, w.functor); p != nil {
			return p, true
		}
	}
	return w.parts, true
}

// functorParts: std::function's invoker `std::_Function_handler<Sig, F>::_M_invoke`
// runs the stored callable F, and the compiler usually inlines F's body
// into it, so when F is a lambda the frame is F's: the parts of F
// (`starrocks::spill::RawSpillerWriter::flush::{lambda}`). Other
// callables (std::_Bind, function pointers) leave the frame as it is. Old
// glog prints `std::_Function_handler<>::_M_invoke()` without F; there the
// frame stays the (irrelevant) invoker.
func functorParts(parts []string, functor string) []string {
	if len(parts) != 3 || parts[0] != "std" || parts[1] != "_Function_handler" || parts[2] != "_M_invoke" {
		return nil
	}
	fp := textParts(functor)
	if len(fp) < 2 || !isLambdaPart(fp[len(fp)-1]) && fp[len(fp)-1] != Lambda {
		return nil
	}
	return fp
}

// mangledPrefix reads the leading nested name of a mangled name the
// demangler rejects (typically one cut short by a log line limit):
// `_ZN9starrocks8pipeline14PipelineDriver7process…` gives
// starrocks::pipeline::PipelineDriver::process::…. Only source names and
// `St` are read; the first template argument list, or anything else, ends
// the name with "…".
func mangledPrefix(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "_ZN") {
		return nil, false
	}
	i := 3
	for i < len(s) && (s[i] == 'K' || s[i] == 'V' || s[i] == 'r' || s[i] == 'R' || s[i] == 'O') {
		i++
	}
	var parts []string
	if strings.HasPrefix(s[i:], "St") {
		parts = append(parts, "std")
		i += 2
	}
	for i < len(s) {
		c := s[i]
		if c < '0' || c > '9' {
			break
		}
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<16 {
			n = n*10 + int(s[i]-'0')
			i++
		}
		if n == 0 || i+n > len(s) {
			break
		}
		id := s[i : i+n]
		if strings.HasPrefix(id, "_GLOBAL__N") {
			id = "(anonymous namespace)"
		}
		parts = append(parts, id)
		i += n
	}
	if len(parts) < 2 {
		return nil, false
	}
	if i < len(s) && s[i] == 'E' {
		return parts, true // complete nested name, bad parameters
	}
	return append(parts, truncMark), true
}

type astWalker struct {
	parts []string
	bad   bool
	// functor is the printed last template argument of
	// std::_Function_handler (see functorParts).
	functor string
}

const maxASTDepth = 64

// walk appends the name components of a to w.parts.
func (w *astWalker) walk(a demangle.AST, depth int) {
	if depth > maxASTDepth || a == nil {
		w.bad = true
		return
	}
	switch n := a.(type) {
	case *demangle.Typed: // function encoding: Name is the function, Type its signature
		w.walk(n.Name, depth+1)
	case *demangle.Clone:
		w.walk(n.Base, depth+1)
	case *demangle.MethodWithQualifiers:
		w.walk(n.Method, depth+1)
	case *demangle.Qualified:
		w.walk(n.Scope, depth+1)
		w.walk(n.Name, depth+1)
	case *demangle.Template:
		w.walk(n.Name, depth+1)
		if len(w.parts) == 2 && w.parts[0] == "std" && w.parts[1] == "_Function_handler" && len(n.Args) > 0 {
			w.functor = demangle.ASTToString(n.Args[len(n.Args)-1], demangle.MaxLength(16))
		}
	case *demangle.TaggedName:
		w.walk(n.Name, depth+1)
	case *demangle.Name:
		w.parts = append(w.parts, n.Name)
	case *demangle.Closure, *demangle.LambdaExpr:
		w.parts = append(w.parts, Lambda)
	case *demangle.UnnamedType:
		w.parts = append(w.parts, "{unnamed type}")
	case *demangle.Constructor:
		w.parts = append(w.parts, lastPart(n.Name))
	case *demangle.Destructor:
		w.parts = append(w.parts, "~"+lastPart(n.Name))
	case *demangle.Operator:
		name := strings.TrimSpace(n.Name)
		if name != "" && name[0] >= 'a' && name[0] <= 'z' {
			w.parts = append(w.parts, "operator "+name)
		} else {
			w.parts = append(w.parts, "operator"+name)
		}
	case *demangle.Cast:
		w.parts = append(w.parts, "operator "+strings.Join(textParts(demangle.ASTToString(n.To)), "::"))
	default:
		// Special names (vtable for, guard variable for, thunks) and
		// anything else: print and read as text.
		w.parts = append(w.parts, textParts(demangle.ASTToString(a, demangle.MaxLength(16)))...)
	}
}

// lastPart is the last component of a (constructor/destructor class name).
func lastPart(a demangle.AST) string {
	w := astWalker{}
	w.walk(a, 0)
	if len(w.parts) == 0 {
		return "?"
	}
	return w.parts[len(w.parts)-1]
}

// operators are the symbolic operator names, longest first for each prefix.
var operators = [...]string{
	"<=>", "<<=", ">>=", "->*", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=",
	"&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "=", ",",
}

func isIdent(c byte) bool {
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
		case c == 'o' && strings.HasPrefix(s[t.i:], "operator") && (t.i == 0 || !isIdent(s[t.i-1])) &&
			(t.i+8 == len(s) || !isIdent(s[t.i+8])):
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
			end, ok := skipBalanced(s, t.i, '{', '}')
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
			if strings.HasPrefix(s[j:], "const") && (j+5 == len(s) || !isIdent(s[j+5])) && t.cur.Len() == 0 && len(t.parts) == 0 {
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
		t.parts = append(t.parts, truncMark)
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
		if strings.HasPrefix(s[k:], w) && (k+len(w) == len(s) || !isIdent(s[k+len(w)])) {
			t.cur.WriteString("operator " + w)
			t.i = k + len(w)
			if w == `""` { // user-defined literal: operator"" _x
				for t.i < len(s) && (s[t.i] == ' ' || isIdent(s[t.i])) {
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

func skipParen(s string, i int) (int, bool) { return skipBalanced(s, i, '(', ')') }

func skipBalanced(s string, i int, open, close byte) (int, bool) {
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

// finish applies the component rules shared by both readers: lambda forms,
// closure call operators, Markdown repair.
func finish(parts []string) string {
	if len(parts) == 1 && parts[0] == "operator()" {
		// gdb names a lambda's body by its DWARF name alone, a bare
		// `operator() (__closure=…)`: the closure type has no name. A
		// named functor would print its class.
		return Lambda
	}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		for {
			q := strings.TrimSpace(stripCloneSuffixes(stripSymbolVersion(p)))
			if q == p {
				break
			}
			p = q
		}
		if p == "" {
			continue
		}
		if isLambdaPart(p) {
			p = Lambda
		}
		if (p == "operator()" || p == "_FUN" || p == "__invoke") && len(out) > 0 && out[len(out)-1] == Lambda {
			continue
		}
		out = append(out, p)
	}
	repairMarkdown(out)
	return strings.Join(out, "::")
}

func isLambdaPart(p string) bool {
	if p == Lambda {
		return true
	}
	if strings.HasPrefix(p, "$_") && len(p) > 2 {
		for i := 2; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
		}
		return true
	}
	return isQuotedLambda(p)
}

// repairMarkdown restores double underscores that Markdown ate in pasted
// dumps: `_gnu_cxx` → `__gnu_cxx`, `std::_cxx11` → `std::__cxx11`. Inside
// the implementation namespaces a component `_lower…` cannot exist (the
// library reserves `__x` and `_Upper`), so one underscore is added back.
func repairMarkdown(parts []string) {
	if len(parts) == 0 {
		return
	}
	switch parts[0] {
	case "_gnu_cxx", "_cxxabiv1", "_cxxabiv2":
		parts[0] = "_" + parts[0]
	}
	if len(parts) == 1 {
		// glibc internals lose one underscore the same way: `_GI_raise`.
		for _, p := range markdownCNames {
			if strings.HasPrefix(parts[0], p) && !strings.HasPrefix(parts[0], "_"+p) {
				parts[0] = "_" + parts[0]
				break
			}
		}
	}
	switch parts[0] {
	case "std", "__gnu_cxx", "__cxxabiv1":
	default:
		return
	}
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		if len(p) > 1 && p[0] == '_' && p[1] >= 'a' && p[1] <= 'z' {
			parts[i] = "_" + p
		}
	}
}

// markdownCNames are prefixes of glibc/libstdc++ C names that begin with
// two underscores; a paste that shows one lost the other to Markdown.
var markdownCNames = [...]string{"_GI_", "_libc_", "_pthread_", "_restore_rt", "_memcpy_", "_memmove_", "_memset_", "_memcmp_", "_strlen_", "_assert_fail", "_cxa_", "_clone", "_sigaction", "_nptl_", "_interceptor_", "_asan_"}

// bound cuts a normalized name to MaxNameLen bytes at a rune boundary.
func bound(s string) string {
	if len(s) <= MaxNameLen {
		return s
	}
	cut := MaxNameLen - len(truncMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncMark
}

// cache is a bounded, concurrency-safe map: when full it is emptied and
// refilled, which bounds memory without bookkeeping on the hot path.
type cache[V any] struct {
	mu    sync.RWMutex
	m     map[string]V
	limit int
}

func newCache[V any](limit int) *cache[V] {
	if limit <= 0 {
		limit = 1 << 16
	}
	return &cache[V]{m: make(map[string]V), limit: limit}
}

// get returns the cached value of key, computing and storing it on a miss
// (keys longer than maxNormalizeInput are computed but not stored).
func (c *cache[V]) get(key string, compute func() V) V {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = compute()
	if len(key) > maxNormalizeInput {
		return v
	}
	c.mu.Lock()
	if len(c.m) >= c.limit {
		clear(c.m)
	}
	c.m[strings.Clone(key)] = v
	c.mu.Unlock()
	return v
}

func (c *cache[V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Normalizer is Normalize with a bounded cache: crash streams repeat the
// same names, and a hit costs one map lookup. It is safe for concurrent use.
type Normalizer struct {
	c *cache[string]
}

// NewNormalizer returns a Normalizer caching up to limit names (≤ 0 means
// 65536). A full cache is emptied and refilled.
func NewNormalizer(limit int) *Normalizer {
	return &Normalizer{c: newCache[string](limit)}
}

// Normalize is the cached form of the package-level Normalize.
func (n *Normalizer) Normalize(name string) string {
	return n.c.get(name, func() string { return normalize(name, false) })
}

// NormalizeJava is the cached form of the package-level NormalizeJava.
func (n *Normalizer) NormalizeJava(name string) string {
	return n.c.get("\x00j"+name, func() string { return normalize(name, true) })
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
