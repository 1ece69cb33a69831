package symbolize

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReaderAt counts the bytes read through it (concurrently).
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// noNewlineInput is a line, a region of hole NULs without a newline, then
// a crash.
func noNewlineInput(hole int) []byte {
	var b bytes.Buffer
	b.WriteString("start time: Tue Nov 12 14:20:05 CST 2024\n")
	b.Write(make([]byte, hole))
	b.WriteString(liveCrash)
	return b.Bytes()
}

// Inside a region without a newline ScanParallel reads each byte a
// bounded number of times (review: every chunk in it searched to the
// region's end for its line start and end, quadratic: a 1 GiB hole took
// 16.7 s against 2.1 s for the single pass), and finds what the single
// pass finds.
func TestParallelNoNewlineRegionLinear(t *testing.T) {
	data := noNewlineInput(16 << 20)
	want := sequentialJSON(t, data, ScanOptions{})
	require.NotEmpty(t, want)
	for _, w := range []int{1, 2, 4} {
		r := &countingReaderAt{r: bytes.NewReader(data)}
		var cs []*Crash
		for c, err := range ScanParallel(context.Background(), r, int64(len(data)), ScanOptions{}, ParallelOptions{Workers: w, ChunkBytes: 64 << 10}) {
			require.NoError(t, err)
			cs = append(cs, c)
		}
		assert.Equal(t, want, crashesJSON(t, cs), "workers %d", w)
		// Boundaries once, the worker's scan once, the in-order scan
		// once, and a margin: 4 times the input. Quadratic, it was 256
		// chunks each reading 8 MiB on average: 128 times the input.
		assert.LessOrEqual(t, r.n.Load(), 4*int64(len(data)), "workers %d: bytes read", w)
	}
}

// A scan stopped while the chunk boundaries are searched in a long region
// without a newline ends with the context's error, at once.
func TestParallelNoNewlineRegionCancel(t *testing.T) {
	data := noNewlineInput(64 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	r := &countingReaderAt{r: bytes.NewReader(data)}
	var got error
	for _, err := range ScanParallel(ctx, &cancelAtReaderAt{r: r, after: 1 << 20, cancel: cancel}, int64(len(data)), ScanOptions{}, ParallelOptions{Workers: 2, ChunkBytes: 64 << 10}) {
		if err != nil {
			got = err
		}
	}
	assert.ErrorIs(t, got, context.Canceled)
	assert.Less(t, r.n.Load(), int64(len(data)), "read the whole input after the cancel")
}

// cancelAtReaderAt cancels a context once after bytes were read through it.
type cancelAtReaderAt struct {
	r      *countingReaderAt
	after  int64
	cancel context.CancelFunc
}

func (c *cancelAtReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	if c.r.n.Load() >= c.after {
		c.cancel()
	}
	return n, err
}
