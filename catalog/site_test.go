package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The crash site a failure line printed decides the path when no frame
// rule does: a glog FATAL line's basename against the last segments of the
// files globs (low confidence), UBSAN's full path against the globs
// themselves; never a toolchain path, never a glob whose last segment is
// too generic, and never over a frame rule.
func TestCrashSiteEvidence(t *testing.T) {
	// A StarRocks check in the segment iterator, a single F line.
	v, cr := classifyText(t, "F1116 14:17:18.926105 22291 segment_iterator.cpp:536] Check failed: false column was not dict encode\n")
	require.Equal(t, "segment_iterator.cpp", cr.SiteFile)
	assert.Equal(t, PathScan, v.Path, "%v", v.Evidence)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	require.NotEmpty(t, v.Evidence)
	assert.Contains(t, v.Evidence[0], `crash site source file (a basename, read against the glob's last segment) "segment_iterator.cpp:536"`)

	// A Doris tablet sink check: load.
	v, _ = classifyText(t, "F20240111 04:00:19.187731 11070 vtablet_writer_v2.cpp:584] Check failed: false failed tablet 10026 should have failed reason\n")
	assert.Equal(t, PathLoad, v.Path, "%v", v.Evidence)

	// A compaction check: background (a *compaction* glob's last segment).
	v, _ = classifyText(t, "F20240111 04:00:19.187731 11070 cumulative_compaction.cpp:90] Check failed: rowsets.size() > 0\n")
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)

	// A basename no specific glob names: unknown, and the reason says so.
	v, _ = classifyText(t, "F20240111 04:00:19.187731 11070 status.h:90] Check failed: ok\n")
	assert.Equal(t, PathUnknown, v.Path, "%v", v.Evidence)

	// UBSAN's full path: the files glob itself, at a source path's weight.
	v, cr = classifyText(t, "/root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp:83:5: runtime error: load of value 190, which is not a valid value for type 'bool'\n")
	require.Equal(t, "/root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp", cr.SiteFile)
	assert.Equal(t, PathScan, v.Path, "%v", v.Evidence)
	require.NotEmpty(t, v.Evidence)
	assert.Contains(t, v.Evidence[0], `crash site source path "/root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp:83"`)

	// A toolchain header is not the product's code.
	v, _ = classifyText(t, "/usr/include/c++/11/bits/stl_vector.h:1046:9: runtime error: reference binding to null pointer of type 'int'\n")
	assert.Equal(t, PathUnknown, v.Path, "%v", v.Evidence)

	// Frames decide over the site: a compaction stack under a check whose
	// site is a segment reader's file stays background.
	v, _ = classifyText(t, "F20240111 04:00:19.187731 11070 segment_iterator.cpp:536] Check failed: false\n"+
		"*** Check failure stack trace: ***\n"+
		"    @     0x55d5b0b0b0b0  google::LogMessage::Fail()\n"+
		"    @     0x55d5b0b0b0b1  doris::segment_v2::SegmentIterator::next_batch()\n"+
		"    @     0x55d5b0b0b0b2  doris::Merger::vmerge_rowsets()\n"+
		"    @     0x55d5b0b0b0b3  doris::Compaction::do_compaction_impl()\n"+
		"    @     0x55d5b0b0b0b4  doris::Compaction::do_compaction()\n")
	assert.Equal(t, PathBackground, v.Path, "%v", v.Evidence)
	for _, e := range v.Evidence {
		assert.NotContains(t, e, "crash site")
	}
}

// compileSiteGlobs keeps a files glob's last segment only when it has
// enough literal bytes to say something without its directory.
func TestCompileSiteGlobs(t *testing.T) {
	got := compileSiteGlobs([]string{"*src/agent/*", "*src/olap/*compaction*", "*src/exec/*.cpp", "*src/vec/sink/vtablet*", "*src/olap/tablet*"})
	var texts []string
	for _, g := range got {
		texts = append(texts, g.text)
	}
	assert.Equal(t, []string{"*src/olap/*compaction*", "*src/vec/sink/vtablet*", "*src/olap/tablet*"}, texts)
	assert.True(t, got[0].g.match("cumulative_compaction.cpp"))
	assert.False(t, got[0].g.match("compact.cpp"))
}
