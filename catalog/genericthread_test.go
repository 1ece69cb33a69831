package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// asanOnThread is an ASAN heap-use-after-free on thread T12 named thread,
// whose access stack is frames (each `name file:line`).
func asanOnThread(thread string, frames ...string) string {
	s := "==9001==ERROR: AddressSanitizer: heap-use-after-free on address 0x6030002a1b40 at pc 0x55d1c2b3a4f5 bp 0x7f3a2bffe9d0 sp 0x7f3a2bffe9c8\n" +
		"READ of size 8 at 0x6030002a1b40 thread T12" + thread + "\n"
	for i, f := range frames {
		s += "    #" + string(rune('0'+i)) + " 0x55d1c2b3a4f4 in " + f + "\n"
	}
	return s + "\nSUMMARY: AddressSanitizer: heap-use-after-free /root/doris/be/src/x.cpp:1:1 in f\n==9001==ABORTING\n"
}

// When only a generic frame rule holds (memory tracking, column
// operations: code every path runs), the crashing thread's pool name
// decides if a thread rule knows it; with no name, or with a specific
// frame rule, the frames decide as before.
func TestGenericFrameRuleYieldsToThreadName(t *testing.T) {
	memTracking := []string{
		"doris::MemTrackerLimiter::refresh_global_counter() /root/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:120:5",
		"doris::ThreadContext::consume_memory(long) /root/doris/be/src/runtime/thread_context.h:200:3",
		"start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)",
	}
	v, cr := classifyText(t, asanOnThread(" (memory_maintena)", memTracking...))
	require.Equal(t, "memory_maintena", cr.Threads[0].Name)
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
	assert.Equal(t, "weak-thread-background", v.PathRule)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "generic frame rule query-memory-tracking also matched")

	// No thread name: the generic rule stands.
	v, _ = classifyText(t, asanOnThread("", memTracking...))
	assert.Equal(t, "query-memory-tracking", v.PathRule, "%v", v.Evidence)

	// A name no thread rule knows: the generic rule stands.
	v, _ = classifyText(t, asanOnThread(" (bthread_worker)", memTracking...))
	assert.Equal(t, "query-memory-tracking", v.PathRule, "%v", v.Evidence)

	// JVM internals on a scanner-named thread: a JVM thread inherits the
	// name of the native thread that created it, so the name does not
	// override the JVM rule.
	v, _ = classifyText(t, asanOnThread(" (rs_normal [work)",
		"AccessInternal::PostRuntimeDispatch<G1BarrierSet::AccessBarrier<1097844ul, G1BarrierSet>, (AccessInternal::BarrierType)2, 1097844ul>::oop_access_barrier(void*) (/usr/lib/jvm/java-17/lib/server/libjvm.so+0x5b1c3a)",
		"JavaThread::run() (/usr/lib/jvm/java-17/lib/server/libjvm.so+0xe1c2a0)"))
	assert.Equal(t, "query-jvm-internal", v.PathRule, "%v", v.Evidence)

	// A specific frame rule holds: the frames decide, whatever the name.
	v, _ = classifyText(t, asanOnThread(" (memory_maintena)",
		"doris::vectorized::VDataStreamRecvr::SenderQueue::add_block(doris::vectorized::Block*, bool) /root/doris/be/src/vec/runtime/vdata_stream_recvr.cpp:192:31",
		"doris::MemTrackerLimiter::refresh_global_counter() /root/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:120:5"))
	assert.Equal(t, PathQuery, v.Path, "%v", v.Evidence)
	assert.NotEqual(t, "weak-thread-background", v.PathRule)
}

// TestGenericFlag: the `generic` flag, not the rule's priority, is what
// lets a thread rule decide over a frame rule.
func TestGenericFlag(t *testing.T) {
	catalog := func(generic bool) *Catalog {
		y := `schema: 1
revision: g1
paths:
  - id: q-columns
    path: query
    area: column
    priority: 10
    generic: ` + map[bool]string{true: "true", false: "false"}[generic] + `
    frames: ["doris::Column*::*"]
    why: columns
  - id: bg-thread
    path: background
    area: daemon
    priority: 5
    threads: ["memory_gc*"]
    why: gc thread
stack:
  product_namespaces: ["doris"]
`
		f, err := Parse("g.yaml", []byte(y))
		require.NoError(t, err)
		require.Equal(t, generic, f.Rules[0].Generic)
		c, err := New(f)
		require.NoError(t, err)
		return c
	}
	crash := &symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true, Name: "memory_gc_threa",
		Frames: []symbolize.Frame{{Function: "doris::ColumnString::insert_data(char const*, unsigned long)"}}}}}
	assert.Equal(t, "bg-thread", catalog(true).Classify(crash, signature.Signature{}).PathRule)
	assert.Equal(t, "q-columns", catalog(false).Classify(crash, signature.Signature{}).PathRule)
}

// TestOnThreads: expression frames are query work, except on a Doris
// local-scan pool thread (query-expression's on_threads), where they are
// the scanner's conjuncts; the remote pools also run loads and stay query.
func TestOnThreads(t *testing.T) {
	expr := []string{
		"doris::simd::VStringFunctions::is_ascii(doris::StringRef) /root/doris/be/src/vec/functions/function_string.h:80:5",
		"doris::vectorized::VExprContext::execute(doris::vectorized::Block*, int*) /root/doris/be/src/vec/exprs/vexpr_context.cpp:70:3",
	}
	v, _ := classifyText(t, asanOnThread(" (Scan_normal [wo)", expr...))
	assert.Equal(t, PathScan, v.Path, "%v", v.Evidence)
	assert.Equal(t, "scanner", v.Area)
	assert.Equal(t, "query-expression", v.PathRule)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), `thread "Scan_normal [wo" is scan's pool (rule query-expression's on_threads`)
	for _, name := range []string{"", " (rs_normal [work)", " (pip_wg_executor)"} {
		v, _ = classifyText(t, asanOnThread(name, expr...))
		assert.Equal(t, PathQuery, v.Path, "thread %q: %v", name, v.Evidence)
	}

	_, err := Parse("o.yaml", []byte("schema: 1\nrevision: o1\npaths:\n  - id: q\n    path: query\n    area: a\n    priority: 1\n    frames: [\"x::*\"]\n    on_threads:\n      path: scan\n    why: w\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing threads")
}
