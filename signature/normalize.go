package signature

import (
	"strings"
	"unicode/utf8"

	"github.com/crashsig/crashsig/signature/internal/cxxname"
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
const truncMark = cxxname.Trunc

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
		parts := visitorParts(s)
		if parts == nil {
			parts = cxxname.Parts(s)
		}
		out = finish(parts)
	}
	return bound(out)
}

// finish applies signature's rules to the components cxxname.Parts read
// (from a mangled or a printed name alike): clone suffixes and symbol
// versions, lambda forms, closure call operators, Markdown repair.
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
		if cxxname.IsLambda(p) {
			p = Lambda
		}
		if (p == "operator()" || p == "_FUN" || p == "__invoke") && len(out) > 0 && out[len(out)-1] == Lambda {
			continue
		}
		out = append(out, p)
	}
	repairMarkdown(out)
	out = dropVersionNamespace(out)
	return strings.Join(out, "::")
}

// dropVersionNamespace removes the inline namespace that abseil and fmt
// put after their own to version the ABI (`absl::lts_20230125::Mutex`,
// `fmt::v7::format_to`): one function of either library keeps one name
// across the library versions the products bundle.
func dropVersionNamespace(parts []string) []string {
	if len(parts) < 3 {
		return parts
	}
	drop := false
	switch parts[0] {
	case "absl":
		drop = strings.HasPrefix(parts[1], "lts_") && allDigits(strings.ReplaceAll(parts[1][len("lts_"):], "_", ""))
	case "fmt":
		drop = len(parts[1]) > 1 && parts[1][0] == 'v' && allDigits(parts[1][1:])
	}
	if !drop {
		return parts
	}
	return append(parts[:1], parts[2:]...)
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
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
