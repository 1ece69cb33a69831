package cxxname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partsCases pin the components Parts returns, before signature's own
// rules (closure call operators, clone suffixes, Markdown repair) apply.
var partsCases = []struct {
	in   string
	want []string
}{
	// Return type, template arguments, parameters, qualifiers, clone groups.
	{"starrocks::Status starrocks::ColumnReader<(starrocks::LogicalType)5>::read_page<true>(starrocks::PageHeader const*) const [clone .isra.0]", []string{"starrocks", "ColumnReader", "read_page"}},
	{"std::__cxx11::basic_string<char>::_M_create[abi:cxx11](unsigned long&, unsigned long)", []string{"std", "__cxx11", "basic_string", "_M_create"}},
	{"non-virtual thunk to doris::Foo::bar()", []string{"doris", "Foo", "bar"}},
	{"std::vector<>::_M_realloc_insert<>()", []string{"std", "vector", "_M_realloc_insert"}},
	// A paren group followed by `::` is a scope: the anonymous namespace,
	// a local entity of a function.
	{"google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", []string{"google", "(anonymous namespace)", "FailureSignalHandler"}},
	{"doris::f(int)::Local::g()", []string{"doris", "f", "Local", "g"}},
	// Debugger tails and argument values.
	{"doris::OlapScanNode::transfer_thread (this=0x7f3a4c, state=0x7f3a00) at be/src/exec/olap_scan_node.cpp:42", []string{"doris", "OlapScanNode", "transfer_thread"}},
	{"start_thread in /lib64/libpthread.so.0", []string{"start_thread"}},
	// Lambdas: braced and gdb forms become Lambda, clang's and llvm's stay;
	// the closure's call operator stays a component.
	{"starrocks::EvHttpServer::start()::{lambda()#1}::operator()() const", []string{"starrocks", "EvHttpServer", "start", Lambda, "operator()"}},
	{"starrocks::ScanNode::submit_scan_tasks(int)::<lambda()>::operator()(void) const", []string{"starrocks", "ScanNode", "submit_scan_tasks", Lambda, "operator()"}},
	{"starrocks::EvHttpServer::start()::$_0::operator()() const", []string{"starrocks", "EvHttpServer", "start", "$_0", "operator()"}},
	{"_ZZN9starrocks12EvHttpServer5startEvENKUlvE_clEv", []string{"starrocks", "EvHttpServer", "start", Lambda, "operator()"}},
	// std::function's invoker is the lambda it runs; other callables keep it.
	{"std::_Function_handler<void (), starrocks::EvHttpServer::start()::{lambda()#1}>::_M_invoke(std::_Any_data const&)", []string{"starrocks", "EvHttpServer", "start", Lambda}},
	{"_ZNSt17_Function_handlerIFvvEZN9starrocks8pipeline12RunTimerTaskEvEUlvE_E9_M_invokeERKSt9_Any_data", []string{"starrocks", "pipeline", "RunTimerTask", Lambda}},
	{"std::_Function_handler<void (), void (*)()>::_M_invoke(std::_Any_data const&)", []string{"std", "_Function_handler", "_M_invoke"}},
	// Operators, conversion operators, destructors, constructors.
	{"bool std::operator< <char>(std::string const&, std::string const&)", []string{"std", "operator<"}},
	{"foo::Bar::operator->() const", []string{"foo", "Bar", "operator->"}},
	{"starrocks::Foo::operator bool() const", []string{"starrocks", "Foo", "operator bool"}},
	{"operator delete[](void*)", []string{"operator delete[]"}},
	{"_Znwm", []string{"operator new"}},
	{"_ZN9starrocks10vectorized12BinaryColumnD2Ev", []string{"starrocks", "vectorized", "BinaryColumn", "~BinaryColumn"}},
	// Mangled: anonymous namespace, clone suffix the demangler rejects.
	{"_ZN5doris6signal12_GLOBAL__N_120FailureSignalHandlerEiP9siginfo_tPv", []string{"doris", "signal", "(anonymous namespace)", "FailureSignalHandler"}},
	{"_ZN9__gnu_cxx27__verbose_terminate_handlerEv.cold", []string{"__gnu_cxx", "__verbose_terminate_handler"}},
	// Damage: cut in the parameters (complete), in the scope or template
	// arguments (Trunc), a mangled prefix, eaten template arguments.
	{"starrocks::pipeline::Foo::bar(std::vector<std::shared_ptr<starrocks::Chunk>, std::alloc", []string{"starrocks", "pipeline", "Foo", "bar"}},
	{"void starrocks::vectorized::Foo<starrocks::vectorized::Bar, std::alloc", []string{"starrocks", "vectorized", "Foo", Trunc}},
	{"_ZN9starrocks8pipeline14PipelineDriver7process", []string{"starrocks", "pipeline", "PipelineDriver", "process", Trunc}},
	{"doris::vectorized::PODArray, 15ul, 16ul>::operator[](long) const", []string{"doris", "vectorized", "PODArray", "operator[]"}},
	// Clone suffixes and symbol versions glued to a component are the
	// caller's business.
	{"foo.isra.0", []string{"foo.isra.0"}},
	{"memcpy@GLIBC_2.14", []string{"memcpy@GLIBC_2.14"}},
	// A decltype return type before a template function's name.
	{"decltype (::new ((void*)(0)) int((declval<int const&>)())) std::construct_at<int, int const&>(int*, int const&)", []string{"std", "construct_at"}},
	{"decltype(auto) doris::Foo::bar<int>(int)", []string{"doris", "Foo", "bar"}},
	{"", nil},
}

func TestParts(t *testing.T) {
	for _, c := range partsCases {
		got := Parts(c.in)
		if len(c.want) == 0 {
			assert.Empty(t, got, "Parts(%q)", c.in)
			continue
		}
		assert.Equal(t, c.want, got, "Parts(%q)", c.in)
	}
}

func TestIsLambda(t *testing.T) {
	for _, p := range []string{Lambda, "$_0", "$_12", "'lambda'", "'lambda0'"} {
		assert.True(t, IsLambda(p), p)
	}
	for _, p := range []string{"$_", "$_x", "lambda", "{lambda()#1}", "operator()", ""} {
		assert.False(t, IsLambda(p), p)
	}
}

func TestSkipBalanced(t *testing.T) {
	end, ok := SkipBalanced("f(a(b)c)d", 1, '(', ')')
	require.True(t, ok)
	assert.Equal(t, 8, end)
	end, ok = SkipBalanced("f(a(b", 1, '(', ')')
	assert.False(t, ok)
	assert.Equal(t, 5, end)
	// Angle groups skip parenthesised comparisons whole.
	end, ok = skipAngle("A<(a>b)>::f", 1)
	require.True(t, ok)
	assert.Equal(t, 8, end)
}

func TestRepairEatenTemplates(t *testing.T) {
	assert.Equal(t, "doris::vectorized::PODArray::operator[](long) const",
		repairEatenTemplates("doris::vectorized::PODArray, 15ul, 16ul>::operator[](long) const"))
	// A cast among the eaten arguments holds a `::` of its own (corpus
	// doris/190: fmt's make_arg<true, Ctx<…>, (fmt::v7::detail::type)1, int, 0>).
	assert.Equal(t, "fmt::v7::format_arg_store::format_arg_store(std::__cxx11::basic_string const&)",
		repairEatenTemplates("fmt::v7::format_arg_store, char>, std::__cxx11::basic_string, std::allocator>, int const, std::atomic>::format_arg_store(std::__cxx11::basic_string const&)"))
	// An argument type's own scope inside the remnant (validation-style
	// paste of std::_Hashtable<std::__cxx11::basic_string<…>, …>).
	assert.Equal(t, "std::_Hashtable::_M_find_before_node(unsigned long) const",
		repairEatenTemplates("std::_Hashtable, std::allocator>, std::pair, std::allocator> const, cctz::time_zone>>, std::__detail::_Select1st, std::__detail::_Hashtable_traits>::_M_find_before_node(unsigned long) const"))
	assert.Equal(t, "fmt::v7::format_arg_store::type::type fmt::v7::make_args_checked(char const (&) [77])",
		repairEatenTemplates("fmt::v7::format_arg_store, char>, std::remove_reference, std::allocator>>::type, std::remove_reference::type, std::remove_reference&>::type> fmt::v7::make_args_checked, std::allocator>, int const&, char [77], char>(char const (&) [77])"))
	assert.Equal(t, "fmt::v7::detail::value fmt::v7::detail::make_arg(int const&)",
		repairEatenTemplates("fmt::v7::detail::value, char>> fmt::v7::detail::make_arg, char>, (fmt::v7::detail::type)1, int, 0>(int const&)"))
	for _, s := range []string{"std::vector<int>::operator>>(int)", "foo::Bar::operator->() const", "a<b<c>>::d", "no closer"} {
		assert.Equal(t, s, repairEatenTemplates(s), "balanced or operator text must stay")
	}
}

func FuzzParts(f *testing.F) {
	for _, c := range partsCases {
		f.Add(c.in)
	}
	for _, s := range []string{"operator<", "a<b(c>d)>::e", "_ZZ", "{lambda(", "_ZN", "_ZN3foo", "operator", "operator\"\" _x", ">>>", "((::))", "a::::b", "std::_Function_handler<a, b(c)::{lambda()#1}>::_M_invoke"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			s = s[:4096] // what signature.Normalize passes at most
		}
		got := Parts(s)
		for i, p := range got {
			if p == "" {
				t.Fatalf("Parts(%q) = %q: component %d is empty", s, got, i)
			}
		}
		again := Parts(s)
		if strings.Join(again, "\x00") != strings.Join(got, "\x00") || len(again) != len(got) {
			t.Fatalf("Parts(%q) not deterministic: %q then %q", s, got, again)
		}
	})
}
