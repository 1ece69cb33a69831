package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// TestDecideFromMessage: when no frame rule and no crash site decides, the
// product types a crash message names place it (low confidence); frames,
// when a rule holds on them, still decide, and a message without product
// types leaves the crash where it was.
func TestDecideFromMessage(t *testing.T) {
	const assertLine = "starrocks_be: /build/be/src/gutil/casts.h:79: To down_cast(From *) [To = starrocks::pipeline::ConnectorScanOperator *, From = starrocks::pipeline::ScanOperator]: Assertion `f == NULL || dynamic_cast<To>(f) != NULL' failed.\n" +
		"*** Aborted at 1686721716 (unix time) try \"date -d @1686721716\" if you are using GNU date ***\n" +
		"*** SIGABRT (@0x3e800001a2b) received by PID 6699 (TID 0x7f0f2d7fe700) LWP(6832) from PID 6699; stack trace: ***\n" +
		"    @     0x7f0f9a6d6b37 __GI_raise\n" +
		"    @     0x7f0f9a6d8129 __GI_abort\n"
	v, c := classifyText(t, assertLine)
	require.NotEmpty(t, c.Message)
	assert.Equal(t, PathScan, v.Path)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), `the crash message names "starrocks::pipeline::ConnectorScanOperator"`)

	// The same message above frames a rule holds on: the frames decide.
	withFrames := assertLine +
		"    @          0x9a1b2c3 starrocks::lake::compact(starrocks::lake::TabletManager*, long)\n" +
		"    @          0x9a1b3d4 starrocks::CompactionScheduler::thread_task(int)\n"
	v, _ = classifyText(t, withFrames)
	assert.Equal(t, PathBackground, v.Path)
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "the crash message names")

	// A generic rule read from the message (column operations) yields to
	// the crashing thread's pool name, as on frames.
	const badCast = "F20231109 20:11:37.677680 323805 assert_cast.h:61] Bad cast from type:doris::vectorized::ColumnVector<int> to doris::vectorized::ColumnVector<long>\n" +
		"*** Check failure stack trace: ***\n" +
		"    @     0x56489d591d3d  google::LogMessage::Fail()\n" +
		"    @     0x56489d594279  google::LogMessage::SendToLog()\n"
	v, _ = classifyText(t, badCast)
	assert.Equal(t, PathQuery, v.Path)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "the crash message names")
	cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(badCast), symbolize.ScanOptions{Source: "t"})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	crash := cs[0]
	require.NotNil(t, crash.CrashingThread())
	crash.CrashingThread().Name = "BaseCompactionT" // the pool's name, as gdb or ASAN print it
	v = defaultCatalog(t).Classify(crash, signature.Generate(crash))
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "the crash message names")

	// No product type in the message: nothing to read.
	v, _ = classifyText(t, strings.Replace(assertLine, "To = starrocks::pipeline::ConnectorScanOperator *, From = starrocks::pipeline::ScanOperator", "To = Foo *, From = Bar", 1))
	assert.NotContains(t, strings.Join(v.Evidence, "\n"), "the crash message names")
}
