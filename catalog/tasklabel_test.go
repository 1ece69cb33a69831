package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// TestTaskLabel reads the Doris task memory tracker label of a FATAL
// message: the thread's own tracker first, then the first label named.
func TestTaskLabel(t *testing.T) {
	cases := []struct {
		msg, kind, text string
	}{
		{`Check failed: doris::thread_context()->thread_mem_tracker()->label() == mem_tracker->label() , thread mem tracker label: Load#Id=6834273cfabe49cb-9d783fde25a0d61a, allocator tracker label: 8#0`,
			TaskLabelLoad, "Load#Id=6834273cfabe49cb-9d783fde25a0d61a"},
		{`Check failed: thread_mem_tracker()->label() == "Orphan" , attach mem tracker label: Query#Id=2d6d0263f4c84f95-a4c2c96307e78498`,
			TaskLabelQuery, "Query#Id=2d6d0263f4c84f95-a4c2c96307e78498"},
		// the thread's own tracker wins over the one being attached
		{`Check failed: thread_mem_tracker()->label() == "Orphan" , attach mem tracker label: Query#Id=2d6d0263f4c84f95-a4c2c96307e78498, thread mem tracker label: Load#Id=b43f342ae5564c23-b7b41daf24545f78`,
			TaskLabelLoad, "Load#Id=b43f342ae5564c23-b7b41daf24545f78"},
		// other trackers are not tasks
		{`Check failed: false , thread mem tracker label: Orphan, External#Id=1-2`, "", ""},
		{`Check failed: a == b , label: SnapshotManager`, "", ""},
		// a label without an id, or one glued to another word
		{`thread mem tracker label: Load#Id=, x`, "", ""},
		{`XLoad#Id=12-34`, "", ""},
		{`memory of Query#Id=ab12-cd34 exceeded`, TaskLabelQuery, "Query#Id=ab12-cd34"},
		{``, "", ""},
	}
	for _, tc := range cases {
		kind, text := taskLabel(&symbolize.Crash{Message: tc.msg})
		assert.Equal(t, tc.kind, kind, tc.msg)
		assert.Equal(t, tc.text, text, tc.msg)
	}
}

// TestTaskLabelRules: the label says which task the thread served
// (paths.yaml load-task-label, query-task-label), below background roots
// and above scan for a load.
func TestTaskLabelRules(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	const load = "Check failed: x == y , thread mem tracker label: Load#Id=6834273cfabe49cb-9d783fde25a0d61a, allocator tracker label: 8#0"
	const query = "Check failed: x == y , thread mem tracker label: Query#Id=6834273cfabe49cb-9d783fde25a0d61a, allocator tracker label: 8#0"
	cases := []struct {
		name   string
		msg    string
		frames []symbolize.Frame
		path   Path
		rule   string
	}{
		{"load label over allocator frames", load, framesNamed("Allocator<false, false, false>::consume_memory(unsigned long)", "orc::DataBuffer<char>::reserve(unsigned long)"), PathLoad, "load-task-label"},
		{"load label over a file-format reader", load, framesNamed("doris::vectorized::OrcReader::_create_file_reader()"), PathLoad, "load-task-label"},
		{"load label, no frames", load, nil, PathLoad, "load-task-label"},
		{"compaction beats the label", load, framesNamed("doris::Compaction::do_compaction_impl(long)"), PathBackground, ""},
		{"query label over library frames", query, framesNamed("Allocator<false, false, false>::consume_memory(unsigned long)", "std::vector<char>::reserve(unsigned long)"), PathQuery, "query-task-label"},
		{"a query's scan stays scan", query, framesNamed("doris::vectorized::OrcReader::_create_file_reader()"), PathScan, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr := &symbolize.Crash{Product: symbolize.ProductDoris, Kind: symbolize.KindCheck, Message: tc.msg,
				Threads: []symbolize.Thread{{Crashed: true, Frames: tc.frames}}}
			v := c.Classify(cr, signature.Signature{})
			ev := strings.Join(v.Evidence, "\n")
			assert.Equal(t, tc.path, v.Path, ev)
			if tc.rule != "" {
				assert.Equal(t, tc.rule, v.PathRule, ev)
				assert.Contains(t, ev, "memory tracker task label \"")
			}
			// without the label the task-label rules never decide
			cr.Message = "Check failed: x == y"
			v = c.Classify(cr, signature.Signature{})
			assert.NotContains(t, []string{"load-task-label", "query-task-label"}, v.PathRule)
		})
	}
}

// TestTaskLabelEndToEnd: the corpus text that taught the rule, parsed.
func TestTaskLabelEndToEnd(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	p := parseLog(t, "testdata/corpus/doris/172-master-2024-08-ci-dcheck-allocator-tracker-label-load-orc-reader-create-file-reader.txt")
	require.Len(t, p.crashes, 1)
	v := c.Classify(p.crashes[0], p.sigs[0])
	assert.Equal(t, PathLoad, v.Path, strings.Join(v.Evidence, "\n"))
	assert.Equal(t, "load-task-label", v.PathRule)
}
