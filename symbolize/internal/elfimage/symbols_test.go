package elfimage

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocated returns what f allocated on the heap, run with the collector
// off: the peak of the heap f grows, whatever it frees.
func allocated(f func()) uint64 {
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestSymtabClaimingHugeSize: a .symtab whose header claims 1 GiB of
// zeros (past the end of the real file, which a sparse file extends) made
// LoadSymbols allocate 1.4 GB of entries, sized from the claim, for a table
// that holds no symbol (2.5 GB through an io.ReaderAt; the core reader's
// own chunked reader, which it replaces now, 1 MB). Memory follows the
// symbols kept now, mapped or read through a reader, and .dynsym is used
// instead. The test claims 256 MiB (358 MB of entries before), to be quick.
func TestSymtabClaimingHugeSize(t *testing.T) {
	raw, end := tinyAndEnd(t)
	ef, err := NewFile(sparse{raw, int64(len(raw))})
	require.NoError(t, err)
	idx := -1
	for i, s := range ef.Sections {
		if s.Name == ".symtab" {
			idx = i
		}
	}
	require.GreaterOrEqual(t, idx, 0)
	dir := t.TempDir()
	p := filepath.Join(dir, "tiny")
	require.NoError(t, os.WriteFile(p, raw, 0o644))
	img, err := Open(p, Options{})
	require.NoError(t, err)
	want := LoadSymbols(img, nil)
	img.Close()
	require.NotEmpty(t, want.Addr)

	le := binary.LittleEndian
	hdr := le.Uint64(raw[0x28:]) + uint64(idx)*uint64(le.Uint16(raw[0x3a:]))
	le.PutUint64(raw[hdr+0x18:], end)
	le.PutUint64(raw[hdr+0x20:], 256<<20)
	size := int64(end) + 256<<20
	require.NoError(t, os.WriteFile(p, raw, 0o644))
	require.NoError(t, os.Truncate(p, size)) // sparse: 256 MiB of zeros, no disk

	for _, mapped := range []bool{true, false} {
		var img *Image
		if mapped {
			img, err = Open(p, Options{})
		} else {
			img, err = New(sparse{raw, size}, size, p, Options{})
		}
		require.NoError(t, err)
		var got Symbols
		n := allocated(func() { got = LoadSymbols(img, nil) })
		assert.Less(t, n, uint64(16<<20), "mapped %v: memory must not follow the claimed size", mapped)
		dyn, _ := parseSymbols(img, ".dynsym") // tiny defines none
		assert.Equal(t, len(dyn.Addr), len(got.Addr), "mapped %v: the zeros hold no symbol; .dynsym's are used", mapped)
		img.Close()
	}
}

// writeSymELF writes an ELF64 file whose .symtab holds n FUNC symbols of
// 16 bytes each at 0x1000, 0x1010, …, the first of each pair local after an
// STT_FILE symbol, the second global with an __-prefixed alias of the same
// size before it in the table.
func writeSymELF(t testing.TB, path string, n int) {
	le := binary.LittleEndian
	strtab := []byte{0}
	syms := make([]byte, 24) // the null symbol
	add := func(name string, typ elf.SymType, bind elf.SymBind, addr uint64) {
		e := make([]byte, 24)
		le.PutUint32(e, uint32(len(strtab)))
		strtab = append(append(strtab, name...), 0)
		e[4] = byte(bind)<<4 | byte(typ)
		le.PutUint16(e[6:], 1)
		le.PutUint64(e[8:], addr)
		if typ != elf.STT_FILE {
			le.PutUint64(e[16:], 16)
		}
		syms = append(syms, e...)
	}
	for i := 0; i < n; i++ {
		addr := 0x1000 + uint64(i)*16
		if i%2 == 0 {
			add(fmt.Sprintf("src/f%d.cpp", i), elf.STT_FILE, elf.STB_LOCAL, 0)
			add(fmt.Sprintf("_ZN9starrocks12_GLOBAL__N_16local%dEv", i), elf.STT_FUNC, elf.STB_LOCAL, addr)
		} else {
			add(fmt.Sprintf("__starrocks_fn%d", i), elf.STT_FUNC, elf.STB_GLOBAL, addr)
			add(fmt.Sprintf("starrocks_fn%d", i), elf.STT_FUNC, elf.STB_GLOBAL, addr)
		}
	}
	shstr := []byte("\x00.text\x00.symtab\x00.strtab\x00.shstrtab\x00")
	out := make([]byte, 64)
	symOff := uint64(len(out))
	out = append(out, syms...)
	strOff := uint64(len(out))
	out = append(out, strtab...)
	shstrOff := uint64(len(out))
	out = append(out, shstr...)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := uint64(len(out))
	copy(out, elf.ELFMAG)
	out[4], out[5], out[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[40:], shoff)
	le.PutUint16(out[52:], 64) // e_ehsize
	le.PutUint16(out[58:], 64) // e_shentsize
	le.PutUint16(out[60:], 5)  // e_shnum
	le.PutUint16(out[62:], 4)  // e_shstrndx
	sh := func(name uint32, typ elf.SectionType, flags elf.SectionFlag, addr, off, size uint64, link uint32, entsize uint64) {
		b := make([]byte, 64)
		le.PutUint32(b, name)
		le.PutUint32(b[4:], uint32(typ))
		le.PutUint64(b[8:], uint64(flags))
		le.PutUint64(b[16:], addr)
		le.PutUint64(b[24:], off)
		le.PutUint64(b[32:], size)
		le.PutUint32(b[40:], link)
		le.PutUint64(b[48:], 1)
		le.PutUint64(b[56:], entsize)
		out = append(out, b...)
	}
	sh(0, elf.SHT_NULL, 0, 0, 0, 0, 0, 0)
	sh(1, elf.SHT_NOBITS, elf.SHF_ALLOC|elf.SHF_EXECINSTR, 0x1000, symOff, uint64(n)*16, 0, 0)
	sh(7, elf.SHT_SYMTAB, 0, 0, symOff, uint64(len(syms)), 3, 24)
	sh(15, elf.SHT_STRTAB, 0, 0, strOff, uint64(len(strtab)), 0, 0)
	sh(23, elf.SHT_STRTAB, 0, 0, shstrOff, uint64(len(shstr)), 0, 0)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// TestSymbolsAliasesAndFiles checks on a synthetic table that mapped and
// unmapped images give the same symbols: one per address, the public name
// among aliases of one size, the STT_FILE name of each local symbol.
func TestSymbolsAliasesAndFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "syms")
	writeSymELF(t, p, 1000)
	raw, err := os.ReadFile(p)
	require.NoError(t, err)
	mapped, err := Open(p, Options{})
	require.NoError(t, err)
	defer mapped.Close()
	unmapped, err := New(sparse{raw, int64(len(raw))}, int64(len(raw)), p, Options{})
	require.NoError(t, err)
	for _, img := range []*Image{mapped, unmapped} {
		st := LoadSymbols(img, nil)
		require.Len(t, st.Addr, 1000)
		for _, i := range []int{0, 1, 998, 999} {
			assert.Equal(t, 0x1000+uint64(i)*16, st.Addr[i])
			if i%2 == 0 {
				assert.Equal(t, fmt.Sprintf("_ZN9starrocks12_GLOBAL__N_16local%dEv", i), st.NameAt(i))
				assert.Equal(t, fmt.Sprintf("src/f%d.cpp", i), st.FileAt(i))
			} else {
				assert.Equal(t, fmt.Sprintf("starrocks_fn%d", i), st.NameAt(i), "the public name, not __starrocks_fn%d", i)
				assert.Equal(t, "", st.FileAt(i))
			}
		}
	}
}

// BenchmarkLoadSymbols500k loads a .symtab of 1,250,000 entries that keeps
// 500,000 symbols; peak-MiB is the peak heap of one load (see allocated).
// When written: 43 MiB; 75 MiB before the table was counted first and
// STT_FILE names copied lazily; 155 MiB with the core reader's old chunked
// reader (funcSym strings and sort.Slice) on the same file.
func BenchmarkLoadSymbols500k(b *testing.B) {
	p := filepath.Join(b.TempDir(), "syms")
	writeSymELF(b, p, 500000)
	img, err := Open(p, Options{})
	require.NoError(b, err)
	defer img.Close()
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		peak = allocated(func() { LoadSymbols(img, nil) })
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}
