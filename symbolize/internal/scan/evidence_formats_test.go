package scan

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gdb's print_frame sets a wrap hint before ` at FILE:LINE` and before
// ` from LIBRARY`: a long frame line goes on with the location alone on
// an indented line, which belongs to the frame above.
func TestGDBLocationContinuation(t *testing.T) {
	bt := `Program terminated with signal SIGSEGV, Segmentation fault.
#0  std::__shared_count<(__gnu_cxx::_Lock_policy)2>::__shared_count (__r=..., this=0x7f71280f3078)
    at /root/starrocks/be/src/storage/base_and_cumulative_compaction_policy.cpp:161
#1  0x00007f88aa0b0387 in raise ()
   from /lib64/libc.so.6
#2  0x0000555555a05678 in starrocks::Compaction::do_compaction (this=0x1) at be/src/storage/compaction.cpp:120
    at /should/not/attach.cpp:1
#3  0x00007ffff7a2d609 in start_thread (arg=<optimized out>) at pthread_create.c:477
`
	cs := parseString(t, bt)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 4)
	assert.Equal(t, "/root/starrocks/be/src/storage/base_and_cumulative_compaction_policy.cpp", ct.Frames[0].File)
	assert.Equal(t, 161, ct.Frames[0].Line)
	assert.Equal(t, "std::__shared_count<(__gnu_cxx::_Lock_policy)2>::__shared_count", ct.Frames[0].Function)
	assert.Equal(t, "/lib64/libc.so.6", ct.Frames[1].Module)
	assert.Equal(t, "raise", ct.Frames[1].Function)
	// A frame that has its location already keeps it.
	assert.Equal(t, "be/src/storage/compaction.cpp", ct.Frames[2].File)
	assert.Equal(t, 120, ct.Frames[2].Line)
}

func TestGDBLocationRejects(t *testing.T) {
	p := &parser{}
	last, ok := p.parseGDBFrame("#0  f (x=1)")
	require.True(t, ok)
	for _, text := range []string{
		"at /a.cpp:1",            // not indented: not gdb's wrap
		"    at the end of it",   // no file:line
		"    from here to there", // blanks: not a library path
		"    see above",
	} {
		_, ok := p.gdbLocation(last, text)
		assert.False(t, ok, text)
	}
	open, ok := p.parseGDBFrame("#0  f (x=1,")
	require.True(t, ok)
	_, ok = p.gdbLocation(open, "    at /a.cpp:1")
	assert.False(t, ok, "an open argument list continues with its arguments")
	f, ok := p.gdbLocation(last, "\tat /a/b.cpp:7")
	require.True(t, ok)
	assert.Equal(t, "/a/b.cpp", f.File)
	assert.Equal(t, 7, f.Line)
	assert.Equal(t, "f", f.Function)
}

// A check failure's stack stays the crashing thread's when the signal dump
// of its abort is cut before any frame of the failing code.
func TestCheckFailureKeptOverCutDump(t *testing.T) {
	text := `F1117 02:39:07.123456  7517 olap_scan_node.cpp:1342] Check failed: _transfer_done
*** Check failure stack trace: ***
    @     0x7f8f0ce8f30d  google::LogMessage::Fail()
    @     0x7f8f0ce91eb9  google::LogMessageFatal::~LogMessageFatal()
    @     0x7f8f0b8f1802  doris::OlapScanNode::transfer_thread()
    @     0x7f8f0effa5b0  execute_native_thread_routine
    @     0x7f8f0835fea5  start_thread
    @     0x7f8f086729fd  __clone
*** Aborted at 1668652747 (unix time) try "date -d @1668652747" if you are using GNU date ***
*** SIGABRT unkown detail explain (@0x3ed00001d5d) received by PID 7517 (TID 0x7f8e3d125700) from PID 7517; stack trace: ***
 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /root/doris/be/src/common/signal_handler.h:420
 1# 0x00007F8F085AA450 in /lib64/libc.so.6
 2# raise in /lib64/libc.so.6
 3# __GI_abort in /lib64/libc.so.6
`
	cs := parseString(t, text)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	var names []string
	for _, f := range ct.Frames {
		names = append(names, f.Function)
	}
	assert.Contains(t, names, "doris::OlapScanNode::transfer_thread()")
	assert.Equal(t, KindCheck, cs[0].Kind)

	// A dump that goes on into the failing code is preferred as before.
	whole := text + ` 4# google::LogMessageFatal::~LogMessageFatal() in /opt/doris/be/lib/doris_be
 5# doris::OlapScanNode::transfer_thread() at /root/doris/be/src/exec/olap_scan_node.cpp:1342
 6# start_thread in /lib64/libpthread.so.0
 7# clone in /lib64/libc.so.6
`
	cs = parseString(t, whole)
	require.Len(t, cs, 1)
	ct = cs[0].CrashingThread()
	require.NotNil(t, ct)
	assert.Equal(t, "doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)", ct.Frames[0].Function)
}

const asanCreationTail = `    #5 0x563ea2b15ba1 in brpc::Server::Start(int, brpc::ServerOptions const*) (/opt/doris/be/lib/doris_be+0x238cfba1)
    #6 0x563e926e4baf in doris::BRpcService::start(int, int) /root/doris/be/src/service/brpc_service.cpp:52
    #7 0x563e90ab4d88 in main /root/doris/be/src/service/doris_main.cpp:474
    #8 0x7f77859a8492 in __libc_start_main (/lib64/libc.so.6+0x23492)

SUMMARY: AddressSanitizer: heap-use-after-free /root/doris/be/src/vec/core/sort_cursor.h:331 in doris::vectorized::MergeSortBlockCursor::less_at(doris::vectorized::MergeSortBlockCursor const&, int) const
Shadow bytes around the buggy address:
  0x0c0881d68e60: fa fa 00 00 00 00 00 fa fa fa 00 00 00 00 00 fa
`

// The visible frames of a cut ASAN report are the tail of its thread
// creation stack: they are not where it crashed; the SUMMARY's frame is.
func TestSanitizerCreationStackNotCrash(t *testing.T) {
	for name, text := range map[string]string{
		"headerless": asanCreationTail,
		"header":     "Thread T455 (FragmentMgrThre) created by T0 here:\n" + asanCreationTail,
		"after access tail": `    #3 0x55d1b0a2c0ad in doris::vectorized::VSortNode::get_next(doris::RuntimeState*, doris::vectorized::Block*, bool*) /root/doris/be/src/vec/exec/vsort_node.cpp:120:5
    #4 0x7f3a4c494ac2 in start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)

Thread T455 (FragmentMgrThre) created by T0 here:
` + asanCreationTail,
	} {
		t.Run(name, func(t *testing.T) {
			cs := parseString(t, text)
			require.Len(t, cs, 1)
			c := cs[0]
			assert.Equal(t, KindSanitizer, c.Kind)
			assert.Equal(t, "heap-use-after-free", c.SanitizerBug)
			assert.True(t, c.Corrupted)
			assert.Contains(t, c.CorruptedReason, "SUMMARY")
			ct := c.CrashingThread()
			require.NotNil(t, ct)
			require.Len(t, ct.Frames, 1)
			f := ct.Frames[0]
			assert.Equal(t, "doris::vectorized::MergeSortBlockCursor::less_at(doris::vectorized::MergeSortBlockCursor const&, int) const", f.Function)
			assert.Equal(t, "/root/doris/be/src/vec/core/sort_cursor.h", f.File)
			assert.Equal(t, 331, f.Line)
			// The creation stack is kept, as a thread that did not crash.
			var other *Thread
			for i := range c.Threads {
				for _, g := range c.Threads[i].Frames {
					if g.Function == "main" {
						other = &c.Threads[i]
					}
				}
			}
			require.NotNil(t, other)
			assert.False(t, other.Crashed)
		})
	}
}

// When the cut stack holds the SUMMARY's function, it is the access stack.
func TestSanitizerHeaderlessAccessStack(t *testing.T) {
	text := `    #0 0x55d1c2b3a4f4 in doris::vectorized::MergeSortBlockCursor::less_at(doris::vectorized::MergeSortBlockCursor const&, int) const /root/doris/be/src/vec/core/sort_cursor.h:331:9
    #1 0x55d1b0a2c0ad in doris::vectorized::VSortNode::get_next(doris::RuntimeState*, doris::vectorized::Block*, bool*) /root/doris/be/src/vec/exec/vsort_node.cpp:120:5
    #2 0x7f3a4c494ac2 in start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)

SUMMARY: AddressSanitizer: heap-use-after-free /root/doris/be/src/vec/core/sort_cursor.h:331 in doris::vectorized::MergeSortBlockCursor::less_at(doris::vectorized::MergeSortBlockCursor const&, int) const
`
	cs := parseString(t, text)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 3)
	assert.Equal(t, "/root/doris/be/src/vec/exec/vsort_node.cpp", ct.Frames[1].File)
	assert.Equal(t, 120, ct.Frames[1].Line)
}

// An ASAN report whose access stack is cut right after its ERROR line:
// the freed-by stack is not the crash; the SUMMARY's frame is.
func TestSanitizerFreedByNotCrash(t *testing.T) {
	text := `==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x60b0000a1b2c at pc 0x55d1c2b3a4f4 bp 0x7f3a2d1e8f30 sp 0x7f3a2d1e8f28
READ of size 8 at 0x60b0000a1b2c thread T455 (FragmentMgrThre)

0x60b0000a1b2c is located 12 bytes inside of 100-byte region [0x60b0000a1b20,0x60b0000a1b84)
freed by thread T455 (FragmentMgrThre) here:
    #0 0x55d1b0a2c0ad in operator delete(void*) (/opt/doris/be/lib/doris_be+0x2a2c0ad)
    #1 0x55d1b0a2c0ae in doris::vectorized::Block::~Block() /root/doris/be/src/vec/core/block.cpp:80

SUMMARY: AddressSanitizer: heap-use-after-free /root/doris/be/src/vec/core/sort_cursor.h:331 in doris::vectorized::MergeSortBlockCursor::less_at(int) const
==12345==ABORTING
`
	cs := parseString(t, text)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 1)
	assert.Equal(t, "doris::vectorized::MergeSortBlockCursor::less_at(int) const", ct.Frames[0].Function)
	assert.True(t, cs[0].Corrupted)
}

func TestSanitizerSummary(t *testing.T) {
	p := &parser{}
	bug, f, ok := p.sanitizerSummary("SUMMARY: AddressSanitizer: SEGV (/opt/doris/be/lib/doris_be+0x1a2b3c) in doris::Foo::bar()")
	require.True(t, ok)
	assert.Equal(t, "SEGV", bug)
	assert.Equal(t, "/opt/doris/be/lib/doris_be", f.Module)
	assert.Equal(t, "doris::Foo::bar()", f.Function)
	bug, f, ok = p.sanitizerSummary("SUMMARY: ThreadSanitizer: data race /root/x.cpp:12:3 in ns::f()")
	require.True(t, ok)
	assert.Equal(t, "data race", bug)
	assert.Equal(t, 12, f.Line)
	assert.Equal(t, 3, f.Column)
	_, _, ok = p.sanitizerSummary("SUMMARY: AddressSanitizer: 100 byte(s) leaked in 1 allocation(s).")
	assert.False(t, ok)
	_, _, ok = p.sanitizerSummary("SUMMARY: nothing here")
	assert.False(t, ok)
}

func TestSanitizerShaped(t *testing.T) {
	assert.True(t, sanitizerShaped("    #5 0x563ea2b15ba1 in brpc::Server::Start(int) (/x/doris_be+0x1)"))
	assert.True(t, sanitizerShaped("#5 0x563ea2b15ba1 in f /a.cpp:1"))
	assert.False(t, sanitizerShaped("#5  0x0000563ea2b15ba1 in f () at /a.cpp:1"))
	assert.False(t, sanitizerShaped("#12 0x0000563ea2b15ba1 in f () at /a.cpp:1"))
	assert.False(t, sanitizerShaped("#1  doris::f (x=1) at /a.cpp:1"))
}

// ASAN's address description between the stacks (`Address … is located in
// stack of thread T12 … in frame`, then that frame) does not cut the
// report in two, and neither the frame's nor the creation stack is the
// crash stack.
func TestSanitizerDescriptionBetweenStacks(t *testing.T) {
	text, err := os.ReadFile("testdata/asan-description-fragment.txt")
	require.NoError(t, err)
	cs := parseString(t, string(text))
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, "stack-buffer-overflow", c.SanitizerBug)
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 1)
	assert.Equal(t, "doris::vectorized::VSortNode::sort_input(int)", ct.Frames[0].Function)
	assert.Equal(t, 118, ct.Frames[0].Line)
	assert.Len(t, c.Threads, 4)
}

// UBSAN's location line stands for its stack when none is printed: the
// sanitizer rules above leave it alone.
func TestUBSANWithoutStackUnchanged(t *testing.T) {
	cs := parseString(t, "x.cpp:12:3: runtime error: signed integer overflow: 1 + 2 cannot be represented in type int\n")
	require.Len(t, cs, 1)
	assert.False(t, cs[0].Corrupted)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	assert.Equal(t, "x.cpp:12:3", ct.State)
}
