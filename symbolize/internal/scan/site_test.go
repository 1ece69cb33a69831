package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// glogSite reads the location of a glog prefix: the last word before the
// first `]`, split at its last colon; anything else is no location.
func TestGlogSite(t *testing.T) {
	cases := []struct {
		line, file string
		n          int
	}{
		{"F20250410 13:57:30.656278 190868 hierarchical_data_reader.h:141] Check failed: a == b", "hierarchical_data_reader.h", 141},
		{"F1116 14:17:18.926105 22291 segment_iterator.cpp:536] Check failed: false msg [x]", "segment_iterator.cpp", 536},
		{"F0611 08:02:41.118230 90211 file.cpp:0] x", "", 0},
		{"F0611 08:02:41.118230 90211 file.cpp:] x", "", 0},
		{"F0611 08:02:41.118230 90211 file.cpp:12a] x", "", 0},
		{"F0611 08:02:41.118230 90211 :12] x", "", 0},
		{"F0611 08:02:41.118230 90211 file.cpp:1234567890] x", "", 0},
		{"no bracket at all", "", 0},
	}
	for _, tc := range cases {
		f, n := glogSite(tc.line)
		assert.Equal(t, tc.file, f, tc.line)
		assert.Equal(t, tc.n, n, tc.line)
	}
}

// A check failure and a UBSAN report record the location their failure
// line printed; a signal dump prints none.
func TestCrashSite(t *testing.T) {
	cs := parseText(t, "I20250410 13:57:30.000000 190868 olap_server.cpp:10] ok\n"+
		"F20250410 13:57:30.656278 190868 vtablet_writer_v2.cpp:584] Check failed: false failed tablet 10026 should have failed reason\n")
	require.Len(t, cs, 1)
	assert.Equal(t, KindCheck, cs[0].Kind)
	assert.Equal(t, "vtablet_writer_v2.cpp", cs[0].SiteFile)
	assert.Equal(t, 584, cs[0].SiteLine)

	cs = parseText(t, "/root/doris/be/src/olap/bloom_filter_predicate.h:43:32: runtime error: downcast of address 0x7f8ec2b691a0 which does not point to an object of type 'X'\n")
	require.Len(t, cs, 1)
	assert.Equal(t, KindSanitizer, cs[0].Kind)
	assert.Equal(t, "/root/doris/be/src/olap/bloom_filter_predicate.h", cs[0].SiteFile)
	assert.Equal(t, 43, cs[0].SiteLine)

	cs = parseText(t, ubsanThenDump(""))
	require.NotEmpty(t, cs)
	for _, c := range cs {
		if c.Kind == KindSignal {
			assert.Empty(t, c.SiteFile, "a signal dump prints no site")
		}
	}
}

// ubsanThenDump is a stackless UBSAN report, then gap, then a Doris
// signal dump of a null call in the same code.
func ubsanThenDump(gap string) string {
	return "/root/doris/be/src/runtime/fragment_mgr.cpp:1064:20: runtime error: member call on null pointer of type 'doris::PBackendService_Stub'\n" +
		"\n" +
		"SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /root/doris/be/src/runtime/fragment_mgr.cpp:1064:20 in\n" +
		gap +
		"*** Query id: 0-0 ***\n" +
		"*** tablet id: 0 ***\n" +
		"*** Aborted at 1731663847 (unix time) try \"date -d @1731663847\" if you are using GNU date ***\n" +
		"*** SIGSEGV address not mapped to object (@0x0) received by PID 17169 (TID 17463 OR 0x7f746d21a700) from PID 0; stack trace: ***\n" +
		"0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /root/doris/be/src/common/signal_handler.h:421\n" +
		"1# 0x00007F7601263090 in /lib/x86_64-linux-gnu/libc.so.6\n" +
		"2# doris::FragmentMgr::_check_brpc_available(std::shared_ptr<doris::PBackendService_Stub> const&, doris::FragmentMgr::BrpcItem const&) in /opt/doris/be/lib/doris_be\n" +
		"3# doris::FragmentMgr::cancel_worker() in /opt/doris/be/lib/doris_be\n" +
		"4# doris::Thread::supervise_thread(void*) in /opt/doris/be/lib/doris_be\n" +
		"5# start_thread in /lib/x86_64-linux-gnu/libc.so.6\n" +
		"6# clone in /lib/x86_64-linux-gnu/libc.so.6\n"
}

// UBSAN reports and lets the process go on: a stackless report whose
// SUMMARY is followed at once by a signal dump of the same death is one
// incident with the dump's stack; a dump that comes later (more than
// maxSanDeathGap lines after the report, or after other output) is
// another crash.
func TestUbsanGoesOnIntoDump(t *testing.T) {
	cs := parseText(t, ubsanThenDump(""))
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	assert.Equal(t, "SIGSEGV", c.Signal)
	th := c.CrashingThread()
	require.NotNil(t, th)
	require.NotEmpty(t, th.Frames)
	assert.Contains(t, framesText(th.Frames), "doris::FragmentMgr::cancel_worker()")

	// Blank lines between them do not separate them, up to
	// maxSanDeathGap lines after the report's start; a dump later than
	// that, or after a line the report does not print (the process went on
	// logging: glog or any other text), is another crash.
	cs = parseText(t, ubsanThenDump("\n\n\n"))
	require.Len(t, cs, 1)
	assert.Equal(t, "SIGSEGV", cs[0].Signal)
	for _, gap := range []string{strings.Repeat("\n", maxSanDeathGap), "W20241115 09:44:07.000000 17463 fragment_mgr.cpp:1000] something else\n", "some unrecognized chatter of the process\n"} {
		cs = parseText(t, ubsanThenDump(gap))
		require.Len(t, cs, 2, "%q", gap)
		assert.Equal(t, KindSanitizer, cs[0].Kind)
		assert.Empty(t, cs[0].Signal)
		assert.Equal(t, KindSignal, cs[1].Kind)
	}
}

func framesText(fs []Frame) string {
	var b strings.Builder
	for i := range fs {
		b.WriteString(fs[i].Name())
		b.WriteByte('\n')
	}
	return b.String()
}
