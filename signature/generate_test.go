package signature

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

func fr(names ...string) []symbolize.Frame {
	out := make([]symbolize.Frame, len(names))
	for i, n := range names {
		out[i] = symbolize.Frame{Index: i, Function: n}
	}
	return out
}

func crash(kind symbolize.Kind, sig string, frames []symbolize.Frame) *symbolize.Crash {
	return &symbolize.Crash{Kind: kind, Signal: sig, Product: symbolize.ProductDoris,
		Threads: []symbolize.Thread{{ID: 7, Crashed: true, Frames: frames}}}
}

func hasTrace(s Signature, sub string) bool {
	for _, l := range s.Trace {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// A Doris F1 dump with the JVM chained handler and an unsymbolized
// trampoline: the key starts at the faulting frame.
func TestGenerateDorisJVMChain(t *testing.T) {
	frames := fr(
		"doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)",
		"PosixSignals::chained_handler(int, siginfo*, void*) [clone .part.0]",
		"JVM_handle_linux_signal",
		"0x00007FD7DC196520",
		"doris::vectorized::Block::clear_column_data(int) noexcept",
		"doris::vectorized::OrcReader::get_next_block_impl(doris::vectorized::Block*, unsigned long*, bool*)",
		"doris::vectorized::OrcReader::get_next_block(doris::vectorized::Block*, unsigned long*, bool*)",
		"doris::vectorized::VFileScanner::_get_block_impl(doris::RuntimeState*, doris::vectorized::Block*, bool*)",
		"start_thread",
	)
	frames[3].Module = "/lib/x86_64-linux-gnu/libc.so.6"
	frames[3].Function = ""
	frames[3].PC = 0x7fd7dc196520
	c := crash(symbolize.KindSignal, "SIGSEGV", frames)
	c.HasFaultAddress, c.FaultAddress = true, 0x10
	s := Generate(c)
	// The fault address 0x10 is an attribute, not part of the key: gdb's
	// bt and older Doris dumps do not print it.
	// The key is the class of the kind (FAULT) and the first significant frame.
	want := "FAULT | doris::Block::clear_column_data"
	require.Equal(t, want, s.Key, strings.Join(s.Trace, "\n"))
	assert.Contains(t, s.Attributes, "fault=null")
	if s.Algorithm != Algorithm || len(s.ID) != 16 || s.ID != keyID(s.Key) {
		t.Errorf("algorithm %q id %q", s.Algorithm, s.ID)
	}
	if s.CrashFrame != "doris::vectorized::Block::clear_column_data" {
		t.Errorf("crash frame %q", s.CrashFrame)
	}
	for _, w := range []string{"sentinel 'jvm-signal-chain'", "signal trampoline", "kept    #4 doris::vectorized::Block::clear_column_data: significant frame 1 of 1", "stopped after 1 significant frame(s); 4 frames below not examined", "key kind FAULT (the class of SIGSEGV"} {
		if !hasTrace(s, w) {
			t.Errorf("trace lacks %q:\n%s", w, strings.Join(s.Trace, "\n"))
		}
	}
}

// StarRocks glog 0.4: `@ 0x… (unknown)` frames of the non-PIE executable
// are kept as module+offset; the memcpy crash frame leads the key (the key
// names where it crashed) and adds an attribute.
func TestGenerateStarRocksUnknownAndMemcpy(t *testing.T) {
	frames := fr(
		"google::(anonymous namespace)::FailureSignalHandler()",
		"(unknown)",
		"__memcpy_ssse3_back",
		"(unknown)",
		"starrocks::vectorized::BinaryColumnBase<>::append()",
		"starrocks::pipeline::NLJoinProbeOperator::_permute_probe_row()",
	)
	frames[1].PC = 0x7f0f3a1c4630
	frames[1].Function = "(unknown)"
	frames[3].PC = 0x3caa7b2
	c := crash(symbolize.KindSignal, "SIGSEGV", frames)
	c.Product = symbolize.ProductStarRocks
	s := Generate(c)
	// The variant glibc picked for the CPU is keyed as the function it implements.
	// The unsymbolized frame of the fixed-address executable is the first
	// significant frame.
	want := "FAULT | memcpy | starrocks_be+0x3caa7b2"
	require.Equal(t, want, s.Key, strings.Join(s.Trace, "\n"))
	if strings.Join(s.Attributes, ",") != "leaf=memcpy-family" {
		t.Errorf("attributes %v", s.Attributes)
	}
	if s.CrashFrame != "__memcpy_ssse3_back" {
		t.Errorf("crash frame %q", s.CrashFrame)
	}
}

// PIE absolute addresses differ per run and never enter a key.
func TestGeneratePIEAddressDropped(t *testing.T) {
	frames := fr("doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", "", "", "doris::Foo::bar()")
	frames[1].PC, frames[1].Module = 0x7f00107fa840, "/lib/x86_64-linux-gnu/libc.so.6"
	frames[2].PC = 0x0000562e133e21f9
	s := Generate(crash(symbolize.KindSignal, "SIGSEGV", frames))
	if s.Key != "FAULT | doris::Foo::bar" {
		t.Fatalf("key %s\n%s", s.Key, strings.Join(s.Trace, "\n"))
	}
	if !hasTrace(s, "position-independent binary differs per run") {
		t.Errorf("trace does not say why the PIE address was dropped:\n%s", strings.Join(s.Trace, "\n"))
	}
	// Module-relative offsets of the main binary are stable (ASAN, hs_err).
	frames = fr("", "doris::Foo::bar()")
	frames[0].Module, frames[0].Offset, frames[0].HasOffset = "/opt/doris/be/lib/doris_be", 0x9a8b7c6, true
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", frames))
	if s.Key != "FAULT | doris::Foo::bar" {
		t.Errorf("key %s", s.Key)
	}
	// … but an address names a function in one build only: the named
	// frame below keys, and the address stays an attribute.
	assert.Contains(t, s.Attributes, "unsymbolized-crash-frame=doris_be+0x9a8b7c6")
	assert.True(t, hasTrace(s, "the named frame below keys"), strings.Join(s.Trace, "\n"))
	// With nothing named below it, the address keys.
	frames = fr("", "start_thread")
	frames[0].Module, frames[0].Offset, frames[0].HasOffset = "/opt/doris/be/lib/doris_be", 0x9a8b7c6, true
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", frames))
	assert.Equal(t, "FAULT | doris_be+0x9a8b7c6", s.Key, strings.Join(s.Trace, "\n"))
}

// A CHECK failure: glog frames and the abort path are skipped, the values
// are not part of the key.
func TestGenerateCheck(t *testing.T) {
	frames := fr(
		"google::LogMessage::Fail()", "google::LogMessage::SendToLog()", "google::LogMessage::Flush()",
		"google::LogMessageFatal::~LogMessageFatal()",
		"starrocks::Chunk::check_or_die()", "starrocks::Chunk::append(starrocks::Chunk const&)",
	)
	c := crash(symbolize.KindCheck, "SIGABRT", frames)
	c.Message = "Check failed: num_rows() == c->size() (160 vs. 140)"
	s := Generate(c)
	if s.Kind != "CHECK(num_rows() == c->size())" {
		t.Errorf("kind %q", s.Kind)
	}
	c2 := crash(symbolize.KindCheck, "SIGABRT", frames)
	c2.CheckExpr = "num_rows() == c->size()"
	c2.Message = "Check failed: num_rows() == c->size() (3 vs. 1)"
	if s2 := Generate(c2); s2.Key != s.Key {
		t.Errorf("values changed the key: %s vs %s", s.Key, s2.Key)
	}
	if s.Key != "ABORT | starrocks::Chunk::check_or_die" || s.Kind != "CHECK(num_rows() == c->size())" {
		t.Errorf("key %s, kind %s", s.Key, s.Kind)
	}
}

func TestCheckExpr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Check failed: a == b (1 vs. 2)", "a == b"},
		{"Check failed: _type == Type::CLOUD ( vs. )", "_type == Type::CLOUD"},
		{`Check failed: thread_mem_tracker()->label() == "Orphan" , attach mem tracker label: Query#Id=2d6d0263f4c84f95-a4c2c96307e78498`, `thread_mem_tracker()->label() == "Orphan"`},
		{`Check failed: !x || t()->label() != "Orphan" If you crash here, it means`, `!x || t()->label() != "Orphan"`},
		{"Check failed: false bthread_setspecific is called on invalid bthread_key_t{index=0 version=1}", "false"},
		{"Check failed: tracker->mem_tracker_ == nullptr || !tracker->mem_tracker_->has_limit()", "tracker->mem_tracker_ == nullptr || !tracker->mem_tracker_->has_limit()"},
		{"Check failed: (ptr) != nullptr", "(ptr) != nullptr"},
		{"no check here", ""},
	} {
		if got := checkExpr("", c.in); got != c.want {
			t.Errorf("checkExpr(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Kinds: terminate, sanitizer, JVM, thread dump, termination, SIGFPE.
func TestGenerateKinds(t *testing.T) {
	body := fr("doris::Foo::bar()")
	mk := func(k symbolize.Kind, sig string, f func(*symbolize.Crash)) string {
		c := crash(k, sig, body)
		if f != nil {
			f(c)
		}
		return Generate(c).Kind
	}
	cases := []struct{ got, want string }{
		{mk(symbolize.KindTerminate, "SIGABRT", func(c *symbolize.Crash) { c.ExceptionType = "std::out_of_range" }), "terminate(std::out_of_range)"},
		{mk(symbolize.KindSanitizer, "", func(c *symbolize.Crash) { c.SanitizerBug = "heap-use-after-free" }), "ASAN(heap-use-after-free)"},
		{mk(symbolize.KindSanitizer, "", func(c *symbolize.Crash) {
			c.SanitizerBug = "data race"
			c.Message = "WARNING: ThreadSanitizer: data race"
		}), "TSAN(data race)"},
		{mk(symbolize.KindJVM, "SIGSEGV", nil), "JVM(SIGSEGV)"},
		{mk(symbolize.KindThreadDump, "", nil), "THREADS"},
		{mk(symbolize.KindTermination, "SIGTERM", nil), "TERM(SIGTERM)"},
		{mk(symbolize.KindSignal, "Signal 8", nil), "SIGFPE"},
		{mk(symbolize.KindSignal, "SIGBUS", func(c *symbolize.Crash) { c.HasFaultAddress = true }), "SIGBUS"},
		{mk(symbolize.KindSignal, "SIGSEGV", func(c *symbolize.Crash) { c.HasFaultAddress, c.FaultAddress = true, 4096 }), "SIGSEGV"},
		{mk(symbolize.KindCheck, "SIGABRT", func(c *symbolize.Crash) { c.Message = "Method x is not supported" }), "FATAL"},
		{mk(symbolize.KindAssert, "SIGABRT", func(c *symbolize.Crash) { c.CheckExpr = "mutex->__data.__owner == 0" }), "ASSERT(mutex->__data.__owner == 0)"},
		{mk(symbolize.KindAssert, "SIGABRT", func(c *symbolize.Crash) {
			c.Message = "Assertion `dynamic_cast<ToAsPointer>(&f) != __null' failed in To down_cast(From&)"
		}), "ASSERT(dynamic_cast<ToAsPointer>(&f) != __null)"},
		{mk(symbolize.KindAssert, "SIGABRT", nil), "SIGABRT"},
		{mk(symbolize.KindAssert, "", nil), "ABORT"},
		{mk(symbolize.KindLeak, "", nil), "LEAK"},
		{mk(symbolize.KindUnknown, "", nil), "CRASH"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("kind %q, want %q", c.got, c.want)
		}
	}
}

func TestGenerateEmptyAndCorrupted(t *testing.T) {
	s := Generate(&symbolize.Crash{Kind: symbolize.KindSignal, Signal: "SIGSEGV"})
	if s.Key != "EMPTY: SIGSEGV" || len(s.Frames) != 0 {
		t.Errorf("no threads: %+v", s)
	}
	only := fr("doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", "(unknown)", "start_thread", "clone")
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", only))
	if s.Key != "EMPTY: SIGSEGV" {
		t.Errorf("mechanism only: %s", s.Key)
	}
	c := crash(symbolize.KindSignal, "SIGSEGV", fr("??"))
	c.Corrupted, c.CorruptedReason = true, "interleaved"
	s = Generate(c)
	if s.Key != "EMPTY: SIGSEGV" || !hasTrace(s, "interleaved") || !slices.Contains(s.Attributes, "corrupted") {
		t.Errorf("corrupted: %s %v", s.Key, s.Trace)
	}
	if s := Generate(nil); s.Key != "EMPTY: no crash" {
		t.Errorf("nil: %s", s.Key)
	}
	// Only generic frames: no significant frame, so the generic frames
	// are keyed, one per run of one rule (the allocator's internals are
	// one), at most fallbackFrames.
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("je_arena_dalloc_promoted", "je_free_default", "start_thread")))
	assert.Equal(t, "FAULT | je_arena_dalloc_promoted", s.Key)
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("je_arena_dalloc_promoted", "je_free_default",
		"__pthread_create_2_1", "os::create_thread(Thread*, os::ThreadType, unsigned long)", "JVM_StartThread", "start_thread")))
	assert.Equal(t, "FAULT | je_arena_dalloc_promoted | pthread_create | os::create_thread", s.Key)
	assert.True(t, hasTrace(s, "no significant frame: keying on the first 3 generic frame(s)"), strings.Join(s.Trace, "\n"))
	assert.Equal(t, []string{"suspected-heap-corruption"}, s.Attributes)
}

// gdb: the last sentinel (<signal handler called>) wins; everything above
// it is the handler's own work.
func TestGenerateGdbSignalFrame(t *testing.T) {
	s := Generate(crash(symbolize.KindSignal, "SIGSEGV", fr(
		"__pthread_kill_implementation (no_tid=0, signo=6, threadid=1)", "raise ()", "abort ()",
		"doris::signal::(anonymous namespace)::FailureSignalHandler (signum=11, info=0x7f, ucontext=0x7f)",
		"<signal handler called>",
		"doris::KeyCoder::full_encode_ascending (this=0x0, value=0x7f, buf=0x7f)",
		"doris::segment_v2::SegmentWriter::_full_encode_keys (this=0x7f, key_columns=...)",
	)))
	if s.Key != "FAULT | doris::KeyCoder::full_encode_ascending" {
		t.Errorf("key %s\n%s", s.Key, strings.Join(s.Trace, "\n"))
	}
	if !hasTrace(s, "superseded by a later sentinel") {
		t.Errorf("trace:\n%s", strings.Join(s.Trace, "\n"))
	}
}

// Abort path: libc frames between abort and the first BE frame are
// skipped even when mis-symbolized.
func TestGenerateAbortPathGlibc(t *testing.T) {
	frames := fr("__pthread_kill_implementation", "raise", "abort", "_nl_load_domain", "doris::DiskIoMgr::~DiskIoMgr()")
	frames[3].File = "./intl/loadmsgcat.c"
	s := Generate(crash(symbolize.KindSignal, "SIGABRT", frames))
	if s.Key != "ABORT | doris::DiskIoMgr::~DiskIoMgr" {
		t.Errorf("key %s\n%s", s.Key, strings.Join(s.Trace, "\n"))
	}
}

func TestGenerateBoundedAndDeterministic(t *testing.T) {
	long := strings.Repeat("x", 5000)
	frames := fr(long+"::a()", long+"::b()", long+"::c()")
	c := crash(symbolize.KindCheck, "SIGABRT", frames)
	c.Message = "Check failed: " + strings.Repeat("a == b && ", 1000) + "c"
	s := Generate(c)
	if len(s.Key) > MaxKeyLen || len(s.Kind) > maxKindExpr+16 {
		t.Errorf("key %d bytes, kind %d bytes", len(s.Key), len(s.Kind))
	}
	many := make([]symbolize.Frame, 5000)
	for i := range many {
		many[i] = symbolize.Frame{Index: i, Function: "std::__invoke_impl<>()"}
	}
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", many))
	if len(s.Trace) > maxTrace+1 {
		t.Errorf("trace has %d lines", len(s.Trace))
	}
	// Concurrent use gives the same result.
	g := Default()
	want := g.Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("doris::A::a()", "doris::B::b()")))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				if got := g.Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("doris::A::a()", "doris::B::b()"))); got.Key != want.Key || got.ID != want.ID {
					t.Errorf("concurrent key %s", got.Key)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestGenerateRecursionCollapsed(t *testing.T) {
	g2, err := NewGenerator(Options{Frames: 2})
	require.NoError(t, err)
	s := g2.Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("doris::R::read()", "doris::R::read()", "doris::R::read()", "doris::S::scan()")))
	if s.Key != "FAULT | doris::R::read | doris::S::scan" || s.AppFrame != "doris::R::read" {
		t.Errorf("key %s, app frame %q", s.Key, s.AppFrame)
	}
	// A crash inside the JVM: the app frame is the BE's JNI caller.
	s = Generate(crash(symbolize.KindSignal, "SIGSEGV", fr("jni_CallVoidMethodV", "JNIEnv_::CallVoidMethod(_jobject*, _jmethodID*, ...)", "JavaCalls::call_helper", "void starrocks::JniScanner::do_close(starrocks::RuntimeState*)")))
	if s.AppFrame != "starrocks::JniScanner::do_close" || s.Key != "FAULT | jni_CallVoidMethodV | starrocks::JniScanner::do_close" {
		t.Errorf("app frame %q, key %s", s.AppFrame, s.Key)
	}
}

func TestGeneratorFramesOption(t *testing.T) {
	g, err := NewGenerator(Options{Frames: 2})
	require.NoError(t, err)
	c := crash(symbolize.KindSignal, "SIGSEGV", fr("doris::A::a()", "std::vector<int>::push_back(int const&)", "doris::B::b()", "doris::C::c()"))
	// Two significant frames; the generic libstdc++ frame between them is skipped.
	assert.Equal(t, "FAULT | doris::A::a | doris::B::b", g.Generate(c).Key)
	assert.Equal(t, "FAULT | doris::A::a", Generate(c).Key)
}

// FuzzGenerate parses arbitrary text and signs every incident: no panic,
// bounded key and trace, same signature twice.
func FuzzGenerate(f *testing.F) {
	f.Add(exampleLogForFuzz)
	f.Add("*** SIGSEGV (@0x0) received by PID 1 (TID 0x7f LWP 2) from PID 0; stack trace: ***\n    @          0x5a1b2c3 starrocks::HashJoiner::_probe()\n")
	f.Add("F0101 00:00:00.000000 1 x.cc:1] Check failed: a == b (1 vs. 2)\n*** Check failure stack trace: ***\n    @     0x1  google::LogMessage::Fail()\n    @     0x2  doris::A::a()\n")
	f.Fuzz(func(t *testing.T, text string) {
		cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "fuzz"})
		if err != nil {
			return
		}
		for _, c := range cs {
			s := Generate(c)
			if len(s.Key) > MaxKeyLen || len(s.Trace) > maxTrace+1 || s.ID != keyID(s.Key) {
				t.Fatalf("unbounded or inconsistent signature: %d-byte key, %d trace lines", len(s.Key), len(s.Trace))
			}
			if again := Generate(c); again.Key != s.Key || strings.Join(again.Trace, "\n") != strings.Join(s.Trace, "\n") {
				t.Fatalf("not deterministic: %q vs %q", s.Key, again.Key)
			}
		}
	})
}

const exampleLogForFuzz = `*** SIGSEGV address not mapped to object (@0x10) received by PID 4568 (TID 6464 OR 0x7fd390c11640) from PID 16; stack trace: ***
 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /doris/be/src/common/signal_handler.h:421
 1# 0x00007FD7DC196520 in /lib/x86_64-linux-gnu/libc.so.6
 2# doris::vectorized::ColumnString::insert_many_dict_data(int const*, unsigned long) at /doris/be/src/vec/columns/column_string.h:300

`
