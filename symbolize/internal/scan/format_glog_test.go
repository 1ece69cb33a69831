package scan

import (
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
