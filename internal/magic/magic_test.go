package magic

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// TestCompression: the heads real encoders write are named, text, ELF and
// near misses are not.
func TestCompression(t *testing.T) {
	data := []byte("*** SIGSEGV (@0x0) received by PID 1\n")
	var gz, zs, xzb bytes.Buffer
	gw := gzip.NewWriter(&gz)
	_, err := gw.Write(data)
	require.NoError(t, err)
	require.NoError(t, gw.Close())
	zw, err := zstd.NewWriter(&zs)
	require.NoError(t, err)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	xw, err := xz.NewWriter(&xzb)
	require.NoError(t, err)
	_, err = xw.Write(data)
	require.NoError(t, err)
	require.NoError(t, xw.Close())
	assert.Equal(t, "gzip", Compression(gz.Bytes()))
	assert.Equal(t, "zstd", Compression(zs.Bytes()))
	assert.Equal(t, "xz", Compression(xzb.Bytes()))
	assert.Equal(t, "bzip2", Compression([]byte("BZh91AY&SY")))
	for _, no := range []string{"", "BZh", "BZh0", "BZ", "\x7fELF\x02\x01", "\x1f", "*** Aborted at"} {
		assert.Empty(t, Compression([]byte(no)), "%q", no)
	}
}
