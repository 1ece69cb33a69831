package magic

import (
	"bytes"
	"compress/gzip"
	"strings"
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

// TestTextBytes: holes (NUL runs of HoleNULs or more) count neither way,
// shorter NUL runs and control bytes other than the text ones count as
// control, and only bytes outside valid UTF-8 count as not UTF-8.
func TestTextBytes(t *testing.T) {
	for _, c := range []struct {
		in                     string
		text, control, notUTF8 int
	}{
		{"I0303 a.cpp:1] ok\r\n\t\f\v\x1b[0m", 26, 0, 0},
		{"a\x00\x00b", 4, 2, 0},
		{"a" + strings.Repeat("\x00", HoleNULs) + "b", 2, 0, 0},
		{"\x01\x02\x7f", 3, 2, 0},
		{"数据\xca\xfd", 8, 0, 2},
		{"ok \xe6\x95", 5, 0, 0}, // a sequence cut by the end
	} {
		text, control, notUTF8 := TextBytes([]byte(c.in))
		assert.Equal(t, []int{c.text, c.control, c.notUTF8}, []int{text, control, notUTF8}, "%q", c.in)
	}
}
