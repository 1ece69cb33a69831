package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/crashsig/crashsig/signature"
)

// TestLambdaArgOwners: the owner of a lambda passed to a product template
// or function is read from GCC's and Clang's closure names, with parameter
// lists, const and template arguments of the owner skipped; a lambda of
// the frame's own function, a library owner and a nested lambda's
// operator() give nothing.
func TestLambdaArgOwners(t *testing.T) {
	c := defaultCatalog(t)
	st := c.stack
	for raw, want := range map[string][]string{
		"doris::CalcDeleteBitmapToken::submit_func<doris::BaseBetaRowsetWriter::_generate_delete_bitmap(int)::$_0>(doris::BaseBetaRowsetWriter::_generate_delete_bitmap(int)::$_0)": {"doris::BaseBetaRowsetWriter::_generate_delete_bitmap"},
		"doris::Defer<doris::pipeline::TaskScheduler::_do_work(int)::$_0>::~Defer()":                                                                                                {"doris::pipeline::TaskScheduler::_do_work"},
		"starrocks::ThreadPool::submit_func<starrocks::lake::TabletManager::compact(long) const::{lambda()#1}>(...)":                                                                {"starrocks::lake::TabletManager::compact"},
		"doris::Defer<doris::vectorized::Foo<int, 3>::bar(std::vector<int> const&)::'lambda'()>::~Defer()":                                                                          {"doris::vectorized::Foo::bar"},
		"doris::ObjectPool::add<doris::vectorized::VExprContext>(doris::vectorized::VExprContext*)::{lambda(void*)#1}::operator()(void*)":                                           nil,
		"doris::Defer<std::thread::_Invoker<int>::run()::$_0>::~Defer()":                                                                                                            nil,
		"doris::Foo::run<doris::A::f()::{lambda()#1}::operator()() const::{lambda()#2}>()":                                                                                          {"doris::A::f"},
		"doris::Foo::run<int>()":            nil,
		"doris::Foo::run<doris::::::$_0>()": nil, // an empty scope (FuzzProductTypes' crasher)
	} {
		// the frame's name as the view sees it
		name := signature.Default().Normalize(raw)
		got := st.lambdaArgOwners(nil, raw, name)
		assert.Equal(t, want, got, "%s (normalized %s)", raw, name)
	}
}

// TestOwnerBefore: the backward reader of a lambda's owner.
func TestOwnerBefore(t *testing.T) {
	for s, want := range map[string]string{
		"x<doris::A::f(int, std::pair<int, int>)": "doris::A::f",
		"x<doris::A<int>::f() const":              "doris::A::f",
		"x<doris::A::f":                           "doris::A::f",
		"x<(doris::A::f":                          "doris::A::f",
		"unbalanced doris::A::f(int))":            "",
		"doris::A::f(int":                         "int", // no parameter list: the last word (no scope: the caller refuses it)
		"":                                        "",
		"x<{lambda()#1}::operator()() const":      "", // a closure's operator(): no name to read
		"doris::ns::B<std::map<int, std::vector<long>>>::g()": "doris::ns::B::g",
	} {
		assert.Equal(t, want, ownerBefore(s), s)
	}
}
