package symbolize

import (
	"debug/elf"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
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
	for _, get := range []func() ([]elf.Symbol, error){ef.Symbols, ef.DynamicSymbols} {
		syms, err := get()
		if err != nil {
			continue
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC && elf.ST_TYPE(s.Info) != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Value == 0 || s.Section == elf.SHN_UNDEF || s.Name == "" {
				continue
			}
			name := s.Name
			if i := strings.IndexByte(name, '@'); i > 0 {
				name = name[:i]
			}
			out = append(out, funcSym{addr: s.Value, size: s.Size, name: name})
		}
	}
	return out
}

// newSymtabResolver reads the symbols of ef and, when ef has no .symtab,
// of a separate debug file found in debugDirs.
func newSymtabResolver(path string, ef *elf.File, buildID string, debugDirs []string) *symtabResolver {
	r := &symtabResolver{}
	syms := readFuncSyms(ef, nil)
	if path != "" && !strings.HasPrefix(path, "[") && (ef.Section(".symtab") == nil || ef.Section(".debug_info") == nil) {
		if dp := findDebugFile(path, ef, buildID, debugDirs); dp != "" {
			if f, err := os.Open(dp); err == nil {
				if d, err := elf.NewFile(f); err == nil {
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
