package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// coreLoc is one source location of a core frame: the function and, when
// debug information exists, file and line. A physical frame yields one
// coreLoc per inline level, innermost first.
type coreLoc struct {
	Function  string // symbol name as found (possibly mangled)
	Demangled string // demangled Function, when the resolver provides it
	File      string
	Line      int
	Column    int
	Inlined   bool
}

// pcResolver turns link-time addresses of one module into locations. The
// core reader symbolizes through it, with either the ELF symbol tables
// (symtabResolver) or the DWARF symbolizer of this package.
type pcResolver interface {
	// resolve returns the locations of pc (exact: pc is not a return
	// address), innermost first, or nil when pc is in no known function.
	resolve(pc uint64, exact bool) []coreLoc
	// hasSymbols and hasLines report what the module's files provide.
	hasSymbols() bool
	hasLines() bool
	// debugPath is the separate debug file in use, if any.
	debugPath() string
	// debugELF is the separate debug file as ELF (for .debug_frame), or nil.
	debugELF() *elf.File
	close()
}

// funcSym is one function symbol.
type funcSym struct {
	addr, size uint64
	name       string
}

// symtabResolver resolves names from .symtab/.dynsym of the module's file
// or of its separate debug file.
type symtabResolver struct {
	syms    []funcSym
	dbgPath string
	dbg     *elf.File
	dbgF    io.Closer
}

func readFuncSyms(ef *elf.File, out []funcSym) []funcSym {
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		for _, s := range ef.Sections {
			if s.Type == typ {
				out = appendFuncSyms(ef, s, out)
				break
			}
		}
	}
	return out
}

// symChunk is how many symbol-table bytes appendFuncSyms reads at a time.
const symChunk = 1 << 20

// appendFuncSyms appends the function symbols of the symbol table s. It
// reads the table in chunks and keeps only function symbols, so memory
// follows what the table holds, not the size its header claims (debug/elf's
// Symbols decodes every entry of a claimed 1 GiB table into a slice first).
// Names are read from the linked string table one at a time.
func appendFuncSyms(ef *elf.File, s *elf.Section, out []funcSym) []funcSym {
	if s.Type == elf.SHT_NOBITS || s.Link == 0 || int(s.Link) >= len(ef.Sections) {
		return out
	}
	strs := ef.Sections[s.Link]
	if strs.Type == elf.SHT_NOBITS {
		return out
	}
	esz := uint64(elf.Sym64Size)
	if ef.Class == elf.ELFCLASS32 {
		esz = elf.Sym32Size
	}
	order := ef.ByteOrder
	buf := make([]byte, symChunk-symChunk%esz)
	names := strPage{s: strs}
	// Entry 0 is the null symbol; a short read ends the table.
	for off := uint64(0); off < s.Size; off += uint64(len(buf)) {
		n, _ := s.ReadAt(buf[:min(uint64(len(buf)), s.Size-off)], int64(off))
		for i := 0; i+int(esz) <= n; i += int(esz) {
			if off == 0 && i == 0 {
				continue
			}
			e := buf[i : i+int(esz)]
			var nameOff uint32
			var info uint8
			var shndx uint16
			var value, size uint64
			if esz == elf.Sym64Size {
				nameOff, info, shndx = order.Uint32(e), e[4], order.Uint16(e[6:])
				value, size = order.Uint64(e[8:]), order.Uint64(e[16:])
			} else {
				nameOff, value, size = order.Uint32(e), uint64(order.Uint32(e[4:])), uint64(order.Uint32(e[8:]))
				info, shndx = e[12], order.Uint16(e[14:])
			}
			if t := elf.ST_TYPE(info); t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
				continue
			}
			if value == 0 || elf.SectionIndex(shndx) == elf.SHN_UNDEF || nameOff == 0 {
				continue
			}
			nm := names.at(uint64(nameOff))
			if len(nm) == 0 {
				continue
			}
			if j := bytes.IndexByte(nm, '@'); j > 0 {
				nm = nm[:j]
			}
			out = append(out, funcSym{addr: value, size: size, name: string(nm)})
		}
		if n < len(buf) {
			break
		}
	}
	return out
}

// strPage reads NUL-terminated strings of a string table through one
// cached 64 KiB page: symbol names are mostly laid out in symbol order, so
// a table is read in few calls without holding all of it.
type strPage struct {
	s    *elf.Section
	base uint64
	buf  []byte
}

// at returns the string at off (at most 64 KiB; a longer or unterminated
// one is cut there), valid until the next call.
func (p *strPage) at(off uint64) []byte {
	if off < p.base || off >= p.base+uint64(len(p.buf)) || bytes.IndexByte(p.buf[off-p.base:], 0) < 0 {
		if off >= p.s.Size {
			return nil
		}
		if p.buf == nil {
			p.buf = make([]byte, 0, 64<<10)
		}
		n, _ := p.s.ReadAt(p.buf[:min(uint64(cap(p.buf)), p.s.Size-off)], int64(off))
		p.base, p.buf = off, p.buf[:n]
	}
	b := p.buf[off-p.base:]
	if j := bytes.IndexByte(b, 0); j >= 0 {
		b = b[:j]
	}
	return b
}

// newSymtabResolver reads the symbols of ef and, when ef has no .symtab,
// of a separate debug file found in debugDirs.
func newSymtabResolver(path string, ef *elf.File, buildID string, debugDirs []string) *symtabResolver {
	r := &symtabResolver{}
	syms := readFuncSyms(ef, nil)
	if path != "" && !strings.HasPrefix(path, "[") && (ef.Section(".symtab") == nil || ef.Section(".debug_info") == nil) {
		if dp := findDebugFile(path, ef, buildID, debugDirs); dp != "" {
			if f, err := os.Open(dp); err == nil {
				if d, err := elfimage.NewFile(f); err == nil {
					r.dbgPath, r.dbg, r.dbgF = dp, d, f
					syms = readFuncSyms(d, syms)
				} else {
					f.Close()
				}
			}
		}
	}
	sort.Slice(syms, func(i, j int) bool {
		if syms[i].addr != syms[j].addr {
			return syms[i].addr < syms[j].addr
		}
		if (syms[i].size == 0) != (syms[j].size == 0) {
			return syms[i].size != 0
		}
		// among aliases prefer the public name (read over __read, as gdb does)
		ui, uj := leadingUnderscores(syms[i].name), leadingUnderscores(syms[j].name)
		if ui != uj {
			return ui < uj
		}
		if len(syms[i].name) != len(syms[j].name) {
			return len(syms[i].name) < len(syms[j].name)
		}
		return syms[i].name < syms[j].name
	})
	// one symbol per address
	out := syms[:0]
	for i, s := range syms {
		if i > 0 && s.addr == out[len(out)-1].addr {
			continue
		}
		out = append(out, s)
	}
	r.syms = out
	return r
}

func (r *symtabResolver) resolve(pc uint64, exact bool) []coreLoc {
	if !exact && pc > 0 {
		pc--
	}
	i := sort.Search(len(r.syms), func(i int) bool { return r.syms[i].addr > pc }) - 1
	if i < 0 {
		return nil
	}
	s := r.syms[i]
	if s.size > 0 && pc >= s.addr+s.size {
		return nil
	}
	return []coreLoc{{Function: s.name}}
}

func (r *symtabResolver) hasSymbols() bool    { return len(r.syms) > 0 }
func (r *symtabResolver) hasLines() bool      { return false }
func (r *symtabResolver) debugPath() string   { return r.dbgPath }
func (r *symtabResolver) debugELF() *elf.File { return r.dbg }
func (r *symtabResolver) close() {
	if r.dbgF != nil {
		r.dbgF.Close()
		r.dbgF = nil
	}
}

// findDebugFile looks for the separate debug file of an ELF file: by
// build-id under each debug dir, then by .gnu_debuglink next to the file,
// in its .debug/ subdirectory and under each debug dir (CRC checked).
func findDebugFile(path string, ef *elf.File, buildID string, debugDirs []string) string {
	if len(buildID) > 2 {
		for _, d := range debugDirs {
			p := filepath.Join(d, ".build-id", buildID[:2], buildID[2:]+".debug")
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
	}
	s := ef.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	name := corefile.CString(b)
	if name == "" || strings.ContainsRune(name, '/') {
		return ""
	}
	off := (len(name) + 4) &^ 3
	if off+4 > len(b) {
		return ""
	}
	want := binary.LittleEndian.Uint32(b[off:])
	dir := filepath.Dir(path)
	cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
	for _, d := range debugDirs {
		cands = append(cands, filepath.Join(d, name), filepath.Join(d, dir, name))
	}
	abs, _ := filepath.Abs(path)
	for _, p := range cands {
		if pa, _ := filepath.Abs(p); pa == abs {
			continue
		}
		if crcFile(p) == want {
			return p
		}
	}
	return ""
}

func crcFile(p string) uint32 {
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return 0
	}
	f, err := os.Open(p)
	if err != nil {
		return 0
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, f); err != nil {
		return 0
	}
	return h.Sum32()
}

// resolver returns the module's resolver, creating it on first use.
func (c *Core) resolver(m *CoreModule) pcResolver {
	if m.resLoaded {
		return m.res
	}
	m.resLoaded = true
	if m.elf == nil {
		return nil
	}
	if r := c.newDWARFResolver(m); r != nil {
		m.res = r
	} else {
		m.res = newSymtabResolver(m.File, m.elf, m.BuildID, c.opts.DebugDirs)
	}
	m.HasSymbols = m.res.hasSymbols()
	m.HasDebugInfo = m.res.hasLines()
	m.DebugFile = m.res.debugPath()
	return m.res
}

func leadingUnderscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}
