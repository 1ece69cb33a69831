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
