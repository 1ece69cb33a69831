// Package elfimage is the mapped ELF image of package symbolize: an ELF
// file opened read-only (memory-mapped, or read through an io.ReaderAt),
// its sections (plain, SHF_COMPRESSED zlib/zstd, legacy .zdebug_; the
// largest inflated progressively by a background goroutine), its notes
// (build-id), .gnu_debuglink, the lookup of a separate debug file, and the
// ELF symbol table as llvm-symbolizer uses it.
//
// Contract and invariants:
//
//   - Input is untrusted: every offset is checked, a panic of debug/elf is
//     recovered into ErrNotELF or ErrBadDWARF, a section larger than
//     Options.MaxSection (default 8 GiB) or inflating past 2048× its
//     compressed size is refused with ErrTooLarge. No shelling out, no
//     network.
//   - A section's bytes are read or inflated once and never change; an
//     uncompressed section of a mapped file is a slice of the mapping, so
//     it is valid only until Close. Callers copy what must outlive Close.
//   - Symbols holds names as offsets into the string table; NameAt copies
//     a name once and caches it, so strings handed out never alias the
//     mapping. Its methods are safe for concurrent use.
//   - The error texts are those of symbolize's sentinels (see errors.go):
//     symbolize attaches its own sentinel at its API boundary.
//
// The package imports nothing of symbolize; dwarfindex and symbolize
// import it.
package elfimage
