// Package catalog turns a crash and its signature into an answer an
// operator can act on: which code path it happened on (scan, query, load,
// background, lifecycle), whether it is a known defect, and what to do
// about the version that crashed.
//
// # Data
//
// A catalog is YAML (schema 1): `schema:`, `revision:`, `paths:` (path
// rules) and `defects:` (known defects), comments allowed. Decoding is
// strict: an unknown key, a wrong type, a bad glob, regular expression, id,
// link or version range is an *Error naming the file, line and field
// (`defects[3].match[0].frames[1]`); Parse returns every problem of a file
// as Errors, which errors.Is/errors.As see through. YAML aliases are
// refused; files are bounded by MaxFileSize and, before the YAML node tree
// is built, by their number of YAML separators (about half a million:
// parsing stays near 100 MB). The default catalog is every
// catalog/data/*.yaml file, embedded (Default); callers lay their own files
// over it with Merge (same id overrides, and the override is noted in
// Notes and in every Verdict that uses it). catalog/CATALOG.md documents
// the format, the path rule design and the measurements.
//
// # Paths
//
// Path rules hold at a frame of the crashing stack (below the crash
// mechanism) through weighted evidence: frame globs on the normalized
// name (`*` spans any run including `::`, `?` one byte; anchored,
// case-sensitive) and on a lambda frame's owner, product types named in a
// library frame's template arguments, source-path globs, module globs;
// callers must and must not appear deeper (towards the thread root). The
// highest priority wins (lifecycle > background roots > load roots > scan
// > query), then the rule holding at the innermost frame, then the
// stronger evidence, then the smaller id. When no frame rule matched, the
// crash site the failure line printed (Crash.SiteFile: a glog FATAL line's
// basename, read against the last segment of the files globs at low
// confidence, or UBSAN's full path, read against the globs themselves)
// decides next (site.go), then the product types the crash message names
// (a failed cast's types: message.go, low confidence); then weak
// evidence: thread-name rules, then
// query-id rules (present, zero, absent). A thread-name rule also decides
// over a rule marked generic (column operations, memory tracking, any
// product frame: code every path runs) that holds by product evidence
// and names another path; not over JVM or RPC-library
// frames, where a thread's name may be inherited. Every Verdict carries PathConfidence; Unknown is
// answered only when nothing holds, and its evidence says what was missing.
//
// # Defects and status
//
// A defect matches when one of its alternatives holds: kind glob, frame
// globs in order within DefectWindow frames from the signature's crash
// frame, an anchor frame with context (near within N frames, callers
// deeper, frames of any thread), an RE2 on the message, the check
// expression or the exception type, an exact key, or for thread dumps a
// group of signature.Aggregate. The most specific matching
// alternative wins (defect.go). The version decides the Status (status.go):
// StatusAffected (upgrade to the established fix on the crash's branch),
// StatusLikelyFixed (the branch's fix is a fixed_likely entry: "likely fixed
// in 2.1.5 (the fix reached branch-2.1 on 2024-06-21)"), StatusFixedLater
// (no fix on the branch, one on a later branch), StatusAffectedNoFix,
// StatusFixed (should-already-be-fixed: the version already has the fix, a
// possible regression, said loudly), StatusVersionUnknown (no or
// unplaceable version, or a branch the entry does not cover; the advice
// names every known fix) and StatusNoKnownDefect (with up to three similar
// defects scored by signature.Similarity). Versions (ParseVersion) are
// compared on X.Y.Z; ranges are per release branch.
//
// # Speed
//
// Every glob's longest literal goes into one Aho-Corasick automaton, so a
// frame is scanned once and only globs whose literal occurs in it are
// matched in full: no linear scan of the rules per crash. See CATALOG.md
// for the figures (BenchmarkClassify2000).
//
// A *Catalog is immutable after construction and safe for concurrent use.
package catalog
