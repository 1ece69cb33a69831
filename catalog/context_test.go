package catalog

import (
	"context"
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
	daemon := symbolize.Frame{Function: "doris::Daemon::memory_tracker_profile_refresh_thread()"}
	refresh := symbolize.Frame{Function: "doris::MemTrackerLimiter::refresh_all_tracker_profile()"}
	c := defaultCatalog(t)
	cr := frameCrash("", "memory_tracke", refresh, daemon)
	cr.Kind, cr.SanitizerBug = symbolize.KindSanitizer, "heap-use-after-free"
	v := c.Classify(cr, signature.Signature{})
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "lifecycle-daemon-use-after-free", v.PathRule)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)

	// The same frames in a SIGSEGV are the daemon's own work.
	cr = frameCrash("", "memory_tracke", refresh, daemon)
	cr.Kind, cr.Signal = symbolize.KindSignal, "SIGSEGV"
	v = c.Classify(cr, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path)
	// Another sanitizer bug is not the teardown race either.
	cr.Kind, cr.SanitizerBug = symbolize.KindSanitizer, "heap-buffer-overflow"
	v = c.Classify(cr, signature.Signature{})
	assert.Equal(t, PathBackground, v.Path)
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
