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
// refused; files are bounded by MaxFileSize. The default catalog is every
// catalog/data/*.yaml file, embedded (Default); callers lay their own files
// over it with Merge (same id overrides, and the override is noted in
// Notes and in every Verdict that uses it). catalog/CATALOG.md documents
// the format, the path rule design and the measurements.
//
// # Paths
//
// Path rules match frame globs (`*` spans any run including `::`, `?` one
// byte; anchored, case-sensitive) against the whole normalized crashing
// stack (signature.Normalize), with callers that must and must not appear
// deeper (towards the thread root). The highest priority wins, then the
// rule holding at the innermost frame, then the smaller id. Weak hints only
// break ties: a rule may say what it means when the crash carries no query
// (`no_query`: Doris `Query id: 0-0`, StarRocks all-zero id), and
// thread-name rules apply only when no frame rule matched.
//
// # Defects and status
//
// A defect matches when one of its alternatives holds: kind glob, frame
// globs in order within DefectWindow frames from the signature's crash
// frame, callers deeper, an RE2 on the message, an exact key, or for thread
// dumps a group of signature.Aggregate. The most specific matching
// alternative wins. The version decides the Status: StatusAffected (upgrade
// to the fix on the crash's branch, else the first later branch that has
// one), StatusAffectedNoFix, StatusFixed (the version already has the fix:
// should-already-be-fixed, a possible regression, said loudly),
// StatusVersionUnknown (no or unplaceable version, or a branch the entry
// does not cover) and StatusNoKnownDefect (with up to three similar defects
// scored by signature.Similarity). Versions (ParseVersion) are compared on
// X.Y.Z; ranges are per release branch.
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
