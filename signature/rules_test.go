package signature

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ruleCases name, for every default rule, frames it must match (by printed
// name as it appears in real dumps). TestEveryRuleUsed fails when a rule
// has no case here, so dead rules cannot accumulate.
var ruleCases = []struct{ name, module, rule string }{
	{"doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", "", "doris-signal-handler"},
	{"google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", "", "glog-signal-handler"},
	{"google::(anonymous namespace)::FailureSignalHandler()", "", "glog-signal-handler"},
	{"<signal handler called>", "", "gdb-signal-frame"},
	{"PosixSignals::chained_handler(int, siginfo*, void*) [clone .part.0]", "", "jvm-signal-chain"},
	{"os::Linux::chained_handler(int, siginfo*, void*)", "", "jvm-signal-chain"},
	{"JVM_handle_linux_signal", "", "jvm-signal-chain"},
	{"__restore_rt", "", "signal-trampoline"},
	{"google::DumpStackTraceAndExit()", "", "glog-handler"},
	{"google::glog_internal_namespace_::DumpStackTraceToString()", "", "glog-handler"},
	{"google::LogMessage::Fail()", "", "glog-logmessage"},
	{"google::LogMessageFatal::~LogMessageFatal()", "", "glog-logmessage"},
	{"google::LogMessage::SendToLog()", "", "glog-logmessage"},
	{"starrocks::failure_function()", "", "be-failure-function"},
	{"brpc::BaiduStreamingLogHandler", "", "protobuf-fatal"},
	{"google::protobuf::internal::LogMessage::Finish()", "", "protobuf-fatal"},
	{"__sigaction", "", "signal-trampoline"},
	{"_sigaction", "", "signal-trampoline"},
	{"MemcmpInterceptorCommon(void*, int (*)(void const*, void const*, unsigned long), void const*, void const*, unsigned long)", "", "sanitizer-runtime"},
	{"__pthread_once_slow", "", "glog-call-once"},
	{"os::abort(bool, void*, void const*)", "", "jvm-abort"},
	{"VMError::report_and_die(int, char const*, char const*, __va_list_tag*, Thread*, unsigned char*, void*, void*, char const*, int, unsigned long)", "", "jvm-abort"},
	{"__GI_raise", "", "abort-path"},
	{"__pthread_kill_implementation (no_tid=0, signo=6, threadid=139888888888)", "", "abort-path"},
	{"abort", "", "abort-path"},
	{"__assert_fail", "", "assert-path"},
	{"google::Check_EQImpl<int, int>(int const&, int const&, char const*)", "", "be-check-helpers"},
	{"doris::Exception::Exception(int, std::basic_string_view<char> const&)", "", "be-check-helpers"},
	{"_ZN9__gnu_cxx27__verbose_terminate_handlerEv.cold", "", "terminate-path"},
	{"_gnu_cxx::_verbose_terminate_handler()", "", "terminate-path"},
	{"std::terminate()", "", "terminate-path"},
	{"__cxa_throw", "", "terminate-path"},
	{"starrocks::__wrap___cxa_throw(void*, std::type_info*, void (*)(void*))", "", "terminate-path"},
	{"std::__throw_out_of_range_fmt(char const*, ...)", "", "throw-helpers"},
	{"__asan::ReportGenericError(unsigned long, unsigned long, unsigned long, unsigned long, bool, unsigned long, unsigned int, bool)", "", "sanitizer-runtime"},
	{"__interceptor_memcpy", "", "sanitizer-runtime"},
	{"start_thread", "", "thread-start"},
	{"std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)()> > >::_M_run()", "", "thread-start"},
	{"starrocks::ThreadPool::dispatch_thread()", "", "thread-start"},
	{"doris::Thread::supervise_thread(void*)", "", "thread-start"},
	{"starrocks::thread::supervise_thread(void*)", "", "thread-start"},
	{"_mm_loadu_si128 (__P=0x56053147fff2)", "", "compiler-intrinsics"},
	{"_mm256_movemask_epi8", "", "compiler-intrinsics"},
	{"vld1q_u8", "", "compiler-intrinsics"},
	{"pdqsort_detail::partition_right<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double> > >, Compare>(begin=..., end=..., comp=...)", "", "pdqsort"},
	{"partition_right<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double>, std::allocator<starrocks::InlinePermuteItem<double> > > >, main(int, char**)::<lambda(auto:65, auto:66)> >", "", "pdqsort"},
	{"std::_Function_handler<void (), std::_Bind<void (doris::ThreadPool::*(doris::ThreadPool*))()> >::_M_invoke(std::_Any_data const&)", "", "thread-start"},
	{"java.lang.Thread.run(java.base@17.0.9/Thread.java:840)", "", "thread-start"},
	{"jdk.internal.misc.Unsafe.park(java.base@17.0.9/Native Method)", "", "java-wait"},
	{"java.util.concurrent.locks.LockSupport.parkNanos(java.base@17.0.9/LockSupport.java:252)", "", "java-wait"},
	{"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos(java.base@17.0.9/AbstractQueuedSynchronizer.java:1672)", "", "java-wait"},
	{"memcpy", "", "memcpy-family"},
	{"__memmove_avx_unaligned_erms", "", "memcpy-family"},
	{"__memcpy_ssse3_back", "", "memcpy-family"},
	{"unsigned long starrocks::unaligned_load<unsigned long>(void const*)", "", "memcpy-family"},
	{"doris::HashUtil::unaligned_load<unsigned long>(void const*)", "", "memcpy-family"},
	{"starrocks::crc_hash_64(void const*, int, unsigned long)", "", "hash-functions"},
	{"starrocks::SliceHash::operator()(starrocks::Slice const&) const", "", "hash-functions"},
	{"starrocks::SliceWithHash::SliceWithHash(starrocks::Slice const&)", "", "hash-functions"},
	{"doris::HashUtil::murmur_hash3_32(void const*, long, unsigned int)", "", "hash-functions"},
	{"starrocks::vectorized::StdHashWithSeed<int, (starrocks::PhmapSeed)0>::operator()(int) const", "", "hash-functions"},
	{"phmap::priv::raw_hash_set<phmap::priv::FlatHashSetPolicy<starrocks::Slice>, starrocks::SliceHash, starrocks::SliceEqual, std::allocator<starrocks::Slice> >::find_or_prepare_insert(starrocks::Slice const&)", "", "header-libs"},
	{"__memset_sse2", "", "memcpy-family"},
	{"__strlen_avx2", "", "memcpy-family"},
	{"memcmp", "", "memcpy-family"},
	{"je_arena_dalloc_promoted", "", "allocator"},
	{"je_free_default", "", "allocator"},
	{"jemalloc_usable_size", "", "allocator"},
	{"extent_szind_set", "", "allocator"},
	{"__libc_malloc", "", "allocator"},
	{"tc_new", "", "allocator"},
	{"tcmalloc::ThreadCache::ReleaseToCentralCache(tcmalloc::ThreadCache::FreeList*, unsigned int, int)", "", "allocator"},
	{"operator delete(void*, unsigned long)", "", "allocator"},
	{"doris::ThreadMemTrackerMgr::consume(long)", "", "be-memory-hooks"},
	{"doris::Allocator<false, false, false, doris::DefaultMemoryAllocator>::alloc(unsigned long, unsigned long)", "", "be-memory-hooks"},
	{"__GI___pthread_mutex_lock", "", "locks"},
	{"___pthread_mutex_lock", "", "locks"},
	{"__pthread_tpp_change_priority", "", "locks"},
	{"__GI__dl_deallocate_tls", "", "libc"},
	{"__free_stacks", "", "libc"},
	{"__pthread_create_2_1", "", "libc"},
	{"__run_exit_handlers", "", "libc"},
	{"clock_nanosleep@GLIBC_2.2.5", "", "libc"},
	{"JNIEnv_::DeleteGlobalRef(_jobject*)", "", "jvm"},
	{"jni_CallVoidMethodV", "", "jvm"},
	{"JVM_StartThread", "", "jvm"},
	{"os::create_thread(Thread*, os::ThreadType, unsigned long)", "", "jvm"},
	{"AccessInternal::PostRuntimeDispatch<G1BarrierSet::AccessBarrier<1097844ul, G1BarrierSet>, (AccessInternal::BarrierType)2, 1097844ul>::oop_access_barrier(void*)", "", "jvm"},
	{"std::vector<char*, std::allocator<char*> >::operator=(std::vector<char*, std::allocator<char*> > const&)", "", "libstdcxx"},
	{"std::_Rb_tree_increment(std::_Rb_tree_node_base*)", "", "libstdcxx"},
	{"std::_Hashtable<long, std::pair<long const, std::shared_ptr<doris::Tablet> >, std::allocator<std::pair<long const, std::shared_ptr<doris::Tablet> > > >::find(long const&)", "", "libstdcxx"},
	{"__gnu_cxx::__normal_iterator<char*, std::vector<char> >::__normal_iterator(char* const&)", "", "libstdcxx"},
	{"__cxxabiv1::__cxa_throw(void*, std::type_info*, void (*)(void*))", "", "terminate-path"}, // gdb's name of __cxa_throw
	{"__cxxabiv1::__si_class_type_info::__do_dyncast(long, __cxxabiv1::__class_type_info::__sub_kind, __cxxabiv1::__class_type_info const*, void const*, __cxxabiv1::__class_type_info const*, void const*, __cxxabiv1::__class_type_info::__dyncast_result&) const", "", "libstdcxx"},
	{"starrocks::vectorized::FixedLengthColumnBase<unsigned char>& down_cast<starrocks::vectorized::FixedLengthColumnBase<unsigned char>&, starrocks::vectorized::Column&>(starrocks::vectorized::Column&)", "", "cast-helpers"},
	{"doris::vectorized::ColumnArray& assert_cast<doris::vectorized::ColumnArray&, doris::vectorized::IColumn&>(doris::vectorized::IColumn&)", "", "cast-helpers"},
	{"COW<doris::vectorized::IColumn>::intrusive_ptr<doris::vectorized::IColumn const>::operator->() const", "", "cast-helpers"},
	{"starrocks::BinaryColumnBase<unsigned int>::append(starrocks::Column const&, unsigned long, unsigned long)", "", "column-helpers"},
	{"starrocks::vectorized::NullableColumn::append(starrocks::vectorized::Column const&, unsigned long, unsigned long)", "", "column-helpers"},
	{"doris::vectorized::ColumnVector<long>::insert_data(char const*, unsigned long)", "", "column-helpers"},
	{"doris::vectorized::IColumn::insert_many_fix_len_data(char const*, unsigned long)", "", "column-helpers"},
	{"doris::vectorized::PODArrayBase<1ul, 4096ul, doris::Allocator<false, false, false, doris::DefaultMemoryAllocator>, 15ul, 16ul>::size() const", "", "column-helpers"},
	{"NullableColumn::deserialize_and_append_batch", "", "column-helpers"},
	{"doris::PODArray<char, 4096ul, doris::Allocator<false, false, false> >::resize(unsigned long)", "", "column-helpers"},
	{"doris::ColumnVector<int>::insert_from(doris::IColumn const&, unsigned long)", "", "column-helpers"},
	{"doris::assert_cast<doris::ColumnString const&>(doris::IColumn const&)", "", "cast-helpers"},
	{"rd_kafka_crash", "", "third-party-abort"},
	{"folly::exception_tracer::(anonymous namespace)::terminateHandler()", "", "third-party-abort"},
	{"base::DCheckAsserter::warn()", "", "third-party-abort"},
	{"starrocks::internal_statusor::ThrowBadStatusOrAccess(starrocks::Status)", "", "third-party-abort"},
	{"absl::lts_20230125::internal_statusor::ThrowBadStatusOrAccess(absl::lts_20230125::Status)", "", "third-party-abort"},
	{"_Unwind_Backtrace", "", "stack-capture"},
	{"methodIdFromClass", "", "libhdfs"},
	{"hdfsCloseFile", "", "libhdfs"},
	{"getLastTLSExceptionRootCause", "", "libhdfs"},
	{"invokeMethodOnJclass", "", "libhdfs"},
	{"inflate", "", "compression-libs"},
	{"LZ4_decompress_safe", "", "compression-libs"},
	{"ZSTD_decompressStream", "", "compression-libs"},
	{"snappy::RawUncompress(char const*, unsigned long, char*)", "", "compression-libs"},
	{"butil::IOBuf::cutn(void*, unsigned long)", "", "brpc-runtime"},
	{"bthread::TaskGroup::sched_to(bthread::TaskGroup**, bthread::TaskMeta*)", "", "brpc-runtime"},
	{"google::protobuf::RepeatedPtrField<doris::PColumnMeta>::Get(int) const", "", "header-libs"},
	{"google::protobuf::internal::RepeatedPtrFieldBase::Get<google::protobuf::RepeatedPtrField<doris::PColumnMeta>::TypeHandler>(int) const", "", "header-libs"},
	{"boost::detail::shared_count::~shared_count()", "", "header-libs"},
	{"rapidjson::GenericValue<rapidjson::UTF8<char> >::GetString() const", "", "header-libs"},
	{"absl::lts_20230125::Mutex::Lock()", "", "header-libs"},
	{"fmt::v7::detail::vformat_to<char>(fmt::v7::detail::buffer<char>&)", "", "header-libs"},
	{"main", "", "program-main"},
	{"__GI_exit", "", "libc"},
	{"fwrite", "", "libc"},
	{"__GI__IO_fwrite", "", "libc"},
	{"___pthread_cond_wait", "", "locks"},
	{"pthread_cond_wait@@GLIBC_2.3.2", "", "locks"},
	{"__pthread_rwlock_rdlock_full", "", "locks"},
	{"__memchr_evex", "", "memcpy-family"},
	{"__strcmp_sse42", "", "memcpy-family"},
}

func TestDefaultRulesValid(t *testing.T) {
	rules := DefaultRules()
	if len(rules) == 0 {
		t.Fatal("no default rules")
	}
	if err := ValidateRules(rules); err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if len(strings.Fields(r.Why)) < 4 {
			t.Errorf("rule %s: why %q does not say why", r.ID, r.Why)
		}
	}
}

func TestEveryRuleUsed(t *testing.T) {
	g := Default()
	used := map[string]bool{}
	for _, c := range ruleCases {
		n := Normalize(c.name)
		r := g.rules.match(n, c.module)
		if r == nil {
			t.Errorf("%q (normalized %q): no rule, want %s", c.name, n, c.rule)
			continue
		}
		if r.ID != c.rule {
			t.Errorf("%q (normalized %q): rule %s, want %s", c.name, n, r.ID, c.rule)
		}
		used[r.ID] = true
	}
	for _, r := range DefaultRules() {
		if !used[r.ID] {
			t.Errorf("rule %s is matched by no test case", r.ID)
		}
	}
}

func TestAppFramesMatchNoRule(t *testing.T) {
	g := Default()
	for _, n := range []string{
		"doris::SystemMetrics::get_disks_io_time", "starrocks::ParsedPageV1::read", "doris::vectorized::Block::clear_column_data",
		"starrocks::pipeline::PipelineDriver::_mark_operator_finishing",
		"free_list_push", "freeze", "mallocz_helper", "doris::MemTableMemoryLimiter::handle_memtable_flush",
		"java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take",
		// Generic rules must not take product classes that merely start
		// like a column class or a libc name.
		"doris::vectorized::ColumnChunkReader::next_page", "doris::segment_v2::ColumnReader::read_page",
		"starrocks::vectorized::ColumnRef::get_column", "starrocks::ColumnIterator::next_batch", "starrocks::Chunk::append",
		"doris::vectorized::Block::insert", "exit_handler", "os_metrics", "starrocks::os::get_env",
		"starrocks::compression::getLZ4F_DCtx", "doris::ColumnReader::read_page", "doris::ColumnChunkReader::next_page",
		"starrocks::HdfsScanner::open", "doris::io::HdfsFileReader::read_at_impl", "compress_block", "main_loop",
		"doris::vectorized::Lz4BlockCompression::decompress", "starrocks::ScopedAdoptTrace::~ScopedAdoptTrace",
	} {
		if r := g.rules.match(n, ""); r != nil {
			t.Errorf("%s matched rule %s", n, r.ID)
		}
	}
}

func TestValidateRulesRejects(t *testing.T) {
	bad := [][]Rule{
		{{ID: "", Role: RoleIrrelevant, Why: "x y z w", Names: []string{"a"}}},
		{{ID: "a", Role: "other", Why: "x y z w", Names: []string{"a"}}},
		{{ID: "a", Role: RoleIrrelevant, Names: []string{"a"}}},
		{{ID: "a", Role: RoleIrrelevant, Why: "x y z w"}},
		{{ID: "a", Role: RoleIrrelevant, Why: "x y z w", Regexp: "("}},
		{{ID: "a", Role: RoleIrrelevant, Why: "x y z w", Names: []string{"f"}}, {ID: "b", Role: RolePrefix, Why: "x y z w", Names: []string{"f"}}},
		{{ID: "a", Role: RoleIrrelevant, Why: "x y z w", Names: []string{"f"}}, {ID: "a", Role: RolePrefix, Why: "x y z w", Names: []string{"g"}}},
	}
	for i, rs := range bad {
		if err := ValidateRules(rs); !errors.Is(err, ErrRule) {
			t.Errorf("case %d: err = %v, want ErrRule", i, err)
		}
	}
	if _, err := LoadRules(strings.NewReader("rules:\n  - id: x\n    role: prefix\n    why: a b c d\n    bogus: 1\n")); !errors.Is(err, ErrRule) {
		t.Errorf("unknown field: err = %v", err)
	}
	if _, err := NewGenerator(Options{ExtraRules: []Rule{{ID: "abort-path", Role: RolePrefix, Why: "a b c d", Names: []string{"zz"}}}}); !errors.Is(err, ErrRule) {
		t.Errorf("extra rule reusing a default id: err = %v", err)
	}
}

func TestExtraRulesOverride(t *testing.T) {
	extra, err := LoadRules(strings.NewReader(`rules:
  - id: site-wrapper
    role: irrelevant
    why: our in-house crash reporter wraps every handler
    names: ["acme::report_crash"]
  - id: memcpy-is-interesting
    role: irrelevant
    why: this site wants memcpy skipped without an attribute
    names: ["memcpy"]
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(Options{ExtraRules: extra})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.rules.match("acme::report_crash", ""); r == nil || r.ID != "site-wrapper" {
		t.Errorf("extra rule not used: %v", r)
	}
	if r := g.rules.match("memcpy", ""); r == nil || r.ID != "memcpy-is-interesting" {
		t.Errorf("extra rule does not win: %v", r)
	}
	if r := Default().rules.match("memcpy", ""); r == nil || r.ID != "memcpy-family" {
		t.Errorf("default generator changed: %v", r)
	}
}

func TestReplaceRules(t *testing.T) {
	// An empty, non-nil rule set replaces the defaults: nothing is skipped.
	g, err := NewGenerator(Options{Rules: []Rule{}})
	if err != nil {
		t.Fatal(err)
	}
	c := crash("signal", "SIGSEGV", fr("google::LogMessage::Fail()", "memcpy", "doris::A::a()"))
	if s := g.Generate(c); s.Key != "FAULT | google::LogMessage::Fail" {
		t.Errorf("key %s", s.Key)
	}
	only, err := LoadRules(strings.NewReader("rules:\n  - id: glog\n    role: irrelevant\n    why: glog aborts after logging\n    prefixes: [\"google::\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ = NewGenerator(Options{Rules: only})
	if s := g.Generate(c); s.Key != "FAULT | memcpy" {
		t.Errorf("key %s", s.Key)
	}
}

// TestAppNamespaces: the products' namespaces come from the embedded rule
// files, are valid, and decide Signature.AppFrame (a label, never the key).
func TestAppNamespaces(t *testing.T) {
	ns := defaultAppNamespaces()
	require.NotEmpty(t, ns, "rules/default.yaml lists no app_namespaces")
	require.NoError(t, validateAppNamespaces(ns))
	g := Default()
	for _, n := range ns {
		assert.True(t, g.isAppFrame(n+"Foo::bar"), n)
	}
	assert.False(t, g.isAppFrame("std::vector::push_back"))
	assert.False(t, g.isAppFrame("dorisx::Foo::bar"), "a namespace is matched with its ::")
	// The first product frame below the key's glibc frames is the app frame.
	c := &symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGSEGV", Threads: []symbolize.Thread{{Crashed: true, Frames: []symbolize.Frame{
		{Function: "strlen"}, {Function: "doris::Foo::bar()"}, {Function: "start_thread"},
	}}}}
	assert.Equal(t, "doris::Foo::bar", g.Generate(c).AppFrame)
}

func TestAppNamespacesRefusedOutsideDefaults(t *testing.T) {
	_, err := LoadRules(strings.NewReader("app_namespaces: [\"mine::\"]\nrules: []\n"))
	require.ErrorIs(t, err, ErrRule)
	assert.Contains(t, err.Error(), "app_namespaces")
	for _, bad := range [][]string{{"doris"}, {"::"}, {"a::b::"}, {"a <b>::"}, {"doris::", "doris::"}} {
		assert.ErrorIs(t, validateAppNamespaces(bad), ErrRule, "%q", bad)
	}
}

// TestDefaultRulesCopy: the embedded rules are read once and shared by
// every Generator; DefaultRules hands out a copy, so a caller changing it
// (to derive its own rule set) changes neither the next copy nor the
// default keys.
func TestDefaultRulesCopy(t *testing.T) {
	before := DefaultRules()
	require.NotEmpty(t, before)
	i := slices.IndexFunc(before, func(r Rule) bool { return len(r.Names) > 0 })
	require.GreaterOrEqual(t, i, 0)
	name := before[i].Names[0]
	mine := DefaultRules()
	mine[i].Names[0] = "changed::by::caller"
	mine[i].ID = "changed"
	again := DefaultRules()
	assert.Equal(t, name, again[i].Names[0])
	assert.Equal(t, before[i].ID, again[i].ID)
	assert.Equal(t, before, again)
}
