package scan

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// restartText is an exit line of one run, glog's header of the next run's
// log file, a start line, then a crash of the next run.
const restartText = `I20240527 10:00:00.000000 12345 doris_main.cpp:620] Doris main exiting.
Log file created at: 2024/05/28 11:06:21
Running on machine: host1
Log line format: [IWEF]yyyymmdd hh:mm:ss.uuuuuu threadid file:line] msg
I20240528 11:06:22.000000 22222 doris_main.cpp:470] Doris backend JNI is initialized.
I20240528 11:06:23.000000 22222 fragment_mgr.cpp:100] an ordinary line
*** Aborted at 1716865583 (unix time) try "date -d @1716865583" if you are using GNU date ***
*** SIGSEGV address not mapped to object (@0x10) received by PID 22222 (TID 0x7f61da9f3700) from PID 16; stack trace: ***
 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /root/doris/be/src/common/signal_handler.h:413
 1# 0x00007F6370552090 in /lib/x86_64-linux-gnu/libc.so.6
 2# doris::Tablet::cooldown() at /root/doris/be/src/olap/tablet.cpp:1971
`

func lifecycleEvents(c *Crash) []Event {
	var out []Event
	for _, e := range c.Events {
		if e.Kind == EventLifecycleLog {
			out = append(out, e)
		}
	}
	return out
}

// TestRestartMarkers: glog's log-file header and the Doris start line are
// lifecycle-log context events after the exit line, in input order; the
// other header lines and ordinary glog lines are not.
func TestRestartMarkers(t *testing.T) {
	cs, err := ParseAll(context.Background(), strings.NewReader(restartText), ScanOptions{Source: "t"})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	ev := lifecycleEvents(cs[0])
	require.Len(t, ev, 3)
	assert.Equal(t, 1, ev[0].Line)
	assert.Contains(t, ev[0].Text, "Doris main exiting.")
	assert.Equal(t, 2, ev[1].Line)
	assert.Equal(t, "Log file created at: 2024/05/28 11:06:21", ev[1].Text)
	assert.Equal(t, 5, ev[2].Line)
	assert.Contains(t, ev[2].Text, "Doris backend JNI is initialized.")

	// The prefilter finds the header like the full rule set does.
	assert.Equal(t, scanJSON(t, strings.NewReader(restartText), ScanOptions{}, false), scanJSON(t, strings.NewReader(restartText), ScanOptions{}, true))

	// Another program's `Log file created at: <path>` is not glog's header.
	text := strings.Replace(restartText, "Log file created at: 2024/05/28 11:06:21", "Log file created at: /tmp/run.log", 1)
	cs, err = ParseAll(context.Background(), strings.NewReader(text), ScanOptions{Source: "t"})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Len(t, lifecycleEvents(cs[0]), 2)
}

func TestIsLifecycleMsg(t *testing.T) {
	for _, m := range []string{"BE start step 1: daemon threads start successfully", "BE exited successfully", "Doris main exiting.", "Doris backend JNI is initialized.", "got signal: Terminated from pid: 1, is going to exit"} {
		assert.True(t, isLifecycleMsg(m), m)
	}
	for _, m := range []string{"", "Doris backend JNI", "BE heartbeat ok", "got signal: Hangup", "Log file created at: 2024/05/28 11:06:21"} {
		assert.False(t, isLifecycleMsg(m), m)
	}
}

// be.out's start banner (`start time: …`, F0.start) resets the context
// of what follows: a lifecycle line, a memory-limit line and a version
// banner of the run before it are not the next crash's (corpus doris/166:
// the BE started minutes before its crash; its glog pre-init lines are
// no lifecycle lines either).
func TestStartBannerResetsContext(t *testing.T) {
	before := "I20220411 14:00:00.000000 1 doris_main.cpp:620] Doris main exiting.\n" +
		"I20220411 14:00:00.000001 1 daemon.cpp:100] version doris-1.1.0-rc01 RELEASE (build git://x@4f5a6b7)\n"
	crash := mustRead(t, "../../../testdata/corpus/doris/166-dev-1.1-vec-stream-load-replace-varchar-column-string-insert-data-start-banner.txt")
	cs := parseText(t, before+crash)
	require.Len(t, cs, 1)
	assert.Empty(t, cs[0].Events, "the start banner ends the earlier run's context")
	assert.Empty(t, cs[0].Version)
	assert.Equal(t, 7, cs[0].StartLine, "the crash starts at its Aborted line, after the start lines")
	// Without the start banner the exit line is the crash's context.
	cs = parseText(t, before+strings.Replace(crash, "start time: Mon Apr 11 14:31:42 CST 2022\n", "", 1))
	require.Len(t, cs, 1)
	assert.Len(t, lifecycleEvents(cs[0]), 1)
	assert.Equal(t, "doris-1.1.0-rc01", cs[0].Version)
}

// TestLifecyclePrefixes: isLifecycleMsg tests a message's second byte
// before its prefix, so every prefix has two bytes at least, and every
// message of the table is found through lifecycleByFirst.
func TestLifecyclePrefixes(t *testing.T) {
	for _, m := range lifecycleMsgs {
		require.GreaterOrEqual(t, len(m.prefix), 2, m.prefix)
		msg := m.prefix + " " + m.contains
		assert.True(t, isLifecycleMsg(msg), msg)
	}
	assert.False(t, isLifecycleMsg("Current memory usage: process 12.3 GB"))
	assert.False(t, isLifecycleMsg("C"))
}

// TestWorkerExitLines: the lines of workers that stop only with the
// process (FragmentMgr's cancel worker, StarRocks' RuntimeFilterWorker and
// ProfileReportWorker) and googletest's tear-down line are lifecycle-log
// events before the crash; an ordinary worker line is not.
func TestWorkerExitLines(t *testing.T) {
	const text = `I0308 01:05:16.386462 600683 runtime_filter_worker.cpp:929] RuntimeFilterWorker going to exit.
I0308 01:05:16.430526 600686 profile_report_worker.cpp:124] ProfileReportWorker going to exit.
I0308 01:05:16.531662 600688 result_buffer_mgr.cpp:173] result buffer manager cancel thread finish.
I0308 01:05:16.739181 600458 fragment_mgr.cpp:582] FragmentMgr cancel worker is going to exit.
I0308 01:05:16.739182 600458 fragment_mgr.cpp:590] FragmentMgr cancel worker going to cancel timeout fragment 1-2
[----------] Global test environment tear-down
*** Aborted at 1716865583 (unix time) try "date -d @1716865583" if you are using GNU date ***
PC: @          0x352bf06 starrocks::bvar_helper()
*** SIGSEGV (@0x10) received by PID 22222 (TID 0x7f61da9f3700) from PID 16; stack trace: ***
    @          0x2f43f62 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7fae19442630 (unknown)
    @          0x352bf06 starrocks::bvar_helper()
`
	cs, err := ParseAll(context.Background(), strings.NewReader(text), ScanOptions{})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	var got []string
	for _, e := range lifecycleEvents(cs[0]) {
		got = append(got, e.Text[strings.LastIndexByte(e.Text, ']')+1:])
	}
	assert.Equal(t, []string{" RuntimeFilterWorker going to exit.", " ProfileReportWorker going to exit.", " FragmentMgr cancel worker is going to exit.", " Global test environment tear-down"}, got)
}
