package scan

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cutCorpus returns the lines of a corpus text from line from (1-based) to
// the end: a stack fragment made by cutting off the dump's header and its
// first frames.
func cutCorpus(t *testing.T, name string, from int) string {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/corpus/" + name)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.Greater(t, len(lines), from)
	return strings.Join(lines[from-1:], "")
}

func parseText(t *testing.T, text string) []*Crash {
	t.Helper()
	cs, err := ParseAll(context.Background(), strings.NewReader(text), ScanOptions{})
	require.NoError(t, err)
	return cs
}

func TestHeaderlessFragment(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		first int // index of the first frame
		n     int // frames at least
	}{
		// boost frames 10.. of a Doris dump (header and frames 0-9 cut off)
		{"boost", cutCorpus(t, "doris/124-ubsan-check-failed-pod-array-lead-lag-4x-mixed.txt", 51), 10, 13},
		// gdb frames #3.. of a backtrace
		{"gdb", cutCorpus(t, "doris/083-gdb-dcheck-mem-limit-exceeded-log.txt", 4), 3, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, text := range []string{tc.text, "I1201 10:00:00.000000 1 x.cpp:1] before\n" + tc.text + "I1201 10:00:01.000000 1 x.cpp:2] after\n"} {
				cs := parseText(t, text)
				require.Len(t, cs, 1)
				c := cs[0]
				assert.Equal(t, KindUnknown, c.Kind)
				assert.True(t, c.Corrupted)
				assert.Contains(t, c.CorruptedReason, fragmentReason)
				ct := c.CrashingThread()
				require.NotNil(t, ct)
				require.GreaterOrEqual(t, len(ct.Frames), tc.n)
				assert.Equal(t, tc.first, ct.Frames[0].Index)
				assert.NotEmpty(t, ct.Frames[0].Function)
			}
		})
	}
}

// Boost frames whose module is the bare backend binary are frames too.
func TestHeaderlessFragmentBareModule(t *testing.T) {
	text := "10# doris::vectorized::IAggregateFunctionHelper<doris::vectorized::AggregateFunctionBitmapUnion>::deserialize_and_merge_from_column_range(char*, doris::vectorized::IColumn const&, unsigned long, unsigned long, doris::vectorized::Arena*) const in doris_be\n" +
		"11# doris::vectorized::BlockReader::_update_agg_data(doris::vectorized::MutableColumns&) in doris_be\n" +
		"12# doris::vectorized::VerticalBlockReader::_update_agg_value(doris::vectorized::MutableColumns&, int, bool) at /root/doris/be/src/vec/olap/vertical_block_reader.cpp:326\n"
	cs := parseText(t, text)
	require.Len(t, cs, 1)
	assert.Equal(t, KindUnknown, cs[0].Kind)
	assert.Contains(t, cs[0].CorruptedReason, fragmentReason)
	require.Len(t, cs[0].CrashingThread().Frames, 3)
	assert.Empty(t, parseText(t, "1# build in docker\n2# test in ci\n3# deploy in prod\n"))
}

// A fragment needs a consecutive run of at least three frames.
func TestHeaderlessFragmentTooShort(t *testing.T) {
	full := cutCorpus(t, "doris/124-ubsan-check-failed-pod-array-lead-lag-4x-mixed.txt", 51)
	lines := strings.SplitAfter(full, "\n")
	assert.Empty(t, parseText(t, strings.Join(lines[:2], "")), "two frames are not a fragment")
	assert.Len(t, parseText(t, strings.Join(lines[:3], "")), 1, "three frames are")
	// a jump in the numbering: 10, 12, 13
	assert.Empty(t, parseText(t, lines[0]+lines[2]+lines[3]))
}

// A paste cut at an inlined gdb frame starts on a frame without an
// address whose location gdb wrapped onto the next line: it opens the
// fragment when that location follows, and nothing when it does not.
func TestHeaderlessFragmentAddresslessGDB(t *testing.T) {
	opener := "#46 std::_Function_handler<void (), doris::vectorized::ScannerScheduler::submit(std::shared_ptr<doris::vectorized::ScannerContext>)::$_1::operator()() const::{lambda()#1}>::_M_invoke(std::_Any_data const&) (__functor=...)\n"
	at := "    at /opt/toolchain/include/c++/11/bits/std_function.h:291\n"
	rest := "#47 0x0000561db962137a in doris::ThreadPool::dispatch_thread (this=0x7f9a50f9d380)\n" +
		"    at /src/doris/be/src/util/threadpool.cpp:602\n" +
		"#48 doris::Thread::supervise_thread (arg=0x7f969f569ce0) at /src/doris/be/src/util/thread.cpp:498\n" +
		"#49 0x00007f9aca4a2215 in start_thread () from /lib64/libc.so.6\n"
	cs := parseText(t, opener+at+rest)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 4)
	assert.Equal(t, 46, ct.Frames[0].Index)
	assert.Contains(t, ct.Frames[0].Function, "ScannerScheduler::submit")
	assert.Equal(t, "/opt/toolchain/include/c++/11/bits/std_function.h", ct.Frames[0].File)
	assert.Contains(t, cs[0].CorruptedReason, fragmentReason)

	// Without its location line the addressless frame is not taken: the
	// fragment starts at the next frame with an address, as before.
	for _, text := range []string{opener + rest, opener + "\n" + rest} {
		cs = parseText(t, text)
		require.Len(t, cs, 1)
		assert.Equal(t, 47, cs[0].CrashingThread().Frames[0].Index, "%q", text)
	}

	// Numbered prose with gdb's argument shape but words for a name.
	assert.Empty(t, parseText(t, "#2 see the notes (above)\n    at home:1\n#3 ask (twice)\n#4 done (x)\n"))
}

// A collapsed boost paste that starts inside a frame whose number was cut
// off with the lines above: the text before the first `N# ` is frame N-1,
// which makes the run long enough for a fragment.
func TestCollapsedBoostFirstPart(t *testing.T) {
	line := "doris::vectorized::ScannerSplitRunner::process_for(long) at /src/be/src/vec/exec/scan/scanner_scheduler.cpp:420 " +
		"10# doris::vectorized::PrioritizedSplitRunner::process() at /src/be/src/vec/exec/executor/prioritized_split_runner.cpp:104 " +
		"11# doris::vectorized::TimeSharingTaskExecutor::_dispatch_thread() at /src/be/src/vec/exec/executor/time_sharing_task_executor.cpp:568 12#\n"
	ct := oneCrashingThread(t, line, 3)
	assert.Equal(t, 9, ct.Frames[0].Index)
	assert.Equal(t, "doris::vectorized::ScannerSplitRunner::process_for(long)", ct.Frames[0].Function)
	assert.Equal(t, 420, ct.Frames[0].Line)

	// Words before the first marker are not a frame: two frames stay too
	// few for a fragment.
	assert.Empty(t, parseText(t, "the stack was at the end of the log in be.out "+line[strings.Index(line, "10# "):]))
	parts := []string{"see it in doris_be", "10# f() in doris_be"}
	assert.False(t, repairFirstPart(parts))
}

// Numbered lines that are not frames open no incident.
func TestHeaderlessFragmentLookAlikes(t *testing.T) {
	texts := []string{
		"1# item one\n2# item two\n3# item three\n4# item four\n",
		"1# retry at host:8080\n2# retry at host:8081\n3# retry at host:8082\n",
		"10# see the notes in the manual\n11# ask on the list\n12# file an issue\n",
		"#1 see above (twice)\n#2 see below\n#3 done\n",
		"2024-05-01 10:00:00 INFO start\n2024-05-01 10:00:01 INFO at Foo.bar(Foo.java:12)\n3 rows in set\n",
		"\tat org.apache.Foo.bar(Foo.java:12)\n\tat org.apache.Foo.baz(Foo.java:13)\n\tat org.apache.Foo.qux(Foo.java:14)\n",
	}
	for _, text := range texts {
		assert.Empty(t, parseText(t, text), "%q", text)
	}
}

// TestProductFromFrames: frames name the product when nothing stated it,
// including the libraries only one product links (StarCache and StarOS
// are StarRocks').
func TestProductFromFrames(t *testing.T) {
	mk := func(names ...string) *Crash {
		th := Thread{Crashed: true}
		for _, n := range names {
			th.Frames = append(th.Frames, Frame{Function: n})
		}
		return &Crash{Threads: []Thread{th}}
	}
	for _, tc := range []struct {
		names []string
		want  Product
	}{
		{[]string{"rocksdb::port::Mutex::Lock()", "starcache::RocksDBKV::shutdown()", "starcache::StarCache::~StarCache()"}, ProductStarRocks},
		{[]string{"staros::starlet::Starlet::heartbeat()"}, ProductStarRocks},
		{[]string{"starrocks::starcache::StarCache::~StarCache()"}, ProductStarRocks},
		{[]string{"doris::StorageEngine::stop()", "rocksdb::DBImpl::Close()"}, ProductDoris},
		{[]string{"rocksdb::DBImpl::CloseHelper()", "rocksdb::DBImpl::Close()"}, ProductUnknown},
		{[]string{"mystarcache::Get()"}, ProductUnknown},
	} {
		assert.Equal(t, tc.want, ProductFromFrames(mk(tc.names...)), "%v", tc.names)
	}
}

// A paste inside an inline code span that runs over several lines: only
// its first line carries the backtick, which is no paste prefix (the
// frames below it are one dump with it), and a line with another
// backtick in it is left alone.
func TestInlineCodeOpeningBacktick(t *testing.T) {
	text := "`0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /src/be/src/common/signal_handler.h:413\n" +
		" 1# 0x00007F4592DA9BF9 in /usr/lib/jvm/java-11/lib/server/libjvm.so\n" +
		" 2# JVM_handle_linux_signal in /usr/lib/jvm/java-11/lib/server/libjvm.so\n" +
		" 3# doris::MemTableFlushExecutor::create_flush_token(std::unique_ptr<doris::FlushToken>*) at /src/be/src/olap/memtable_flush_executor.cpp:180\n" +
		" 4# start_thread in /lib64/libpthread.so.0\n"
	ct := oneCrashingThread(t, text, 5)
	assert.Equal(t, 0, ct.Frames[0].Index)

	b, _, prefixed := normalizeLine([]byte("`*** Query id: 0-0 ***"))
	assert.Equal(t, "*** Query id: 0-0 ***", string(b))
	assert.False(t, prefixed)
	b, _, _ = normalizeLine([]byte("`k1` is null"))
	assert.Equal(t, "`k1` is null", string(b), "a code span that closes on the line is the line's text")
}

// A boost dump re-wrapped at blanks: the location after ` in`/` at` on the
// next line, a frame's number alone on its line. The frames keep their
// names, locations and numbers; a dangling ` at` never ends a name.
func TestBoostRewrapped(t *testing.T) {
	text := "*** SIGSEGV address not mapped to object (@0xf8) received by PID 23579 (TID 26524 OR 0x7f84d4240640) from PID 248; stack trace: ***\n" +
		" 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at\n" +
		"/src/be/src/common/signal_handler.h:421\n" +
		" 1# JVM_handle_linux_signal in\n" +
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n" +
		" 2# 0x00007F88F4063520 in /lib/x86_64-linux-gnu/libc.so.6\n" +
		"3#\n" +
		"doris::pipeline::SetProbeSinkOperatorX::_finalize_probe(doris::RuntimeState*) at /src/be/src/pipeline/exec/set_probe_sink_operator.cpp:229\n" +
		" 4# start_thread in /lib64/libpthread.so.0\n"
	ct := oneCrashingThread(t, text, 5)
	assert.Equal(t, "/src/be/src/common/signal_handler.h", ct.Frames[0].File)
	assert.Equal(t, "JVM_handle_linux_signal", ct.Frames[1].Function)
	assert.Equal(t, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", ct.Frames[1].Module)
	assert.Equal(t, 3, ct.Frames[3].Index)
	assert.Equal(t, "doris::pipeline::SetProbeSinkOperatorX::_finalize_probe(doris::RuntimeState*)", ct.Frames[3].Function)
	assert.Equal(t, 229, ct.Frames[3].Line)

	// Without the next line the dangling keyword is still no part of the name.
	ct = oneCrashingThread(t, " 0# doris::Foo::bar() at\n 1# doris::Foo::baz() in\n 2# start_thread in /lib64/libpthread.so.0\n", 3)
	assert.Equal(t, "doris::Foo::bar()", ct.Frames[0].Function)
	assert.Equal(t, "doris::Foo::baz()", ct.Frames[1].Function)
}

// oneCrashingThread requires that text is one incident whose crashing
// thread has n frames, and returns that thread.
func oneCrashingThread(t *testing.T, text string, n int) *Thread {
	t.Helper()
	cs := parseText(t, text)
	require.Len(t, cs, 1)
	ct := cs[0].CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, n)
	return ct
}

// StarRocks' CpuInfo prints its sched_getcpu notice to stderr without a
// newline: the next stderr line (here glog's F line) is glued to it. The
// notice is dropped and the F line read.
func TestGluedCPUNotice(t *testing.T) {
	text := "I20260720 06:16:21.839099 139898394305344 starrocks_main.cpp:201] file system provider registry init successfully\n" +
		"Built on a system without sched_getcpu() support. Performance may be impacted.F20260720 06:18:05.875302 139891042170560 column_access_path.cpp:177] Check failed: iter->_children.size() <= 1 \n" +
		"*** Aborted at 1784528285 (unix time) try \"date -d @1784528285\" if you are using GNU date ***\n" +
		"*** SIGABRT (@0x9fd15) received by PID 654613 (TID 0x7f3aebe036c0) LWP(655056) from PID 654613; stack trace: ***\n" +
		"    @     0x7f3ca24deb2c pthread_kill\n"
	cs := parseText(t, text)
	require.Len(t, cs, 1)
	assert.Equal(t, KindCheck, cs[0].Kind)
	assert.Equal(t, "iter->_children.size() <= 1", cs[0].CheckExpr)
	assert.Equal(t, "column_access_path.cpp", cs[0].SiteFile)

	b, _, prefixed := normalizeLine([]byte("Kernel does not support sched_getcpu(). Performance may be impacted.UNKNOWN ASAN (build UNKNOWN distro ubuntu arch x86_64)"))
	assert.Equal(t, "UNKNOWN ASAN (build UNKNOWN distro ubuntu arch x86_64)", string(b))
	assert.False(t, prefixed)
	b, _, _ = normalizeLine([]byte("Built on a system without sched_getcpu() support. Performance may be impacted."))
	assert.Equal(t, "Built on a system without sched_getcpu() support. Performance may be impacted.", string(b), "the notice alone is kept")
}

// glog prints `*** Aborted at …`, `PC:` and the signal line before its `@`
// frames; frames without them are the tail of a dump whose head was lost,
// and the incident says so (corrupted, like a headerless boost or gdb
// fragment). The same frames after their header are a whole dump.
func TestHeaderlessGlogFrames(t *testing.T) {
	frames := "    @          0x8c0d1e2 starrocks::pipeline::PipelineDriver::process(starrocks::RuntimeState*, int)\n" +
		"    @          0x8bf0a11 starrocks::pipeline::GlobalDriverExecutor::_worker_thread()\n" +
		"    @          0x5e0f1a2 starrocks::ThreadPool::dispatch_thread()\n" +
		"    @          0x5e0a0b3 starrocks::Thread::supervise_thread(void*)\n" +
		"    @     0x7f6c2d894ac3 (/usr/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)\n" +
		"    @     0x7f6c2d926850 (/usr/lib/x86_64-linux-gnu/libc.so.6+0x12684f)\n"
	cs := parseText(t, frames)
	require.Len(t, cs, 1)
	assert.True(t, cs[0].Corrupted)
	assert.Contains(t, cs[0].CorruptedReason, "without its dump header")
	assert.Len(t, cs[0].CrashingThread().Frames, 6)

	whole := "*** Aborted at 1751000000 (unix time) try \"date -d @1751000000\" if you are using GNU date ***\n" +
		"PC: @          0x8c0d1e2 starrocks::pipeline::PipelineDriver::process(starrocks::RuntimeState*, int)\n" +
		"*** SIGSEGV (@0x0) received by PID 1 (TID 0x7f6c2d0ff640) from PID 0; stack trace: ***\n" + frames
	cs = parseText(t, whole)
	require.Len(t, cs, 1)
	assert.False(t, cs[0].Corrupted, cs[0].CorruptedReason)
	assert.Equal(t, "SIGSEGV", cs[0].Signal)
}
