package signature

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

// keyOf is the default key of a crash of kind/sig with the named frames.
func keyOf(t *testing.T, kind symbolize.Kind, sig string, names ...string) string {
	t.Helper()
	s := Generate(crash(kind, sig, fr(names...)))
	return s.Key
}

func segv(t *testing.T, names ...string) string {
	t.Helper()
	return keyOf(t, symbolize.KindSignal, "SIGSEGV", names...)
}

// Every glibc variant of a string/memory primitive, every glibc spelling
// of a lock entry point and every alias of a stdio function keys by the
// function it implements: one crash, one key on every CPU and glibc.
func TestCrashSiteKeyNamesEveryVariant(t *testing.T) {
	const caller = "doris::Foo::bar()"
	groups := map[string][]string{
		"memchr":                {"__memchr_avx2", "__memchr_evex", "memchr", "__memchr_sse2", "__GI_memchr"},
		"memrchr":               {"__memrchr_avx2", "__memrchr_evex"},
		"strcmp":                {"__strcmp_avx2", "__strcmp_sse42", "__strcmp_evex", "strcmp"},
		"strncmp":               {"__strncmp_avx2", "__strncmp_sse42", "strncmp"},
		"strchr":                {"__strchr_avx2", "__strchr_sse2", "strchr"},
		"strchrnul":             {"__strchrnul_avx2", "__strchrnul_evex"},
		"strstr":                {"__strstr_sse2_unaligned", "__strstr_avx512", "strstr"},
		"strnlen":               {"__strnlen_avx2", "__strnlen_evex"},
		"strcpy":                {"__strcpy_avx2", "__strcpy_chk", "strcpy"},
		"memcmp":                {"__memcmp_avx2_movbe", "__memcmpeq_avx2", "bcmp"},
		"pthread_cond_wait":     {"__pthread_cond_wait", "___pthread_cond_wait", "pthread_cond_wait@@GLIBC_2.3.2", "__pthread_cond_wait_common", "pthread_cond_timedwait@@GLIBC_2.3.2", "__pthread_cond_timedwait64"},
		"pthread_rwlock_rdlock": {"pthread_rwlock_rdlock", "__pthread_rwlock_rdlock", "___pthread_rwlock_rdlock", "__pthread_rwlock_rdlock_full", "pthread_rwlock_rdlock@GLIBC_2.2.5"},
		"pthread_rwlock_wrlock": {"pthread_rwlock_wrlock", "__pthread_rwlock_wrlock_full64"},
		"pthread_mutex_lock":    {"__pthread_mutex_lock_full", "___pthread_mutex_lock"},
		"fwrite":                {"_IO_fwrite", "__GI__IO_fwrite", "fwrite", "fwrite_unlocked"},
		"fclose":                {"_IO_new_fclose", "fclose@@GLIBC_2.2.5", "fclose"},
		"exit":                  {"__GI_exit", "exit", "__run_exit_handlers"},
	}
	for want, leaves := range groups {
		for _, leaf := range leaves {
			s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(leaf, caller)))
			assert.Equal(t, "FAULT | "+want+" | doris::Foo::bar", s.Key, "%s\n%s", leaf, strings.Join(s.Trace, "\n"))
		}
	}
	// exit's internals above the public entry point: one leading frame.
	assert.Equal(t, "FAULT | exit | doris::Daemon::stop",
		segv(t, "__run_exit_handlers", "__GI_exit", "doris::Daemon::stop()"))
}

// Doris 3.x dropped ::vectorized:: from its column and cast helpers: both
// spellings are generic, the caller is keyed.
func TestDorisHelpersBothNamespaces(t *testing.T) {
	for _, helper := range []string{
		"doris::PODArray<char, 4096ul, doris::Allocator<false, false, false> >::operator[](unsigned long)",
		"doris::vectorized::PODArray<char, 4096ul>::operator[](unsigned long)",
		"doris::ColumnVector<int>::insert_from(doris::IColumn const&, unsigned long)",
		"doris::PODArray<char, 4096ul>::resize(unsigned long)",
		"doris::assert_cast<doris::ColumnString const&>(doris::IColumn const&)",
		"doris::vectorized::assert_cast<doris::vectorized::ColumnString const&>(doris::vectorized::IColumn const&)",
	} {
		assert.Equal(t, "ABORT | doris::pipeline::HashJoinProbe::probe",
			keyOf(t, symbolize.KindSignal, "SIGABRT", "abort", helper, "doris::pipeline::HashJoinProbe::probe()"), helper)
	}
}

// Third-party libraries: a compiled library's crash frame leads the key
// and the product caller follows, so crashes with different callers get
// different keys; header-only templates (protobuf accessors, boost,
// rapidjson, abseil, fmt) are skipped for the caller.
func TestThirdPartyFrames(t *testing.T) {
	for _, caller := range []string{"doris::io::HdfsFileReader::close()", "doris::HdfsTableWriter::close()"} {
		want := "FAULT | methodIdFromClass | " + Normalize(caller)
		assert.Equal(t, want, segv(t, "methodIdFromClass", "invokeMethod", "hdfsCloseFile", caller))
		assert.Equal(t, "FAULT | getLastTLSExceptionRootCause | "+Normalize(caller),
			segv(t, "getLastTLSExceptionRootCause", "invokeMethodOnJclass", caller))
	}
	assert.Equal(t, "FAULT | inflate | starrocks::ZlibDecompressor::decompress",
		segv(t, "inflate", "starrocks::ZlibDecompressor::decompress()"))
	assert.Equal(t, "FAULT | LZ4_decompress_safe | doris::Lz4BlockCompression::decompress",
		segv(t, "LZ4_decompress_safe", "doris::Lz4BlockCompression::decompress()"))
	assert.Equal(t, "FAULT | ZSTD_decompressStream | doris::ZstdBlockCompression::decompress",
		segv(t, "ZSTD_decompressStream", "ZSTD_decompressContinue", "doris::ZstdBlockCompression::decompress()"))
	assert.Equal(t, "FAULT | butil::IOBuf::cutn | doris::PInternalServiceImpl::transmit_block",
		segv(t, "butil::IOBuf::cutn(void*, unsigned long)", "doris::PInternalServiceImpl::transmit_block()"))
	for _, lib := range []string{
		"google::protobuf::RepeatedPtrField<doris::PColumnMeta>::Get(int) const",
		"google::protobuf::internal::RepeatedPtrFieldBase::Get<google::protobuf::RepeatedPtrField<doris::PColumnMeta>::TypeHandler>(int) const",
		"boost::detail::shared_count::~shared_count()",
		"rapidjson::GenericValue<rapidjson::UTF8<char> >::GetString() const",
		"absl::lts_20230125::Mutex::Lock()",
		"fmt::v7::detail::vformat_to<char>(fmt::v7::detail::buffer<char>&)",
	} {
		assert.Equal(t, "FAULT | doris::Block::deserialize", segv(t, lib, "doris::Block::deserialize()"), lib)
	}
	// Without any product frame the library frame is keyed after all.
	// abseil's and fmt's version namespaces are dropped, so that key holds
	// across the library versions the products bundle.
	assert.Equal(t, "FAULT | absl::Mutex::Lock", segv(t, "absl::lts_20230125::Mutex::Lock()", "start_thread", "clone"))
	assert.Equal(t, "FAULT | absl::Mutex::Lock", segv(t, "absl::lts_20240722::Mutex::Lock()", "start_thread", "clone"))
	for in, want := range map[string]string{
		"fmt::v7::detail::vformat_to<char>(fmt::v7::detail::buffer<char>&)": "fmt::detail::vformat_to",
		"fmt::v10::format_error::~format_error()":                           "fmt::format_error::~format_error",
		"absl::lts_2020_02_25::Mutex::Lock()":                               "absl::Mutex::Lock",
		"absl::Mutex::Lock()":                                               "absl::Mutex::Lock",
		"fmt::vformat(fmt::string_view)":                                    "fmt::vformat",
		"doris::v7::Foo::bar()":                                             "doris::v7::Foo::bar",
	} {
		assert.Equal(t, want, Normalize(in), in)
	}
}

// Abort and terminate machinery of third-party libraries is skipped, and
// it says the process aborted.
func TestThirdPartyAbortMachinery(t *testing.T) {
	gdbCrash := func(names ...string) *symbolize.Crash { return crash(symbolize.KindUnknown, "", fr(names...)) }
	s := Generate(gdbCrash("base::DCheckAsserter::warn ()", "base::ThreadCollisionWarner::EnterSelf ()", "base::ThreadCollisionWarner::Check::Check ()",
		"starrocks::ScopedAdoptTrace::~ScopedAdoptTrace ()", "starrocks::LakeServiceImpl::publish_version ()"))
	assert.Equal(t, "ABORT | starrocks::ScopedAdoptTrace::~ScopedAdoptTrace", s.Key, strings.Join(s.Trace, "\n"))
	assert.Equal(t, "ABORT | rd_kafka_broker_destroy_final",
		keyOf(t, symbolize.KindSignal, "SIGABRT", "__GI_raise", "__GI_abort", "rd_kafka_crash", "rd_kafka_broker_destroy_final"))
	assert.Equal(t, "ABORT | starrocks::lake::TabletReader::open",
		keyOf(t, symbolize.KindTerminate, "SIGABRT", "abort", "folly::exception_tracer::(anonymous namespace)::terminateHandler()",
			"std::terminate()", "__cxa_throw", "starrocks::internal_statusor::ThrowBadStatusOrAccess(starrocks::Status)", "starrocks::lake::TabletReader::open()"))
	assert.Equal(t, "FAULT | doris::Foo::bar", segv(t, "_Unwind_Backtrace", "doris::Foo::bar()"))
	// gdb names libsupc++'s throw with its namespace, glog without: one key.
	gdb := keyOf(t, symbolize.KindTerminate, "SIGABRT", "abort", "std::terminate()", "__cxxabiv1::__cxa_throw (obj=0x1, tinfo=0x2, dest=0x3)", "starrocks::BinaryColumn::_build_slices()")
	assert.Equal(t, "ABORT | starrocks::BinaryColumn::_build_slices", gdb)
	assert.Equal(t, gdb, keyOf(t, symbolize.KindTerminate, "SIGABRT", "abort", "std::terminate()", "__cxa_throw", "starrocks::BinaryColumn::_build_slices()"))
}

// main is generic: the product function above it is keyed; main only
// when nothing else remains.
func TestMainIsGeneric(t *testing.T) {
	assert.Equal(t, "ABORT | doris::ExecEnv::init",
		keyOf(t, symbolize.KindCheck, "SIGABRT", "google::LogMessageFatal::~LogMessageFatal()", "doris::ExecEnv::init()", "main", "__libc_start_main"))
	assert.Equal(t, "ABORT | main",
		keyOf(t, symbolize.KindCheck, "SIGABRT", "google::LogMessageFatal::~LogMessageFatal()", "main", "__libc_start_main", "_start"))
}

// Paste damage to `::`: a space between the colons and GitHub's :thread:
// emoji are repaired, so the name keys as the one printed by the BE.
func TestNormalizePasteDamage(t *testing.T) {
	for in, want := range map[string]string{
		"starrocks: :workgroup: :WorkGroupScanTaskQueue::take()":                                  "starrocks::workgroup::WorkGroupScanTaskQueue::take",
		"std:\U0001F9F5:join()":                                                                   "std::thread::join",
		"std:\U0001F9F5:_State_impl<std:\U0001F9F5:_Invoker<std::tuple<void (*)()> > >::_M_run()": "std::thread::_State_impl::_M_run",
	} {
		got := Normalize(in)
		assert.Equal(t, want, got, in)
		require.Equal(t, got, Normalize(got), "idempotent")
	}
	assert.Equal(t, segv(t, "starrocks::workgroup::WorkGroupScanTaskQueue::take()"),
		segv(t, "starrocks: :workgroup: :WorkGroupScanTaskQueue::take()"))
}
