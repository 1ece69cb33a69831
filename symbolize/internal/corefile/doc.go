// Package corefile decodes the parts of a Linux x86-64 ELF core file that
// package symbolize's core reader needs: the note stream of a PT_NOTE
// segment (WalkNotes, ReadNoteDesc), the payloads it uses (NT_PRSTATUS
// with the user_regs_struct, NT_PRPSINFO, NT_SIGINFO, NT_AUXV keys,
// NT_FILE), the GNU build-id note of a module, and the register layout
// (user_regs_struct slots and their DWARF numbers).
//
// Contract and invariants:
//
//   - The core is untrusted: note headers are checked against their
//     segment, names are capped at 256 bytes, payloads are read only on
//     request and only up to a caller's limit (MaxNoteDesc, MaxAuxvDesc),
//     NT_FILE entry counts and paths are bounded; a malformed header stops
//     the walk with an error after the notes before it were delivered.
//   - Parsers never panic on short input: they return false, an error or
//     the zero value.
//   - Only little-endian x86-64 layouts are decoded (aarch64 cores are
//     refused by symbolize with ErrUnsupportedCore).
//
// symbolize keeps the public types (SigInfo, PsInfo, Core, CoreThread…)
// and converts from this package's raw ones. It imports nothing of
// symbolize.
package corefile
