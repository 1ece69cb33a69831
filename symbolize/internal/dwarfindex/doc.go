// Package dwarfindex is the DWARF index of package symbolize: it reads the
// DWARF 4/5 of one elfimage.Image (units, abbreviations, DIEs, line
// tables, range lists, split DWARF .dwo files) and answers "which inline
// chain and source position is at this PC".
//
// Files by concept: index.go (Data, New, the unit list and the address →
// unit index), abbrev.go (abbreviation tables and attribute forms),
// unit.go (CU DIE attributes, addresses, strings, range lists),
// tables.go (per-unit function tables: the DIE walk), line.go (line
// programs), names.go (function names: DIE chains, the sharded cache),
// split.go (skeleton units and their .dwo), lookup.go (the chain at a PC),
// reader.go (the bounds-checked byte reader), const.go (DWARF constants).
//
// Contract and invariants:
//
//   - Input is untrusted: every read is bounds-checked (a short read marks
//     the reader bad instead of panicking), loops are bounded by their
//     input, DIE nesting is capped at 4096, and the entry points recover
//     a panic into an error wrapping elfimage.ErrBadDWARF.
//   - Work is lazy and done once: a unit's header, abbreviations and
//     tables are parsed on the first lookup that lands in it (sync.Once);
//     tables never change afterwards, so lookups read them without locks.
//     Data is safe for concurrent use.
//   - Names handed out are Go strings copied once from the sections, so
//     they stay valid after the image is unmapped; a warm Lookup into a
//     dst of enough capacity does not allocate.
//   - Lookup is llvm-symbolizer's: innermost frame first, the line row of
//     the PC for the innermost frame and each outer frame at the call site
//     of the frame inside it; demangling is the caller's function.
//
// It imports elfimage; package symbolize imports it.
package dwarfindex
