package symbolize

import (
	"debug/elf"
	"os"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// binaryResolver symbolizes a module through the package's symbolizer
// (Binary), as OpenBinary and Lookup do for a raw PC: the file and its
// separate debug file (elfimage.LocateDebugFile: build-id verified, else
// the .gnu_debuglink CRC) opened as elfimage images, inline chains, file
// and line from DWARF, names from elfimage.LoadSymbols. A module without
// DWARF gets the symbol table's names, the same a raw-PC lookup gives.
type binaryResolver struct {
	b      *Binary
	dbg    *elf.File
	dbgF   *os.File
	dbgTry bool
}

// newBinaryResolver opens the module's file (the vDSO from the core's
// memory) as a Binary, or returns nil when it has none or it cannot be
// read.
func (c *Core) newBinaryResolver(m *CoreModule) pcResolver {
	var b *Binary
	var err error
	switch {
	case m.IsVDSO && m.mem != nil:
		// no debug file is looked for: the vDSO has no path
		b, err = NewBinary(m.mem, m.mem.Size(), BinaryOptions{Demangler: c.dem})
	case m.File != "" && !m.IsVDSO:
		b, err = OpenBinary(m.File, BinaryOptions{DebugDirs: c.opts.DebugDirs, DebugFile: m.fetchedDebug, Demangler: c.dem})
	default:
		return nil
	}
	if err != nil {
		c.note("%s: %v", m.Name(), err)
		return nil
	}
	return &binaryResolver{b: b}
}

func (r *binaryResolver) resolve(pc uint64, exact bool) []coreLoc {
	// With an error (ErrBadDWARF: a damaged part of the debug info) a
	// result is the symbol table's name: kept.
	locs, _ := r.b.Lookup(pc, LookupOptions{Exact: exact})
	if len(locs) == 0 {
		return nil
	}
	out := make([]coreLoc, 0, len(locs))
	for _, l := range locs {
		cl := coreLoc{Function: stripSymVersion(l.Function), File: l.File, Line: l.Line, Column: l.Column, Inlined: l.Inlined}
		if IsMangled(l.Linkage) {
			cl.Function, cl.Demangled = stripSymVersion(l.Linkage), l.Function
		}
		out = append(out, cl)
	}
	return out
}

func (r *binaryResolver) hasSymbols() bool  { return r.b.HasDWARF() || len(r.b.syms.Addr) > 0 }
func (r *binaryResolver) hasLines() bool    { return r.b.HasDWARF() }
func (r *binaryResolver) debugPath() string { return r.b.DebugPath() }

func (r *binaryResolver) debugELF() *elf.File {
	if !r.dbgTry {
		r.dbgTry = true
		if p := r.b.DebugPath(); p != "" {
			if f, err := os.Open(p); err == nil {
				if ef, err := elfimage.NewFile(f); err == nil {
					r.dbg, r.dbgF = ef, f
				} else {
					f.Close()
				}
			}
		}
	}
	return r.dbg
}

func (r *binaryResolver) close() {
	r.b.Close()
	if r.dbgF != nil {
		r.dbgF.Close()
		r.dbgF = nil
	}
}

// stripSymVersion drops an ELF symbol version (`clock_nanosleep@@GLIBC_2.17`):
// mangled and C names never contain '@'.
func stripSymVersion(name string) string {
	if i := strings.IndexByte(name, '@'); i > 0 {
		return name[:i]
	}
	return name
}
