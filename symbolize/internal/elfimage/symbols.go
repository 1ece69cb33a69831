package elfimage

import (
	"cmp"
	"debug/elf"
	"slices"
	"sync/atomic"
)

// Symbols is the ELF symbol table as llvm-symbolizer uses it: STT_FUNC,
// STT_GNU_IFUNC and STT_OBJECT symbols, sorted by address, one per
// address: the largest (a sized symbol wins over a size-less one); among
// aliases of that size the public name, the one with the fewest leading
// underscores (read over __read, fflush over _IO_fflush, as gdb prints
// them; llvm-symbolizer takes the last in the table); among those the last
// in the table. OpenBinary and the core reader both name functions by it. Names stay in the string table (mapped)
// and are copied into Go strings on first use, so opening a binary with a
// large .strtab does not copy it.
type Symbols struct {
	Addr    []uint64
	Size    []uint64
	nameOff []uint32
	// file is, for a local (STB_LOCAL) symbol, 1 + the index in fileOff
	// of the name of the last STT_FILE symbol before it in the table, else
	// 0; nil when the table has no such symbol. fileOff holds the name
	// offsets of the STT_FILE symbols that kept symbols refer to, files
	// their names, copied on first use.
	file    []uint32
	fileOff []uint32
	files   []atomic.Pointer[string]
	strtab  []byte
	names   []atomic.Pointer[string]
	dems    []atomic.Pointer[string] // demangled names, filled on first use
}

// DemangledAt returns the demangled name of symbol i (cached).
func (t *Symbols) DemangledAt(i int, demangle func(string) string) string {
	if p := t.dems[i].Load(); p != nil {
		return *p
	}
	s := demangle(t.NameAt(i))
	t.dems[i].Store(&s)
	return s
}

// FileAt returns the STT_FILE name of local symbol i (see file), or "".
func (t *Symbols) FileAt(i int) string {
	if t.file == nil || t.file[i] == 0 || int(t.file[i]) > len(t.fileOff) {
		return ""
	}
	f := t.file[i] - 1
	if p := t.files[f].Load(); p != nil {
		return *p
	}
	nm := CStringAt(t.strtab, uint64(t.fileOff[f]))
	s := string(nm[:min(len(nm), maxFileName)])
	t.files[f].Store(&s)
	return s
}

// RawName returns the name of symbol i as bytes of the string table.
func (t *Symbols) RawName(i int) []byte {
	return CStringAt(t.strtab, uint64(t.nameOff[i]))
}

// NameAt returns the name of symbol i (copied once, then cached).
func (t *Symbols) NameAt(i int) string {
	if p := t.names[i].Load(); p != nil {
		return *p
	}
	s := string(t.RawName(i))
	t.names[i].Store(&s)
	return s
}

// LoadSymbols returns the symbol table of main's .symtab, else debug's
// .symtab, else main's .dynsym (debug may be nil).
func LoadSymbols(main, debug *Image) Symbols {
	for _, src := range []struct {
		img *Image
		sec string
	}{{main, ".symtab"}, {debug, ".symtab"}, {main, ".dynsym"}} {
		if src.img == nil {
			continue
		}
		if t, ok := parseSymbols(src.img, src.sec); ok {
			return t
		}
	}
	return Symbols{}
}

// symChunk is how many symbol-table bytes parseSymbols reads at a time
// from an image that is not mapped.
const symChunk = 1 << 20

// maxFileName bounds an STT_FILE name (a source path; PATH_MAX is 4096).
const maxFileName = 4096

// parseSymbols reads the symbol table secName. Its memory follows the
// symbols it keeps, not the size the section header claims: a mapped
// table is read in place and counted before the entries are allocated, an
// unmapped one is read in chunks of symChunk bytes, and STT_FILE names are
// copied only when a kept symbol refers to them, once each. (A .symtab
// claiming 1 GiB of zeros in a sparse file made this allocate 1.4 GB of
// entries for a table that holds none.)
func parseSymbols(m *Image, secName string) (t Symbols, ok bool) {
	defer func() {
		if recover() != nil {
			t, ok = Symbols{}, false
		}
	}()
	s := m.File.Section(secName)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Link == 0 || int(s.Link) >= len(m.File.Sections) {
		return t, false
	}
	if s.Offset > uint64(m.size) || s.FileSize > uint64(m.size)-s.Offset {
		return t, false // as Section: it lies outside the file
	}
	strSec := m.File.Sections[s.Link]
	strRaw, err := m.Section(strSec.Name)
	if err != nil {
		return t, false
	}
	type ent struct {
		addr, size uint64
		name       uint32
		file       uint32 // see Symbols.file
	}
	esz := 16
	if m.is64 {
		esz = 24
	}
	o := m.Order
	// decode returns the entry e as a symbol to keep (ok), or its type.
	decode := func(e []byte) (e0 ent, typ elf.SymType, local, ok bool) {
		var info byte
		var shndx uint16
		if m.is64 {
			e0 = ent{addr: o.Uint64(e[8:]), size: o.Uint64(e[16:]), name: o.Uint32(e)}
			info, shndx = e[4], o.Uint16(e[6:])
		} else {
			e0 = ent{addr: uint64(o.Uint32(e[4:])), size: uint64(o.Uint32(e[8:])), name: o.Uint32(e)}
			info, shndx = e[12], o.Uint16(e[14:])
		}
		typ = elf.SymType(info & 0xf)
		// llvm-symbolizer's kinds: functions (an STT_GNU_IFUNC symbol
		// names its resolver's code) and data.
		ok = (typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC || typ == elf.STT_OBJECT) &&
			shndx != uint16(elf.SHN_UNDEF) && !(shndx == uint16(elf.SHN_ABS) && e0.addr == 0) &&
			int(e0.name) < len(strRaw)
		return e0, typ, elf.SymBind(info>>4) == elf.STB_LOCAL, ok
	}
	var ents []ent
	// curFile is 1 + the name offset of the last STT_FILE symbol, 0 if
	// none; curIdx is its 1 + index in t.fileOff, 0 until a kept symbol
	// refers to it.
	var curFile, curIdx uint32
	anyFile := false
	visit := func(e []byte) {
		e0, typ, local, ok := decode(e)
		if typ == elf.STT_FILE {
			// llvm-symbolizer names the file of a local symbol without
			// line information after the STT_FILE symbol before it.
			curFile, curIdx = 0, 0
			if int(e0.name) < len(strRaw) && strRaw[e0.name] != 0 {
				curFile = e0.name + 1
			}
			return
		}
		if !ok {
			return
		}
		if local && curFile != 0 {
			if curIdx == 0 {
				t.fileOff = append(t.fileOff, curFile-1)
				curIdx = uint32(len(t.fileOff))
			}
			e0.file, anyFile = curIdx, true
		}
		ents = append(ents, e0)
	}
	if m.data != nil || s.Flags&elf.SHF_COMPRESSED != 0 {
		// In place (or inflated once, within MaxSection): count, then keep.
		raw, err := m.Section(secName)
		if err != nil || len(raw) < 2*esz {
			return t, false
		}
		n := len(raw) / esz
		kept := 0
		for i := 1; i < n; i++ {
			if _, _, _, ok := decode(raw[i*esz : (i+1)*esz]); ok {
				kept++
			}
		}
		ents = make([]ent, 0, kept)
		for i := 1; i < n; i++ {
			visit(raw[i*esz : (i+1)*esz])
		}
	} else {
		buf := make([]byte, min(uint64(symChunk-symChunk%esz), s.FileSize))
		for off := uint64(0); off < s.FileSize; off += uint64(len(buf)) {
			k, _ := m.ra.ReadAt(buf[:min(uint64(len(buf)), s.FileSize-off)], int64(s.Offset+off))
			for i := 0; i+esz <= k; i += esz {
				if off > 0 || i > 0 { // entry 0 is the null symbol
					visit(buf[i : i+esz])
				}
			}
			if k < len(buf) {
				break // a short read ends the table
			}
		}
	}
	// Sort by (address, size, index). A stable LSD radix sort on the
	// address bytes that vary (usually 3 or 4 passes) is 5× faster than a
	// comparison sort on the 70k–500k symbols of a backend; runs of equal
	// addresses, short and rare, are then ordered by size, and one symbol
	// of each is kept: the largest, the public name among aliases of
	// that size (see Symbols), else the last in the table.
	ents = SortByAddr(ents, func(e *ent) uint64 { return e.addr })
	k := 0
	for i := 0; i < len(ents); {
		j := i + 1
		for j < len(ents) && ents[j].addr == ents[i].addr {
			j++
		}
		w := j - 1
		if j-i > 1 {
			slices.SortStableFunc(ents[i:j], func(a, b ent) int { return cmp.Compare(a.size, b.size) })
			for x := j - 2; x >= i && ents[x].size == ents[w].size; x-- {
				if leadingUnderscores(strRaw, ents[x].name) < leadingUnderscores(strRaw, ents[w].name) {
					w = x
				}
			}
		}
		ents[k] = ents[w]
		k++
		i = j
	}
	ents = ents[:k]
	t.Addr = make([]uint64, k)
	t.Size = make([]uint64, k)
	t.nameOff = make([]uint32, k)
	t.names = make([]atomic.Pointer[string], k)
	t.dems = make([]atomic.Pointer[string], k)
	t.strtab = strRaw
	if anyFile {
		t.file = make([]uint32, k)
		t.files = make([]atomic.Pointer[string], len(t.fileOff))
	} else {
		t.fileOff = nil
	}
	for i, e := range ents {
		t.Addr[i], t.Size[i], t.nameOff[i] = e.addr, e.size, e.name
		if anyFile {
			t.file[i] = e.file
		}
	}
	return t, k > 0
}

// Find returns the index of the symbol containing pc, or -1.
func (t *Symbols) Find(pc uint64) int {
	a := t.Addr
	lo, hi := 0, len(a)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if a[h] <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	i := lo - 1
	if i < 0 {
		return -1
	}
	if t.Size[i] != 0 && pc-t.Addr[i] >= t.Size[i] {
		return -1
	}
	return i
}

// SortByAddr sorts xs stably by key with a least-significant-byte
// radix sort over the bytes in which the keys differ. It returns the
// sorted slice, which is xs or a scratch slice of the same length.
func SortByAddr[T any](xs []T, key func(*T) uint64) []T {
	if len(xs) < 2 {
		return xs
	}
	var or, and uint64 = 0, ^uint64(0)
	sorted := true
	for i := range xs {
		k := key(&xs[i])
		or |= k
		and &= k
		if i > 0 && sorted && k < key(&xs[i-1]) {
			sorted = false
		}
	}
	if sorted {
		return xs
	}
	diff := or ^ and // bits that are not the same in every key
	tmp := make([]T, len(xs))
	src, dst := xs, tmp
	for shift := uint(0); shift < 64; shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue
		}
		var count [257]int
		for i := range src {
			count[(key(&src[i])>>shift)&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for i := range src {
			b := (key(&src[i]) >> shift) & 0xff
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	return src
}

// leadingUnderscores counts the underscores that begin the name at off
// of strtab.
func leadingUnderscores(strtab []byte, off uint32) int {
	n := 0
	for int(off)+n < len(strtab) && strtab[int(off)+n] == '_' {
		n++
	}
	return n
}
