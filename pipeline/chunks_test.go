package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunChunkScanSameOutput: a file scanned in chunks by several
// goroutines (Jobs > 1, ChunkScanBytes reached) gives the Results, bytes
// for bytes, that one goroutine gives: a generated be.out with a corpus
// crash every 256 KiB, and every corpus and validation text in one file.
// Progress counts the file's bytes once.
func TestRunChunkScanSameOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 24 MiB")
	}
	texts := corpusTexts(t)
	dir := t.TempDir()
	beout := filepath.Join(dir, "be.out")
	writeBeOut(t, beout, 24<<20, 256<<10, texts, 0, 3)
	corpus := filepath.Join(dir, "corpus.txt")
	require.NoError(t, os.WriteFile(corpus, bytes.Join(texts, []byte("\n")), 0o644))
	for _, path := range []string{beout, corpus} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := runTranscript(t, newPipeline(t, Options{Jobs: 1}).Run(context.Background(), nil, path))
			require.Greater(t, len(want), 20)
			for _, jobs := range []int{2, 3} {
				var pr Progress
				p := newPipeline(t, Options{Jobs: jobs, ChunkScanBytes: 1, Progress: &pr})
				got := runTranscript(t, p.Run(context.Background(), nil, path))
				require.Equal(t, len(want), len(got), "jobs %d", jobs)
				for i := range want {
					require.Equal(t, want[i], got[i], "jobs %d, result %d", jobs, i)
				}
				st, err := os.Stat(path)
				require.NoError(t, err)
				assert.Equal(t, st.Size(), pr.Bytes())
			}
		})
	}
}

// TestChunkScanSize: only a file on disk, uncompressed, of
// ChunkScanBytes or more, with Jobs > 1, is scanned in chunks.
func TestChunkScanSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "be.out")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("I0303 10:15:02.118230 1 x.cpp:1] line\n"), 1000), 0o644))
	for _, c := range []struct {
		jobs  int
		limit int64
		want  bool
	}{{2, 1, true}, {2, 38000, true}, {2, 38001, false}, {1, 1, false}, {2, -1, false}, {4, 0, false}} {
		p := newPipeline(t, Options{Jobs: c.jobs, ChunkScanBytes: c.limit})
		in, err := OpenFile(context.Background(), path)
		require.NoError(t, err)
		assert.Equal(t, c.want, p.chunkScanSize(in) > 0, "jobs %d limit %d", c.jobs, c.limit)
		in.Close()
	}
	in, err := NewInput("stdin", bytes.NewReader(bytes.Repeat([]byte("x\n"), 100)))
	require.NoError(t, err)
	assert.Zero(t, newPipeline(t, Options{Jobs: 2, ChunkScanBytes: 1}).chunkScanSize(in), "a stream")
}
