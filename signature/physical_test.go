package signature

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

// gdb's bt of one crash: #0 has an address and starts an inline group
// whose last frame (#2, no address) is the physical function.
func gdbInlineFrames() []symbolize.Frame {
	return []symbolize.Frame{
		{Index: 0, PC: 0x55d0c0a02a56, Function: "__gnu_cxx::__normal_iterator<int*, std::vector<int> >::__normal_iterator (__i=<optimized out>)"},
		{Index: 1, Function: "std::vector<int, std::allocator<int> >::begin (this=0x0)", Inlined: true},
		{Index: 2, Function: "starrocks::lake::collect_garbage_files (tablet=...)", Inlined: true},
		{Index: 3, PC: 0x55d0c0a03000, Function: "starrocks::lake::vacuum_tablet (t=...)"},
		{Index: 4, PC: 0x55d0c0a04000, Function: "starrocks::lake::vacuum (r=...)"},
	}
}

func TestPhysicalMaskGDB(t *testing.T) {
	assert.Equal(t, []bool{true, true, false, false, false}, physicalMask(gdbInlineFrames()))
	// `set print frame-info location-and-address`: the same address on
	// every frame of the group.
	same := gdbInlineFrames()
	same[1].PC, same[1].Inlined = same[0].PC, false
	same[2].PC, same[2].Inlined = same[0].PC, false
	assert.Equal(t, []bool{true, true, false, false, false}, physicalMask(same))
	// Frame #0 printed without an address (its PC starts a line) and
	// marked inlined like the other address-less frames: it is the
	// physical frame when #1 prints an address.
	first := []symbolize.Frame{{Index: 0, Function: "f", Inlined: true}, {Index: 1, PC: 0x10, Function: "g"}}
	assert.Equal(t, []bool{false, false}, physicalMask(first))
	// No address anywhere (abbreviated paste): no grouping to read.
	bare := gdbInlineFrames()
	for i := range bare {
		bare[i].PC = 0
		bare[i].Inlined = i > 0
	}
	assert.Equal(t, []bool{false, false, false, false, false}, physicalMask(bare))
	// Sanitizers print an inline chain with one address (ASAN) or one
	// module offset (TSAN) on every frame.
	asan := []symbolize.Frame{{PC: 5, Function: "std::unique_ptr::get"}, {PC: 5, Function: "doris::Segment::~Segment"}, {PC: 9, Function: "doris::f"}}
	assert.Equal(t, []bool{true, false, false}, physicalMask(asan))
	tsan := []symbolize.Frame{
		{Function: "doris::Foo::get", Module: "doris_be", Offset: 0x10, HasOffset: true},
		{Function: "doris::Foo::set", Module: "doris_be", Offset: 0x10, HasOffset: true},
		{Function: "doris::g", Module: "doris_be", Offset: 0x20, HasOffset: true}}
	assert.Equal(t, []bool{true, false, false}, physicalMask(tsan))
	// Symbolized frames keep their flag.
	sym := []symbolize.Frame{{PC: 1, Function: "a", Inlined: true, Symbolized: true}, {PC: 1, Function: "b", Symbolized: true}}
	assert.Equal(t, []bool{true, false}, physicalMask(sym))
}

// The same crash from gdb (inline frames shown) and from glog (physical
// names only) gets one key; the inline frame becomes an attribute.
func TestKeyPhysicalAcrossSources(t *testing.T) {
	gdb := crash(symbolize.KindSignal, "SIGSEGV", gdbInlineFrames())
	glog := crash(symbolize.KindSignal, "SIGSEGV", fr(
		"starrocks::lake::collect_garbage_files()", "starrocks::lake::vacuum_tablet()", "starrocks::lake::vacuum()"))
	glog.HasFaultAddress, glog.FaultAddress = true, 0
	a, b := Generate(gdb), Generate(glog)
	require.Equal(t, "FAULT | starrocks::lake::collect_garbage_files", a.Key, strings.Join(a.Trace, "\n"))
	assert.Equal(t, a.Key, b.Key)
	assert.Contains(t, a.Attributes, "inlined=__gnu_cxx::__normal_iterator::__normal_iterator")
	assert.Equal(t, "__gnu_cxx::__normal_iterator::__normal_iterator", a.CrashFrame)
	assert.Contains(t, b.Attributes, "fault=null")
	assert.NotContains(t, a.Attributes, "fault=null")
}

// Position independence comes from the address and the kernel line's
// mapping base, never from the module's name.
func TestUnsymbolizedPIEByAddress(t *testing.T) {
	c := &symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGSEGV", Product: symbolize.ProductStarRocks,
		Message: "segfault at 0 ip 000055d0c0a02a56 sp 00007ffd5e1c8a10 error 4 in starrocks_be[55d0c0a00000+4000]",
		Threads: []symbolize.Thread{{Crashed: true, Frames: []symbolize.Frame{{PC: 0x55d0c0a02a56, Module: "starrocks_be"}}}}}
	s := Generate(c)
	assert.Equal(t, "EMPTY: SIGSEGV", s.Key)
	assert.True(t, hasTrace(s, "position-independent binary (mapped at 0x55d0c0a00000"), strings.Join(s.Trace, "\n"))
	// A fixed-address executable (mapped at 0x400000): the PC is a file address.
	c.Message = "segfault at 0 ip 0000000003a1b2c9 sp 00007f61d2c0bcc0 error 4 in starrocks_be[400000+9c35000]"
	c.Threads[0].Frames[0].PC = 0x3a1b2c9
	assert.Equal(t, "FAULT | starrocks_be+0x3a1b2c9", Generate(c).Key)
	// Whatever the name, a PIE-range address without a base is dropped.
	c.Message = ""
	c.Threads[0].Frames[0] = symbolize.Frame{PC: 0x55d0c0a02a56, Module: "starrocks_be"}
	assert.Equal(t, "EMPTY: SIGSEGV", Generate(c).Key)
}

// A crash frame in the allocator leads the key (crash_site rule); in a
// thread dump there is no crash frame and the rule does not apply.
func TestCrashSiteLeaf(t *testing.T) {
	for _, caller := range []string{"doris::Thread::start_thread", "doris::Block::~Block"} {
		s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("je_arena_dalloc_promoted", "je_free_default", "operator delete(void*)", caller)))
		assert.Equal(t, "FAULT | je_arena_dalloc_promoted | "+caller, s.Key)
		assert.Equal(t, []string{"je_arena_dalloc_promoted", caller}, s.Frames)
		assert.Contains(t, s.Attributes, "suspected-heap-corruption")
	}
	// A memcpy below a product frame is not the crash frame: skipped
	// (seen with two significant frames; the default key stops at the first).
	g2, err := NewGenerator(Options{Frames: 2})
	require.NoError(t, err)
	s := g2.Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("doris::Foo::bar()", "memcpy", "doris::Foo::baz()")))
	assert.Equal(t, "FAULT | doris::Foo::bar | doris::Foo::baz", s.Key)
	assert.True(t, hasTrace(s, "skipped #1 memcpy: prefix rule 'memcpy-family'"), strings.Join(s.Trace, "\n"))
	td := crash(symbolize.KindThreadDump, "", fr("pthread_cond_timedwait", "starrocks::CompactionManager::_schedule()"))
	td.Threads[0].Crashed = false
	assert.Equal(t, "THREADS | starrocks::CompactionManager::_schedule", Generate(td).Key)
}

// One memcpy keys alike whichever variant glibc picked for the CPU, and
// one mutex lock whichever glibc version named it.
func TestCrashSiteKeyNames(t *testing.T) {
	for _, leaf := range []string{"__memmove_avx_unaligned_erms", "__memcpy_ssse3_back", "memcpy", "__memmove_evex_unaligned_erms", "__memcpy_sse2_unaligned"} {
		s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(leaf, "doris::Foo::bar()")))
		assert.Equal(t, "FAULT | memcpy | doris::Foo::bar", s.Key, leaf)
		assert.Equal(t, leaf, s.CrashFrame)
	}
	for _, leaf := range []string{"__GI___pthread_mutex_lock", "___pthread_mutex_lock", "__pthread_mutex_lock", "pthread_mutex_lock"} {
		assert.Equal(t, "FAULT | pthread_mutex_lock | doris::Foo::bar", Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(leaf, "doris::Foo::bar()"))).Key, leaf)
	}
	assert.Equal(t, "FAULT | memset | doris::Foo::bar",
		Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("__memset_sse2", "doris::Foo::bar()"))).Key)
	assert.Equal(t, "FAULT | je_arena_dalloc_promoted | doris::Foo::bar",
		Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("je_arena_dalloc_promoted", "doris::Foo::bar()"))).Key)
}

// gdb's bare lambda body above the std::function invoker that names the
// closure type keys like the symbol table's name of the lambda.
func TestBareLambdaNamedByInvoker(t *testing.T) {
	gdb := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(
		"operator() (__closure=0x7f)",
		"std::_Function_handler<void(), starrocks::Op::send(int)::<lambda()> >::_M_invoke(const std::_Any_data &) (__functor=...)",
		"starrocks::Pool::run (this=0x1)")))
	glog := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(
		"_ZZN9starrocks2Op4sendEiENKUlvE_clEv",
		"_ZNSt17_Function_handlerIFvvEZN9starrocks2Op4sendEiEUlvE_E9_M_invokeERKSt9_Any_data",
		"starrocks::Pool::run()")))
	assert.Equal(t, "FAULT | starrocks::Op::send::{lambda}", gdb.Key, strings.Join(gdb.Trace, "\n"))
	assert.Equal(t, gdb.Key, glog.Key)
}

// A bare gdb lambda run in place by the function that defines it (the
// frame below, same file, a few lines further) takes that owner; one run
// from another file (a thread pool) stays bare.
func TestBareLambdaOwnerBelow(t *testing.T) {
	frames := func(file2 string, line2 int) []symbolize.Frame {
		return []symbolize.Frame{
			{Index: 0, Function: "operator() (__closure=<optimized out>)", File: "be/src/exec/op.cpp", Line: 113},
			{Index: 1, PC: 0x10, Function: "starrocks::ThreadPool::dispatch_thread (this=0x1)", File: "be/src/util/threadpool.cpp", Line: 90},
			{Index: 2, PC: 0x20, Function: "starrocks::Op::send (this=0x1, c=0x2)", File: file2, Line: line2},
			{Index: 3, PC: 0x30, Function: "worker ()", File: "be/src/main.cpp", Line: 131},
		}
	}
	s := Generate(crash(symbolize.KindSignal, "SIGSEGV", frames("be/src/exec/op.cpp", 116)))
	assert.Equal(t, "FAULT | starrocks::Op::send::{lambda}", s.Key, strings.Join(s.Trace, "\n"))
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", frames("be/src/exec/other.cpp", 116)))
	assert.Equal(t, "FAULT | {lambda}", s.Key)
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", frames("be/src/exec/op.cpp", 400)))
	assert.Equal(t, "FAULT | {lambda}", s.Key)
	// With more significant frames the owner is kept as well.
	g3, err := NewGenerator(Options{Frames: 3})
	require.NoError(t, err)
	s = g3.Generate(crash(symbolize.KindSignal, "SIGSEGV", frames("be/src/exec/op.cpp", 116)))
	assert.Equal(t, "FAULT | starrocks::Op::send::{lambda} | starrocks::Op::send | worker", s.Key, strings.Join(s.Trace, "\n"))
}

func TestKeyNamesNeedCrashSite(t *testing.T) {
	err := ValidateRules([]Rule{{ID: "x", Role: RolePrefix, Why: "w", Names: []string{"f"}, KeyNames: []KeyName{{Regexp: "f", Name: "g"}}}})
	require.ErrorIs(t, err, ErrRule)
	err = ValidateRules([]Rule{{ID: "x", Role: RolePrefix, Why: "w", Names: []string{"f"}, CrashSite: true, KeyNames: []KeyName{{Regexp: "(", Name: "g"}}}})
	require.ErrorIs(t, err, ErrRule)
}

func TestCrashSiteOnlyOnPrefixRules(t *testing.T) {
	err := ValidateRules([]Rule{{ID: "x", Role: RoleIrrelevant, Why: "w", Names: []string{"f"}, CrashSite: true}})
	require.ErrorIs(t, err, ErrRule)
}

// A frame printed as a bare shared object's name (`3# libc.so.6` in an
// abbreviated boost dump) is an unnamed frame of that object: never a key
// frame, and after a signal handler it is the trampoline.
func TestBareSharedObjectFrame(t *testing.T) {
	for _, name := range []string{"libc.so.6", "/lib64/libpthread.so.0", "libjvm.so", "ld-linux-x86-64.so.2"} {
		assert.True(t, isBareSharedObject(name), name)
	}
	for _, name := range []string{"", "doris::Foo::bar", "libfoo.so.6 (deleted) x", "setTLSExceptionStrings", "my.so.thing::run()", "doris_be"} {
		assert.False(t, isBareSharedObject(name), name)
	}
	s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("doris::signal::(anonymous namespace)::FailureSignalHandler(...)", "libc.so.6", "bvar::detail::SamplerCollector::run()", "libc.so.6")))
	assert.Equal(t, "FAULT | bvar::detail::SamplerCollector::run", s.Key, strings.Join(s.Trace, "\n"))
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("libc.so.6", "doris::Foo::bar()")))
	assert.Equal(t, "FAULT | doris::Foo::bar", s.Key, strings.Join(s.Trace, "\n"))
}
