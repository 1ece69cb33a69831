package catalog

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

const (
	hiveLine = "Hive file path: /user/hive/warehouse/t/dt=2024-01-01/part-00000.parquet, partition id: 3, length: 26112, offset: 0"
	loadLine = "Load file path: hdfs://nn:8020/user/load/data.csv"
)

// TestFileLineRules: the StarRocks preamble's file line says what the thread
// was reading (paths.yaml load-file-line, scan-hive-file-line).
func TestFileLineRules(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	ev := func(kind, text string) []symbolize.Event {
		if kind == "" {
			return nil
		}
		return []symbolize.Event{{Line: 2, Kind: kind, Text: text}}
	}
	cases := []struct {
		name       string
		kind, line string
		frames     []symbolize.Frame
		path       Path
		area       string
	}{
		{"hive line, library frames only", symbolize.EventHiveFile, hiveLine,
			framesNamed("memcpy", "starrocks::BinaryColumnBase<unsigned int>::append(starrocks::Column const&, unsigned long, unsigned long)"), PathScan, "external-scan"},
		{"load line, library frames only", symbolize.EventLoadFile, loadLine,
			framesNamed("memcpy", "starrocks::BinaryColumnBase<unsigned int>::append(starrocks::Column const&, unsigned long, unsigned long)"), PathLoad, "load-scan"},
		{"load line over a query frame", symbolize.EventLoadFile, loadLine,
			framesNamed("starrocks::pipeline::PipelineDriver::process(starrocks::RuntimeState*, int)"), PathLoad, "load-scan"},
		{"a background root still beats the hive line", symbolize.EventHiveFile, hiveLine,
			framesNamed("memcpy", "starrocks::CompactionTask::run()"), PathBackground, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr := &symbolize.Crash{Product: symbolize.ProductStarRocks, QueryID: "6a1f2c3d-0000-0000-0000-000000000001", Events: ev(tc.kind, tc.line),
				Threads: []symbolize.Thread{{Crashed: true, Frames: tc.frames}}}
			v := c.Classify(cr, signature.Signature{})
			evidence := strings.Join(v.Evidence, "\n")
			assert.Equal(t, tc.path, v.Path, evidence)
			if tc.area != "" {
				assert.Equal(t, tc.area, v.Area, evidence)
				assert.Contains(t, evidence, "file line "+`"`+tc.line+`"`)
			}
			// without the line the file-line rules do not hold
			cr.Events = nil
			v = c.Classify(cr, signature.Signature{})
			assert.NotContains(t, []string{"load-file-line", "scan-hive-file-line"}, v.PathRule)
		})
	}
}

// TestFileLineEndToEnd: a corpus dump with the file line put after its
// query_id line, parsed and classified.
func TestFileLineEndToEnd(t *testing.T) {
	c, err := Default()
	require.NoError(t, err)
	b, err := os.ReadFile("../testdata/corpus/starrocks/050-lz4f-dctx-3.1.5-tracker-header-only.txt")
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, "\n")
	require.Greater(t, i, 0)
	require.True(t, strings.HasPrefix(text, "query_id:"))
	for _, tc := range []struct {
		line string
		path Path
	}{{hiveLine, PathScan}, {loadLine, PathLoad}} {
		cs, err := symbolize.ParseAll(context.Background(), strings.NewReader(text[:i+1]+tc.line+"\n"+text[i+1:]), symbolize.ScanOptions{})
		require.NoError(t, err)
		require.Len(t, cs, 1)
		v := c.Classify(cs[0], signature.Generate(cs[0]))
		assert.Equal(t, tc.path, v.Path, strings.Join(v.Evidence, "\n"))
	}
}
