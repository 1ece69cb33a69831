package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// classifyText parses text and classifies its first incident with the
// default catalog.
func classifyText(t *testing.T, text string) (Verdict, *symbolize.Crash) {
	t.Helper()
	cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "t"})
	require.NoError(t, err)
	require.NotEmpty(t, cs)
	c := defaultCatalog(t)
	return c.Classify(cs[0], signature.Generate(cs[0])), cs[0]
}

// asanUAF is an ASAN use-after-free whose access stack is a query's
// exchange receive; freed and created are the frames of its freed-by and
// thread-creation stacks.
func asanUAF(freed, created string) string {
	return `==41233==ERROR: AddressSanitizer: heap-use-after-free on address 0x6030002a1b40 at pc 0x55d1c2b3a4f5 bp 0x7f3a2bffe9d0 sp 0x7f3a2bffe9c8
READ of size 8 at 0x6030002a1b40 thread T456 (FragmentMgrThre)
    #0 0x55d1c2b3a4f4 in doris::vectorized::VDataStreamRecvr::SenderQueue::add_block(doris::vectorized::Block*, bool) /root/doris/be/src/vec/runtime/vdata_stream_recvr.cpp:192:31
    #1 0x55d1c2b3f001 in doris::vectorized::Channel::send_local_block(doris::vectorized::Block*) /root/doris/be/src/vec/sink/vdata_stream_sender.cpp:132:9
    #2 0x7f3a4c494ac2 in start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)

0x6030002a1b40 is located 16 bytes inside of 24-byte region [0x6030002a1b30,0x6030002a1b48)
freed by thread T0 here:
    #0 0x55d1b0a2c0ad in operator delete(void*) (/opt/doris/be/lib/doris_be+0x2a2c0ad)
    #1 0x55d1c2b30000 in ` + freed + ` /root/doris/be/src/runtime/x.cpp:412:5
    #2 0x55d1c2b30100 in main /root/doris/be/src/service/doris_main.cpp:600:5

previously allocated by thread T455 (FragmentMgrThre) here:
    #0 0x55d1b0a2b7bd in operator new(unsigned long) (/opt/doris/be/lib/doris_be+0x2a2b7bd)
    #1 0x55d1c2b2f000 in doris::vectorized::VDataStreamRecvr::VDataStreamRecvr() /root/doris/be/src/vec/runtime/vdata_stream_recvr.cpp:330:12

Thread T456 (FragmentMgrThre) created by T0 here:
    #0 0x55d1b0a1e061 in __interceptor_pthread_create (/opt/doris/be/lib/doris_be+0x2a1e061)
    #1 0x55d1b0a1e100 in ` + created + ` /root/doris/be/src/runtime/exec_env_init.cpp:200:5

SUMMARY: AddressSanitizer: heap-use-after-free /root/doris/be/src/vec/runtime/vdata_stream_recvr.cpp:192:31 in doris::vectorized::VDataStreamRecvr::SenderQueue::add_block(doris::vectorized::Block*, bool)
==41233==ABORTING
`
}

func TestFreedByEvidence(t *testing.T) {
	// Freed by the shutdown sequence: teardown, whatever the access was.
	v, _ := classifyText(t, asanUAF("doris::ExecEnv::destroy()", "doris::ThreadPool::create_thread()"))
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "lifecycle-freed-at-teardown", v.PathRule)
	assert.Equal(t, ConfidenceHigh, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], `freed-by frame "doris::ExecEnv::destroy" ~ "*::ExecEnv::destroy" in the sanitizer's freed by thread T0 stack`)
	assert.Contains(t, v.Evidence[0], "weight 0.90")

	// Freed by the query's own work: the access stack decides.
	v, _ = classifyText(t, asanUAF("doris::vectorized::VDataStreamRecvr::close()", "doris::ThreadPool::create_thread()"))
	assert.Equal(t, PathQuery, v.Path)

	// Thread-creation stacks are not read: every pool thread is created
	// under main or ExecEnv::init, at startup.
	v, _ = classifyText(t, asanUAF("doris::vectorized::VDataStreamRecvr::close()", "doris::ExecEnv::_init(std::vector<doris::StorePath> const&)"))
	assert.Equal(t, PathQuery, v.Path)
}

func TestSanitizerBugCondition(t *testing.T) {
	// A report thread waiting on the StorageEngine's own report state: the
	// engine is freed only at shutdown (corpus starrocks/113's shape).
	wait := symbolize.Frame{Function: "starrocks::StorageEngine::wait_for_report_notify(long, bool)::{lambda()#2}::operator()() const"}
	cvWait := symbolize.Frame{Function: "std::condition_variable::wait_until<std::chrono::_V2::steady_clock, std::chrono::duration<long, std::ratio<1l, 1000000000l> >, starrocks::StorageEngine::wait_for_report_notify(long, bool)::{lambda()#2}>()"}
	c := defaultCatalog(t)
	cr := frameCrash("", "", wait, cvWait)
	cr.Kind, cr.SanitizerBug = symbolize.KindSanitizer, "heap-use-after-free"
	v := c.Classify(cr, signature.Signature{})
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "lifecycle-daemon-use-after-free", v.PathRule)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)

	// Another sanitizer bug there is not the teardown race.
	cr.SanitizerBug = "heap-buffer-overflow"
	v = c.Classify(cr, signature.Signature{})
	assert.NotEqual(t, "lifecycle-daemon-use-after-free", v.PathRule)

	// A daemon loop's use-after-free is not teardown by itself: the
	// memory GC and tracker threads read trackers that queries free while
	// the process runs (apache/doris#27434, #28092).
	daemon := symbolize.Frame{Function: "doris::Daemon::memory_tracker_profile_refresh_thread()"}
	refresh := symbolize.Frame{Function: "doris::MemTrackerLimiter::refresh_all_tracker_profile()"}
	cr = frameCrash("", "memory_tracke", refresh, daemon)
	cr.Kind, cr.SanitizerBug = symbolize.KindSanitizer, "heap-use-after-free"
	v = c.Classify(cr, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path)
}

// gcThreadUAF is an ASAN heap-use-after-free on the Doris memory-GC daemon
// while the process runs, shaped like apache/doris#27434 (the GC thread
// prints the top memory consumers while a query's tracker is being
// freed); freed is the innermost frame of its freed-by stack. Addresses,
// paths and line numbers are made up.
func gcThreadUAF(freed string) string {
	return `==52811==ERROR: AddressSanitizer: heap-use-after-free on address 0x60f000a1c2e8 at pc 0x5581aa21c907 bp 0x7f10c5ddfe30 sp 0x7f10c5ddfe28
READ of size 4 at 0x60f000a1c2e8 thread T39 (memory_gc_threa)
    #0 0x5581aa21c906 in doris::MemTrackerLimiter::make_snapshot() const /src/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:110:33
    #1 0x5581aa21f0d5 in doris::MemTrackerLimiter::make_top_consumption_snapshots(std::vector<doris::MemTracker::Snapshot, std::allocator<doris::MemTracker::Snapshot>>*, int) /src/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:200:40
    #2 0x5581aa22258b in doris::MemTrackerLimiter::log_process_usage_str[abi:cxx11]() /src/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:260:5
    #3 0x5581aa223035 in doris::MemTrackerLimiter::print_log_process_usage() /src/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:280:25
    #4 0x5581a7400209 in doris::Daemon::memory_gc_thread() /src/doris/be/src/common/daemon.cpp:260:13
    #5 0x5581a74081fb in doris::Daemon::start()::$_2::operator()() const /src/doris/be/src/common/daemon.cpp:450:60
    #6 0x7f10e8a94ac2 in start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)

0x60f000a1c2e8 is located 24 bytes inside of 168-byte region [0x60f000a1c2d0,0x60f000a1c378)
freed by thread T512 (FragmentMgrThre) here:
    #0 0x5581a2a2c0ad in operator delete(void*) (/opt/doris/be/lib/doris_be+0x2a2c0ad)
    #1 0x5581aa210000 in ` + freed + ` /src/doris/be/src/runtime/x.cpp:80:5
    #2 0x7f10e8a94ac2 in start_thread (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)

SUMMARY: AddressSanitizer: heap-use-after-free /src/doris/be/src/runtime/memory/mem_tracker_limiter.cpp:110:33 in doris::MemTrackerLimiter::make_snapshot() const
==52811==ABORTING
`
}

func TestDaemonUseAfterFreeWhileRunning(t *testing.T) {
	// Freed by a query's teardown: the GC daemon's own work, background.
	v, cr := classifyText(t, gcThreadUAF("doris::QueryContext::~QueryContext()"))
	require.Equal(t, "heap-use-after-free", cr.SanitizerBug)
	assert.Equal(t, PathBackground, v.Path)
	assert.NotEqual(t, "lifecycle-daemon-use-after-free", v.PathRule)

	// The report cut before its freed-by stack (the common paste): still
	// the daemon's work.
	text := gcThreadUAF("doris::QueryContext::~QueryContext()")
	text = text[:strings.Index(text, "\n0x60f000a1c2e8 is located")+1]
	v, _ = classifyText(t, text)
	assert.Equal(t, PathBackground, v.Path)

	// Freed by the shutdown sequence: teardown (lifecycle-freed-at-teardown).
	v, _ = classifyText(t, gcThreadUAF("doris::ExecEnv::destroy()"))
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "lifecycle-freed-at-teardown", v.PathRule)
}

// srDump is a StarRocks glog dump of a query's pipeline driver.
const srDump = `query_id:0b1c2d3e-4f50-11f0-8a9b-0c1d2e3f4a5b, fragment_instance:0b1c2d3e-4f50-11f0-8a9b-0c1d2e3f4a61
*** Aborted at 1751000000 (unix time) try "date -d @1751000000" if you are using GNU date ***
PC: @          0xd3c4b2a starrocks::pipeline::ExchangeSinkOperator::push_chunk(starrocks::RuntimeState*, std::shared_ptr<starrocks::Chunk> const&)
*** SIGSEGV (@0x0) received by PID 3021 (TID 0x7f6b1c3ff640) LWP(3577) from PID 0; stack trace: ***
    @     0x7f6c2d899ee8 (/usr/lib/x86_64-linux-gnu/libc.so.6+0x99ee7)
    @         0x13a4f2b1 google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)
    @     0x7f6c2d842520 (/usr/lib/x86_64-linux-gnu/libc.so.6+0x4251f)
    @          0xd3c4b2a starrocks::pipeline::ExchangeSinkOperator::push_chunk(starrocks::RuntimeState*, std::shared_ptr<starrocks::Chunk> const&)
    @          0x8c0d1e2 starrocks::pipeline::PipelineDriver::process(starrocks::RuntimeState*, int)
    @          0x8bf0a11 starrocks::pipeline::GlobalDriverExecutor::_worker_thread()
    @          0x5e0f1a2 starrocks::ThreadPool::dispatch_thread()
`

func TestLogContextEvidence(t *testing.T) {
	glog := func(msg string) string { return "I20250303 10:15:02.118230  2333 starrocks_be.cpp:312] " + msg + "\n" }

	// No lifecycle line: the frames decide.
	v, cr := classifyText(t, srDump)
	assert.Equal(t, PathQuery, v.Path)
	_, ok := lastLifecycleLine(cr)
	assert.False(t, ok)

	// The backend was stopping: teardown, with the line in the evidence.
	v, cr = classifyText(t, glog("BE started successfully")+glog("BE exit step 1: wait exec engine tasks finish successfully")+srDump)
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "shutdown", v.Area)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "log line")
	assert.Contains(t, v.Evidence[0], "BE exit step 1")
	e, ok := lastLifecycleLine(cr)
	require.True(t, ok)
	assert.Equal(t, symbolize.EventLifecycleLog, e.Kind)

	// The signal handler's line says the same.
	v, _ = classifyText(t, "E20250303 10:15:02.118230  2333 daemon.cpp:120] got signal: Terminated from pid: 1234, is going to exit\n"+srDump)
	assert.Equal(t, PathLifecycle, v.Path)

	// Doris main's exit line (lines between are not lifecycle lines).
	v, _ = classifyText(t, "I20250303 10:15:02.118230  2333 doris_main.cpp:600] Doris main exiting.\nI20250303 10:15:02.118230  2333 fragment_mgr.cpp:100] cancel query\n"+srDump)
	assert.Equal(t, PathLifecycle, v.Path)

	// Starting: a start step is the last lifecycle line.
	v, _ = classifyText(t, glog("BE start step 1: daemon threads start successfully")+glog("BE start step 2: jdbc driver manager init successfully")+srDump)
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "startup", v.Area)

	// Started: the last lifecycle line says the start is over.
	v, _ = classifyText(t, glog("BE start step 9: start heartbeat server successfully")+glog("BE started successfully")+srDump)
	assert.Equal(t, PathQuery, v.Path)

	// A process start marker between the line and the incident: another
	// process lifetime.
	v, _ = classifyText(t, glog("BE exit step 1: wait exec engine tasks finish successfully")+"start time: Mon Mar  3 10:20:00 CST 2025\n"+srDump)
	assert.Equal(t, PathQuery, v.Path)
}

// TestRestartEndsExitContext: an exit line of an earlier run is not the
// context of a crash after a restart (followed or concatenated be.INFO
// files). glog's file header and the backends' start lines are lifecycle
// lines that no rule matches: they end the exit context and are no
// evidence themselves.
func TestRestartEndsExitContext(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "doris", "102-cooldown-write-meta-executors-dropped-tablet.txt"))
	require.NoError(t, err)
	crash := string(b)
	exit := "I20240527 10:00:00.000000 12345 doris_main.cpp:620] Doris main exiting.\n"
	header := "Log file created at: 2024/05/28 11:06:21\nRunning on machine: host1\nLog line format: [IWEF]yyyymmdd hh:mm:ss.uuuuuu threadid file:line] msg\n"
	jni := "I20240528 11:06:22.000000 22222 doris_main.cpp:470] Doris backend JNI is initialized.\n"

	alone, _ := classifyText(t, crash)
	require.NotEqual(t, PathLifecycle, alone.Path)

	// Without a restart marker the exit line is the context: teardown.
	v, _ := classifyText(t, exit+crash)
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "lifecycle-log-exit", v.PathRule)

	for name, text := range map[string]string{
		"header then start line": exit + header + jni + crash, // the review's reproduction (r7)
		"header":                 exit + header + crash,
		"start line":             exit + jni + crash,
	} {
		v, cr := classifyText(t, text)
		assert.Equal(t, alone.Path, v.Path, name)
		assert.Equal(t, alone.PathRule, v.PathRule, name)
		e, ok := lastLifecycleLine(cr)
		require.True(t, ok, name)
		assert.NotContains(t, e.Text, "exiting", name)
		for _, ev := range v.Evidence {
			assert.NotContains(t, ev, "log line", name)
		}
	}

	// An exit after the restart marker is the context again.
	v, _ = classifyText(t, header+exit+crash)
	assert.Equal(t, "lifecycle-log-exit", v.PathRule)
}

// TestContextWithoutFrames: a header-only incident (no frame after the
// crash mechanism) still takes the context's evidence: the last lifecycle
// log line, a freed-by stack.
func TestContextWithoutFrames(t *testing.T) {
	c := defaultCatalog(t)
	exit := []symbolize.Event{{Line: 1, Kind: symbolize.EventLifecycleLog, Text: "I20250303 10:15:02.118230  2333 starrocks_be.cpp:312] BE exit step 1: wait exec engine tasks finish successfully"}}
	for name, frames := range map[string][]symbolize.Frame{
		"no frames":          nil,
		"cut at the handler": framesNamed("google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)"),
	} {
		cr := &symbolize.Crash{StartLine: 2, QueryID: "00000000-0000-0000-0000-000000000000", Events: exit, Threads: []symbolize.Thread{{Crashed: true, Frames: frames}}}
		v := c.Classify(cr, signature.Signature{})
		require.NotEmpty(t, v.Evidence, name)
		assert.Equal(t, "lifecycle-log-exit", v.PathRule, "%s: %v", name, v.Evidence)
		assert.Contains(t, v.Evidence[0], "has no frame after the crash mechanism", name)
		// the evidence quotes the log line that held, not an empty one
		assert.Contains(t, strings.Join(v.Evidence, "\n"), "BE exit step 1", name)
		assert.NotContains(t, strings.Join(v.Evidence, "\n"), `log line "" ~ ""`, name)
		// without the line the zero id decides, as before
		cr.Events = nil
		assert.Equal(t, "id-no-task", c.Classify(cr, signature.Signature{}).PathRule, name)
	}

	freed := symbolize.Thread{State: "freed by thread T0 here", Frames: framesNamed("operator delete(void*)", "doris::ExecEnv::destroy()", "main")}
	v := c.Classify(&symbolize.Crash{Kind: symbolize.KindSanitizer, SanitizerBug: "heap-use-after-free", Threads: []symbolize.Thread{{Crashed: true}, freed}}, signature.Signature{})
	assert.Equal(t, "lifecycle-freed-at-teardown", v.PathRule, "%v", v.Evidence)
}
