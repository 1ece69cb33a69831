// Package signature turns the frames of a parsed crash into a stable,
// short, explainable crash key.
//
// # Pipeline
//
//	crash (symbolize.Crash) → kind → crashing thread → physical frames →
//	per frame: Normalize → rule role (sentinel / irrelevant / prefix /
//	generic / significant) → the generic crash-site frame, then the first
//	DefaultFrames significant frames → Key = kind class | f1 | … → ID
//
// # One crash, one key
//
// A crash read from its core, from gdb's bt, from a glog or boost dump,
// or from raw addresses symbolized later must get one key. Hence the key
// uses only what every source shows:
//
//   - Physical frames only. The key is made of the functions that contain
//     each PC; frames the compiler inlined (Frame.Inlined: DWARF-based
//     sources show them, glog's and boost's symbolizers never do) are
//     traced and the innermost one of the crash site becomes the
//     attribute inlined=<name> and the CrashFrame, never a key frame. Text
//     sources are read by their own rules: after #0, gdb prints `0xADDR
//     in` only on the innermost frame of an inline group (or, with
//     `set print frame-info location-and-address`, one address on all of
//     them), and the group's last frame is the physical function;
//     sanitizers print every frame of an inline chain with one address
//     (ASAN) or one module offset (TSAN).
//   - The key's kind is the class of the kind (FAULT or ABORT, see "Key
//     shape"): one report prints the CHECK message, the ASAN report or the
//     signal, another of the same crash (gdb's bt of the core) does not.
//     Signature.Kind keeps the whole kind. A fault address in the null
//     page (which gdb's bt does not print) is the attribute fault=null.
//   - Position independence of an unsymbolized frame is read from its
//     address (and the mapping base of a kernel `segfault … in
//     mod[base+size]` line when the incident carries one), never from the
//     module's name.
//
// Generator.Generate records every decision in Signature.Trace
// ("skipped #0 X: irrelevant rule 'glog-handler' (why)", "kept #4 Y:
// significant frame 1 of 1", "stopped after 1 significant frame(s)", "key
// kind FAULT (the class of SIGSEGV…)"), so a key can always be explained;
// `crashsig explain PATH` prints it.
//
// # Normalization (Normalize)
//
// Every frame name, whatever printed it (boost::stacktrace in Doris,
// glog 0.4 with `<>`/`()` elided, glog 0.7 with full signatures cut at 256
// bytes, gdb with argument values, sanitizers, c++filt, raw `_Z…` names),
// becomes the scope-qualified name without return type, parameters,
// cv/ref qualifiers, template arguments, ABI tags, clone suffixes
// (`.cold`, `.part.N`, `.isra.N`, `.constprop.N`, `.lto_priv.N`,
// `.llvm.N`), symbol versions (`@@GLIBC_2.2.5`) and gdb's PLT stub suffix
// (`memcpy@plt`). Mangled names go
// through the demangler's syntax tree (github.com/ianlancetaylor/demangle
// ToAST); a mangled name the demangler rejects (cut short by a log line
// limit) yields the nested-name prefix that can be read, ending in "…".
// Printed names go through a tolerant one-pass tokenizer
// (signature/internal/cxxname, which also walks the demangler's tree) that skips
// balanced `<>`, `()`, `{}` groups, knows `operator<`, `operator()`,
// `operator->`, conversion operators, `(anonymous namespace)` and gdb's
// ` at file:line` / ` from lib` tails, and treats any top-level blank
// before the name as the end of a return type or `thunk to` prefix.
//
// Lambdas take one form, Lambda = "{lambda}": GCC `{lambda(int)#2}`,
// clang `$_0`, `'lambda'(…)`, mangled `UlvE_`. The closure's
// `::operator()` (and GCC's `::_FUN` static invoker) after a lambda is
// dropped: old glog prints the mangled call operator, newer builds the
// demangled one, and both are the lambda's body. gdb prints a lambda's
// body as a bare `operator() (__closure=…)` (the closure type has no
// name), which is {lambda} too; in a key it takes its owner from the
// frame below when that frame names it (std::function's invoker, whose
// template argument gdb prints as `owner(…)::<lambda()>`) or calls it in
// place (same source file, at most 100 lines after the lambda). Hence
// `starrocks::EvHttpServer::start::{lambda}` for every format.
//
// std::function's invoker `std::_Function_handler<Sig, F>::_M_invoke`
// becomes F's name when F is a lambda (the compiler inlines the lambda's
// body into the invoker): `starrocks::spill::RawSpillerWriter::flush::{lambda}`.
// Other callables, and old glog's `std::_Function_handler<>::_M_invoke()`
// that does not name F, stay the invoker, an irrelevant frame.
// std::visit's dispatcher `std::__detail::__variant::__gen_vtable_impl<
// _Multi_array<R (*)(Visitor&&, …)>>::__visit_invoke` likewise becomes its
// visitor's name when the visitor is a lambda (visit.go), demangled,
// mangled, or mangled and cut inside its template arguments (the visitor
// comes first in them): `doris::vectorized::HashJoinNode::pull::{lambda}`.
//
// Markdown damage of pasted dumps is repaired: `_gnu_cxx` → `__gnu_cxx`,
// `std::_cxx11` → `std::__cxx11` (inside std/__gnu_cxx/__cxxabiv1 a
// component `_lower` cannot exist), `_GI_raise` → `__GI_raise`. Java frames
// keep their dots (`java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take`)
// with lambda/hidden-class numbering collapsed (`$$Lambda`).
//
// Normalize is fuzzed (FuzzNormalize): no panic, at most MaxNameLen bytes,
// valid UTF-8, idempotent.
//
// # Rules
//
// Frame roles are data: signature/rules/*.yaml, embedded with go:embed and
// extended or replaced through Options (ExtraRules win over the defaults
// within a role; LoadRules reads a caller's YAML file). Each rule has an
// id, a role, a mandatory `why`, and exact names, prefixes, an RE2 regexp
// (whole-name) or a module pattern. Roles, after Socorro's siglists:
//
//   - sentinel: the signature restarts after the last sentinel among the
//     top 64 frames (signal handlers, gdb's `<signal handler called>`, the
//     JVM's chained handler). `trampoline: true` also skips the first
//     unsymbolized frame after it: the kernel signal trampoline
//     (__restore_rt), practically never symbolized.
//   - irrelevant: skipped (abort/raise/assert path, glog LogMessage,
//     terminate and throw helpers, sanitizer runtime, thread trampolines).
//     After an abort-path frame, glibc frames before the first kept frame
//     are skipped too (glibc's cold code is often mis-symbolized, e.g.
//     `_nl_load_domain`), and an unsymbolized frame between two irrelevant
//     frames is skipped as inlined mechanism.
//   - prefix: skipped but remembered (memcpy/memmove/strlen families,
//     allocators and BE memory hooks, locks). The first one before the
//     first kept frame adds its attribute (leaf=memcpy-family,
//     suspected-heap-corruption, leaf=lock); if nothing else remains they
//     are keyed after all. A prefix rule with `crash_site: true`
//     (allocator, memcpy family, libc locks) keeps the crash frame as the
//     key's first frame, then the frames below it that the key keeps
//     (Socorro's prefix list): `FAULT | je_arena_dalloc_promoted |
//     doris::Foo::bar`, so reports of one allocator defect reached
//     from different callers share the leading frame. The rule's
//     key_names name the kept frame by the function it implements
//     (`__memmove_avx_unaligned_erms` → memcpy: glibc picks the variant
//     per CPU). Thread dumps (THREADS) have no crash frame: there the
//     crash-site rules do not apply.
//   - generic: code every defect passes through, never a significant
//     frame (Socorro's prefix list): the C library's thread/TLS/exit
//     internals and the JVM (`crash_site: true`: the crash frame leads
//     the key, like an allocator frame); libstdc++ (`std::`,
//     `__gnu_cxx::`: inlined in one build and not in another), the
//     products' checked casts and COW pointers (down_cast, assert_cast,
//     COW::intrusive_ptr) and their column and container helpers
//     (BinaryColumnBase::append, ColumnVector, PODArray): skipped. A
//     crash-site prefix rule behaves as a generic one. key_names on a
//     generic rule name its frames in a key by one spelling (pdqsort's
//     `partition_right` printed by a sanitizer without its scope, by gdb
//     as `pdqsort_detail::partition_right`); `last_resort: true` (main)
//     keys a frame only when the stack has nothing else to key.
//     `aborts: true` on an irrelevant rule marks the process
//     aborting (abort, assert, LOG(FATAL), terminate), which makes a
//     crash whose signal was not printed of the ABORT class.
//
// rules_test.go validates every rule file (known roles, patterns compile,
// no duplicate names or ids, a `why` for every rule) and fails when a rule
// is matched by no test case.
//
// # Knowledge and mechanism
//
// Lists of names are data; the constants of the algorithm are Go. In
// rules/*.yaml: the frame rules and their key_names, and app_namespaces
// (the products' own namespaces, doris:: and starrocks::, which decide
// Signature.AppFrame) and moved_namespaces (scopes a product renamed
// between versions, see "One defect, one key"); only the embedded files
// may list them, since Options has no field for a caller's. In Go, as parameters of the algorithm
// (changing one changes keys, hence Algorithm): DefaultFrames, leadFrames,
// fallbackFrames, the kind classes (kindClassOf), the sentinel
// window (64 frames), lambdaWindow (a bare lambda takes the frame below as
// its owner when that frame calls from at most 100 lines after it in the
// same file: a bound of the owner rule, not a list of frames), the null
// page and PIE limits, MaxNameLen and MaxKeyLen. Also in Go, next to the
// code that reads them: facts of the printers and platforms (Linux signal
// numbers, spellings of a missing symbol, glibc's module names, each
// product's executable name for frames printed without a module) and the
// Markdown repairs of Normalize, which runs before any rule set applies.
// The executable and glibc module names are knowledge a rule file could
// carry (a `modules:` section) and are the next to move.
//
// # Files
//
//	signature.go      Signature, the result
//	generate.go       Options, Generator, Generate: thread choice, key assembly, trace
//	frames.go         the frame view: normalized name and rule (cached), module, stable addresses
//	physical.go       which frames are physical (inline groups of symbolized, core and gdb frames)
//	walk.go           the walk: rule roles, crash site, key shape, kind class, lambda owners, app frame, key scopes
//	visit.go          std::visit's dispatcher named after its lambda visitor
//	kind.go           the kind prefix: signals, CHECK/ASSERT expressions, sanitizers, terminate
//	rules.go          Rule, roles, LoadRules, validation, matching (data: rules/*.yaml)
//	normalize.go      Normalize: component rules (lambda forms, closure operators), Markdown repair, bound
//	clean.go          input cleaning: control bytes, HTML entities, symbol versions, clone suffixes
//	java.go           Java frame names
//	cache.go          Normalizer and the bounded cache
//	aggregate.go      Aggregate: thread groups
//	similarity.go     Similarity
//	bucket.go         Bucketer, Seen, NearDuplicates
//	internal/cxxname  the C++ name tokenizer under Normalize: printed and mangled
//	                  names to scope components (its own doc states the contract;
//	                  FuzzParts). It imports nothing of signature.
//
// # Kind prefix
//
// SIGSEGV (a fault address below 4096 adds the attribute fault=null),
// SIGBUS, SIGFPE, SIGILL, SIGABRT; CHECK(<expr>) with the printed values and the
// streamed message removed (the expression ends where an operand follows
// an operand, at a top-level comma, or at `(` after a blank: `a == b (1
// vs. 2)`, `"Orphan" If you crash…`), FATAL for LOG(FATAL) without a
// check; ASSERT(<expr>) for C assert(); terminate(<exception type>);
// ASAN/TSAN/UBSAN/MSAN/LSAN(<bug type>); JVM(<signal>); THREADS for thread
// dumps (keyed on the largest group of identical stacks, see Aggregate);
// TERM(<signal>), LEAK, CRASH when nothing says more. This is
// Signature.Kind; the key carries its class (see "Key shape").
//
// # Key shape (crashsig-sig/8, named as in crashsig-sig/9)
//
// Key = class of the kind | the crash frame when a crash-site rule
// (allocator, memcpy family, libc locks, libc, JVM, libhdfs,
// compression libraries, brpc's IOBuf and bthread scheduler) names it,
// by the function it implements rather than the glibc variant or alias
// (`__memchr_evex` → memchr, `__GI__IO_fwrite` → fwrite) |
// the first significant frame (DefaultFrames = 1): the first physical
// frame that no rule makes mechanism, prefix or generic. Generic frames
// between the crash frame and the first significant frame are skipped;
// a stack without a significant frame is keyed on its generic frames,
// one per run of frames of one rule, at most fallbackFrames (3):
// `FAULT | je_arena_dalloc_promoted | pthread_create | os::create_thread`.
// The kind class is FAULT (SIGSEGV, SIGBUS, SIGILL, SIGFPE, a sanitizer's
// report, the JVM's, CRASH: no signal printed) or ABORT (SIGABRT, CHECK,
// LOG(FATAL), assert, terminate; CRASH with a frame of an `aborts: true`
// rule); THREADS, LEAK, TERM stay themselves; EMPTY keys (CORRUPTED until sig/13)
// keep the whole kind. Examples: `FAULT | starrocks::ParsedPageV1::read`,
// `ABORT | starrocks::pipeline::NLJoinProbeOperator::_permute_probe_row`
// (its down_cast assertion and a bare SIGABRT alike), `FAULT | memcpy |
// doris::segment_v2::BinaryDictPageDecoder::read_by_rowids` (the column
// helper between them is generic).
//
// Why: two reports of one defect often differ below the crash site (a
// different caller, a paste cut at another depth, an inlined frame in one
// build and not in the other, another print format, a message printed or
// not). TestMeasureKeyShapes measures candidate shapes on training data
// only (testdata/validation is held out): pairs of one defect from the
// corpus' duplicate_of labels, catalog defects with two real test logs,
// and every generated variant against its log; collisions are logs of
// different catalog defects, and corpus texts of different labelled
// defects, with one key. EVIDENCE.md has the table (measured at
// a864548, 209 pairs): crashsig-sig/7's layout (4 frames, whole kind)
// shares a key for 133 pairs (63.6%), the chosen shape for 188 (90.0%),
// at the cost of 3 corpus keys (4 pairs) and 3 catalog defect pairs
// merged: the same crash site with different root causes
// (NLJoinProbeOperator::_permute_probe_row, FileColumnIterator::next_batch,
// Chunk::append). Two significant frames merge nothing but share 177; the
// whole kind costs 27 pairs; libstdc++ frames leading the key cost 13;
// without the libstdc++ rule 16 pairs are lost. Options.Frames asks for
// more significant frames (`crashsig explain --frames N`).
//
// # One defect, one key (crashsig-sig/9)
//
// Two prints of one defect (another format, another build, another
// version) reach one key through these normalisations of the key frames
// (TestMeasureKeyShapes ablates each; figures in EVIDENCE.md):
//
//   - Renamed scopes: a key frame in a scope the product renamed between
//     versions takes the newer name (moved_namespaces in rules/default.yaml:
//     StarRocks 3.0 and Doris 3.x left `vectorized::`, so
//     `starrocks::vectorized::Chunk::append` keys as
//     `starrocks::Chunk::append`). Only the key: CrashFrame, AppFrame and
//     the catalog's frame globs see the printed name.
//   - Cut names: a name cut by a line limit (glog 0.7's 256 bytes, a cut
//     mangled name: Normalize ends it in "…") keys by the scope before the
//     cut, which the whole print of the same function also shows.
//   - Addresses: an unsymbolized crash frame of the executable (stable for
//     one build only) gives way to the named significant frame right
//     below it; the address stays the attribute
//     unsymbolized-crash-frame=<module+offset>, and keys when no named
//     frame follows.
//   - Sanitizer aborts: a sanitizer's `ABRT on unknown address` (a CHECK
//     or LOG(FATAL) in an ASAN build) is of the ABORT class, like the
//     release build's SIGABRT.
//   - Compiler intrinsics (`_mm_loadu_si128`, NEON `vld1q_u8`) are
//     irrelevant: always inlined, a frame named so is its caller's code.
//   - Header-only sort code: pdqsort (vendored in be/src/util/orlp) is a
//     generic rule with one key name per function, and main is keyed only
//     as a last resort; the products' thread trampolines are matched
//     whatever the case of their class (`starrocks::thread::supervise_thread`).
//
// crashsig-sig/10 adds two rule families of the same kind (no change of
// the walk): the products' one-value memcpy (`unaligned_load`,
// `unaligned_store`, free or a static of StringUtil/HashUtil) joins the
// memcpy family under one key name, and the products' hash functions
// (crc_hash_64, SliceHash, StdHash, HashUtil, murmur) and phmap's
// header-only hash tables are generic: every hash join, aggregation and
// distinct state calls them, so the caller names the defect
// (`FAULT | unaligned_load | starrocks::DistinctAggregateState::deserialize_and_merge`
// instead of `FAULT | starrocks::unaligned_load`).
//
// crashsig-sig/11 renames one more scope in keys (moved_namespaces): Doris
// 2.0's `doris::stream_load::` table sink (VNodeChannel, IndexChannel,
// VOlapTableSink) is 2.1's `doris::vectorized::`, keyed `doris::` like it;
// StarRocks' `starrocks::stream_load::` stays.
//
// crashsig-sig/12 keys a sanitizer runtime's failure in itself by that
// failure alone: its own CHECK (`ASAN(CHECK failed: ((ptr[0] ==
// kCurrentStackFrameMagic)) != (0))`, the condition without the runtime's
// file:line) or its own failed mmap (`ASAN(failed to allocate
// ReadFileToBuffer)`), whatever program frames follow (the instrumented
// code that happened to trip it) and also when none do (the mmap failure
// prints no stack), instead of `EMPTY: …` or the first program frame.
//
// crashsig-sig/13 repairs names whose template argument lists an HTML or
// Markdown renderer ate as tags (`std::_Hashtable, std::allocator>, …,
// std::__detail::_Hashtable_traits>::_M_find_before_node` for
// `std::_Hashtable<std::__cxx11::basic_string<…>, …>::_M_find_before_node`)
// where one eaten list held several: a top-level comma begins the
// remnant (a name has commas only inside argument lists), and a closer
// followed by `,`, `>` or a cv-qualifier continues it; a cast among the
// arguments (`(fmt::v7::detail::type)1`) no longer passes for the scope.
//
// crashsig-sig/14 keys a crash without a usable frame by its kind alone,
// `EMPTY: <kind>`, also when its input is damaged: until sig/13 a dump cut
// before any frame of the failing code was keyed `CORRUPTED: <kind>`, so
// a cut paste of a CHECK (`CORRUPTED: CHECK(!std::count(…))`) and a report
// of the same check that printed no stack (`EMPTY: CHECK(…)`) got two
// keys. The damage says how much of the crash was seen, not which crash
// it is; it stays in the attributes and the trace.
//
// crashsig-sig/15 keys text as it reads: a name drops Unicode format
// characters (zero-width space, byte order mark, soft hyphen, bidi
// controls) and reads other Unicode spaces as blanks, so a name pasted
// from a web page or a chat keys as printed; the kind's message (a check's
// expression, a sanitizer's text) and an unsymbolized frame's module name
// drop bytes that are not UTF-8 and control bytes, so a key read back from
// JSON (which prints them as U+FFFD) is the key; a PLT stub (gdb's
// `memcpy@plt`) keys as the function it jumps to. No golden, corpus or
// validation key changed: the bump says that keys of such inputs did.
//
// Measured and rejected: a lambda keyed as its owner (`X::{lambda}` → X)
// shares no more training pairs and merges one more catalog defect pair.
//
// Consecutive repeats of one frame are keyed once (recursion, inlined
// copies, and the twin lines of two threads dumping the same stack at once).
//
// Before crashsig-sig/8 a key held the first DefaultFrames = 4 frames
// outside the rules and the whole kind: on the 149 labelled incidents of
// the corpus N=4 was the smallest N that merged no two labelled defects
// (TestMeasureFrames, which now varies the number of significant frames).
//
// # Unsymbolized frames
//
// A frame without a name is kept as `module+0xoffset` when the address is
// stable for a build and no named significant frame follows it (see "One
// defect, one key"): a module-relative offset of the executable
// (`doris_be+0x…` from ASAN or hs_err), or an absolute address of a
// position-dependent executable. Position independence is read from the
// address, never from the module's name: fixed-address executables are
// linked far below 4 GiB (StarRocks' `starrocks_be` at 0x400000), PIE
// executables load far above it, and a kernel `segfault … in
// mod[base+size]` line's mapping base decides when the incident carries
// it. Absolute addresses of PIE binaries and shared objects differ per
// run or per distribution and are dropped, with the reason in the trace.
//
// # Empty and damaged input
//
// No usable frame gives `EMPTY: <kind>`, whether the incident is marked
// corrupted (a dump cut before any frame of the failing code) or printed
// no stack: the damage is the attribute `corrupted`, not part of the key
// (crashsig-sig/14). Keys are at most MaxKeyLen bytes,
// traces at most 97 lines.
//
// # Stability
//
// Algorithm names the algorithm version. testdata/signature/golden.tsv
// holds the key of every incident of every crash text under testdata;
// TestGolden fails when a key changes while Algorithm does not (listing
// old and new keys), and when Algorithm changed but the golden file was
// not regenerated (`go test ./signature -run TestGolden -update`).
// `crashsig explain --tsv DIR > new.tsv; crashsig diff old.tsv new.tsv`
// lists old/new keys over any directory.
//
// # Threads, similarity, buckets
//
// Aggregate groups the threads of one incident by normalized stack (the
// crashing thread's group first, then by count); names are kept only as
// observations (samples and digit-collapsed patterns), never as a group
// key. Similarity scores two frame lists with a position-dependent
// alignment (ReBucket/TraceSim style; formula in its doc) and suggests
// "probably the same" between buckets; it never replaces the key.
// Bucketer collects incidents by key with counts, first/last seen,
// products and versions; NearDuplicates pairs similar buckets.
//
// # Performance
//
// See EVIDENCE.md: ≈ 335,000 signatures per CPU-second from parsed
// crashes (warm name cache), cached normalization 20–60 ns per name, ten
// times faster than c++filt on a repeating name stream. The split of
// issue 17 (internal/cxxname, the files above) left them within noise:
// CPU time per operation against the tree before it, paired alternating
// rounds on a loaded machine, median after/before 0.93 for Generate, 0.94
// for uncached and 1.00 for cached Normalize (figures in
// catalog/CATALOG.md, Speed).
// Generator and Normalizer are safe for concurrent use; their caches are
// bounded (emptied when full).
package signature
