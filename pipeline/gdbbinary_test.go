package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGDBTextWithBinary: giving the binary does not change what a gdb
// backtrace that already names its frames says. gdb prints the frames of
// an inline group itself (the same address under several names); the
// symbolizer must not add the chain a second time, so every thread keeps
// its frames and the signature its key (the key of the core, whatever
// printed it).
func TestGDBTextWithBinary(t *testing.T) {
	texts, withBinary := coreGoldens(t, "*.gdb.txt")
	plain := newPipeline(t, Options{})
	for _, text := range texts {
		with := withBinary(text)
		a, errs := collect(t, plain.File(context.Background(), text))
		require.Empty(t, errs, text)
		b, errs := collect(t, with.File(context.Background(), text))
		require.Empty(t, errs, text)
		require.Equal(t, len(a), len(b), text)
		for i := range a {
			assert.Equal(t, a[i].Signature.Key, b[i].Signature.Key, "%s: incident %d", text, i)
			require.Equal(t, len(a[i].Threads), len(b[i].Threads), text)
			for ti := range a[i].Threads {
				assert.Equal(t, len(a[i].Threads[ti].Frames), len(b[i].Threads[ti].Frames), "%s: thread %d keeps its frames", text, ti)
			}
		}
	}
}

// coreGoldens returns the texts of testdata/core/golden matching pattern
// and a function giving, for one of them, a Pipeline with the binary its
// core came from (sim_nofp for the nofp cores, else sim_fp).
func coreGoldens(t *testing.T, pattern string) ([]string, func(text string) *Pipeline) {
	texts, err := filepath.Glob(filepath.Join("../testdata/core/golden", pattern))
	require.NoError(t, err)
	require.NotEmpty(t, texts)
	dir := t.TempDir()
	bins := map[bool]string{
		false: gunzip(t, "../testdata/core/bin/sim_fp.gz", filepath.Join(dir, "sim_fp")),
		true:  gunzip(t, "../testdata/core/bin/sim_nofp.gz", filepath.Join(dir, "sim_nofp")),
	}
	return texts, func(text string) *Pipeline {
		return newPipeline(t, Options{Binaries: []string{bins[strings.Contains(filepath.Base(text), "nofp")]}})
	}
}

// TestCoreTextReadBack: crashsig's own text of a core (`crashsig core`,
// symbolize.WriteCoreText, the goldens testdata/core/golden/*.crashsig.txt)
// pasted into a ticket and read back keys as the core itself does, and
// names the same crashing thread (review: it was read as a gdb thread dump
// of no crash, THREADS | starrocks::CompactionManager::_schedule, while
// the core is FAULT | starrocks::ParsedPageV1::read).
func TestCoreTextReadBack(t *testing.T) {
	texts, withBinary := coreGoldens(t, "*.crashsig.txt")
	plain := newPipeline(t, Options{})
	for _, text := range texts {
		name := strings.TrimSuffix(filepath.Base(text), ".crashsig.txt")
		with := withBinary(text)
		core, err := with.Core(context.Background(), "../testdata/core/cores/"+name+".core.gz")
		require.NoError(t, err, name)
		rs, errs := collect(t, plain.File(context.Background(), text))
		require.Empty(t, errs, text)
		require.Len(t, rs, 1, text)
		assert.Equal(t, core.Signature.Key, rs[0].Signature.Key, name)
		assert.Equal(t, core.Kind, rs[0].Kind, name)
		require.NotEmpty(t, rs[0].Threads, name)
		require.NotEmpty(t, core.Threads, name)
		assert.Equal(t, core.Threads[0].ID, rs[0].Threads[0].ID, "%s: the crashing thread", name)
		assert.True(t, rs[0].Threads[0].Crashed, name)
		assert.Equal(t, core.Signal, rs[0].Signal, name)
		assert.Equal(t, core.HasFaultAddress, rs[0].HasFaultAddress, name)
		assert.Equal(t, core.FaultAddress, rs[0].FaultAddress, name)
		assert.Equal(t, core.Signature.Attributes, rs[0].Signature.Attributes, "%s: fault=null and the like", name)
	}
}
