package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize"
)

// dorisDump is a Doris boost-stacktrace dump whose crashing thread has
// kernel id tid in process pid, with the given frames after the handler.
func dorisDump(pid, tid int, frames ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*** Query id: 0-0 ***\n*** Aborted at 1777288253 (unix time) try \"date -d @1777288253\" if you are using GNU date ***\n")
	fmt.Fprintf(&b, "*** SIGSEGV address not mapped to object (@0x0) received by PID %d (TID %d OR 0x7f6d057be200) from PID 0; stack trace: ***\n", pid, tid)
	b.WriteString(" 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /root/doris/be/src/common/signal_handler.h:421\n")
	b.WriteString(" 1# 0x00007F4F34340400 in /lib64/libc.so.6\n")
	for i, f := range frames {
		fmt.Fprintf(&b, " %d# %s in /opt/doris/be/lib/doris_be\n", i+2, f)
	}
	return b.String()
}

// TestMainThreadEvidence: a crashing thread whose kernel id is the PID is
// the BE's main thread, which only starts and stops the process: lifecycle
// whatever its frames, also with none after the handler; main's own
// memory bookkeeping loop stays background; another thread's crash with
// the same frames is decided by them.
func TestMainThreadEvidence(t *testing.T) {
	compaction := []string{"doris::Compaction::do_compaction(long)", "doris::StorageEngine::_compaction_tasks_producer_callback()", "doris::Thread::supervise_thread(void*)", "start_thread"}

	v, cr := classifyText(t, dorisDump(31315, 31315, compaction...))
	require.Equal(t, int64(31315), cr.PID)
	assert.Equal(t, PathLifecycle, v.Path, "%v", v.Evidence)
	assert.Equal(t, "lifecycle-main-thread-tid", v.PathRule)
	assert.Equal(t, ConfidenceHigh, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], `main thread "TID 31315 = PID 31315"`)

	// Another thread: the frames decide (compaction).
	v, _ = classifyText(t, dorisDump(31315, 31400, compaction...))
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)

	// Cut after the handler: the main thread alone is the evidence.
	v, _ = classifyText(t, dorisDump(31315, 31315))
	assert.Equal(t, "lifecycle-main-thread-tid", v.PathRule, "%v", v.Evidence)
	assert.Contains(t, v.Evidence[0], "has no frame after the crash mechanism")

	// Doris 1.x-2.0 main's periodic memory bookkeeping: background, with or
	// without main below it.
	v, _ = classifyText(t, dorisDump(31315, 31315, "doris::MemInfo::refresh_proc_meminfo()"))
	assert.Equal(t, "background-main-loop-tid", v.PathRule, "%v", v.Evidence)
	v, _ = classifyText(t, dorisDump(31315, 31315, "doris::MemInfo::refresh_proc_meminfo()", "main", "__libc_start_main"))
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)

	// A lifecycle rule that names the step keeps its area.
	v, _ = classifyText(t, dorisDump(31315, 31315, "doris::ExecEnv::destroy()", "main"))
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, "shutdown", v.Area, "%v", v.Evidence)
}

// TestMainThreadHolds: only a kernel thread id equal to the PID of the
// same header is the main thread; a pthread_t printed as the TID, an
// unknown PID and a non-crashing thread with the PID's id are not.
func TestMainThreadHolds(t *testing.T) {
	for name, tc := range map[string]struct {
		crash symbolize.Crash
		want  bool
	}{
		"tid = pid":         {symbolize.Crash{PID: 7, Threads: []symbolize.Thread{{Crashed: true, ID: 7}}}, true},
		"other thread":      {symbolize.Crash{PID: 7, Threads: []symbolize.Thread{{Crashed: true, ID: 8}}}, false},
		"no pid":            {symbolize.Crash{Threads: []symbolize.Thread{{Crashed: true, ID: 0}}}, false},
		"pthread_t as pid":  {symbolize.Crash{PID: 0x7f6d057be200, Threads: []symbolize.Thread{{Crashed: true, ID: 0x7f6d057be200}}}, false},
		"main not crashing": {symbolize.Crash{PID: 7, Threads: []symbolize.Thread{{ID: 7}, {Crashed: true, ID: 9}}}, false},
		"no crashing":       {symbolize.Crash{PID: 7, Threads: []symbolize.Thread{{ID: 7}}}, false},
	} {
		_, ok := mainThreadHolds(&tc.crash)
		assert.Equal(t, tc.want, ok, name)
	}
	_, ok := mainThreadHolds(nil)
	assert.False(t, ok)
}

// TestMainThreadDecoded: main_thread is a boolean field of a path rule.
func TestMainThreadDecoded(t *testing.T) {
	f, err := Parse("t.yaml", []byte("schema: 1\nrevision: r\npaths: [{id: a, path: lifecycle, area: main-thread, frames: ['*'], main_thread: true, why: w}]\n"))
	require.NoError(t, err)
	require.Len(t, f.Rules, 1)
	assert.True(t, f.Rules[0].MainThread)
	_, err = Parse("t.yaml", []byte("schema: 1\nrevision: r\npaths: [{id: a, path: lifecycle, area: main-thread, frames: ['*'], main_thread: sometimes, why: w}]\n"))
	require.Error(t, err)
}
