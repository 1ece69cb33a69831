// Package scan is crashsig's crash-text scanner and its crash model: it
// reads be.out, be.INFO/WARNING, gdb and pstack output, sanitizer reports,
// JVM hs_err and jstack dumps, systemd-coredump reports, Breakpad
// minidump_stackwalk listings and kernel lines
// (format families F0–F9, one table file per family: format_*.go) and
// yields one *Crash per incident. The symbolize package re-exports its API
// (scan_face.go there); users import symbolize, not this package.
//
// Layout by concept:
//
//   - model.go: the crash model (Crash, Thread, Frame, Event, Addr, Kind,
//     Product) and its JSON;
//   - scan.go, live.go: the Scanner (line reading, ScanOptions, live input
//     with an idle timeout);
//   - parser.go, lines.go, prefix.go, holes.go: the parser's per-line loop,
//     paste repair, learned line prefixes, NUL holes;
//   - classify.go, prefilter*.go, fastrun.go, junkscan.go: which rule a
//     line matches, and the idle path — one literal (on amd64 vector) scan
//     for the anchors of every rule, runs of ordinary lines, binary junk
//     and NUL holes skipped without running a rule;
//   - format*.go, frames.go, regexp.go: the declarative format tables and
//     the frame-line parsers (boost, glog `@`, sanitizer, gdb, Java,
//     systemd-coredump, minidump_stackwalk), lifecycle log lines;
//   - incident.go, incident_header.go, incident_frames.go,
//     incident_bounds.go, incident_jvm.go, finish.go, finish_gdb.go,
//     fragment.go: assembly of an incident's parts (headers, frames, where
//     it ends or splits) and its finishing (crashing thread, product, kind,
//     corruption);
//   - parallel.go, parallel_worker.go, parallel_lines.go,
//     parallel_state.go: ScanParallel, the exact chunked scan of one large
//     file.
//
// Contract and invariants (tested; FUZZING.md at the repository root says
// how the fuzz targets check them):
//
//   - Memory is bounded: one open incident and one line (cut at
//     ScanOptions.MaxLineBytes) at a time, whatever the input; bad bytes
//     never panic, they give an incident flagged Corrupted with a reason or
//     nothing.
//   - Output is deterministic and depends only on the bytes: the fast
//     paths (prefilter, fast runs) yield exactly what the full rule set
//     yields (requireFastSame, the fast-path fuzzers), and ScanParallel
//     yields exactly what one Scanner over the same file yields
//     (TestParallelEquivalence, FuzzParallel).
//   - Re-scanning an incident's own text gives the same incident
//     (FuzzScan), and an incident's StartLine..EndLine span covers the
//     lines it was built from.
//   - The parser depends on differences of line numbers only, never on
//     their value (ScanParallel's hand-over relies on it).
//
// Reading (issue 11). The synchronous Scanner takes its lines from a
// window over the bytes its bufio.Reader holds (Scanner.win, scan.go):
// no ReadSlice call per line, the line ends from newline bits set with
// AVX2 a kilobyte at a time where lines are read (the repeat skip's jumps
// cost none), the bytes taken dropped from the reader only when anything
// else uses it (sync: the live reader's start, ScanParallel's offsets).
// The lines are those ReadSlice gives (TestWindowLines and every scan
// test).
//
// The package imports internal/demangler for frame names and nothing else
// of the module.
package scan
