//go:build unix

package pipeline

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCorePathSparse: the temporary copy of a compressed core keeps its
// runs of zero bytes as holes, as the core itself has them: a 3 GB sparse
// core took 1.5 GB of temporary space when every byte was written. The
// copy has the core's bytes and size (it ends in zeros: the last hole is
// made by the size), and far fewer blocks allocated than its size.
func TestCorePathSparse(t *testing.T) {
	core := make([]byte, 64<<20+123)
	copy(core, "\x7fELF\x02\x01\x01")
	core[16] = 4 // ET_CORE
	copy(core[10<<20+7:], bytes.Repeat([]byte("stack"), 40))
	core[40<<20] = 1
	in, err := NewInput("core.gz", bytes.NewReader(compress(t, "gzip", core)))
	require.NoError(t, err)
	defer in.Close()
	require.Equal(t, ContentCore, in.Kind)
	path, err := in.CorePath(context.Background(), t.TempDir())
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, len(core), len(got))
	require.True(t, bytes.Equal(core, got), "the copy's bytes differ from the core's")
	st, err := os.Stat(path)
	require.NoError(t, err)
	allocated := st.Sys().(*syscall.Stat_t).Blocks * 512
	t.Logf("copy of %d bytes, %d allocated", st.Size(), allocated)
	assert.Less(t, allocated, st.Size()/16, "the copy is not sparse")
}
