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
	// file is, for a local (STB_LOCAL) symbol, 1 + the index in files of
	// the name of the last STT_FILE symbol before it in the table, else 0;
	// nil when the table has no such symbol.
	file   []uint32
	files  []string
	strtab []byte
	names  []atomic.Pointer[string]
	dems   []atomic.Pointer[string] // demangled names, filled on first use
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
	if t.file == nil || t.file[i] == 0 || int(t.file[i]) > len(t.files) {
		return ""
	}
	return t.files[t.file[i]-1]
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
	raw, err := m.Section(secName)
	if err != nil || len(raw) == 0 {
		return t, false
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
		idx        int32
	}
	esz := 16
	if m.is64 {
		esz = 24
	}
	n := len(raw) / esz
	ents := make([]ent, 0, n)
	o := m.Order
	var curFile uint32 // 1 + index in t.files of the last STT_FILE symbol's name
	anyFile := false
	for i := 1; i < n; i++ {
		e := raw[i*esz : (i+1)*esz]
		var e0 ent
		var info byte
		var shndx uint16
		if m.is64 {
			e0 = ent{addr: o.Uint64(e[8:]), size: o.Uint64(e[16:]), name: o.Uint32(e)}
			info, shndx = e[4], o.Uint16(e[6:])
		} else {
			e0 = ent{addr: uint64(o.Uint32(e[4:])), size: uint64(o.Uint32(e[8:])), name: o.Uint32(e)}
			info, shndx = e[12], o.Uint16(e[14:])
		}
		typ := elf.SymType(info & 0xf)
		if typ == elf.STT_FILE {
			// llvm-symbolizer names the file of a local symbol without
			// line information after the STT_FILE symbol before it.
			curFile = 0
			if int(e0.name) < len(strRaw) {
				if nm := CStringAt(strRaw, uint64(e0.name)); len(nm) > 0 {
					t.files = append(t.files, string(nm))
					curFile = uint32(len(t.files))
				}
			}
			continue
		}
		if elf.SymBind(info>>4) == elf.STB_LOCAL && curFile != 0 {
			e0.file, anyFile = curFile, true
		}
		// llvm-symbolizer's kinds: functions (an STT_GNU_IFUNC symbol
		// names its resolver's code) and data.
		if (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC && typ != elf.STT_OBJECT) || shndx == uint16(elf.SHN_UNDEF) || shndx == uint16(elf.SHN_ABS) && e0.addr == 0 {
			continue
		}
		if int(e0.name) >= len(strRaw) {
			continue
		}
		e0.idx = int32(len(ents))
		ents = append(ents, e0)
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
	} else {
		t.files = nil
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
