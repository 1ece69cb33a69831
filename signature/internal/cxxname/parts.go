package cxxname

import "strings"

// Lambda is the one component every lambda and closure type takes:
// GCC's `{lambda(int)#2}`, gdb's `<lambda()>` and the mangled closure
// (`UlvE_`). clang's `$_0` and llvm-symbolizer's `'lambda'(…)` are left as
// printed; IsLambda recognises all of them. It equals signature.Lambda.
const Lambda = "{lambda}"

// Trunc is the last component of a name cut inside its scope or template
// arguments, so the name is visibly incomplete.
const Trunc = "…"

// Parts splits a C++ name, printed (demangled, by any tool) or mangled
// (`_Z…`), into its scope components, outermost first. A mangled name the
// demangler cannot read at all is read as text. See the package
// documentation for what is dropped and what is kept.
func Parts(s string) []string {
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
	if len(fp) < 2 || !IsLambda(fp[len(fp)-1]) && fp[len(fp)-1] != Lambda {
		return nil
	}
	return fp
}

// IsLambda reports whether the component p names a lambda in any of the
// printed forms: Lambda, clang's `$_N`, llvm-symbolizer's `'lambda…'`.
func IsLambda(p string) bool {
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
