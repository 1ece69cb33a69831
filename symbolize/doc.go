// Package symbolize reads crashes of Apache Doris and StarRocks backends
// and turns them into one model, Crash: from logs and pastes (Scanner,
// ParseAll), from ELF core files (OpenCore), and with raw PCs resolved
// against the backend binary or its debug file (OpenBinary,
// SymbolizeInPlace).
//
// # The model
//
// A Crash is one incident: product, version and build, kind (signal,
// check, terminate, jvm, sanitizer, leak, assert, termination,
// threaddump), signal and reason, fault address, PID/TID, query, fragment
// and tablet ids, the abort message (Check expression, exception type and
// what(), sanitizer bug type), crash time, the source span, every thread
// with the crashing one first, and a Corrupted flag with a reason when the
// text was damaged beyond repair. A Frame keeps what was printed (Function,
// Raw) beside what was derived (Demangled, File/Line from symbolization).
//
// # The log scanner
//
// Scanner reads any io.Reader line by line and yields incidents one at a
// time, holding one incident and one line (cut at ScanOptions.MaxLineBytes)
// at a time, so memory does not grow with the input. The pipeline per line:
//
//  1. paste repair: trailing CR, Markdown quotes and fences,
//     K8s/CRI/CI clock/syslog/dmesg prefixes, the Doris console
//     `RuntimeLogger ` prefix, HTML entities, line numbers a paste added
//     (consecutive numbers, or a number before a `***` header), CI Markdown
//     link prefixes; a line holding a whole collapsed dump is split at its
//     frame and header markers, also a FATAL line whose dump follows on
//     the same line; a boost frame hard-wrapped by a terminal is rejoined
//     by a declarative table (each repair that changes what a line
//     says is recorded in Crash.Notes; line endings and a UTF-8 byte
//     order mark are dropped silently);
//  2. an idle pre-filter: ordinary glog lines — most of a be.out or
//     be.INFO — are recognized without a regular expression and skipped
//     unless they are FATAL or the startup version banner; any other line
//     between incidents goes through one literal scan for the anchors of
//     every rule (prefilter.go: derived from the tables, so a new entry is
//     covered), and a line holding none is skipped without running a rule;
//     binary junk (short NUL runs, control bytes) is recognized on the
//     way; a run of 8 or more NULs (a hole a crash leaves in a log file)
//     ends the line, and the text after it is a new line;
//  3. classification against declarative format tables, one per family:
//     F1 Doris boost::stacktrace dumps, F2 glog signal dumps with the
//     StarRocks preamble, F3 Check failures, F4 terminate, F5 JVM hs_err,
//     F6 sanitizers, F7 gdb/pstack/jstack and the Doris stack-trace
//     endpoint, systemd-coredump reports (format_coredump.go), Breakpad
//     minidump_stackwalk listings (format_minidump.go), F0
//     restart markers, F8 allocator and assert messages, F9 kernel lines. A rule is a literal prefix and an optional RE2
//     expression; `*** ` headers are also recognized without the `***`,
//     which Markdown eats. Adding a format is adding table entries and a
//     test file under testdata/formats (README, "Working on crashsig");
//  4. assembly: a small state machine per incident joins the parts that
//     belong together — a FATAL line and the SIGABRT dump that follows, a
//     StarRocks preamble and its dump, an ASAN report and its abort dump —
//     tolerates foreign lines interleaved at line granularity (each
//     section has its own gap limit), rejoins hard wraps inside tokens,
//     checks boost frame indices, and at the end picks the crashing
//     thread, the product and the kind. A startup banner seen earlier in
//     the same process lifetime gives the version of later incidents
//     (Crash.VersionFromBanner). The StarRocks preamble's file line
//     (`Hive file path: …` / `Load file path: …`) becomes an Event
//     (EventHiveFile, EventLoadFile). A headerless fragment — a run of 3 or
//     more consecutively numbered boost or gdb frames starting above frame
//     0, the header and the innermost frames cut off — is kept as an
//     incident of unknown kind, marked corrupted (fragment.go); so is a
//     run of sanitizer-format frames without the report's header, whose
//     freed-by, allocated-by and thread-creation sections stay auxiliary
//     stacks (a stack whose frame 0 is pthread_create is never the crash
//     stack). A shell's report of the crash alone (`start_be.sh: line N:
//     PID Segmentation fault (core dumped)`) is an incident with no stack,
//     flagged corrupted with that reason, unless a gdb session on a core
//     follows it (gdb's banner and symbol lines, then `Core was generated
//     by …`): when gdb names the same signal, or none, the report and the
//     backtrace are one incident from the shell's line on, the shell's
//     line an event of it; a core of another signal is another crash.
//     Lifecycle log lines (start and
//     exit steps, `Doris main exiting.`, glog's `Log file created at:`)
//     become lifecycle-log events that the catalog's log_context evidence
//     reads.
//
// Live input: with ScanOptions.IdleTimeout (DefaultFollowIdleTimeout, 2 s,
// for follow mode) the Scanner emits the open incident once the input has
// been quiet that long, and NextContext returns as soon as its context is
// done even while the reader is blocked in Read. Both need a goroutine that
// reads in chunks; it is started only then (a reader that never blocks, a
// file or bytes in memory, see ScanOptions.NonBlocking, is read
// synchronously whatever the context, which is looked at between reads),
// so plain reads keep the synchronous path and its fast skips. A Read in progress cannot be interrupted: the caller
// frees it by closing the reader (Scanner.Close stops the goroutine
// otherwise).
//
// Format quirks the next engineer should know, all covered by testdata:
//
//   - F1 and F2 signal lines differ only by the reason text
//     (`*** SIGSEGV address not mapped to object (@0x10) …` is Doris).
//   - F2 frames have one space between address and symbol, F3 frames two.
//   - `from PID` of kernel-generated signals is junk derived from the fault
//     address; it is ignored.
//   - A Doris F1 dump ends with one blank line; a blank line followed by the
//     next frame index is paste damage (a blank after every line), not the
//     end.
//   - The glog `PC: @` line is the faulting frame; pastes are often cut
//     right after the handler frames, so when the crashing stack lacks that
//     frame it is added from the PC line (noted in Crash.Notes).
//   - Thread names lie (a JVM thread inherits the name of the native thread
//     that created it); they are carried as observed names only.
//   - gdb prints `0xADDR in` on the innermost frame of each inline group
//     (and may omit it on #0) and no address on the other frames of the
//     group, the callers it was inlined into; the last frame of a group is
//     the physical function. All but that last frame are marked Inlined.
//
// # Symbolization and cores
//
// OpenBinary maps an ELF file, finds its debug information (in the file,
// an explicit debug file, .build-id under debug directories, or
// .gnu_debuglink with CRC check) and resolves PCs to inline chains, lazily
// per compile unit; SymbolizeInPlace fills a parsed Crash in place. OpenCore reads
// ELF core files (notes, memory, modules), unwinds every thread with CFI
// from delve's pkg/dwarf/frame through signal frames, and returns the same
// Crash model. SYMBOLIZER.md and CORES.md beside this file hold the design
// notes and measurements.
//
// # Internal packages
//
// Issue 17 cut this package into packages by concept under internal/; this
// package keeps the public face and the glue. Imports point down only:
//
//	                         symbolize  (public face + glue)
//	  scan_face.go demangle_face.go │ binary.go resolve*.go bias.go │ core*.go
//	      ┌───────────────┬────────────┴───┬──────────────┬──────────────┐
//	      ▼               ▼                ▼              ▼              ▼
//	internal/scan   internal/dwarfindex  internal/unwind internal/corefile
//	crash model,    DWARF units, DIEs,   CFI (delve's    core notes,
//	Scanner, format lines, names, split  frame, op),     prstatus, siginfo,
//	tables, prefilter DWARF, inline      .eh_frame_hdr,  NT_FILE, build-id
//	fast runs,      chains               FP, signal      notes, registers
//	ScanParallel          │              frames
//	      │               ▼
//	      │         internal/elfimage: mapped ELF, sections, compression,
//	      │         build-id, debuglink, debug-file lookup, symbol table
//	      ▼
//	internal/demangler (Demangle, IsMangled, the cached Demangler)
//	      ▼
//	internal/itanium (the allocation-free fast path of the demangler)
//
// No internal package imports symbolize or a sibling other than the ones
// drawn (scan → demangler → itanium, dwarfindex → elfimage); unwind and
// corefile import no package of the module. Each has a doc comment with
// its contract, its own tests and a fuzz target for the bytes it reads
// (FuzzScan, FuzzParallel and the fast-path fuzzers in scan; FuzzImage,
// FuzzIndex, FuzzCFI and FuzzWalk, FuzzNotes). Their sentinel errors carry
// this package's texts; errors.go attaches this package's sentinels at the
// API boundary, so errors.Is works with the documented names.
//
// The scanner and the crash model (internal/scan) and the demangler
// (internal/demangler) reach the API through generated face files:
// scan_face.go and demangle_face.go declare a type alias for each exported
// type (Crash, Thread, Frame, Addr, Kind, Product, Scanner, ScanOptions,
// ParallelOptions, …), the exported constants and variables, and a wrapper
// for each exported function (NewScanner, ParseAll, ScanParallel, Demangle,
// IsMangled, NewDemangler), each with the documentation of what it forwards
// to. internal/facegen writes them; TestFaceGenerated fails when they are
// stale (`go test ./symbolize -run TestFaceGenerated -update`). The names,
// signatures, methods and JSON of the API are those of before the move;
// what changed is go doc's rendering: fields and methods of the model types
// are listed under internal/scan (`go doc …/symbolize/internal/scan.Crash`),
// which each alias's comment names. Two exported names of internal/scan are
// for the glue only and not in the face: NameKey (bias.go compares
// demangled names by it) and ProductFromFrames (core_crash.go decides a
// core's product the way the scanner decides a text's).
//
// What stays here and why: the public types of the core reader (Core,
// CoreModule, CoreThread, CoreFrame, SigInfo, PsInfo, CrashInfo) and the
// glue that fills them (core.go reads the program headers and notes into
// them, core_modules.go matches module files by build-id, core_crash.go
// picks the crashing thread, core_symtab.go and core_dwarf.go symbolize
// frames through Binary), and Binary and its resolvers: they join the
// model (internal/scan) with the ELF, DWARF, unwinding and core packages,
// which is what a glue layer is.
package symbolize
