package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// Thread stacks of synthetic dumps, innermost first, written from the
// frames of testdata/formats/f7-*.txt and symbolize/internal/scan/testdata/paste/pstack.txt
// and the backends' sources (the pools' wait loops, paths.yaml idle_*).
var (
	stIdlePool = []string{"pthread_cond_wait@@GLIBC_2.3.2", "doris::ThreadPool::dispatch_thread()", "doris::Thread::supervise_thread(void*)", "start_thread", "clone"}
	stIdleBrpc = []string{"syscall", "bthread::TaskGroup::wait_task(unsigned long*)", "bthread::TaskGroup::run_main_task()", "bthread::TaskControl::worker_thread(void*)", "start_thread", "clone"}
	stIdleMain = []string{"nanosleep", "sleep", "main"}
	// a daemon sleeping between rounds (Daemon threads wait on their stop latch)
	stIdleDaemon = []string{"pthread_cond_timedwait@@GLIBC_2.3.2", "doris::CountDownLatch::wait_for(std::chrono::duration<long, std::ratio<1l, 1000l> > const&)", "doris::Daemon::memory_gc_thread()", "doris::Thread::supervise_thread(void*)", "start_thread", "clone"}
	// a pipeline worker waiting for a task (Doris TaskScheduler::_do_work -> _task_queue->take)
	stIdleTaskSched = []string{"pthread_cond_timedwait@@GLIBC_2.3.2", "std::condition_variable::__wait_until_impl<std::chrono::duration<long, std::ratio<1l, 1000000000l> > >(std::unique_lock<std::mutex>&, std::chrono::time_point<std::chrono::_V2::steady_clock, std::chrono::duration<long, std::ratio<1l, 1000000000l> > > const&)", "doris::pipeline::PriorityTaskQueue::take(unsigned int)", "doris::pipeline::MultiCoreTaskQueue::take(unsigned long)", "doris::pipeline::TaskScheduler::_do_work(unsigned long)", "doris::ThreadPool::dispatch_thread()", "start_thread", "clone"}
	stCompaction    = []string{"doris::segment_v2::SegmentIterator::next_batch(doris::vectorized::Block*)", "doris::BetaRowsetReader::next_block(doris::vectorized::Block*)", "doris::Merger::vmerge_rowsets(std::shared_ptr<doris::Tablet>, doris::ReaderType)", "doris::Compaction::do_compaction_impl(long)", "doris::Compaction::execute_compact()", "doris::ThreadPool::dispatch_thread()", "doris::Thread::supervise_thread(void*)", "start_thread", "clone"}
	stScan          = []string{"doris::segment_v2::ColumnReader::read_page(doris::segment_v2::ColumnIteratorOptions const&)", "doris::segment_v2::FileColumnIterator::next_batch(unsigned long*, COW<doris::vectorized::IColumn>::mutable_ptr<doris::vectorized::IColumn>&, bool*)", "doris::vectorized::NewOlapScanner::_get_block_impl(doris::RuntimeState*, doris::vectorized::Block*, bool*)", "doris::vectorized::ScannerScheduler::_scanner_scan(std::shared_ptr<doris::vectorized::ScannerContext>)", "doris::ThreadPool::dispatch_thread()", "doris::Thread::supervise_thread(void*)", "start_thread", "clone"}
	// a scan node's transfer thread blocked on its row-batch queue: the queue take alone is not idle
	stTransfer = []string{"pthread_cond_wait@@GLIBC_2.3.2", "doris::BlockingQueue<doris::vectorized::Block*>::blocking_get(doris::vectorized::Block**)", "doris::OlapScanNode::transfer_thread(doris::RuntimeState*)", "start_thread", "clone"}
	// a daemon thread blocked on a lock while it works: busy, background
	stBusyDaemon = []string{"__lll_lock_wait", "pthread_mutex_lock", "doris::Daemon::memory_gc_thread()", "doris::Thread::supervise_thread(void*)", "start_thread", "clone"}
)

var (
	stJVMVMThread  = []string{"pthread_cond_timedwait@@GLIBC_2.3.2", "os::PlatformMonitor::wait(long)", "Monitor::wait_without_safepoint_check(long)", "VMThread::wait_for_operation()", "VMThread::loop()", "VMThread::run()", "Thread::call_run()", "thread_native_entry(Thread*)", "start_thread", "clone"}
	stKafkaBroker  = []string{"poll", "rd_kafka_transport_poll", "rd_kafka_transport_io_serve", "rd_kafka_broker_ops_io_serve", "rd_kafka_broker_consumer_serve", "rd_kafka_broker_serve", "rd_kafka_broker_thread_main", "_thrd_wrapper_function", "start_thread", "clone"}
	stKafkaConsume = []string{"pthread_cond_timedwait@@GLIBC_2.3.2", "cnd_timedwait", "rd_kafka_q_pop_serve", "rd_kafka_consumer_poll", "RdKafka::KafkaConsumerImpl::consume(int)", "doris::KafkaDataConsumer::group_consume(doris::BlockingQueue<RdKafka::Message*>*, long)", "doris::ThreadPool::dispatch_thread()", "start_thread", "clone"}
)

// TestThreadDumpEmbeddedLibraries: the JVM's and librdkafka's own waiting
// threads are idle; a routine-load consumer polling Kafka is load work.
func TestThreadDumpEmbeddedLibraries(t *testing.T) {
	v, _ := classifyDump(t, dumpOf(repeat(3, stJVMVMThread), repeat(2, stKafkaBroker), repeat(4, stIdlePool)))
	assert.Equal(t, PathUnknown, v.Path)
	assert.Contains(t, v.Evidence[0], "idle: 9 (doris::ThreadPool::dispatch_thread×4, VMThread::wait_for_operation×3, rd_kafka_broker_consumer_serve×2)")
	v, _ = classifyDump(t, dumpOf(repeat(3, stJVMVMThread), repeat(2, stKafkaBroker), repeat(2, stKafkaConsume), repeat(4, stIdlePool)))
	assert.Equal(t, PathLoad, v.Path)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "2 of 11 threads busy: 2 load (")
}

// pstackDump writes threads as a pstack / gdb `thread apply all bt` text.
func pstackDump(threads ...[]string) string {
	var b strings.Builder
	for i, th := range threads {
		n := len(threads) - i
		fmt.Fprintf(&b, "Thread %d (Thread 0x7f2a%08x (LWP %d)):\n", n, 0x10fff700+i*0x1000, 118800+n)
		for j, f := range th {
			fmt.Fprintf(&b, "#%d  0x%016x in %s ()\n", j, 0x55d4c0a00000+i*0x10000+j*0x10, f)
		}
	}
	return b.String()
}

// repeat returns n copies of a stack.
func repeat(n int, st []string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = st
	}
	return out
}

func dumpOf(parts ...[][]string) string {
	var all [][]string
	for _, p := range parts {
		all = append(all, p...)
	}
	return pstackDump(all...)
}

// classifyDump parses a synthetic dump, checks that it is one thread-dump
// incident, and classifies it.
func classifyDump(t *testing.T, text string) (Verdict, *symbolize.Crash) {
	t.Helper()
	v, crash := classifyText(t, text)
	require.Equal(t, symbolize.KindThreadDump, crash.Kind)
	return v, crash
}

func TestIdleOf(t *testing.T) {
	c := defaultCatalog(t)
	norm := func(st []string) []string {
		th := symbolize.Thread{}
		for _, n := range st {
			th.Frames = append(th.Frames, symbolize.Frame{Function: n})
		}
		return FrameNames(&symbolize.Crash{Threads: []symbolize.Thread{th}})
	}
	for _, tc := range []struct {
		name string
		st   []string
		idle bool
		at   int
	}{
		{"pool", stIdlePool, true, 1},
		{"brpc", stIdleBrpc, true, 1},
		{"main", stIdleMain, true, 2},
		{"daemon-sleeping", stIdleDaemon, true, 2},
		{"task-scheduler", stIdleTaskSched, true, 4},
		{"compaction", stCompaction, false, 0},
		{"scan", stScan, false, 0},
		{"transfer", stTransfer, false, 2},
		{"daemon-busy", stBusyDaemon, false, 0},
		// the embedded JVM's VM thread waiting for an operation (gdb of doris_be)
		{"jvm-vm-thread", stJVMVMThread, true, 3},
		{"kafka-broker-thread", stKafkaBroker, true, 4},
		{"kafka-consumer-poll", stKafkaConsume, false, 3},
		// FragmentMgr's cancel worker sleeps on its stop latch between rounds; busy, it is the query's
		{"fragment-mgr-sleeping", []string{"pthread_cond_timedwait@@GLIBC_2.3.2", "doris::CountDownLatch::wait_for(std::chrono::duration<long, std::ratio<1l, 1l> > const&)", "doris::FragmentMgr::cancel_worker()", "doris::Thread::supervise_thread(void*)"}, true, 2},
		{"fragment-mgr-busy", []string{"__lll_lock_wait", "pthread_mutex_lock", "doris::FragmentMgr::cancel_worker()", "doris::Thread::supervise_thread(void*)"}, false, 0},
		{"frame-pointer-unwind", []string{"doris::ThreadPool::dispatch_thread()", "doris::Thread::supervise_thread(void*)"}, true, 0},
		{"only-waits", []string{"pthread_cond_wait@@GLIBC_2.3.2", ""}, false, -1},
		{"jvm-pool", []string{"jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.parkNanos", "java.util.concurrent.ThreadPoolExecutor.getTask", "java.util.concurrent.ThreadPoolExecutor.runWorker"}, true, 2},
	} {
		idle, at := c.stack.idle.idleOf(norm(tc.st))
		assert.Equal(t, tc.idle, idle, tc.name)
		assert.Equal(t, tc.at, at, tc.name)
	}
	// without idle knowledge nothing is idle
	idle, _ := newStackTable().idle.idleOf(norm(stIdlePool))
	assert.False(t, idle)
}

// TestThreadDumpCompactionIsBackground: a dump whose only busy threads
// compact is background (medium: several threads agree).
func TestThreadDumpCompactionIsBackground(t *testing.T) {
	text := dumpOf(repeat(3, stCompaction), repeat(20, stIdlePool), repeat(8, stIdleBrpc), repeat(2, stIdleDaemon), repeat(4, stIdleTaskSched), [][]string{stIdleMain})
	v, _ := classifyDump(t, text)
	assert.Equal(t, PathBackground, v.Path)
	assert.Equal(t, "compaction", v.Area)
	assert.Equal(t, "background-compaction", v.PathRule)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
	require.NotEmpty(t, v.Evidence)
	assert.Contains(t, v.Evidence[0], "thread dump: 3 of 38 threads busy: 3 background (compaction×3; e.g. doris::segment_v2::SegmentIterator::next_batch)")
	assert.Contains(t, v.Evidence[0], "idle: 35 (doris::ThreadPool::dispatch_thread×20, bthread::TaskGroup::wait_task×8, doris::pipeline::TaskScheduler::_do_work×4, doris::Daemon::memory_gc_thread×2, 1 more)")
	assert.Contains(t, v.Evidence[1], "path background/compaction by rule background-compaction")
	p, area := defaultCatalog(t).PathOf(mustParse(t, text))
	assert.Equal(t, PathBackground, p, "PathOf agrees with Classify")
	assert.Equal(t, "compaction", area)
}

func mustParse(t *testing.T, text string) *symbolize.Crash {
	t.Helper()
	cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "t"})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	return cs[0]
}

// TestThreadDumpOnlyIdle: only idle threads (and threads without frames):
// unknown, and the reason says what the threads were.
func TestThreadDumpOnlyIdle(t *testing.T) {
	v, _ := classifyDump(t, dumpOf(repeat(5, stIdlePool), repeat(3, stIdleBrpc), repeat(2, stIdleDaemon), [][]string{stIdleMain}))
	assert.Equal(t, PathUnknown, v.Path)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Empty(t, v.PathRule)
	require.NotEmpty(t, v.Evidence)
	assert.Equal(t, "path unknown: no busy thread of the dump carries path evidence; thread dump: 0 of 11 threads busy; idle: 11 (doris::ThreadPool::dispatch_thread×5, bthread::TaskGroup::wait_task×3, doris::Daemon::memory_gc_thread×2, main×1)", v.Evidence[0])
}

// TestThreadDumpDisagreement: busy threads on several paths: the
// highest-priority path (background over scan), low, with the counts.
func TestThreadDumpDisagreement(t *testing.T) {
	v, _ := classifyDump(t, dumpOf(repeat(4, stScan), [][]string{stCompaction}, repeat(6, stIdlePool), [][]string{stTransfer}))
	assert.Equal(t, PathBackground, v.Path)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	require.NotEmpty(t, v.Evidence)
	assert.Contains(t, v.Evidence[0], "the busy threads disagree")
	assert.Contains(t, v.Evidence[0], "6 of 12 threads busy: 1 background (compaction×1; e.g. doris::segment_v2::SegmentIterator::next_batch), 5 scan (")
	assert.Contains(t, v.Evidence[0], "idle: 6")
	// without the compaction thread the scan threads agree
	v, _ = classifyDump(t, dumpOf(repeat(4, stScan), repeat(6, stIdlePool), [][]string{stTransfer}))
	assert.Equal(t, PathScan, v.Path)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
}

// TestThreadDumpDaemons: a daemon thread that sleeps is idle; one that
// works (here blocked on a lock) is background.
func TestThreadDumpDaemons(t *testing.T) {
	v, _ := classifyDump(t, dumpOf(repeat(3, stIdleDaemon), repeat(3, stIdlePool)))
	assert.Equal(t, PathUnknown, v.Path)
	v, _ = classifyDump(t, dumpOf(repeat(3, stIdleDaemon), [][]string{stBusyDaemon}, repeat(3, stIdlePool)))
	assert.Equal(t, PathBackground, v.Path)
	assert.Equal(t, "daemon", v.Area)
	assert.Equal(t, ConfidenceLow, v.PathConfidence, "one thread decides")
	assert.Contains(t, v.Evidence[0], "a single thread decides")
}

// TestThreadDumpDeterministic: the same dump gives the same verdict, and
// the order of its threads does not change the answer.
func TestThreadDumpDeterministic(t *testing.T) {
	parts := [][][]string{repeat(4, stScan), {stCompaction}, repeat(6, stIdlePool), {stTransfer}, repeat(2, stIdleBrpc)}
	text := dumpOf(parts...)
	v1, _ := classifyDump(t, text)
	v2, _ := classifyDump(t, text)
	assert.Equal(t, v1, v2)
	var rev [][]string
	for i := len(parts) - 1; i >= 0; i-- {
		rev = append(rev, parts[i]...)
	}
	v3, _ := classifyDump(t, pstackDump(rev...))
	assert.Equal(t, v1.Path, v3.Path)
	assert.Equal(t, v1.Area, v3.Area)
	assert.Equal(t, v1.PathConfidence, v3.PathConfidence)
	assert.Equal(t, v1.PathRule, v3.PathRule)
}

// TestThreadDumpRealTexts: the thread dumps among the format samples and
// paste fixtures.
func TestThreadDumpRealTexts(t *testing.T) {
	c := defaultCatalog(t)
	for _, tc := range []struct {
		file       string
		path       Path
		area       string
		conf       Confidence
		evidence   string
		threadLine string
	}{
		{"testdata/formats/f7-jstack.txt", PathQuery, "udf", ConfidenceLow,
			"thread dump: 1 of 8 threads busy: 1 query (udf×1; e.g. org.apache.doris.udf.Foo.evaluate); idle: 6 (java.util.concurrent.ThreadPoolExecutor.getTask×6); without frames: 1", "(main): path query/udf by rule query-udf"},
		{"testdata/formats/f7-doris-api-stack-trace.txt", PathUnknown, "", ConfidenceLow,
			"path unknown: no busy thread of the dump carries path evidence; thread dump: 0 of 2 threads busy; idle: 1 (doris::ThreadPool::dispatch_thread×1); without frames: 1", ""},
		{"testdata/formats/f7-starrocks-diagnose.txt", PathUnknown, "", ConfidenceLow,
			"idle: 4 (bthread::TaskGroup::wait_task×3, starrocks::ThreadPool::dispatch_thread×1)", ""},
		{"symbolize/internal/scan/testdata/paste/pstack.txt", PathScan, "scan-operator", ConfidenceLow,
			"thread dump: 1 of 3 threads busy: 1 scan (scan-operator×1; e.g. doris::OlapScanNode::transfer_thread); idle: 2 (doris::ThreadPool::dispatch_thread×1, main×1)", "path scan/scan-operator by rule scan-operator"},
		{"symbolize/internal/scan/testdata/paste/gdb-thread-lwp-only.txt", PathScan, "segment-read", ConfidenceLow, "1 of 1 threads busy", "by rule scan-segment-read"},
	} {
		p := parseLog(t, tc.file)
		require.NotEmpty(t, p.crashes, tc.file)
		require.Equal(t, symbolize.KindThreadDump, p.crashes[0].Kind, tc.file)
		v := c.Classify(p.crashes[0], p.sigs[0])
		assert.Equal(t, tc.path, v.Path, tc.file)
		assert.Equal(t, tc.area, v.Area, tc.file)
		assert.Equal(t, tc.conf, v.PathConfidence, tc.file)
		require.NotEmpty(t, v.Evidence, tc.file)
		assert.Contains(t, v.Evidence[0], tc.evidence, tc.file)
		if tc.threadLine != "" {
			require.Greater(t, len(v.Evidence), 1, tc.file)
			assert.Contains(t, v.Evidence[1], tc.threadLine, tc.file)
		}
	}
	// a crash with all threads printed is decided by its crashing thread, not as a dump
	p := parseLog(t, "testdata/formats/f7-gdb-thread-apply-all.txt")
	require.NotEqual(t, symbolize.KindThreadDump, p.crashes[0].Kind)
	v := c.Classify(p.crashes[0], p.sigs[0])
	assert.Equal(t, PathScan, v.Path)
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "thread dump:")
}

// TestIdleKnowledgeDecoding: the idle lists decode strictly, merge as a
// union and are returned as copies.
func TestIdleKnowledgeDecoding(t *testing.T) {
	def := defaultCatalog(t)
	k := def.Stack()
	assert.Contains(t, k.IdleFrames, "*::ThreadPool::dispatch_thread")
	assert.Contains(t, k.IdleWaits, "pthread_cond_wait*")
	k.IdleFrames[0] = "x"
	assert.NotEqual(t, "x", def.Stack().IdleFrames[0], "Stack returns a copy")

	user, err := Parse("u.yaml", []byte("schema: 1\nrevision: u1\nstack:\n  idle_waits: [\"acme_wait\"]\n  idle_frames: [\"acme::Pool::loop\"]\n"))
	require.NoError(t, err)
	m, err := Merge(def, user)
	require.NoError(t, err)
	idle, at := m.stack.idle.idleOf([]string{"acme_wait", "acme::Pool::loop"})
	assert.True(t, idle)
	assert.Equal(t, 1, at)
	idle, _ = def.stack.idle.idleOf([]string{"acme_wait", "acme::Pool::loop"})
	assert.False(t, idle)

	for _, bad := range []struct{ yaml, field string }{
		{"stack:\n  idle_frames: [\"a**b\"]\n", "stack.idle_frames[0]"},
		{"stack:\n  idle_waits: [\"\"]\n", "stack.idle_waits[0]"},
		{"stack:\n  idle_frames: wait\n", "stack.idle_frames"},
	} {
		_, err := Parse("b.yaml", []byte("schema: 1\nrevision: b1\n"+bad.yaml))
		require.Error(t, err, bad.yaml)
		var e *Error
		require.True(t, errors.As(err, &e), bad.yaml)
		assert.Equal(t, bad.field, e.Field, bad.yaml)
	}
}

// TestThreadDumpBounded: a dump with more distinct stacks than
// maxDumpGroups examines the first ones and says how many it left.
func TestThreadDumpBounded(t *testing.T) {
	var threads []symbolize.Thread
	for i := 0; i < maxDumpGroups+3; i++ {
		threads = append(threads, symbolize.Thread{ID: int64(i), Frames: []symbolize.Frame{{Function: fmt.Sprintf("acme_%d", i)}, {Function: "start_thread"}}})
	}
	crash := &symbolize.Crash{Kind: symbolize.KindThreadDump, Threads: threads}
	v := defaultCatalog(t).Classify(crash, signature.Generate(crash))
	assert.Equal(t, PathUnknown, v.Path)
	assert.Contains(t, v.Evidence[0], fmt.Sprintf("busy without path evidence: %d", maxDumpGroups))
	assert.Contains(t, v.Evidence[0], "not examined: 3")
}

// FuzzThreadDump: any text parsed and classified: a thread dump's path is
// never high confidence, its first evidence line is the dump's, and the
// verdict is deterministic.
func FuzzThreadDump(f *testing.F) {
	f.Add(dumpOf(repeat(2, stCompaction), repeat(3, stIdlePool), [][]string{stIdleMain}))
	f.Add(dumpOf(repeat(2, stScan), [][]string{stTransfer, stBusyDaemon, stIdleDaemon, stIdleBrpc, stIdleTaskSched}))
	f.Add("Thread 1 (Thread 0x7f (LWP 1)):\n#0  0x1 in pthread_cond_wait ()\n#1  0x2 in doris::ThreadPool::dispatch_thread() ()\n")
	f.Add("\"main\" #1 prio=5 os_prio=0 tid=0x1 nid=0x2 waiting on condition\n   java.lang.Thread.State: TIMED_WAITING (sleeping)\n\tat java.lang.Thread.sleep(Native Method)\n\tat org.apache.doris.udf.Foo.evaluate(Foo.java:42)\n")
	c, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{Source: "f"})
		if err != nil {
			return
		}
		for _, cr := range cs {
			sig := signature.Generate(cr)
			v := c.Classify(cr, sig)
			require.Equal(t, v, c.Classify(cr, sig), "deterministic")
			if cr.Kind != symbolize.KindThreadDump {
				continue
			}
			require.NotEmpty(t, v.Evidence)
			if v.Defect == nil {
				assert.NotEqual(t, ConfidenceHigh, v.PathConfidence)
				assert.Contains(t, v.Evidence[0], "thread dump: ")
				p, _ := c.PathOf(cr)
				assert.Equal(t, v.Path, p)
			}
		}
	})
}
