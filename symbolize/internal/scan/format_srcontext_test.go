package scan

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withLineAfterQueryID inserts line after the query_id line of a corpus text.
func withLineAfterQueryID(t *testing.T, name, line string) string {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/corpus/" + name)
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, "query_id:")
	require.GreaterOrEqual(t, i, 0)
	j := strings.IndexByte(text[i:], '\n')
	require.Greater(t, j, 0)
	return text[:i+j+1] + line + "\n" + text[i+j+1:]
}

func TestStarRocksFileLine(t *testing.T) {
	const corpus = "starrocks/055-scan-binary-plain-page-decoder-append-range-fullsig.txt"
	want := parseText(t, mustRead(t, "../../../testdata/corpus/"+corpus))
	require.Len(t, want, 1)
	cases := []struct{ line, kind string }{
		{"Hive file path: /user/hive/warehouse/t/dt=2024-01-01/part-00000.parquet, partition id: 12, length: 26112, offset: 0", EventHiveFile},
		{"Hive file path: a b.orc, partition id: 0, length: 1, offset: 0", EventHiveFile},
		{"Load file path: hdfs://nn:8020/user/load/file.csv", EventLoadFile},
	}
	for _, tc := range cases {
		cs := parseText(t, withLineAfterQueryID(t, corpus, tc.line))
		require.Len(t, cs, 1, tc.line)
		c := cs[0]
		var got []Event
		for _, e := range c.Events {
			if e.Kind == EventHiveFile || e.Kind == EventLoadFile {
				got = append(got, e)
			}
		}
		require.Len(t, got, 1, tc.line)
		assert.Equal(t, tc.kind, got[0].Kind)
		assert.Equal(t, tc.line, got[0].Text)
		// the rest of the crash is as without the line
		assert.Equal(t, want[0].QueryID, c.QueryID)
		assert.Equal(t, want[0].Signal, c.Signal)
		assert.Equal(t, want[0].Corrupted, c.Corrupted)
		assert.Equal(t, len(want[0].CrashingThread().Frames), len(c.CrashingThread().Frames))
	}
}

// The line outside a preamble is an ordinary line: no incident, no event.
func TestStarRocksFileLineAlone(t *testing.T) {
	assert.Empty(t, parseText(t, "I1201 10:00:00.000000 1 x.cpp:1] reading\nHive file path: /a.parquet, partition id: 0, length: 1, offset: 0\nLoad file path: /b.csv\n"))
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// Preamble-only StarRocks texts (corpus starrocks/118, 119: the paste
// stops inside the tracker list, before any Aborted/PC line) are crashes
// whose kind and stack were cut: one incident of unknown kind with an
// empty crashing thread, carrying the ids, the file line (as pasted,
// Markdown link included) and the trackers. A check-failure banner before the
// preamble (starrocks/120) makes it a check failure with the same ids.
func TestStarRocksPreambleOnly(t *testing.T) {
	cases := []struct {
		name, query, file string
		kind              Kind
		trackers          int
		start             int
	}{
		{"starrocks/118-files-query-load-file-path-markdown-link-preamble-only.txt", "0df106a1-b061-11ee-8f60-00163e230ce3",
			"Load file path: hdfs://[172.26.194.238:9000/starrocks_test_data/system_data/hdfs_data/nose-ut-data/table_function/orc/schema_auto_merge/decimal_type/01/hive_hdfs_orc_decimal_02](http://172.26.194.238:9000/starrocks_test_data/system_data/hdfs_data/nose-ut-data/table_function/orc/schema_auto_merge/decimal_type/01/hive_hdfs_orc_decimal_02)",
			KindUnknown, 11, 2},
		{"starrocks/119-cn-compaction-after-add-column-preamble-zero-ids-header-only.txt", "00000000-0000-0000-0000-000000000000", "", KindUnknown, 25, 2},
		{"starrocks/120-routine-load-kafka-check-failure-banner-before-zero-id-preamble-header-only.txt", "00000000-0000-0000-0000-000000000000", "", KindCheck, 22, 3},
	}
	for _, tc := range cases {
		text := mustRead(t, "../../../testdata/corpus/"+tc.name)
		for _, in := range []string{text, "I1201 10:00:00.000000 1 x.cpp:1] before\n" + text + "\nI1201 10:00:01.000000 1 x.cpp:2] after\n"} {
			cs := parseText(t, in)
			require.Len(t, cs, 1, tc.name)
			c := cs[0]
			assert.Equal(t, tc.kind, c.Kind, tc.name)
			assert.Equal(t, ProductStarRocks, c.Product, tc.name)
			assert.Equal(t, tc.query, c.QueryID, tc.name)
			assert.Len(t, c.Trackers, tc.trackers, tc.name)
			ct := c.CrashingThread()
			require.NotNil(t, ct, tc.name)
			assert.Empty(t, ct.Frames, tc.name)
			if tc.kind == KindUnknown {
				assert.True(t, c.Corrupted, tc.name)
				assert.Contains(t, c.CorruptedReason, "preamble", tc.name)
			}
			var files []string
			for _, e := range c.Events {
				if e.Kind == EventLoadFile {
					files = append(files, e.Text)
				}
			}
			if tc.file != "" {
				assert.Equal(t, []string{tc.file}, files, tc.name)
			} else {
				assert.Empty(t, files, tc.name)
			}
		}
	}
	// One tracker line alone is no crash; a query_id line alone is one.
	assert.Empty(t, parseText(t, "tracker:process consumption: 156497672\n"))
	cs := parseText(t, "query_id:0df106a1-b061-11ee-8f60-00163e230ce3, fragment_instance:0df106a1-b061-11ee-8f60-00163e230ce5\n")
	require.Len(t, cs, 1)
	assert.Equal(t, "0df106a1-b061-11ee-8f60-00163e230ce5", cs[0].FragmentID)
}

// A preamble followed by a dump that starts an incident of its own (a gdb
// session, a sanitizer report) is that dump's preamble: one incident
// carrying the ids, trackers and file line, starting at the preamble. Two
// preambles in a row stay two incidents unless they name the same
// non-zero fragment instance (twinPreamble).
func TestStarRocksPreambleBeforeOtherDump(t *testing.T) {
	pre := "query_id:5bd62a8e-59dd-11ed-9b45-5254007b45e6, fragment_instance:5bd62a8e-59dd-11ed-9b45-5254007b45e7\n" +
		"Load file path: hdfs://nn:9000/user/x/part-0.orc\n" +
		"tracker:process consumption: 156497672\n" +
		"tracker:query_pool consumption: 1024\n"
	dumps := map[string]string{
		"gdb": "Program terminated with signal SIGSEGV, Segmentation fault.\n(gdb) bt\n" +
			"#0  0x000000005a000000 in starrocks::vectorized::VectorizedFunctionCallExpr::close ()\n" +
			"#1  0x000000005a001000 in starrocks::ExprContext::close ()\n",
		"asan": "==1234==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x0000004a pc 0x1 bp 0x2 sp 0x3\n" +
			"READ of size 8 at 0x602000000010 thread T12\n" +
			"    #0 0x4a in starrocks::ExprContext::close() be/src/exprs/expr_context.cpp:10\n" +
			"    #1 0x4b in starrocks::pipeline::QueryContext::~QueryContext() be/src/exec/pipeline/query_context.cpp:20\n",
	}
	for name, dump := range dumps {
		cs := parseText(t, "I1201 10:00:00.000000 1 x.cpp:1] before\n"+pre+dump)
		require.Len(t, cs, 1, name)
		c := cs[0]
		assert.Equal(t, 2, c.StartLine, name)
		assert.Equal(t, "5bd62a8e-59dd-11ed-9b45-5254007b45e6", c.QueryID, name)
		assert.Equal(t, "5bd62a8e-59dd-11ed-9b45-5254007b45e7", c.FragmentID, name)
		assert.Len(t, c.Trackers, 2, name)
		assert.NotContains(t, c.CorruptedReason, "preamble", name)
		ct := c.CrashingThread()
		require.NotNil(t, ct, name)
		require.NotEmpty(t, ct.Frames, name)
		assert.Contains(t, ct.Frames[0].Function, "close", name)
		var files int
		for _, e := range c.Events {
			if e.Kind == EventLoadFile {
				files++
			}
		}
		assert.Equal(t, 1, files, name)
	}
	two := parseText(t, pre+strings.Replace(pre, "45e7", "45e8", 1))
	assert.Len(t, two, 2, "a query_id line of another fragment instance is the next crash's preamble")
	twin := parseText(t, pre+pre)
	require.Len(t, twin, 1, "the same fragment instance's preamble twice: two threads of one death")
	assert.Equal(t, "5bd62a8e-59dd-11ed-9b45-5254007b45e7", twin[0].FragmentID)
	zero := "query_id:00000000-0000-0000-0000-000000000000, fragment_instance:00000000-0000-0000-0000-000000000000\n"
	assert.Len(t, parseText(t, zero+zero), 2, "all-zero ids say nothing about one death")
}
