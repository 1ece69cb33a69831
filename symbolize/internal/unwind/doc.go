// Package unwind is the x86-64 stack unwinder of package symbolize's core
// reader: it walks one thread from its registers through the memory and
// modules of a Process, with call frame information (delve's
// pkg/dwarf/frame runs the CFA programs and pkg/dwarf/op evaluates DWARF
// expressions), the frame-pointer chain where a module has no FDE, and
// kernel signal frames (rt_sigframe: ucontext and siginfo).
//
// Files: unwind.go (Process, Walk and the step rules), cfi.go (a module's
// CFI: .eh_frame, .debug_frame), ehhdr.go (FDEs found through
// .eh_frame_hdr's binary-search table and parsed one at a time).
//
// Contract and invariants:
//
//   - Memory and CFI are untrusted: every read goes through
//     Process.ReadMemory, delve's parser and interpreter are called behind
//     recover, an FDE read is bounded (64 KiB) and the FDE cache too.
//   - A walk always ends: at most maxFrames frames (at least one), at most
//     16 signal frames, the stack pointer must grow except across a signal
//     frame, every return address must be executable.
//   - Walk never invents a frame and never says "outermost" from a
//     frame-pointer chain: such an end is Truncated with a reason.
//   - PCs are runtime addresses; FDEs are looked up at pc − bias, with
//     pc−1 except for the innermost frame and frames a signal interrupted.
//   - A CFI caches parsed FDEs and is not safe for concurrent use (one
//     Core, one goroutine).
//
// It imports no other package of symbolize; symbolize's core reader
// (core_unwind.go) implements Process and maps Frames to CoreFrames.
package unwind
