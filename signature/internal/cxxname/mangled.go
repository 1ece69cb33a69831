package cxxname

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// This file is the reader of mangled names: the demangler's syntax tree
// walked for the components of the function's name, and a prefix reader for
// mangled names the demangler rejects.

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
	return append(parts, Trunc), true
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
