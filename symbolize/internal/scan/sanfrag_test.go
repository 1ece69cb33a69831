package scan

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sanitizer report fragments (format_sanitizer.go sanitizerRun,
// sanitizerFragment; fragment.go finishSanitizerFragment). The texts are
// constructed: lines cut from the corpus ASAN texts named at each one
// (and from testdata/formats/f6-asan-then-f1.txt), put together the way
// tickets paste the middle of a long report.

// cutLines returns lines from..to (1-based, inclusive) of a file under
// testdata.
func cutLines(t *testing.T, name string, from, to int) string {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/" + name)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.GreaterOrEqual(t, len(lines), to)
	return strings.Join(lines[from-1:to], "")
}

const (
	corpusMow     = "corpus/doris/154-asan-mow-calc-between-segments-stack-overflow-brpc-heavy.txt"
	corpusSRExec  = "corpus/starrocks/098-asan-fragment-executor-execute-heap-use-after-free.txt"
	corpusTopN    = "corpus/doris/148-asan-uaf-topn-merge-sort-cursor-summary-only.txt"
	formatsASAN   = "formats/f6-asan-then-f1.txt"
	creationFrame = "    #0 0x563e8a1c2b3a in pthread_create (/opt/doris/be/lib/doris_be+0x1c2b3a)\n"
)

// creationStack is a thread-creation stack: frame 0 from the format
// example, frames 1-4 constructed (bthread's worker start, as Doris'
// brpc server starts it), frames 5-8 cut from corpus doris/148.
func creationStack(t *testing.T) string {
	return creationFrame +
		"    #1 0x563ea2b15b00 in bthread::TaskControl::add_workers(int) (/opt/doris/be/lib/doris_be+0x238cfb00)\n" +
		"    #2 0x563ea2b15b10 in bthread::TaskControl::init(int) (/opt/doris/be/lib/doris_be+0x238cfb10)\n" +
		"    #3 0x563ea2b15b20 in bthread::get_or_new_task_control() (/opt/doris/be/lib/doris_be+0x238cfb20)\n" +
		"    #4 0x563ea2b15b30 in bthread_start_background (/opt/doris/be/lib/doris_be+0x238cfb30)\n" +
		cutLines(t, corpusTopN, 1, 4)
}

// A bare run of sanitizer frames cut from the middle of an access stack
// is a fragment of unknown kind, read as sanitizer frames (F6, not gdb),
// and the reason says that the ERROR line and frames #0-#1 are missing.
func TestSanitizerFragmentBareRun(t *testing.T) {
	text := cutLines(t, corpusMow, 8, 12) // frames #2-#6
	for _, in := range []string{text, "I1201 10:00:00.000000 1 x.cpp:1] before\n" + text + "I1201 10:00:01.000000 1 x.cpp:2] after\n"} {
		cs := parseText(t, in)
		require.Len(t, cs, 1)
		c := cs[0]
		assert.Equal(t, KindUnknown, c.Kind)
		assert.Equal(t, []string{"F6"}, c.Formats)
		assert.True(t, c.Corrupted)
		assert.Contains(t, c.CorruptedReason, "ERROR and access lines")
		assert.Contains(t, c.CorruptedReason, "frames #0-#1")
		assert.NotContains(t, c.CorruptedReason, "gdb")
		ct := c.CrashingThread()
		require.NotNil(t, ct)
		require.Len(t, ct.Frames, 5)
		assert.Equal(t, 2, ct.Frames[0].Index)
		// (llvm-symbolizer's unknown location `??:?` is not part of the
		// name: frames.go unknownLocation.)
		assert.Equal(t, "doris::MergeIndexDeleteBitmapCalculatorContext::Comparator::is_key_same(doris::Slice const&, doris::Slice const&) const", ct.Frames[2].Function)
		assert.Equal(t, "doris::Slice::compare(doris::Slice const&) const", ct.Frames[1].Function)
		assert.Empty(t, ct.Frames[1].File)
		assert.Equal(t, uint64(0x561321f618df), uint64(ct.Frames[2].PC))
	}
}

// A run from #0 with no header before it is a fragment too: the header
// is what is missing (StarRocks frames without debug columns, corpus
// starrocks/098).
func TestSanitizerFragmentFromZero(t *testing.T) {
	cs := parseText(t, cutLines(t, corpusSRExec, 4, 6))
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindUnknown, c.Kind, "no signal and no report line name the bug")
	assert.Contains(t, c.CorruptedReason, "ERROR and access lines are missing")
	assert.NotContains(t, c.CorruptedReason, "gdb")
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 3)
	assert.Equal(t, "/root/starrocks/be/src/exec/pipeline/fragment_executor.cpp", ct.Frames[2].File)
	assert.Equal(t, 291, ct.Frames[2].Line)
}

// Two sanitizer frames are not a fragment; nor is a run whose numbers
// jump.
func TestSanitizerFragmentTooShort(t *testing.T) {
	assert.Empty(t, parseText(t, cutLines(t, corpusMow, 8, 9)))
	jump := cutLines(t, corpusMow, 8, 9) + cutLines(t, corpusMow, 11, 12) // #2 #3 #5 #6
	assert.Empty(t, parseText(t, jump))
}

// A thread-creation stack, with its header or without it, is never the
// crash stack: a fragment holding only it has an empty crashing thread,
// says so, and its key is EMPTY (not pthread_create or main). The
// header at the start of the paste opens the fragment (kSanStack) and
// names the stack.
func TestSanitizerFragmentCreationOnly(t *testing.T) {
	stack := creationStack(t)
	for name, text := range map[string]string{
		"header":    "Thread T455 (FragmentMgrThre) created by T0 here:\n" + stack,
		"no header": stack,
	} {
		state := "thread-creation stack (header cut; recognized by its frame 0)"
		if name == "header" {
			state = "Thread T455 (FragmentMgrThre) created by T0 here"
		}
		t.Run(name, func(t *testing.T) {
			cs := parseText(t, text)
			require.Len(t, cs, 1)
			c := cs[0]
			assert.True(t, c.Corrupted)
			assert.Contains(t, c.CorruptedReason, "only auxiliary stacks")
			assert.Contains(t, c.CorruptedReason, "no crashing stack")
			ct := c.CrashingThread()
			require.NotNil(t, ct)
			assert.Empty(t, ct.Frames)
			require.Len(t, c.Threads, 2)
			assert.False(t, c.Threads[1].Crashed)
			assert.Equal(t, "pthread_create", c.Threads[1].Frames[0].Function)
			assert.Equal(t, state, c.Threads[1].State)
			assert.Equal(t, 1, c.StartLine)
		})
	}
}

// The freed-by and allocated-by stacks at the start of a paste (ASAN's
// sections after the access stack, formats example lines 9-15) are
// auxiliary: the fragment is a sanitizer report without its crash
// stack, not a crash in operator delete.
func TestSanitizerFragmentStartsAtStackHeader(t *testing.T) {
	for _, text := range []string{cutLines(t, formatsASAN, 9, 15), cutLines(t, formatsASAN, 13, 15), cutLines(t, formatsASAN, 9, 26)} {
		cs := parseText(t, "I0303 10:15:02.000001 1 x.cpp:1] before\n"+text)
		require.Len(t, cs, 1, text)
		c := cs[0]
		assert.Equal(t, 2, c.StartLine)
		assert.Equal(t, KindSanitizer, c.Kind)
		assert.True(t, c.Corrupted)
		assert.Contains(t, c.CorruptedReason, "crash stack")
		ct := c.CrashingThread()
		require.NotNil(t, ct)
		if strings.Contains(text, "SUMMARY") {
			// The SUMMARY's frame stands for the crash stack.
			require.Len(t, ct.Frames, 1)
			assert.True(t, strings.HasPrefix(ct.Frames[0].Raw, "SUMMARY: "), ct.Frames[0].Raw)
		} else {
			assert.Empty(t, ct.Frames, "the freed-by stack is not the crash stack")
		}
		for _, th := range c.Threads[1:] {
			assert.Regexp(t, `^(freed|previously allocated) by thread T455 \(FragmentMgrThre\) here$|^Thread T456 \(FragmentMgrThre\) created by T0 here$`, th.State)
		}
	}
	// Not headers: prose that starts like one.
	for _, l := range []string{"freed by the caller here:", "Thread Tx created by T0 here:", "previously allocated by thread T1 here: and more"} {
		k, _ := (&parser{}).classify(l)
		assert.NotEqual(t, kSanStack, k, l)
	}
	for _, l := range []string{"freed by thread T0 here:", "previously allocated by thread T12 (brpc_light) here:", "Thread T3 (tid=1234, running) created by main thread at:"} {
		k, _ := (&parser{}).classify(l)
		assert.Equal(t, kSanStack, k, l)
	}
}

// The frame 0 of a creation stack names it whatever the interceptor
// prefix; allocator frames do not (a double free's crash stack starts in
// operator delete too).
func TestSanitizerAuxTop(t *testing.T) {
	for fn, want := range map[string]string{
		"pthread_create":                    "thread-creation",
		"__interceptor_pthread_create":      "thread-creation",
		"___interceptor_pthread_create":     "thread-creation",
		"operator delete(void*)":            "",
		"doris::Thread::start_thread(a, b)": "",
	} {
		assert.Equal(t, want, sanitizerAuxTop([]Frame{{Index: 0, Function: fn}}), fn)
	}
	assert.Empty(t, sanitizerAuxTop([]Frame{{Index: 3, Function: "pthread_create"}}), "a cut stack's first frame is not its frame 0")
	assert.Empty(t, sanitizerAuxTop(nil))
	// A stack cut above frame 0 whose first frame creates a thread (the
	// frames of corpus doris/165 and starrocks/117) is a creation stack;
	// the same functions as frame 0 are where an access happened.
	for _, fn := range []string{
		"doris::Thread::start_thread(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, std::function<void ()> const&, unsigned long, scoped_refptr<doris::Thread>*)",
		"doris::Status doris::Thread::create<void (doris::ThreadPool::*)(), doris::ThreadPool*>(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, void (doris::ThreadPool::* const&)(), doris::ThreadPool* const&, scoped_refptr<doris::Thread>*)",
		"doris::ThreadPool::create_thread()",
		"starrocks::ThreadPool::init()",
		"starrocks::ThreadPoolBuilder::build(std::unique_ptr<starrocks::ThreadPool, std::default_delete<starrocks::ThreadPool> >*) const",
		"std::thread::_M_start_thread(std::unique_ptr<std::thread::_State, std::default_delete<std::thread::_State> >, void (*)())",
	} {
		assert.Equal(t, "thread-creation", sanitizerAuxTop([]Frame{{Index: 2, Function: fn}}), fn)
		assert.Empty(t, sanitizerAuxTop([]Frame{{Index: 0, Function: fn}}), fn)
	}
	for _, fn := range []string{"doris::ThreadPool::dispatch_thread()", "doris::Thread::supervise_thread(void*)", "starrocks::MyThreadPool::initialize()", "doris::pipeline::TaskScheduler::start()"} {
		assert.Empty(t, sanitizerAuxTop([]Frame{{Index: 2, Function: fn}}), fn)
	}
	assert.Equal(t, "thread-creation stack (header and frames #0-#3 cut; recognized by its frame #4)", auxTopState([]Frame{{Index: 4}}, "thread-creation"))
	assert.Equal(t, "thread-creation stack (header and frames #0 cut; recognized by its frame #1)", auxTopState([]Frame{{Index: 1}}, "thread-creation"))
}

// Corpus doris/165 and starrocks/117 are the middle of a thread-creation
// stack with its header and pthread_create frame cut: the stack stays
// auxiliary, and the incident says that the crash stack is missing (an
// empty crashing thread), so that no signature is keyed on
// doris::Thread::start_thread or starrocks::ThreadPool::init.
func TestSanitizerCreationStackOnly(t *testing.T) {
	for name, first := range map[string]int{
		"corpus/doris/165-asan-tail-pipeline-task-scheduler-thread-pool-created-scanner-context.txt": 1,
		"corpus/starrocks/117-asan-tail-fragment-mgr-thread-pool-init-created-by-exec-env.txt":       4,
	} {
		b, err := os.ReadFile("../../../testdata/" + name)
		require.NoError(t, err)
		cs := parseText(t, string(b))
		require.Len(t, cs, 1, name)
		c := cs[0]
		assert.True(t, c.Corrupted, name)
		assert.Contains(t, c.CorruptedReason, "without its crash stack", name)
		ct := c.CrashingThread()
		require.NotNil(t, ct, name)
		assert.Empty(t, ct.Frames, name)
		require.Len(t, c.Threads, 2, name)
		assert.Equal(t, first, c.Threads[1].Frames[0].Index, name)
		assert.Contains(t, c.Threads[1].State, "thread-creation stack", name)
	}
}

// Cut access-stack frames, then the address description and the freed-by
// stack (formats example, lines 5-12): the stack before the description
// is the access stack with frame #0 cut; the freed-by stack stays apart.
// Without the description, the cut stack may be any stack of the report.
func TestSanitizerFragmentAccessBeforeDescription(t *testing.T) {
	cs := parseText(t, cutLines(t, formatsASAN, 5, 12))
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	assert.Contains(t, c.CorruptedReason, "its frames #0 (fragment)")
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 2)
	assert.Equal(t, "doris::vectorized::Channel::send_local_block(doris::vectorized::Block*)", ct.Frames[0].Function)
	require.Len(t, c.Threads, 2)
	assert.Equal(t, "freed by thread T455 (FragmentMgrThre) here", c.Threads[1].State)
	assert.False(t, c.Threads[1].Crashed)

	// The same frames followed by the freed-by stack without the
	// description: no stack is taken for the crash.
	text := cutLines(t, formatsASAN, 5, 6) + cutLines(t, formatsASAN, 9, 11)
	cs = parseText(t, text)
	require.Len(t, cs, 1)
	c = cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	ct = c.CrashingThread()
	require.NotNil(t, ct)
	assert.Empty(t, ct.Frames)
	assert.Contains(t, c.CorruptedReason, "none is taken for the crashing stack")
}

// A SUMMARY line alone gives the bug type and its frame (corpus
// doris/148's SUMMARY); LeakSanitizer's byte counts alone are no crash.
func TestSanitizerSummaryAlone(t *testing.T) {
	cs := parseText(t, cutLines(t, corpusTopN, 6, 6))
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	assert.Equal(t, "heap-use-after-free", c.SanitizerBug)
	assert.Contains(t, c.CorruptedReason, "only the SUMMARY line")
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 1)
	assert.Equal(t, "doris::vectorized::MergeSortBlockCursor::less_at(doris::vectorized::MergeSortBlockCursor const&, int) const", ct.Frames[0].Function)
	assert.Equal(t, 331, ct.Frames[0].Line)

	// Between log lines, and with the shadow bytes after it.
	cs = parseText(t, "I1201 10:00:00.000000 1 x.cpp:1] before\n"+cutLines(t, corpusTopN, 6, 10))
	require.Len(t, cs, 1)
	assert.Equal(t, "heap-use-after-free", cs[0].SanitizerBug)

	assert.Empty(t, parseText(t, "SUMMARY: AddressSanitizer: 64 byte(s) leaked in 2 allocation(s).\n"))
}

// The creation stack's tail and the SUMMARY (corpus doris/148 as
// stored): the SUMMARY's frame is the crash, the creation stack a thread
// that did not crash.
func TestSanitizerFragmentCreationTailAndSummary(t *testing.T) {
	cs := parseText(t, cutLines(t, corpusTopN, 1, 17))
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 1)
	assert.Equal(t, 331, ct.Frames[0].Line)
	assert.Contains(t, c.CorruptedReason, "ERROR and access lines are missing")
}

// A headerless run followed by the shadow-byte dump (SUMMARY cut) is a
// sanitizer report's tail: kind sanitizer, and the run, which may be any
// of the report's stacks, is not taken for the crash stack.
func TestSanitizerFragmentShadowTail(t *testing.T) {
	text := cutLines(t, corpusMow, 8, 12) + cutLines(t, corpusTopN, 7, 17) +
		"Shadow byte legend (one shadow byte represents 8 application bytes):\n  Addressable:           00\n"
	cs := parseText(t, text)
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	assert.Empty(t, ct.Frames)
	require.Len(t, c.Threads, 2)
	assert.Len(t, c.Threads[1].Frames, 5)
}

// The access line names the crashing thread `thread T789 (alter_tablet)`:
// T789 is the sanitizer's thread number, alter_tablet its name; the main
// thread, printed `thread T0` without a name, is named by its number. The
// number is no ID (a later dump's kernel TID is; f6-asan-then-f1's golden).
func TestSanitizerAccessThreadName(t *testing.T) {
	head := "==3132==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602006bc23f4 at pc 0x000010462bf4 bp 0x7f9d1cc951b0 sp 0x7f9d1cc951a8\n"
	frames := "    #0 0x10462bf3 in starrocks::Foo::bar() be/src/foo.cpp:1\n    #1 0x10462bf4 in starrocks::Foo::baz() be/src/foo.cpp:2\n"
	for _, tc := range []struct {
		access, name string
	}{
		{"READ of size 4 at 0x602006bc23f4 thread T789 (alter_tablet)\n", "alter_tablet"},
		{"WRITE of size 8 at 0x602006bc23f4 thread T0\n", "T0"},
		{"READ of size 4 at 0x602006bc23f4 thread T12 (pip_exec_com)\n", "pip_exec_com"},
	} {
		cs := parseText(t, head+tc.access+frames)
		require.Len(t, cs, 1, tc.access)
		ct := cs[0].CrashingThread()
		require.NotNil(t, ct, tc.access)
		assert.Equal(t, tc.name, ct.Name, tc.access)
		assert.Zero(t, ct.ID, tc.access)
	}
}
