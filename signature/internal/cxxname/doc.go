// Package cxxname splits a C++ function name into its scope components.
// It is the tokenizer under signature.Normalize and knows nothing of
// signatures, rules or crash formats beyond the names they print.
//
// # Contract
//
// Parts(s) takes one name as a demangler, a debugger or a stack printer
// printed it (`starrocks::Status starrocks::ColumnReader<(starrocks::LogicalType)5>::read_page<true>(…) const [clone .isra.0]`,
// gdb's `f (this=0x…, x=<optimized out>) at a.cc:12`, old glog's
// `std::vector<>::_M_realloc_insert<>()`) or a mangled symbol (`_Z…`) and
// returns the components of the function's scope-qualified name, outermost
// first (`starrocks`, `ColumnReader`, `read_page`):
//
//   - dropped: a return type (any top-level blank before the name starts
//     it over, which also drops `thunk to`, `vtable for`), template
//     argument lists, parameter lists with cv/ref qualifiers and
//     `noexcept`, `[abi:…]` tags, `[clone …]` groups, and a debugger's
//     ` at <path>` / ` in <path>` / ` from <path>` tail;
//   - kept: `(anonymous namespace)`, operator names (`operator<`,
//     `operator()`, `operator->`, `operator new[]`, conversion operators
//     as `operator <type>`), destructors (`~T`), `{unnamed type}`;
//   - lambdas: braced (`{lambda(int)#1}`), gdb's `<lambda()>` and mangled
//     closures become Lambda; clang's `$_N` and `'lambda'` stay as
//     printed and IsLambda recognises every form. The closure's
//     `operator()` after a lambda is kept: dropping it is the caller's
//     rule;
//   - std::function's invoker `std::_Function_handler<Sig, F>::_M_invoke`
//     yields F's components when F is a lambda (its body is inlined into
//     the invoker); otherwise the invoker's own;
//   - damage: a name cut inside its parameter list is complete; a name
//     cut inside its scope or template arguments ends with the component
//     Trunc; a mangled name the demangler rejects yields the nested-name
//     prefix it can read, ending with Trunc; template argument lists whose
//     opening part Markdown or HTML ate (`PODArray, 15ul, 16ul>::f`) are
//     repaired first. Stray closers are skipped.
//
// Clone suffixes (`.cold`, `.part.N`) and symbol versions (`@@GLIBC_2.2.5`)
// glued to a component, Markdown-eaten underscores and the length of the
// result are the caller's business (signature.Normalize does them).
//
// # Invariants
//
// Parts never panics and never returns an empty component, whatever the
// bytes (FuzzParts); it is deterministic, keeps no state and is safe for
// concurrent use. Work is bounded by the input: the text reader is one pass
// with balanced-group skips; the demangler is limited to 2^16 output bytes
// (demangle.MaxLength(16)) and the syntax-tree walk to depth 64. Callers
// bound the input length (signature cuts names at 4096 bytes).
//
// # Files
//
//	parts.go    Parts, Lambda, Trunc, IsLambda, std::function's functor
//	mangled.go  the mangled reader: demangler syntax tree, prefix of rejected names
//	text.go     the printed-name tokenizer: scopes, operators, qualifiers, tails
//	balance.go  balanced-group scanning (SkipBalanced, IsIdent), eaten-template repair
//
// SkipBalanced and IsIdent are exported for signature's reader of CHECK
// expressions, which scans the same C++ text.
package cxxname
