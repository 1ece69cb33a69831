package signature

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crashsig/crashsig/signature/internal/cxxname"
	"github.com/stretchr/testify/require"
)

// normalizeCases are printed names of every format the BE crash outputs
// produce, with the one canonical form each must take.
var normalizeCases = []struct{ in, want string }{
	// The brief's example: return type, template args, params, clones.
	{"starrocks::Status starrocks::ColumnReader<(starrocks::LogicalType)5>::read_page<true>(starrocks::PageHeader const*, ...) [clone .isra.0] [clone .cold]", "starrocks::ColumnReader::read_page"},
	{"starrocks::ParsedPageV1::read()", "starrocks::ParsedPageV1::read"},
	{"starrocks::lake::collect_garbage_files(starrocks::lake::TabletManager*, std::basic_string_view<char, std::char_traits<char> >, std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > > const&)", "starrocks::lake::collect_garbage_files"},
	{"starrocks::RunLightTimerTask(void*)", "starrocks::RunLightTimerTask"},
	// Mangled names go through the demangler's AST.
	{"_ZN9starrocks12ParsedPageV14readEv", "starrocks::ParsedPageV1::read"},
	{"_ZN5doris6signal12_GLOBAL__N_120FailureSignalHandlerEiP9siginfo_tPv", "doris::signal::(anonymous namespace)::FailureSignalHandler"},
	{"_ZN9__gnu_cxx27__verbose_terminate_handlerEv.cold", "__gnu_cxx::__verbose_terminate_handler"},
	{"_Znwm.cold", "operator new"},
	// std::function invoking a lambda is the lambda's frame; other callables keep the invoker.
	{"_ZNSt17_Function_handlerIFvvEZN9starrocks8pipeline12RunTimerTaskEvEUlvE_E9_M_invokeERKSt9_Any_data", "starrocks::pipeline::RunTimerTask::{lambda}"},
	{"_ZNSt17_Function_handlerIFvvEZN9starrocks5spill16RawSpillerWriter5flushIRNS2_14IOTaskExecutorERNS2_23ResourceMemTrackerGuardIJSt8weak_ptrINS1_8pipeline12QueryContextEES8_INS2_7SpillerEEEEEEENS1_6StatusEPNS1_12RuntimeStateEOT_OT0_EUlvE0_E9_M_invokeERKSt9_Any_data", "starrocks::spill::RawSpillerWriter::flush::{lambda}"},
	{"std::_Function_handler<void (), doris::StorageEngine::_cooldown_tasks_producer_callback()::$_1>::_M_invoke(std::_Any_data const&)", "doris::StorageEngine::_cooldown_tasks_producer_callback::{lambda}"},
	{"std::_Function_handler<void (), starrocks::EvHttpServer::start()::{lambda()#1}>::_M_invoke(std::_Any_data const&)", "starrocks::EvHttpServer::start::{lambda}"},
	// gdb names a closure type `<lambda()>`.
	{"std::_Function_handler<void(), starrocks::ScanNode::submit_scan_tasks(int)::<lambda()> >::_M_invoke(const std::_Any_data &)", "starrocks::ScanNode::submit_scan_tasks::{lambda}"},
	{"starrocks::ScanNode::submit_scan_tasks(int)::<lambda()>::operator()(void) const", "starrocks::ScanNode::submit_scan_tasks::{lambda}"},
	{"std::_Function_handler<void (), std::_Bind<void (doris::ThreadPool::*(doris::ThreadPool*))()> >::_M_invoke(std::_Any_data const&)", "std::_Function_handler::_M_invoke"},
	{"std::_Function_handler<void (), void (*)()>::_M_manager(std::_Any_data&, std::_Any_data const&, std::_Manager_operation)", "std::_Function_handler::_M_manager"},
	{"_ZN9starrocks10vectorized12BinaryColumnD2Ev", "starrocks::vectorized::BinaryColumn::~BinaryColumn"},
	{"_ZN5doris10vectorized6ColumnC2Ev", "doris::vectorized::Column::Column"},
	{"_ZNK9starrocks6Status8ok_or_xxIiEEbv", "starrocks::Status::ok_or_xx"},
	// Lambdas: one form, call operator dropped (glog 0.4 mangled, GCC, clang, llvm).
	{"_ZZN9starrocks12EvHttpServer5startEvENKUlvE_clEv", "starrocks::EvHttpServer::start::{lambda}"},
	{"starrocks::EvHttpServer::start()::{lambda()#1}::operator()() const", "starrocks::EvHttpServer::start::{lambda}"},
	{"starrocks::EvHttpServer::start()::$_0::operator()() const", "starrocks::EvHttpServer::start::{lambda}"},
	{"starrocks::EvHttpServer::start()::'lambda'()::operator()() const", "starrocks::EvHttpServer::start::{lambda}"},
	{"starrocks::EvHttpServer::start::{lambda()#1}::operator()", "starrocks::EvHttpServer::start::{lambda}"},
	{"std::call_once<starrocks::DictMappingExpr::rewrite<starrocks::DictOptimizeParser::rewrite_expr(starrocks::ExprContext*, starrocks::Expr*, int)::{lambda()#1}>(starrocks::DictOptimizeParser::rewrite_expr(starrocks::ExprContext*, starrocks::Expr*, int)::{lambda()#1}&&)::{lambda()#1}>(std::once_flag&, starrocks::DictMappingExpr::rewrite<starrocks::DictOptimizeParser::rewrite_expr(starrocks::ExprContext*, starrocks::Expr*, int)::{lambda()#1}>(starrocks::DictOptimizeParser::rewrite_expr(starrocks::ExprContext*, starrocks::Expr*, int)::{lambda()#1}&&)::{lambda()#1}&&)::{lambda()#2}::_FUN()", "std::call_once::{lambda}"},
	// Old glog: templates elided, params ().
	{"doris::HashJoinNode::get_next()", "doris::HashJoinNode::get_next"},
	{"std::_Function_handler<>::_M_invoke()", "std::_Function_handler::_M_invoke"},
	{"std::vector<>::_M_realloc_insert<>()", "std::vector::_M_realloc_insert"},
	// gdb with argument values.
	{"doris::OlapScanNode::transfer_thread (this=0x7f3a4c, state=0x7f3a00)", "doris::OlapScanNode::transfer_thread"},
	{"doris::Foo::inlined_bar (x=<optimized out>, s=\"a(b\")", "doris::Foo::inlined_bar"},
	{"raise ()", "raise"},
	{"operator() (__closure=<optimized out>)", "{lambda}"},
	{"operator()", "{lambda}"},
	{"Functor::operator() (this=0x7f00, x=1)", "Functor::operator()"},
	// Location tails of damaged frame lines, Markdown-damaged C names.
	{"clone at ../sysdeps/unix/sysv/linux", "clone"},
	{"start_thread in /lib64/libpthread.so.0", "start_thread"},
	{"raise () from /lib64/libc.so.6", "raise"},
	{"_GI_raise", "__GI_raise"},
	{"__assert_fail_base.cold.0", "__assert_fail_base"},
	// Truncated mangled names: the scope that can be read.
	{"_ZNSt8__detail9__variant17__gen_vtable_implINS0_12_Multi_arrayIPFNS0_21__deduce_visit_resultIvEEOZN5doris10vectorized12HashJoinNode4pullEPNS5_12Runtim", "std::__detail::__variant::__gen_vtable_impl::…"},
	{"_ZN9starrocks8pipeline14PipelineDriver7process", "starrocks::pipeline::PipelineDriver::process::…"},
	// Operators.
	{"bool std::operator< <char>(std::string const&, std::string const&)", "std::operator<"},
	{"COW<doris::vectorized::IColumn>::intrusive_ptr<doris::vectorized::IColumn const>::operator->() const", "COW::intrusive_ptr::operator->"},
	{"std::vector<int, std::allocator<int> >::operator=(std::vector<int, std::allocator<int> > const&)", "std::vector::operator="},
	{"doris::PODArray<signed char, 4096ul, doris::Allocator<false, false, false, doris::DefaultMemoryAllocator, true>, 16ul, 15ul>::operator[](long)", "doris::PODArray::operator[]"},
	{"std::basic_ostream<char>& std::operator<< <std::char_traits<char> >(std::basic_ostream<char>&, char const*)", "std::operator<<"},
	{"starrocks::Foo::operator bool() const", "starrocks::Foo::operator bool"},
	{"operator new(unsigned long)", "operator new"},
	{"operator delete[](void*)", "operator delete[]"},
	{"std::function<void ()>::operator()() const", "std::function::operator()"},
	// Clones, versions, ABI tags, C names.
	{"memcpy@GLIBC_2.14", "memcpy"},
	{"__memcpy_avx_unaligned_erms@@GLIBC_2.2.5", "__memcpy_avx_unaligned_erms"},
	{"methodIdFromClass.part.0", "methodIdFromClass"},
	{"foo.isra.0.cold", "foo"},
	{"bar.constprop.3", "bar"},
	{"baz.lto_priv.0", "baz"},
	{"qux.llvm.1234567", "qux"},
	{"std::__cxx11::basic_string<char>::_M_create[abi:cxx11](unsigned long&, unsigned long)", "std::__cxx11::basic_string::_M_create"},
	{"doris::Foo::name[abi:cxx11]() const", "doris::Foo::name"},
	{"PosixSignals::chained_handler(int, siginfo*, void*) [clone .part.0]", "PosixSignals::chained_handler"},
	// Markdown damage.
	{"_gnu_cxx::_verbose_terminate_handler()", "__gnu_cxx::__verbose_terminate_handler"},
	{"std::_cxx11::basic_string<char>::_M_mutate()", "std::__cxx11::basic_string::_M_mutate"},
	{"_cxxabiv1::_terminate(void (*)())", "__cxxabiv1::__terminate"},
	// Template arguments eaten as an HTML tag (corpus doris/131).
	{"doris::vectorized::PODArray, 15ul, 16ul>::operator[](long) const", "doris::vectorized::PODArray::operator[]"},
	{"doris::Status doris::vectorized::ProcessHashTableProbe<2>::do_process >(doris::vectorized::SerializedHashTableContext&, doris::vectorized::PODArray, 15ul, 16ul> const*, bool)", "doris::vectorized::ProcessHashTableProbe::do_process"},
	{"std::vector<int>::operator>>(int)", "std::vector::operator>>"},
	{"foo::Bar::operator->() const", "foo::Bar::operator->"},
	// Namespaces, destructors, thunks, HTML entities.
	{"google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", "google::(anonymous namespace)::FailureSignalHandler"},
	{"(anonymous namespace)::InvalidFree(void*)", "(anonymous namespace)::InvalidFree"},
	{"doris::Foo::~Foo()", "doris::Foo::~Foo"},
	{"non-virtual thunk to doris::Foo::bar()", "doris::Foo::bar"},
	{"doris::destroy&lt;doris::ThreadContext&gt;(void*)", "doris::destroy"},
	{"starrocks::ScopedTimer<starrocks::MonotonicStopWatch>::~ScopedTimer()", "starrocks::ScopedTimer::~ScopedTimer"},
	// glog 0.7: cut at 256 bytes, garbage after.
	{"starrocks::pipeline::Foo::bar(std::vector<std::shared_ptr<starrocks::Chunk>, std::allocator<std::shared_ptr<starrocks::Chunk> > > const&, 4u@", "starrocks::pipeline::Foo::bar"},
	{"void starrocks::vectorized::Foo<starrocks::vectorized::Bar, std::alloc", "starrocks::vectorized::Foo::…"},
	// Java.
	{"java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take", "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take"},
	{"java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take(ScheduledThreadPoolExecutor.java:1182)", "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take"},
	{"jdk.internal.misc.Unsafe.park(Native Method)", "jdk.internal.misc.Unsafe.park"},
	{"org.apache.doris.Foo$$Lambda$14/0x0000000800c0b8a8.run", "org.apache.doris.Foo$$Lambda.run"},
	// Sanitizer and plain names, empty.
	{"__interceptor_memcpy", "__interceptor_memcpy"},
	{"  doris::Slice::get_size() const  ", "doris::Slice::get_size"},
	{"", ""},
}

func TestNormalize(t *testing.T) {
	for _, c := range normalizeCases {
		got := Normalize(c.in)
		if got != c.want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if again := Normalize(got); again != got {
			t.Errorf("not idempotent: %q → %q → %q", c.in, got, again)
		}
	}
}

func TestNormalizeFormatsAgree(t *testing.T) {
	// The same function as printed by each format must agree.
	forms := []string{
		"_ZN9starrocks10vectorized14HdfsOrcScanner11do_get_nextEPNS_12RuntimeStateEPSt10shared_ptrINS0_5ChunkEE",                       // mangled
		"starrocks::vectorized::HdfsOrcScanner::do_get_next(starrocks::RuntimeState*, std::shared_ptr<starrocks::vectorized::Chunk>*)", // F1 / glog 0.7
		"starrocks::vectorized::HdfsOrcScanner::do_get_next()",                                                                         // glog 0.4
		"starrocks::vectorized::HdfsOrcScanner::do_get_next (this=0x7f00, runtime_state=0x7f01, chunk=0x7f02)",                         // gdb
		"starrocks::Status starrocks::vectorized::HdfsOrcScanner::do_get_next(starrocks::RuntimeState*, std::shared_ptr<starrocks::vectorized::Chunk>*) [clone .cold]",
	}
	want := "starrocks::vectorized::HdfsOrcScanner::do_get_next"
	for _, f := range forms {
		if got := Normalize(f); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", f, got, want)
		}
	}
}

func TestNormalizeBounded(t *testing.T) {
	long := strings.Repeat("abcdefgh::", 1000) + "f()"
	got := Normalize(long)
	if len(got) > MaxNameLen {
		t.Fatalf("len %d > %d", len(got), MaxNameLen)
	}
	if !strings.HasSuffix(got, "…") {
		t.Errorf("cut name does not end in …: %q", got)
	}
	if Normalize(got) != got {
		t.Errorf("cut name not stable: %q → %q", got, Normalize(got))
	}
}

func FuzzNormalize(f *testing.F) {
	for _, c := range normalizeCases {
		f.Add(c.in)
	}
	f.Add("operator<")
	f.Add("a<b(c>d)>::e")
	f.Add("_ZZ")
	f.Add("{lambda(")
	f.Fuzz(func(t *testing.T, s string) {
		got := Normalize(s)
		if len(got) > MaxNameLen {
			t.Fatalf("Normalize(%q) has %d bytes", s, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", s, got)
		}
		if again := Normalize(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
		j := NormalizeJava(s)
		if len(j) > MaxNameLen || NormalizeJava(j) != j {
			t.Fatalf("NormalizeJava(%q) = %q not bounded/idempotent (%q)", s, j, NormalizeJava(j))
		}
	})
}

// TestNormalizeForms: the forms Normalize emits are those of the tokenizer
// (signature/internal/cxxname), so the public constants must equal its own.
func TestNormalizeForms(t *testing.T) {
	require.Equal(t, cxxname.Lambda, Lambda)
	require.Equal(t, cxxname.Trunc, truncMark)
}
