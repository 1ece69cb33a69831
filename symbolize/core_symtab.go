package symbolize

import "debug/elf"

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
// core reader symbolizes through it (binaryResolver: the package's
// symbolizer, DWARF when there is some, else the ELF symbol table).
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

// resolver returns the module's resolver, creating it on first use.
func (c *Core) resolver(m *CoreModule) pcResolver {
	if m.resLoaded {
		return m.res
	}
	m.resLoaded = true
	if m.elf == nil {
		return nil
	}
	r := c.newBinaryResolver(m)
	if r == nil {
		return nil
	}
	m.res = r
	m.HasSymbols = r.hasSymbols()
	m.HasDebugInfo = r.hasLines()
	m.DebugFile = r.debugPath()
	return r
}
