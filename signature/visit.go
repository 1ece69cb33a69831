package signature

import (
	"regexp"
	"strings"

	"github.com/crashsig/crashsig/signature/internal/cxxname"
)

// std::visit's dispatcher `std::__detail::__variant::__gen_vtable_impl<
// _Multi_array<R (*)(Visitor&&, Variant&)>, …>::__visit_invoke` calls the
// visitor in place, and the compiler inlines the visitor's body into it:
// like std::function's invoker, the frame is the visitor's. When the
// visitor is a lambda, the frame is named after it (`owner::{lambda}`), in
// every print: demangled, mangled, and mangled but cut by a line limit
// inside its template arguments (the visitor comes first in them, so a cut
// name usually still holds it). Other visitors keep the dispatcher's name,
// a libstdc++ (generic) frame.

const (
	visitMangled = "_ZNSt8__detail9__variant17__gen_vtable_impl"
	visitPrinted = "std::__detail::__variant::__gen_vtable_impl<"
)

// mangledLambdaTail matches a closure type's name after the enclosing
// function's parameters: clang's `$_N` (as a source name) or GCC's
// unnamed type `Ul…E_`.
var mangledLambdaTail = regexp.MustCompile(`E[0-9]+\$_[0-9]+|EUl`)

// visitorParts returns the scope components of the lambda a std::visit
// dispatcher frame invokes, or nil when s is not such a frame or its
// visitor is not a lambda that can be read.
func visitorParts(s string) []string {
	switch {
	case strings.HasPrefix(s, visitMangled):
		return mangledVisitor(s[len(visitMangled):])
	case strings.HasPrefix(s, visitPrinted):
		return printedVisitor(s[len(visitPrinted):])
	}
	return nil
}

// mangledVisitor reads the visitor from the template arguments of a
// mangled dispatcher: the first reference (O, R) to a local entity
// Z <encoding> E of a function whose nested name N…E is a run of source
// names, when the entity is a closure type
// (`OZN5doris10vectorized12HashJoinNode4pullEPNS5_…E3$_0`).
func mangledVisitor(s string) []string {
	for i := 0; i+3 <= len(s); i++ {
		if (s[i] != 'O' && s[i] != 'R') || s[i+1] != 'Z' || s[i+2] != 'N' {
			continue
		}
		parts, n := sourceNames(s[i+3:])
		if len(parts) < 2 || i+3+n >= len(s) || s[i+3+n] != 'E' {
			continue
		}
		rest := s[i+3+n:]
		// The closure's name follows the owner's parameters and comes
		// before the variant type; a cut name may end before it.
		if v := strings.Index(rest, "St7variant"); v >= 0 {
			rest = rest[:v]
		}
		if !mangledLambdaTail.MatchString(rest) {
			return nil
		}
		return append(parts, Lambda)
	}
	return nil
}

// sourceNames reads a run of mangled source names (`5doris10vectorized`)
// at the start of s: the identifiers and the bytes read.
func sourceNames(s string) ([]string, int) {
	var out []string
	at := 0
	for at < len(s) && s[at] >= '1' && s[at] <= '9' {
		n, i := 0, at
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<16 {
			n = n*10 + int(s[i]-'0')
			i++
		}
		if i+n > len(s) {
			break
		}
		out = append(out, s[i:i+n])
		at = i + n
	}
	return out, at
}

// printedVisitor reads the visitor from a demangled dispatcher: the first
// parameter of the function pointer type `R (*)(Visitor&&, …)`.
func printedVisitor(s string) []string {
	i := strings.Index(s, "(*)(")
	if i < 0 {
		return nil
	}
	s = s[i+len("(*)("):]
	// The visitor's type ends at the first top-level `&` (Visitor&&).
	depth, end := 0, -1
	for j := 0; j < len(s) && end < 0; j++ {
		switch s[j] {
		case '(', '<', '{', '[':
			depth++
		case ')', '>', '}', ']':
			depth--
		case '&':
			if depth == 0 {
				end = j
			}
		}
	}
	if end <= 0 {
		return nil
	}
	parts := cxxname.Parts(strings.TrimSpace(s[:end]))
	if len(parts) < 2 || !cxxname.IsLambda(parts[len(parts)-1]) {
		return nil
	}
	return parts
}
