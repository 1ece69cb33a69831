package elfimage

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

const defaultMaxSection = 8 << 30

// Image is one opened ELF file: memory-mapped (data != nil) or read
// through an io.ReaderAt. Section contents are mmap slices when the section
// is stored uncompressed, else decompressed once into the heap.
type Image struct {
	path   string
	data   []byte // whole file when memory-mapped
	unmap  func() error
	ra     io.ReaderAt
	size   int64
	File   *elf.File
	Order  binary.ByteOrder
	is64   bool
	maxSec int64

	mu    sync.Mutex
	cache map[string]secData
}

type secData struct {
	b   []byte
	err error
}

// Open maps the ELF file at path read-only (or, where mmap fails, reads
// it through the file) and parses its headers.
func Open(path string, opts Options) (*Image, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	size, err := FileSize(fh)
	if err != nil {
		return nil, err
	}
	data, unmap, err := mmapFile(fh, size)
	if err != nil {
		// Fall back to reading through the file handle.
		f2, err2 := os.Open(path)
		if err2 != nil {
			return nil, err
		}
		img, err := New(f2, size, path, opts)
		if err != nil {
			f2.Close()
			return nil, err
		}
		img.unmap = f2.Close
		return img, nil
	}
	img, err := newELFImage(bytes.NewReader(data), size, path, opts)
	if err != nil {
		unmap()
		return nil, err
	}
	img.data, img.unmap = data, unmap
	return img, nil
}

// New parses the ELF headers of r (size bytes); sections are read from r
// on first use. path only names the image in errors.
func New(r io.ReaderAt, size int64, path string, opts Options) (*Image, error) {
	return newELFImage(r, size, path, opts)
}

func newELFImage(r io.ReaderAt, size int64, path string, opts Options) (img *Image, err error) {
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("%w: %s: %v", ErrNotELF, path, p)
		}
	}()
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		return nil, fmt.Errorf("%w: %s", ErrNotELF, path)
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotELF, path, err)
	}
	max := opts.MaxSection
	if max <= 0 {
		max = defaultMaxSection
	}
	return &Image{path: path, ra: r, size: size, File: f, Order: f.ByteOrder,
		is64: f.Class == elf.ELFCLASS64, maxSec: max, cache: map[string]secData{}}, nil
}

// Close drops the section cache and unmaps the file.
func (m *Image) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cache = nil
	if m.unmap != nil {
		u := m.unmap
		m.unmap = nil
		m.data = nil
		return u()
	}
	return nil
}

// FindSection returns the section called name, or its .zdebug_ form.
func (m *Image) FindSection(name string) *elf.Section {
	if s := m.File.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
		return s
	}
	if strings.HasPrefix(name, ".debug_") {
		if s := m.File.Section(".zdebug_" + name[7:]); s != nil && s.Type != elf.SHT_NOBITS {
			return s
		}
	}
	return nil
}

// Section returns the (decompressed) contents of a section, nil if absent.
func (m *Image) Section(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil {
		return nil, ErrClosed
	}
	if c, ok := m.cache[name]; ok {
		return c.b, c.err
	}
	b, err := m.readSection(name)
	m.cache[name] = secData{b, err}
	return b, err
}

// SectionParallel is section for concurrent warm-up: the decompression
// runs outside the lock, the result is stored unless another caller won.
func (m *Image) SectionParallel(name string) {
	m.mu.Lock()
	_, done := m.cache[name]
	closed := m.cache == nil
	m.mu.Unlock()
	if done || closed {
		return
	}
	b, err := m.readSection(name)
	m.mu.Lock()
	if m.cache != nil {
		if _, ok := m.cache[name]; !ok {
			m.cache[name] = secData{b, err}
		}
	}
	m.mu.Unlock()
}

func (m *Image) readSection(name string) (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("%w: section %s: %v", ErrBadDWARF, name, p)
		}
	}()
	s := m.FindSection(name)
	if s == nil {
		return nil, nil
	}
	if s.Offset > uint64(m.size) || s.FileSize > uint64(m.size)-s.Offset {
		return nil, fmt.Errorf("%w: section %s lies outside the file", ErrBadDWARF, name)
	}
	if strings.HasPrefix(s.Name, ".zdebug_") {
		return m.readZdebug(s)
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		if int64(s.Size) > m.maxSec || s.Size > 2048*s.FileSize+(1<<20) {
			return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, name, s.Size)
		}
		buf := make([]byte, s.Size)
		if _, err := io.ReadFull(s.Open(), buf); err != nil {
			return nil, fmt.Errorf("%w: decompressing %s: %v", ErrBadDWARF, name, err)
		}
		return buf, nil
	}
	if int64(s.FileSize) > m.maxSec {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, name, s.FileSize)
	}
	if m.data != nil {
		return m.data[s.Offset : s.Offset+s.FileSize : s.Offset+s.FileSize], nil
	}
	buf := make([]byte, s.FileSize)
	if _, err := m.ra.ReadAt(buf, int64(s.Offset)); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// Progressive is a compressed section inflated by a background goroutine
// into buf; readers wait for the prefix they need.
type Progressive struct {
	Buf     []byte
	filled  atomic.Int64 // bytes of buf ready; written only by the inflater
	mu      sync.Mutex
	cond    *sync.Cond
	done    bool
	err     error
	stopped atomic.Bool
	exited  chan struct{}
}

// StartProgressive starts inflating an SHF_COMPRESSED section in the
// background. It returns nil (and no error) for a section that is absent
// or stored uncompressed.
func (m *Image) StartProgressive(name string) (*Progressive, error) {
	s := m.File.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED == 0 {
		return nil, nil
	}
	if s.Offset > uint64(m.size) || s.FileSize > uint64(m.size)-s.Offset {
		return nil, fmt.Errorf("%w: section %s lies outside the file", ErrBadDWARF, name)
	}
	if int64(s.Size) > m.maxSec || s.Size > 2048*s.FileSize+(1<<20) {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, name, s.Size)
	}
	p := &Progressive{Buf: make([]byte, s.Size), exited: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	rd := s.Open()
	go func() {
		defer close(p.exited)
		var err error
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: inflating %s: %v", ErrBadDWARF, name, r)
			}
			p.mu.Lock()
			p.done, p.err = true, err
			p.cond.Broadcast()
			p.mu.Unlock()
		}()
		n, idle := 0, 0
		for n < len(p.Buf) && !p.stopped.Load() {
			k, rerr := rd.Read(p.Buf[n:min(n+1<<20, len(p.Buf))])
			n += k
			if k == 0 && rerr == nil {
				if idle++; idle > 100 {
					rerr = io.ErrNoProgress
				}
			} else {
				idle = 0
			}
			p.filled.Store(int64(n))
			p.mu.Lock()
			p.cond.Broadcast()
			p.mu.Unlock()
			if rerr != nil {
				if n < len(p.Buf) {
					err = fmt.Errorf("%w: inflating %s: %v", ErrBadDWARF, name, rerr)
				}
				return
			}
		}
	}()
	return p, nil
}

// Wait blocks until buf[:n] is ready; false if it never will be.
func (p *Progressive) Wait(n uint64) bool {
	if n > uint64(len(p.Buf)) {
		return false
	}
	if uint64(p.filled.Load()) >= n {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uint64(p.filled.Load()) < n && !p.done {
		p.cond.Wait()
	}
	return uint64(p.filled.Load()) >= n
}

// Stop ends the inflation (the file is about to be unmapped) and waits for it.
func (p *Progressive) Stop() {
	p.stopped.Store(true)
	<-p.exited
}

// readZdebug decodes the legacy GNU ".zdebug" format: "ZLIB", 8-byte
// big-endian size, zlib stream.
func (m *Image) readZdebug(s *elf.Section) ([]byte, error) {
	raw := make([]byte, s.FileSize)
	if _, err := m.ra.ReadAt(raw, int64(s.Offset)); err != nil && err != io.EOF {
		return nil, err
	}
	if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
		return raw, nil
	}
	n := binary.BigEndian.Uint64(raw[4:12])
	if int64(n) > m.maxSec || n > 2048*uint64(len(raw))+(1<<20) {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, s.Name, n)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[12:]))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadDWARF, s.Name, err)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(zr, buf); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadDWARF, s.Name, err)
	}
	return buf, nil
}

// HasDWARF reports whether the image has a .debug_info section.
func (m *Image) HasDWARF() bool {
	s := m.FindSection(".debug_info")
	return s != nil && s.Size > 0
}

// BuildID returns the NT_GNU_BUILD_ID note as hex.
func (m *Image) BuildID() string {
	for _, s := range m.File.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<16 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		if id := noteBuildID(b, m.Order); id != "" {
			return id
		}
	}
	for _, p := range m.File.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<16 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			continue
		}
		if id := noteBuildID(b, m.Order); id != "" {
			return id
		}
	}
	return ""
}

// noteBuildID scans ELF notes for NT_GNU_BUILD_ID (type 3, name "GNU").
func noteBuildID(b []byte, order binary.ByteOrder) string {
	for len(b) >= 12 {
		nsz, dsz, typ := order.Uint32(b), order.Uint32(b[4:]), order.Uint32(b[8:])
		b = b[12:]
		na := (uint64(nsz) + 3) &^ 3
		da := (uint64(dsz) + 3) &^ 3
		if na > uint64(len(b)) || uint64(nsz) > uint64(len(b)) {
			return ""
		}
		name := b[:nsz]
		b = b[na:]
		if uint64(dsz) > uint64(len(b)) {
			return ""
		}
		desc := b[:dsz]
		if da > uint64(len(b)) {
			b = nil
		} else {
			b = b[da:]
		}
		if typ == 3 && string(bytes.TrimRight(name, "\x00")) == "GNU" && len(desc) > 0 {
			return hex.EncodeToString(desc)
		}
	}
	return ""
}

// LoadBase is the page-aligned lowest PT_LOAD vaddr.
func (m *Image) LoadBase() uint64 {
	base := ^uint64(0)
	for _, p := range m.File.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr < base {
			base = p.Vaddr
		}
	}
	if base == ^uint64(0) {
		return 0
	}
	return base &^ 0xfff
}

// Debuglink returns the .gnu_debuglink file name and CRC32.
func (m *Image) Debuglink() (string, uint32, bool) {
	s := m.File.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return "", 0, false
	}
	b, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", 0, false
	}
	name := string(b[:i])
	off := (i + 4) &^ 3
	if off+4 > len(b) {
		return name, 0, false
	}
	return name, m.Order.Uint32(b[off:]), true
}

// CRC32 computes the CRC32 (IEEE) of the whole file, as GNU debuglink does.
func (m *Image) CRC32() (uint32, error) {
	if m.data != nil {
		return crc32.ChecksumIEEE(m.data), nil
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(m.ra, 0, m.size)); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// LocateDebugFile looks for a separate debug file for img. It returns the
// accepted image and its path, and the errors of rejected candidates.
func LocateDebugFile(path string, img *Image, opts Options) (*Image, string, []error) {
	id := img.BuildID()
	link, crc, hasCRC := img.Debuglink()
	type cand struct {
		path   string
		viaCRC bool // found through .gnu_debuglink: check the CRC when there is no build-id
	}
	var cands []cand
	if opts.DebugFile != "" {
		cands = append(cands, cand{opts.DebugFile, false})
	}
	if len(id) > 2 {
		for _, d := range opts.DebugDirs {
			cands = append(cands, cand{filepath.Join(d, ".build-id", id[:2], id[2:]+".debug"), false})
		}
	}
	if link != "" && path != "" {
		dir := filepath.Dir(path)
		cands = append(cands, cand{filepath.Join(dir, link), hasCRC}, cand{filepath.Join(dir, ".debug", link), hasCRC})
		if abs, err := filepath.Abs(dir); err == nil {
			for _, d := range opts.DebugDirs {
				cands = append(cands, cand{filepath.Join(d, abs, link), hasCRC})
			}
		}
	}
	if link != "" {
		for _, d := range opts.DebugDirs {
			cands = append(cands, cand{filepath.Join(d, link), hasCRC})
		}
	}
	var tried []error
	seen := map[string]bool{}
	self, _ := filepath.Abs(path)
	for _, c := range cands {
		abs, _ := filepath.Abs(c.path)
		if seen[abs] || (path != "" && abs == self) {
			continue
		}
		seen[abs] = true
		if _, err := os.Stat(c.path); err != nil {
			if c.path == opts.DebugFile {
				tried = append(tried, err)
			}
			continue
		}
		dbg, err := Open(c.path, opts)
		if err != nil {
			tried = append(tried, fmt.Errorf("%s: %w", c.path, err))
			continue
		}
		did := dbg.BuildID()
		switch {
		case id != "" && did != id:
			tried = append(tried, &BuildIDMismatch{Binary: path, DebugFile: c.path, BinaryID: id, DebugID: did})
			dbg.Close()
			continue
		case id == "" && c.viaCRC:
			got, err := dbg.CRC32()
			if err != nil || got != crc {
				tried = append(tried, fmt.Errorf("%w: %s: crc %08x, want %08x", ErrDebuglinkCRC, c.path, got, crc))
				dbg.Close()
				continue
			}
		}
		if !dbg.HasDWARF() {
			tried = append(tried, fmt.Errorf("%w: %s", ErrNoDebugInfo, c.path))
			dbg.Close()
			continue
		}
		return dbg, c.path, tried
	}
	return nil, "", tried
}

// Symbols is the ELF symbol table as llvm-symbolizer uses it: STT_FUNC
// and STT_OBJECT symbols, sorted by (address, size), one per address (the
// last, i.e. largest). Names stay in the string table (mapped) and are
// copied into Go strings on first use, so opening a binary with a large
// .strtab does not copy it.
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
	return cstrAt(t.strtab, uint64(t.nameOff[i]))
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
				if nm := cstrAt(strRaw, uint64(e0.name)); len(nm) > 0 {
					t.files = append(t.files, string(nm))
					curFile = uint32(len(t.files))
				}
			}
			continue
		}
		if elf.SymBind(info>>4) == elf.STB_LOCAL && curFile != 0 {
			e0.file, anyFile = curFile, true
		}
		if (typ != elf.STT_FUNC && typ != elf.STT_OBJECT) || shndx == uint16(elf.SHN_UNDEF) || shndx == uint16(elf.SHN_ABS) && e0.addr == 0 {
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
	// addresses, short and rare, are then ordered by size.
	ents = SortByAddr(ents, func(e *ent) uint64 { return e.addr })
	for i := 0; i < len(ents); {
		j := i + 1
		for j < len(ents) && ents[j].addr == ents[i].addr {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(ents[i:j], func(a, b ent) int { return cmp.Compare(a.size, b.size) })
		}
		i = j
	}
	k := 0
	for i := range ents {
		if i+1 < len(ents) && ents[i+1].addr == ents[i].addr {
			continue
		}
		ents[k] = ents[i]
		k++
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
