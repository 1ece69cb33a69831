package dwarfindex

// Options configure New.
type Options struct {
	// MaxSection bounds the (decompressed) size of a section of a .dwo
	// file (elfimage.Options.MaxSection).
	MaxSection int64
	// FollowDWO says .dwo files of split DWARF may be looked for on disk
	// (an image opened from a path; not one read from an io.ReaderAt).
	FollowDWO bool
	// DWODirs are directories searched for .dwo files besides the
	// skeleton's DW_AT_comp_dir (the binary's and its debug file's).
	DWODirs []string
}

// Frame is one frame of the inline chain at a PC. Its fields are those of
// symbolize.Location, in the same order and of the same types, so that
// symbolize converts one into the other (and a slice of one into a slice
// of the other) without copying; Lookup fills the DWARF fields and leaves
// the symbol-table ones (Inlined, Symbol, SymbolOffset) to the caller.
type Frame struct {
	// Function is the demangled name (or the raw one when not demangled).
	Function string
	// Linkage is the raw name (linkage name, else DW_AT_name).
	Linkage string
	// File, Line and Column are the source position; empty/zero if unknown.
	File   string
	Line   int
	Column int
	// Inlined, Symbol and SymbolOffset are the caller's.
	Inlined      bool
	Symbol       string
	SymbolOffset uint64
}
