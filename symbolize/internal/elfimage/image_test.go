package elfimage

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binDir holds the gzip-compressed test binaries of package symbolize
// (symbolize/testdata/cxx, built by its build.sh).
var binDir = filepath.Join("..", "..", "testdata", "cxx", "bin")

// extract decompresses the named test binaries into dir.
func extract(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		testutil.Gunzip(t, filepath.Join(binDir, n+".gz"), filepath.Join(dir, n))
	}
}

// TestDebuglinkCRC checks the .gnu_debuglink CRC of the split variant
// against the CRC32 of its debug file.
func TestDebuglinkCRC(t *testing.T) {
	dir := t.TempDir()
	extract(t, dir, "split", "split.debug")
	img, err := Open(filepath.Join(dir, "split"), Options{})
	require.NoError(t, err)
	defer img.Close()
	name, crc, ok := img.Debuglink()
	require.True(t, ok)
	require.Equal(t, "split.debug", name)
	dbg, err := Open(filepath.Join(dir, "split.debug"), Options{})
	require.NoError(t, err)
	defer dbg.Close()
	got, err := dbg.CRC32()
	require.NoError(t, err)
	assert.Equal(t, crc, got)
}

// TestLocateDebugFile finds split.debug through .gnu_debuglink beside the
// binary (the build-id matches), and refuses a debug file of another
// binary with a *BuildIDMismatch.
func TestLocateDebugFile(t *testing.T) {
	dir := t.TempDir()
	extract(t, dir, "split", "split.debug", "clang-o2-dw5")
	img, err := Open(filepath.Join(dir, "split"), Options{})
	require.NoError(t, err)
	defer img.Close()
	require.False(t, img.HasDWARF())
	dbg, path, tried := LocateDebugFile(filepath.Join(dir, "split"), img, Options{})
	require.NotNil(t, dbg)
	defer dbg.Close()
	assert.Equal(t, filepath.Join(dir, "split.debug"), path)
	assert.Empty(t, tried)
	assert.Equal(t, img.BuildID(), dbg.BuildID())

	other, _, tried := LocateDebugFile(filepath.Join(dir, "split"), img, Options{DebugFile: filepath.Join(dir, "clang-o2-dw5")})
	if other != nil {
		other.Close() // the debuglink candidate after the refused one
	}
	require.NotEmpty(t, tried)
	var mm *BuildIDMismatch
	require.ErrorAs(t, tried[0], &mm)
	assert.Equal(t, img.BuildID(), mm.BinaryID)
}

// TestNotELF checks that a non-ELF input is refused with ErrNotELF.
func TestNotELF(t *testing.T) {
	_, err := New(bytes.NewReader([]byte("not an elf file at all")), 22, "x", Options{})
	require.ErrorIs(t, err, ErrNotELF)
}

// FuzzImage feeds arbitrary bytes to New and reads what an open reads:
// build-id, debuglink, load base, the debug sections and the symbol table.
// Bad input must give an error or empty results, never a panic.
func FuzzImage(f *testing.F) {
	for _, n := range []string{"tiny", "tiny-clang"} {
		dir := f.TempDir()
		extract(f, dir, n)
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := New(bytes.NewReader(b), int64(len(b)), "fuzz", Options{MaxSection: 1 << 20})
		if err != nil {
			return
		}
		defer img.Close()
		_ = img.BuildID()
		_, _, _ = img.Debuglink()
		_ = img.LoadBase()
		for _, s := range []string{".debug_info", ".debug_line", ".debug_str", ".debug_aranges"} {
			_, _ = img.Section(s)
		}
		syms := LoadSymbols(img, nil)
		for i := 0; i < len(syms.Addr) && i < 64; i++ {
			_ = syms.NameAt(i)
			_ = syms.FileAt(i)
		}
		if len(syms.Addr) > 0 {
			_ = syms.Find(syms.Addr[0])
		}
	})
}

// TestCompressedNotELF: a compressed binary is refused with ErrCompressed
// (and ErrNotELF), naming its compression, instead of a bare "not an ELF
// file".
func TestCompressedNotELF(t *testing.T) {
	for name, head := range map[string][]byte{"gzip": {0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, "zstd": {0x28, 0xb5, 0x2f, 0xfd, 0, 0}} {
		_, err := New(bytes.NewReader(head), int64(len(head)), "be.gz", Options{})
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrCompressed, name)
		assert.ErrorIs(t, err, ErrNotELF, name)
		assert.Contains(t, err.Error(), name+" stream")
	}
	_, err := New(bytes.NewReader([]byte("not elf at all")), 14, "x", Options{})
	assert.ErrorIs(t, err, ErrNotELF)
	assert.NotErrorIs(t, err, ErrCompressed)
}

// TestTruncatedELF: a binary cut short (an interrupted copy or download)
// is an ELF file whose section headers, at its end, are gone. It is
// refused with ErrNotELF, and the message says it is truncated and by how
// much instead of "not an ELF file: …: EOF".
func TestTruncatedELF(t *testing.T) {
	dir := t.TempDir()
	extract(t, dir, "tiny")
	raw, err := os.ReadFile(filepath.Join(dir, "tiny"))
	require.NoError(t, err)
	for _, n := range []int{64, 4096, len(raw) / 2, len(raw) - 1} {
		p := filepath.Join(dir, "cut")
		require.NoError(t, os.WriteFile(p, raw[:n], 0o644))
		_, err := Open(p, Options{})
		require.ErrorIs(t, err, ErrNotELF, n)
		assert.ErrorContains(t, err, "truncated", n)
		assert.ErrorContains(t, err, p, n)
	}
	// A header cut inside itself is just not an ELF file.
	p := filepath.Join(dir, "cut")
	require.NoError(t, os.WriteFile(p, raw[:40], 0o644))
	_, err = Open(p, Options{})
	require.ErrorIs(t, err, ErrNotELF)
}

// sparse is an io.ReaderAt of b followed by zeros up to size (a sparse
// file without the disk).
type sparse struct {
	b    []byte
	size int64
}

func (z sparse) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= z.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.size-off))
	k := 0
	if off < int64(len(z.b)) {
		k = copy(p[:n], z.b[off:])
	}
	clear(p[k:n])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// tinyAndEnd returns the tiny test binary and the first page boundary
// after its end, where the tests put what a header claims.
func tinyAndEnd(t *testing.T) ([]byte, uint64) {
	t.Helper()
	dir := t.TempDir()
	extract(t, dir, "tiny")
	raw, err := os.ReadFile(filepath.Join(dir, "tiny"))
	require.NoError(t, err)
	return raw, (uint64(len(raw)) + 0xfff) &^ 0xfff
}

// TestClaimedSectionCount: a file that claims millions of section headers
// (extended numbering: e_shnum 0, the count in section 0's sh_size; the
// headers zeros of a sparse file) made debug/elf allocate a Section for
// each before reading one: 30 million in a 1.9 GB sparse file (796 KB on
// disk) ended in "fatal error: out of memory". It is refused from the
// header now, with the count in the message; so are huge program header
// counts (PN_XNUM, the count in section 0's sh_info).
func TestClaimedSectionCount(t *testing.T) {
	raw, off := tinyAndEnd(t)
	le := binary.LittleEndian
	b := append(raw[:len(raw):len(raw)], make([]byte, off-uint64(len(raw))+64)...)
	le.PutUint64(b[0x28:], off) // e_shoff
	le.PutUint16(b[0x3c:], 0)   // e_shnum: extended
	le.PutUint16(b[0x3e:], 0)   // e_shstrndx
	const claimed = 1 << 20
	le.PutUint64(b[off+0x20:], claimed) // section 0 sh_size
	_, err := New(sparse{b, int64(off) + 64*claimed}, int64(off)+64*claimed, "claims", Options{})
	require.ErrorIs(t, err, ErrNotELF)
	assert.ErrorContains(t, err, "1048576 section headers")

	le.PutUint64(b[off+0x20:], 1)     // one section again
	le.PutUint16(b[0x38:], 0xffff)    // e_phnum: PN_XNUM
	le.PutUint32(b[off+0x2c:], 1<<30) // section 0 sh_info
	_, err = New(sparse{b, int64(off) + 64}, int64(off)+64, "claims", Options{})
	require.ErrorIs(t, err, ErrNotELF)
	assert.ErrorContains(t, err, "program headers")
}

// TestClaimedNameTable: elf.NewFile reads the section name table whole; a
// sparse file whose .shstrtab claims 1.9 GB died of "out of memory" (5.8
// GB in use). It is refused from its section header now.
func TestClaimedNameTable(t *testing.T) {
	raw, off := tinyAndEnd(t)
	le := binary.LittleEndian
	shoff, shentsize, shstrndx := le.Uint64(raw[0x28:]), uint64(le.Uint16(raw[0x3a:])), uint64(le.Uint16(raw[0x3e:]))
	hdr := shoff + shstrndx*shentsize
	le.PutUint64(raw[hdr+0x18:], off)
	const claimed = 1 << 30
	le.PutUint64(raw[hdr+0x20:], claimed)
	_, err := New(sparse{raw, int64(off) + claimed}, int64(off)+claimed, "claims", Options{})
	require.ErrorIs(t, err, ErrNotELF)
	assert.ErrorContains(t, err, "section name table of 1073741824 bytes")
}
