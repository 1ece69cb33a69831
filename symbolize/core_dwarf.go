package symbolize

import (
	"debug/elf"
	"errors"
	"strings"
)

// binaryResolver symbolizes a module through the package's symbolizer
// (Binary), as OpenBinary and Lookup do for a raw PC: the file and its
// separate debug file (elfimage.LocateDebugFile: build-id verified, else
// the .gnu_debuglink CRC) opened as elfimage images, inline chains, file
// and line from DWARF, names from elfimage.LoadSymbols. A module without
// DWARF gets the symbol table's names, the same a raw-PC lookup gives.
type binaryResolver struct {
	b *Binary
	c *Core
	m *CoreModule
	// badNoted: the core's notes already say this module's DWARF is
	// damaged (once per module).
	badNoted bool
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
	return &binaryResolver{b: b, c: c, m: m}
}

func (r *binaryResolver) resolve(pc uint64, exact bool) []coreLoc {
	// With an error (ErrBadDWARF: a damaged part of the debug info) a
	// result is the symbol table's name: kept, and the core's notes say
	// why its frames of this module lack lines.
	locs, err := r.b.Lookup(pc, LookupOptions{Exact: exact})
	if err != nil && errors.Is(err, ErrBadDWARF) && !r.badNoted {
		r.badNoted = true
		r.c.note("%s: %v (its frames are named from the symbol table)", r.m.Name(), err)
	}
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

// debugELF is the separate debug file the Binary opened (for its
// .debug_frame), or nil when the DWARF is in the module's own file.
func (r *binaryResolver) debugELF() *elf.File {
	if r.b.debug == nil || r.b.debug == r.b.main {
		return nil
	}
	return r.b.debug.File
}

func (r *binaryResolver) close() { r.b.Close() }

// stripSymVersion drops an ELF symbol version (`clock_nanosleep@@GLIBC_2.17`):
// mangled and C names never contain '@'.
func stripSymVersion(name string) string {
	if i := strings.IndexByte(name, '@'); i > 0 {
		return name[:i]
	}
	return name
}
