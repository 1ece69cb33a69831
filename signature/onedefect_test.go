package signature

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

// One defect, one key across prints (issue 14, crashsig-sig/9): the
// normalisations that let two prints of one defect reach one key. Each
// test parses printed texts of the formats that differ (frame shapes taken
// from the corpus and the catalog's logs) and asserts the keys.

// parseText parses one printed crash text and returns its first incident.
func parseText(t *testing.T, text string) *symbolize.Crash {
	t.Helper()
	cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "test"})
	require.NoError(t, err)
	c := primary(cs)
	require.NotNil(t, c, "no incident in %q", text)
	return c
}

// TestMovedNamespacesKeyAlike: StarRocks 2.x printed
// starrocks::vectorized::Chunk, 3.x prints starrocks::Chunk; Doris 2.x
// doris::vectorized::Block, 3.x/4.x doris::Block. One function keys alike;
// the crash frame and the app frame keep the printed scope (the catalog's
// globs and the labels read those).
func TestMovedNamespacesKeyAlike(t *testing.T) {
	old := parseText(t, `*** Aborted at 1677576503 (unix time) try "date -d @1677576503" if you are using GNU date ***
PC: @          0x4c2a1b0 starrocks::vectorized::Chunk::append()
*** SIGSEGV (@0x0) received by PID 8374 (TID 0x7fe33b9fe700) from PID 0; stack trace: ***
    @          0x77bb532 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7fe529226630 (unknown)
    @          0x4c2a1b0 starrocks::vectorized::Chunk::append()
    @          0x4d01e2f starrocks::vectorized::ChunkAccumulator::push()
    @          0x5a3b1c4 starrocks::pipeline::PipelineDriver::process()
    @          0x7941601 start_thread
`)
	newer := parseText(t, `Program terminated with signal SIGSEGV, Segmentation fault.
(gdb) bt
#0  0x00000000062a41b0 in starrocks::Chunk::append (this=0x7f1c2c0a1e00, src=..., offset=0, count=4096) at /root/starrocks/be/src/column/chunk.cpp:229
#1  0x00000000062b0e2f in starrocks::ChunkAccumulator::push (this=0x7f1c2c0a1f00, chunk=...) at /root/starrocks/be/src/column/chunk_helper.cpp:512
`)
	so, sn := Generate(old), Generate(newer)
	assert.Equal(t, "FAULT | starrocks::Chunk::append", so.Key, strings.Join(so.Trace, "\n"))
	assert.Equal(t, so.Key, sn.Key)
	assert.Equal(t, "starrocks::vectorized::Chunk::append", so.CrashFrame, "the crash frame keeps the printed scope")
	assert.Equal(t, "starrocks::vectorized::Chunk::append", so.AppFrame)
	assert.True(t, hasTrace(so, "scope starrocks::vectorized:: renamed starrocks::"), strings.Join(so.Trace, "\n"))

	// Doris: a leading allocator frame stays, the caller is renamed.
	assert.Equal(t, "FAULT | je_arena_dalloc_promoted | doris::Block::~Block",
		segv(t, "je_arena_dalloc_promoted", "je_free_default", "doris::vectorized::Block::~Block()"))
	assert.Equal(t, "FAULT | je_arena_dalloc_promoted | doris::Block::~Block",
		segv(t, "je_arena_dalloc_promoted", "je_free_default", "doris::Block::~Block()"))
	// Only the listed scope at the start moves: other namespaces and a
	// `vectorized` deeper in the name stay.
	assert.Equal(t, "FAULT | doris::segment_v2::vectorized::Foo::bar", segv(t, "doris::segment_v2::vectorized::Foo::bar()"))
	assert.Equal(t, "FAULT | vectorized::Foo::bar", segv(t, "vectorized::Foo::bar()"))

	// Doris 2.0's table sink (doris::stream_load::VNodeChannel, vtablet_sink.cpp)
	// is 2.1's doris::vectorized::VNodeChannel (vtablet_writer.cpp): both
	// key as doris::VNodeChannel. StarRocks still has starrocks::stream_load::.
	assert.Equal(t, "FAULT | doris::VNodeChannel::cancel", segv(t, "doris::stream_load::VNodeChannel::cancel(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"))
	assert.Equal(t, "FAULT | doris::VNodeChannel::cancel", segv(t, "doris::vectorized::VNodeChannel::cancel(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"))
	assert.Equal(t, "FAULT | starrocks::stream_load::OlapTableSink::close", segv(t, "starrocks::stream_load::OlapTableSink::close(starrocks::RuntimeState*, starrocks::Status)"))
}

// TestMovedNamespacesValidated: the renames are data of the embedded rule
// file only, and malformed entries are refused.
func TestMovedNamespacesValidated(t *testing.T) {
	ms := defaultMovedNamespaces()
	require.NotEmpty(t, ms)
	require.NoError(t, validateMovedNamespaces(ms))
	_, err := LoadRules(strings.NewReader("moved_namespaces: [{from: \"a::b::\", to: \"a::\", why: \"renamed in 2.0\"}]\nrules: []\n"))
	require.ErrorIs(t, err, ErrRule)
	assert.Contains(t, err.Error(), "moved_namespaces")
	for _, bad := range [][]MovedNamespace{
		{{From: "a::b", To: "a::", Why: "x"}},
		{{From: "a::b::", To: "a::b::", Why: "x"}},
		{{From: "a::b::", To: "a::", Why: " "}},
		{{From: "a<b>::", To: "a::", Why: "x"}},
		{{From: "a::b::", To: "a::", Why: "x"}, {From: "a::b::", To: "c::", Why: "y"}},
	} {
		assert.ErrorIs(t, validateMovedNamespaces(bad), ErrRule, "%+v", bad)
	}
}

// TestAddressBeforeNamedFrame: glog could not name the crash frame of one
// build (`0x6434bf0 (unknown)` in starrocks_be), a gdb bt of another build
// names the frames from the caller down. The named caller keys both; the
// address stays an attribute, and keys when nothing named follows.
func TestAddressBeforeNamedFrame(t *testing.T) {
	glog := parseText(t, `*** Aborted at 1677576503 (unix time) try "date -d @1677576503" if you are using GNU date ***
PC: @          0x6434bf0 (unknown)
*** SIGSEGV (@0x0) received by PID 8374 (TID 0x7fe33b9fe700) from PID 0; stack trace: ***
    @          0x77bb532 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7fe529226630 (unknown)
    @          0x6434bf0 (unknown)
    @          0x669ce91 starrocks::LakeTabletsChannel::add_chunk()
    @          0x65f55ef starrocks::LoadChannel::_add_chunk()
    @          0x793cecf bthread::TaskGroup::task_runner()
`)
	gdb := parseText(t, `Program terminated with signal SIGSEGV, Segmentation fault.
(gdb) bt
#0  0x0000000005a00000 in starrocks::LakeTabletsChannel::add_chunk ()
#1  0x0000000005a01000 in starrocks::LoadChannel::_add_chunk ()
`)
	sg, sd := Generate(glog), Generate(gdb)
	assert.Equal(t, "FAULT | starrocks::LakeTabletsChannel::add_chunk", sg.Key, strings.Join(sg.Trace, "\n"))
	assert.Equal(t, sg.Key, sd.Key)
	assert.Contains(t, sg.Attributes, "unsymbolized-crash-frame=starrocks_be+0x6434bf0")
	assert.Equal(t, "starrocks::LakeTabletsChannel::add_chunk", sg.CrashFrame)

	// Two unnamed frames: the crash frame's address keys (only the frame
	// right below an address may take its place).
	only := parseText(t, `*** Aborted at 1677576503 (unix time) try "date -d @1677576503" if you are using GNU date ***
*** SIGSEGV (@0x0) received by PID 8374 (TID 0x7fe33b9fe700) from PID 0; stack trace: ***
    @          0x77bb532 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7fe529226630 (unknown)
    @          0x6434bf0 (unknown)
    @          0x669ce91 (unknown)
    @          0x65f55ef starrocks::LoadChannel::_add_chunk()
`)
	so := Generate(only)
	assert.Equal(t, "FAULT | starrocks_be+0x6434bf0", so.Key, strings.Join(so.Trace, "\n"))
	// An address above a generic frame keys too (no significant frame
	// below it to take its place).
	frames := fr("", "std::vector<int, std::allocator<int> >::push_back(int const&)", "doris::Foo::bar()")
	frames[0].PC = 0x5a3b1c4
	s := Generate(crash(symbolize.KindSignal, "SIGSEGV", frames))
	assert.Equal(t, "FAULT | doris_be+0x5a3b1c4", s.Key, strings.Join(s.Trace, "\n"))
}

// TestPdqsortBothSpellings: GCC's sanitizer symbolizer prints pdqsort's
// functions by their DWARF name (`partition_right<…>`), gdb with the
// pdqsort_detail:: scope; the reporter's test main() is not the defect.
func TestPdqsortBothSpellings(t *testing.T) {
	asan := parseText(t, `==2821096==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x7ff91cd01800 at pc 0x00000deee5d2 bp 0x7fff20fb3130 sp 0x7fff20fb3120
READ of size 16 at 0x7ff91cd01800 thread T0
    #0 0xdeee5d1 in partition_right<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double>, std::allocator<starrocks::InlinePermuteItem<double> > > >, main(int, char**)::<lambda(auto:65, auto:66)> > /root/starrocks/be/src/util/orlp/pdqsort.h:342
    #1 0xdeec1f0 in pdqsort_loop<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double>, std::allocator<starrocks::InlinePermuteItem<double> > > >, main(int, char**)::<lambda(auto:65, auto:66)>, false> /root/starrocks/be/src/util/orlp/pdqsort.h:468
    #2 0xdeeb678 in pdqsort<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double>, std::allocator<starrocks::InlinePermuteItem<double> > > >, main(int, char**)::<lambda(auto:65, auto:66)> > /root/starrocks/be/src/util/orlp/pdqsort.h:573
    #3 0xdeea03f in main /root/starrocks/be/src/service/starrocks_main.cpp:225
    #4 0x7ff921489d8f in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58
`)
	gdb := parseText(t, `Program terminated with signal SIGSEGV, Segmentation fault.
(gdb) bt
#0  0x000000005a000000 in pdqsort_detail::partition_right<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double> > >, Compare> (begin=..., end=..., comp=...) at /root/starrocks/be/src/util/orlp/pdqsort.h:342
#1  0x000000005a001000 in pdqsort_detail::pdqsort_loop<__gnu_cxx::__normal_iterator<starrocks::InlinePermuteItem<double>*, std::vector<starrocks::InlinePermuteItem<double> > >, Compare, false> (begin=..., end=..., comp=..., bad_allowed=..., leftmost=...) at /root/starrocks/be/src/util/orlp/pdqsort.h:468
`)
	sa, sg := Generate(asan), Generate(gdb)
	assert.Equal(t, "FAULT | pdqsort_detail::partition_right", sa.Key, strings.Join(sa.Trace, "\n"))
	assert.Equal(t, sa.Key, sg.Key, strings.Join(sg.Trace, "\n"))
	// Called from a product sort, the caller keys (pdqsort is inlined
	// in one build and not in another).
	assert.Equal(t, "FAULT | starrocks::sort_and_tie_column",
		segv(t, "pdqsort_detail::partition_right<It, Cmp>(It, It, Cmp)", "pdqsort_detail::pdqsort_loop<It, Cmp, false>(It, It, Cmp, int, bool)",
			"pdqsort<It, Cmp>(It, It, Cmp)", "starrocks::sort_and_tie_column(std::atomic<bool> const&, starrocks::ColumnPtr const&)"))
	assert.Equal(t, "FAULT | starrocks::sort_and_tie_column",
		segv(t, "pdqsort_loop<It, Cmp, false>", "starrocks::sort_and_tie_column()"))
}

// TestMainLastResort: main keys only a stack with nothing else to key.
func TestMainLastResort(t *testing.T) {
	assert.Equal(t, "FAULT | main", segv(t, "main", "__libc_start_main", "_start"))
	assert.Equal(t, "FAULT | rapidjson::GenericValue::Accept",
		segv(t, "rapidjson::GenericValue<rapidjson::UTF8<char> >::Accept()", "main", "__libc_start_main"))
	assert.Equal(t, "FAULT | starrocks::Daemon::init", segv(t, "starrocks::Daemon::init()", "main"))
}

// TestLowercaseSuperviseThread: a paste that lower-cased the class of the
// products' thread trampoline is still the trampoline, never a key frame.
func TestLowercaseSuperviseThread(t *testing.T) {
	for _, tramp := range []string{"starrocks::thread::supervise_thread(void*)", "starrocks::Thread::supervise_thread(void*)", "doris::thread::supervise_thread(void*)"} {
		s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("std::vector<int, std::allocator<int> >::operator[](unsigned long)", tramp, "start_thread")))
		assert.Equal(t, "FAULT | std::vector::operator[]", s.Key, "%s\n%s", tramp, strings.Join(s.Trace, "\n"))
		assert.NotContains(t, s.Key, "supervise_thread")
	}
	assert.Equal(t, "FAULT | starrocks::StorageEngine::_compaction_thread",
		segv(t, "starrocks::StorageEngine::_compaction_thread()", "starrocks::thread::supervise_thread(void*)", "start_thread"))
}

// TestSanitizerAbortIsAbort: a CHECK in an ASAN build is reported as
// `AddressSanitizer: ABRT on unknown address`; in a release build glog
// prints SIGABRT. Both are of the abort class.
func TestSanitizerAbortIsAbort(t *testing.T) {
	asan := parseText(t, `==123==ERROR: AddressSanitizer: ABRT on unknown address 0x03e8000071c9 (pc 0x7f0e7a5d0e87 bp 0x7ffc4ab1e0a0 sp 0x7ffc4ab1e0a0 T0)
    #0 0x7f0e7a5d0e87 in raise (/lib/x86_64-linux-gnu/libc.so.6+0x3ee87)
    #1 0x7f0e7a5d27f0 in abort (/lib/x86_64-linux-gnu/libc.so.6+0x407f0)
    #2 0x55d1c2a0b8ad in google::LogMessage::Fail() (/opt/starrocks/be/lib/starrocks_be+0x9a8b8ad)
    #3 0x55d1bf0c1e22 in starrocks::Chunk::check_or_die() /root/starrocks/be/src/column/chunk.cpp:371
`)
	glog := parseText(t, `F1101 11:44:40.029618 17135 chunk.cpp:371] Check failed: num_rows() == c->size() (160 vs. 140)
*** Check failure stack trace: ***
    @          0x8a0b8ad  google::LogMessage::Fail()
    @          0x8a0dde9  google::LogMessage::SendToLog()
    @          0x8a0b416  google::LogMessage::Flush()
    @          0x8a0e459  google::LogMessageFatal::~LogMessageFatal()
    @          0x50c1e22  starrocks::Chunk::check_or_die()
    @          0x50c2e10  starrocks::Chunk::append()
`)
	sa, sg := Generate(asan), Generate(glog)
	assert.Equal(t, "ABORT | starrocks::Chunk::check_or_die", sa.Key, strings.Join(sa.Trace, "\n"))
	assert.Equal(t, sa.Key, sg.Key, strings.Join(sg.Trace, "\n"))
	assert.Equal(t, "ASAN(ABRT on unknown address)", sa.Kind, "the kind keeps what the report printed")
}

// TestCutNameKeyedByScope: glog 0.7 cuts a whole signature at 256 bytes,
// here inside the parameters of a function template; the whole print of
// the same function (another build, another dump) keys alike.
func TestCutNameKeyedByScope(t *testing.T) {
	// The real log is cut after its PC line; the hand-written variant is
	// the same SIGFPE as a whole glog dump.
	sc := Generate(primary(parseTestdata(t, "defects/starrocks/pmod-type-min-divided-by-minus-one-sigfpe.txt")))
	sw := Generate(primary(parseTestdata(t, "defects/starrocks/variants/pmod-type-min-divided-by-minus-one-sigfpe.variant.txt")))
	assert.Equal(t, "FAULT | starrocks::UnpackConstColumnBinaryFunction::evaluate", sw.Key)
	assert.Equal(t, sw.Key, sc.Key, strings.Join(sc.Trace, "\n"))
	assert.True(t, hasTrace(sc, "the name was cut"), strings.Join(sc.Trace, "\n"))
	assert.True(t, strings.HasSuffix(sc.CrashFrame, "::…"), "the crash frame keeps the cut: %s", sc.CrashFrame)
	// A mangled name cut inside its template arguments keys by the
	// nested-name prefix that can be read.
	m := "_ZN9starrocks8pipeline19NLJoinProbeOperator18_permute_probe_rowINS_12BinaryColumnBaseIjEEEEvRKSt6vectorIPNS_6ColumnESaIS7_EEPKNS_5Ch"
	s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(m, "starrocks::pipeline::NLJoinProbeOperator::push_chunk()")))
	assert.Equal(t, "FAULT | starrocks::pipeline::NLJoinProbeOperator::_permute_probe_row", s.Key, strings.Join(s.Trace, "\n"))
	assert.True(t, hasTrace(s, "the name was cut"), strings.Join(s.Trace, "\n"))
}

// TestVisitInvokerNamesItsLambda: std::visit's dispatcher runs the visitor
// in place; a lambda visitor names the frame in the demangled, the mangled
// and the cut mangled print alike (corpus doris/128 and 141 are cut
// mangled names); other visitors leave the libstdc++ frame.
func TestVisitInvokerNamesItsLambda(t *testing.T) {
	want := "doris::vectorized::HashJoinNode::pull::{lambda}"
	for _, in := range []string{
		// cut inside the template arguments (corpus doris/128)
		"_ZNSt8__detail9__variant17__gen_vtable_implINS0_12_Multi_arrayIPFNS0_21__deduce_visit_resultIvEEOZN5doris10vectorized12HashJoinNode4pullEPNS5_12RuntimeStateEPNS6_5BlockEPbE3$_0RSt7variantIJSt9monostateNS6_26SerializedHashTableContextINS6_10RowRefListEEENS6_27PrimaryTypeHash",
		// demangled (c++filt of a whole name)
		"std::__detail::__variant::__gen_vtable_impl<std::__detail::__variant::_Multi_array<std::__detail::__variant::__deduce_visit_result<void> (*)(doris::vectorized::HashJoinNode::pull(doris::RuntimeState*, doris::vectorized::Block*, bool*)::$_0&&, std::variant<std::monostate, doris::vectorized::SerializedHashTableContext<doris::vectorized::RowRefList> >&)>, std::integer_sequence<unsigned long, 1ul> >::__visit_invoke(doris::vectorized::HashJoinNode::pull(doris::RuntimeState*, doris::vectorized::Block*, bool*)::$_0&&, std::variant<std::monostate, doris::vectorized::SerializedHashTableContext<doris::vectorized::RowRefList> >&)",
		// GCC's lambda spelling
		"std::__detail::__variant::__gen_vtable_impl<std::__detail::__variant::_Multi_array<std::__detail::__variant::__deduce_visit_result<void> (*)(doris::vectorized::HashJoinNode::pull(doris::RuntimeState*, doris::vectorized::Block*, bool*)::{lambda(auto:1&)#1}&&, std::variant<std::monostate>&)>, std::integer_sequence<unsigned long, 1ul> >::__visit_invoke",
	} {
		assert.Equal(t, want, Normalize(in), in)
	}
	// The aggregation's visitor (corpus doris/141, cut).
	assert.Equal(t, "doris::vectorized::AggregationNode::_emplace_into_hash_table::{lambda}",
		Normalize("_ZNSt8__detail9__variant17__gen_vtable_implINS0_12_Multi_arrayIPFNS0_21__deduce_visit_resultIvEEOZN5doris10vectorized15AggregationNode24_emplace_into_hash_tableEPPcRSt6vectorIPKNS6_7IColumnESaISD_EEmE3$_0RSt7variantIJNS6_27AggregationMethodSerializedI9PHHashMapI9StringRefS8_11DefaultHashISM_vELb0EEEENS6_26AggregationMethodOneNumberIh12FixedHashMapIhS8_28FixedHashMapImplicitZeroCellIhS8_16HashTable"))
	// A named visitor class, or a cut before the visitor: the dispatcher.
	assert.Equal(t, "std::__detail::__variant::__gen_vtable_impl::__visit_invoke",
		Normalize("std::__detail::__variant::__gen_vtable_impl<std::__detail::__variant::_Multi_array<std::__detail::__variant::__deduce_visit_result<void> (*)(doris::Visitor&&, std::variant<int, long>&)>, std::integer_sequence<unsigned long, 1ul> >::__visit_invoke(doris::Visitor&&, std::variant<int, long>&)"))
	assert.Equal(t, "std::__detail::__variant::__gen_vtable_impl::…", Normalize("_ZNSt8__detail9__variant17__gen_vtable_implINS0_12_Multi_arrayIPFNS0_21__deduce"))
	// In a key the lambda is the significant frame (the scope renamed).
	s := Generate(primary(parseTestdata(t, "corpus/doris/128-check-fatal-uninited-hash-table-probe-mangled-variant.txt")))
	assert.Equal(t, "ABORT | doris::HashJoinNode::pull::{lambda}", s.Key, strings.Join(s.Trace, "\n"))
}

// TestIntrinsicsAreTheirCallersCode: gdb shows an SSE intrinsic as the
// innermost inline frame of memcpy; a dump that prints it as a frame of
// its own keys like gdb's bt (corpus-derived shapes of the Doris concat
// memcpy crash).
func TestIntrinsicsAreTheirCallersCode(t *testing.T) {
	want := "FAULT | memcpy | doris::FunctionStringConcat::execute_impl"
	assert.Equal(t, want, segv(t, "_mm_loadu_si128", "inline_memcpy", "memcpy", "memcpy", "doris::vectorized::FunctionStringConcat::execute_impl(doris::FunctionContext*, doris::vectorized::Block&)"))
	s := Generate(primary(parseTestdata(t, "defects/doris/concat-ifnull-split-part-memcpy-gdb.txt")))
	assert.Equal(t, want, s.Key, strings.Join(s.Trace, "\n"))
	// An intrinsic in product code: the product function keys.
	assert.Equal(t, "FAULT | doris::SimdUtil::count_zero_num", segv(t, "_mm256_movemask_epi8", "doris::SimdUtil::count_zero_num(signed char const*, unsigned long)"))
}
