package symbolize

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenBinaryContext: a done context refuses at once; a live one
// opens like OpenBinary; errors are OpenBinary's.
func TestOpenBinaryContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := OpenBinaryContext(ctx, "/does/not/matter", BinaryOptions{})
	require.ErrorIs(t, err, context.Canceled)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, err = OpenBinaryContext(ctx, filepath.Join(t.TempDir(), "missing"), BinaryOptions{})
	require.Error(t, err)
	assert.NotErrorIs(t, err, context.Canceled)

	b, err := OpenBinaryContext(ctx, "/proc/self/exe", BinaryOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, b.Path())
	require.NoError(t, b.Close())
}
