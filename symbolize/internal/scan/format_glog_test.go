package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDigitRunEnd: the word-at-a-time digit run ends where the byte loop
// ends, for every start and length around the eight-byte words.
func TestDigitRunEnd(t *testing.T) {
	for _, s := range []string{"", "1", "12345678", "123456789", "1234567a", "a2345678", "0303 10:15", "140073341400640 daemon.cpp", "99999999999999999", "1234567/9", "12345678:"} {
		for i := 0; i <= len(s); i++ {
			want := i
			for want < len(s) && isDigit(s[want]) {
				want++
			}
			assert.Equal(t, want, digitRunEnd(s, i), "%q from %d", s, i)
		}
	}
}

// TestGlogRawCheckInterleaved: glog's own RAW_CHECK in logging.cc fails
// when a second thread logs FATAL while the first one does; its `F00000000
// 00:00:00.000000 … RAW: Check …` line before the dump's frames belongs to
// the same death (an event of the open incident), so the frames after it
// are the check failure's. With no incident open it still starts one.
func TestGlogRawCheckInterleaved(t *testing.T) {
	const raw = "F00000000 00:00:00.000000 47615250425600 logging.cc:1962] RAW: Check data_->num_chars_to_log_ > 0 && data_->message_text_[data_->num_chars_to_log_ - 1] == '\\n' failed: \n"
	const frames = "    @         0x27447787 google::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)\n" +
		"    @     0x2b4d1385c387 __GI_raise\n" +
		"    @     0x2b4d1385da78 __GI_abort\n" +
		"    @         0x2743bd8a google::LogMessage::Fail()\n" +
		"    @         0x2743f4b8 google::LogMessageFatal::~LogMessageFatal()\n" +
		"    @         0x1e8a3f0c starrocks::RuntimeFilterHolder::set_collector()\n" +
		"    @         0x1e8a4a11 starrocks::pipeline::LocalTopNSinkOperator::prepare()\n" +
		"    @         0x1d8c7e21 starrocks::pipeline::PipelineDriver::prepare()\n"
	text := "F20251202 12:13:45.001712 47614933886720 runtime_filter_types.h:124] Check failed: _collector.load(std::memory_order_acquire) == nullptr\n" +
		"*** Aborted at 1764677625 (unix time) try \"date -d @1764677625\" if you are using GNU date ***\n" +
		"PC: @     0x2b4d1385c387 __GI_raise\n" +
		"*** SIGABRT (@0x3e80002848e) received by PID 165006 (TID 0x2b4e44586700) LWP(166298) from PID 165006; stack trace: ***\n" +
		raw + frames
	cs := parseText(t, text)
	require.Len(t, cs, 1, "one death")
	c := cs[0]
	assert.Equal(t, "_collector.load(std::memory_order_acquire) == nullptr", c.CheckExpr)
	require.NotNil(t, c.CrashingThread())
	var names []string
	for _, f := range c.CrashingThread().Frames {
		names = append(names, f.Function)
	}
	assert.Contains(t, names, "starrocks::RuntimeFilterHolder::set_collector()")
	var kinds []string
	for _, e := range c.Events {
		kinds = append(kinds, e.Kind)
	}
	assert.Contains(t, kinds, "interleaved")

	alone := parseText(t, raw+frames)
	require.Len(t, alone, 1, "the RAW line alone starts the incident, as before")
	assert.Contains(t, alone[0].Message, "RAW: Check")
}

// TestGlogTwinFatal: two threads failing at once print their FATAL lines
// (and StarRocks its preamble) once each before the one abort dump: one
// death, one incident. A FATAL line of the same thread, one seconds
// later, or one after the signal dump is another crash.
func TestGlogTwinFatal(t *testing.T) {
	const a = "F20260130 11:08:08.581553 140153981888064 sum.h:60] Check failed: columns[0]->is_numeric() || columns[0]->is_decimal() \n"
	const b = "F20260130 11:08:08.582600 140154763994688 sum.h:60] Check failed: columns[0]->is_numeric() || columns[0]->is_decimal() \n"
	const preamble = "3.3.5 RELEASE (build 6e8b90d distro ubuntu arch x86_64)\n" +
		"query_id:019c0e96-c78f-7969-aa4b-9e3a6e10bd77, fragment_instance:019c0e96-c78f-7969-aa4b-9e3a6e10bd79, plan_node_id:6\n"
	const abort = "*** Aborted at 1769771288 (unix time) try \"date -d @1769771288\" if you are using GNU date ***\n" +
		"PC: @     0x7f5e9b6b2387 __GI_raise\n" +
		"*** SIGABRT (@0x3e80002848e) received by PID 165006 (TID 0x7f77a6ffd700) LWP(166298) from PID 165006; stack trace: ***\n" +
		"    @     0x7f5e9b6b2387 __GI_raise\n" +
		"    @     0x7f5e9b6b3a78 __GI_abort\n" +
		"    @         0x2743bd8a google::LogMessage::Fail()\n" +
		"    @         0x1e8a3f0c starrocks::SumAggregateFunction::update()\n" +
		"    @         0x1d8c7e21 starrocks::pipeline::PipelineDriver::process()\n"
	cs := parseText(t, a+b+preamble+preamble+abort)
	require.Len(t, cs, 1, "one death")
	c := cs[0]
	assert.Equal(t, "columns[0]->is_numeric() || columns[0]->is_decimal()", c.CheckExpr)
	assert.Equal(t, "019c0e96-c78f-7969-aa4b-9e3a6e10bd77", c.QueryID)
	assert.Equal(t, "SIGABRT", c.Signal)
	var inter []int
	for _, e := range c.Events {
		if e.Kind == "interleaved" {
			inter = append(inter, e.Line)
		}
	}
	assert.Equal(t, []int{2, 5, 6}, inter, "the second thread's FATAL line and its copy of the preamble")

	// the same thread prints one FATAL line: a second one is another crash
	same := strings.Replace(b, "140154763994688", "140153981888064", 1)
	assert.Len(t, parseText(t, a+same), 2)
	// seconds apart: another crash
	later := strings.Replace(b, "11:08:08", "11:08:11", 1)
	assert.Len(t, parseText(t, a+later), 2)
	// after the first check's stack, before the signal dump: the second
	// thread's FATAL line, check header and frames join the incident as a
	// thread that is not the crashing one
	frames := "*** Check failure stack trace: ***\n" +
		"    @         0x2743bd8a google::LogMessage::Fail()\n" +
		"    @         0x1e8a3f0c starrocks::SumAggregateFunction::update()\n"
	framesB := "*** Check failure stack trace: ***\n" +
		"    @         0x2743bd8a google::LogMessage::Fail()\n" +
		"    @         0x1e8a4444 starrocks::SumAggregateFunction::merge()\n"
	late := parseText(t, a+frames+b)
	require.Len(t, late, 1)
	assert.Len(t, late[0].Threads, 1)
	both := parseText(t, a+frames+b+framesB+abort)
	require.Len(t, both, 1, "one death")
	require.Len(t, both[0].Threads, 2)
	var twin *Thread
	for i := range both[0].Threads {
		if !both[0].Threads[i].Crashed {
			twin = &both[0].Threads[i]
		}
	}
	require.NotNil(t, twin)
	assert.Equal(t, int64(140154763994688), twin.ID)
	assert.Equal(t, "starrocks::SumAggregateFunction::merge()", twin.Frames[1].Function)
	assert.Contains(t, both[0].CrashingThread().Frames[len(both[0].CrashingThread().Frames)-1].Function, "PipelineDriver", "the abort dump's thread crashed")
	// the abort dump of the second thread is the same death too
	abortB := strings.Replace(abort, "starrocks::SumAggregateFunction::update()", "starrocks::SumAggregateFunction::merge()", 1)
	bothB := parseText(t, a+frames+b+framesB+abortB)
	require.Len(t, bothB, 1, "one death, the second thread aborted")
	assert.Len(t, bothB[0].Threads, 2)
	// a third thread's FATAL line after the second's stack is another crash
	c3 := strings.Replace(b, "140154763994688", "140154000000001", 1)
	assert.Len(t, parseText(t, a+frames+b+framesB+c3), 2)
	// after the signal dump: another crash
	assert.Len(t, parseText(t, a+frames+abort+b), 2)
	// a different preamble is another crash's
	other := strings.Replace(preamble, "bd77", "bd78", 2)
	assert.Len(t, parseText(t, a+preamble+other+abort), 2)
}
