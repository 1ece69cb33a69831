package catalog

import "regexp"

// Path is the code path a crash happened on.
type Path string

// The paths. Every crash is put on exactly one.
const (
	// PathScan: a query reading data (segment/page/column readers, file
	// format readers, scanners, JNI readers).
	PathScan Path = "scan"
	// PathQuery: other query execution (joins, aggregation, exchange,
	// expressions, UDFs, fragment and pipeline management).
	PathQuery Path = "query"
	// PathLoad: ingestion (stream/broker/routine load, memtable flush,
	// delta writers, tablet sinks and channels).
	PathLoad Path = "load"
	// PathBackground: work no query triggers (compaction, vacuum and garbage
	// collection, trash sweep, timers, report/heartbeat/metrics threads,
	// cache eviction, schema change, publish, clone).
	PathBackground Path = "background"
	// PathLifecycle: process startup and shutdown.
	PathLifecycle Path = "lifecycle"
	// PathUnknown: no rule matched.
	PathUnknown Path = "unknown"
)

var validPaths = map[Path]bool{PathScan: true, PathQuery: true, PathLoad: true, PathBackground: true, PathLifecycle: true, PathUnknown: true}

// Paths lists every path in display order.
func Paths() []Path {
	return []Path{PathScan, PathQuery, PathLoad, PathBackground, PathLifecycle, PathUnknown}
}

// PathRule puts crashes whose stack matches it on a path.
type PathRule struct {
	// ID names the rule (lower-case words joined by '-').
	ID string `json:"id"`
	// Path and Area are what the rule decides.
	Path Path   `json:"path"`
	Area string `json:"area"`
	// Priority orders matching rules: higher wins.
	Priority int `json:"priority"`
	// Frames are globs; the rule holds at a frame of the crashing stack that
	// matches one of them and satisfies Callers and NotCallers.
	Frames []string `json:"frames,omitempty"`
	// Callers must all appear deeper (towards the thread root) than that frame.
	Callers []string `json:"callers,omitempty"`
	// NotCallers must not appear deeper than that frame.
	NotCallers []string `json:"not_callers,omitempty"`
	// Threads are globs on the crashing thread's name. A rule with Threads and
	// no frame-level evidence (Frames, Files, Modules, Types) is a weak rule:
	// it applies only when no frame rule matched. With frame-level evidence
	// the name is a condition (sanitizers' T0 is always the main thread).
	Threads []string `json:"threads,omitempty"`
	// Files are globs on source paths (Frame.File, or a path printed in the
	// frame line's tail): the rule holds at a frame whose source file
	// matches, e.g. "*/olap/rowset/segment_v2/*".
	Files []string `json:"files,omitempty"`
	// Modules are globs on the frame's module (object file): "*libjvm.so*".
	Modules []string `json:"modules,omitempty"`
	// Types are globs on product names found inside a library frame's raw
	// name (template arguments, lambda owners) that normalization drops:
	// "*::CloudBaseCompaction". Frames globs are tried on them too.
	Types []string `json:"types,omitempty"`
	// QueryID lists the query id states (present, zero, absent) under which
	// the rule holds. A rule with QueryID and no frame-level evidence
	// (Frames, Files, Modules, Types) nor Threads is an id rule: it applies
	// only when no frame rule and no thread rule matched.
	QueryID []string `json:"query_id,omitempty"`
	// TabletID lists the tablet id states (present, zero, absent) under
	// which the rule holds: Doris prints `*** tablet id: <n> ***`, the last
	// tablet this thread compacted, flushed or schema-changed (a
	// thread-local never reset; be-code-paths.md 8.2 and 9). Like QueryID, a
	// condition on any rule, and alone (with QueryID) it makes an id rule.
	TabletID []string `json:"tablet_id,omitempty"`
	// FileLine lists the kinds of StarRocks crash-preamble file line (hive,
	// load) under which the rule holds: dump_trace_info prints the file a
	// connector data source was reading, `Hive file path: …` (an
	// external-table scan) or `Load file path: …` (a load's file scan); see
	// symbolize.EventHiveFile. A condition on any rule, like QueryID.
	FileLine []string `json:"file_line,omitempty"`
	// TaskLabel lists the kinds of Doris memory tracker task label (query,
	// load) under which the rule holds: a FATAL message that names the
	// thread's tracker (`thread mem tracker label: Load#Id=…`, the orphan
	// and allocator checks of thread_context.h and allocator.cpp) says which
	// task the thread was attached to; QueryContext labels a SELECT
	// `Query#Id=<id>` and a load or INSERT `Load#Id=<id>`. A condition on any
	// rule, like QueryID; with Frames ["*"] the rule's evidence.
	TaskLabel []string `json:"task_label,omitempty"`
	// FreedBy are globs on the normalized frames of a sanitizer report's
	// freed-by stacks (`freed by thread T1 here:`): the rule holds only when
	// one of them matches (a use-after-free of memory that process teardown
	// freed). A condition on any rule, like QueryID; with Frames ["*"] it is
	// the rule's evidence (catalog/context.go; the paths.yaml header).
	FreedBy []string `json:"freed_by,omitempty"`
	// LogContext are globs on the last lifecycle log line before the incident
	// in the same input (symbolize.EventLifecycleLog: `BE exit step 3: …`,
	// `Doris main exiting.`): the rule holds only when it matches. A
	// condition like FreedBy.
	LogContext []string `json:"log_context,omitempty"`
	// SanitizerBug are globs on the sanitizer's bug type
	// (heap-use-after-free, …): the rule holds only for such a report. A
	// condition like FreedBy.
	SanitizerBug []string `json:"sanitizer_bug,omitempty"`
	// MainThread, when set, makes the rule hold only when the crashing
	// thread is the process's main thread: its kernel thread id equals the
	// process id in the dump's header (Doris `received by PID N (TID N OR
	// 0x…)`, StarRocks `LWP(N)`; Linux gives the first thread the PID as
	// its TID). A condition like FreedBy; with Frames ["*"] the rule's
	// evidence, also when no frame follows the crash mechanism.
	MainThread bool `json:"main_thread,omitempty"`
	// Weight (default 1) multiplies the weight of the evidence kind that
	// matched; the product is the verdict's path confidence (CATALOG.md).
	Weight float64 `json:"weight,omitempty"`
	// TaughtBy names the crash logs (repo-relative) the rule was written
	// from; `catalog lint` warns when only those logs match it and errors
	// when one is a validation log.
	TaughtBy []string `json:"taught_by,omitempty"`
	// NamesOnly restricts Frames to the frame's own normalized name: they
	// are not tried on a lambda frame's owner nor on product types in
	// template arguments. For functions that start threads (a service's
	// start, whose lambdas are the worker bodies, not the start).
	NamesOnly bool `json:"names_only,omitempty"`
	// Generic marks a rule whose frames are code every path runs (column
	// operations, memory tracking, RPC plumbing, any product frame): when
	// it holds by product evidence and a thread rule knows the crashing
	// thread's pool, the thread rule decides (catalog/path.go).
	Generic bool `json:"generic,omitempty"`
	// NoQuery, when set, replaces Path/Area if the crash carries the
	// no-query hint (Doris `Query id: 0-0`, StarRocks all-zero query id):
	// for frames shared by a query and a background job.
	NoQuery *PathTarget `json:"no_query,omitempty"`
	// OnThreads, when set, replaces Path/Area when the crashing thread's
	// name matches one of its globs: for frames that are another path's
	// work when they run on that path's own pool (expression evaluation
	// on a local-scan pool thread is the scanner's conjuncts).
	OnThreads *ThreadTarget `json:"on_threads,omitempty"`
	// Why says what the frames mean; it is quoted in the evidence.
	Why string `json:"why"`

	// File and Line say where the rule was defined.
	File string `json:"-"`
	Line int    `json:"-"`
}

// ThreadTarget is a path and area taken when the crashing thread's name
// matches one of Threads.
type ThreadTarget struct {
	Threads    []string `json:"threads"` // thread name globs
	PathTarget          // the path and area taken
}

// PathTarget is a path and area.
type PathTarget struct {
	Path Path   `json:"path"`           // the path
	Area string `json:"area,omitempty"` // the area ("" keeps the rule's)
}

// Defect is one known defect of a product.
type Defect struct {
	// ID is <DORIS|SR>-<issue or PR number>-<slug>, unique in a catalog.
	ID string `json:"id"`
	// Product is "doris" or "starrocks"; a crash of the other product never matches.
	Product string `json:"product"`
	// Title is one line saying what goes wrong.
	Title string `json:"title"`
	// Path and Area are where the research places the defect (the path
	// rules decide a verdict's path; a disagreement is noted in evidence).
	Path Path   `json:"path,omitempty"`
	Area string `json:"area,omitempty"`
	// Match lists the alternatives; one holding is a match.
	Match []Match `json:"match"`
	// Affected are version ranges ("A - B", "X.Y.*", ">= A"), one branch each.
	Affected []string `json:"affected,omitempty"`
	// Fixed are the first fixed versions, one per branch that got the fix,
	// established from release notes or a maintainer's statement.
	Fixed []string `json:"fixed,omitempty"`
	// FixedLikely are "X.Y.Z (YYYY-MM-DD)" entries, one per branch with no
	// established fix: only the date the fix reached the branch is known
	// (a backport's merge), and X.Y.Z is the first release of that branch
	// after the date. See ParseLikelyFix.
	FixedLikely []string `json:"fixed_likely,omitempty"`
	// Links are the issue and PR URLs (at least one).
	Links []string `json:"links"`
	// Workaround is free text for operators.
	Workaround string `json:"workaround,omitempty"`
	// Confidence is high, medium or low.
	Confidence string `json:"confidence,omitempty"`
	// Note says how sure the entry is and why.
	Note string `json:"note,omitempty"`
	// Tests are repo-relative crash logs that must match the defect.
	Tests []string `json:"tests,omitempty"`
	// TaughtBy names the crash logs the entry's match was written from
	// (see PathRule.TaughtBy).
	TaughtBy []string `json:"taught_by,omitempty"`

	// File and Line say where the defect was defined.
	File string `json:"-"`
	Line int    `json:"-"`

	affected    []Range
	fixed       []Version
	fixedLikely []LikelyFix
}

// Match is one alternative of a defect's match list; every field given must hold.
type Match struct {
	// Kind is a glob on the signature Kind.
	Kind string `json:"kind,omitempty"`
	// Frames are globs that must appear in this order (not necessarily
	// adjacent) within the top 10 meaningful frames of the crashing thread.
	Frames []string `json:"frames,omitempty"`
	// Callers are globs that must appear deeper in the crashing stack than
	// the last of Frames (anywhere in it when Frames is empty).
	Callers []string `json:"callers,omitempty"`
	// Anchor is a frame glob that must match one of the top DefectWindow
	// frames from the crash frame (innermost match taken); Near, Within and
	// Callers are then context below it.
	Anchor string `json:"anchor,omitempty"`
	// Near are globs that must each match a frame at most Within frames
	// deeper than the anchor (or the last of Frames).
	Near []string `json:"near,omitempty"`
	// Within is the reach of Near (default DefectNearWithin).
	Within int `json:"within,omitempty"`
	// AnyThread are globs that must each match a frame of some thread of
	// the incident (the crashing one included).
	AnyThread []string `json:"any_thread,omitempty"`
	// Message is an RE2 expression tried on the crash Message, CheckExpr,
	// ExceptionType and SanitizerBug.
	Message string `json:"message,omitempty"`
	// Check is an RE2 expression on the check expression alone
	// (`Check failed: <expr>`, DCHECK, assert).
	Check string `json:"check,omitempty"`
	// Exception is an RE2 expression on the exception type alone
	// (`terminate called after throwing an instance of '<type>'`).
	Exception string `json:"exception,omitempty"`
	// Fault is a condition on the crash's fault address: "null" (the
	// signature attribute fault=null: a SIGSEGV in the null page),
	// "not-null" (an address was printed outside the null page) or
	// "unknown" (no fault address printed: gdb bt, abort, check).
	Fault string `json:"fault,omitempty"`
	// Attrs are globs that must each match one of the signature's
	// Attributes (`leaf=memcpy-family`, `inlined=*ColumnReader*`).
	Attrs []string `json:"attrs,omitempty"`
	// Types are globs that must each match a product name found inside
	// the raw name of the anchor frame (without an anchor: of a frame in
	// the defect window): the template arguments and lambda owner of a
	// library frame (`std::_Hashtable<doris::RowsetId, …>::find`,
	// `std::_Function_handler<…, doris::vectorized::ParquetReader::
	// _process_page_index_filter(…)::{lambda…}>::_M_invoke`), which the
	// normalized name drops. They need an anchor or frames.
	Types []string `json:"types,omitempty"`
	// Key is an exact signature key.
	Key string `json:"key,omitempty"`
	// Threads is thread-dump evidence.
	Threads *ThreadMatch `json:"threads,omitempty"`

	// Line is where the alternative was defined.
	Line int `json:"-"`

	message   *regexp.Regexp
	check     *regexp.Regexp
	exception *regexp.Regexp
	attrs     []glob
	types     []glob
}

// ThreadMatch is matched against the thread groups of an incident.
type ThreadMatch struct {
	// Frames are globs that must all appear in one group's normalized stack.
	Frames []string `json:"frames"`
	// Name is a glob on the group's observed thread names (weak: only
	// together with Frames).
	Name string `json:"name,omitempty"`
	// MinCount is the least number of threads the group must have.
	MinCount int `json:"min_count,omitempty"`
}

// Source is one file a catalog was loaded from.
type Source struct {
	File     string `json:"file"`     // name the file was read under
	Schema   int    `json:"schema"`   // its schema number
	Revision string `json:"revision"` // its revision
	Rules    int    `json:"rules"`    // how many path rules it has
	Defects  int    `json:"defects"`  // how many defects it has
}

// File is one parsed catalog file.
type File struct {
	Name     string     // the name given to Parse (used in errors)
	Schema   int        // schema number (SchemaVersion)
	Revision string     // the catalog revision the file belongs to
	Rules    []PathRule // path rules, in file order
	Defects  []Defect   // defects, in file order
	// Stack is the file's `stack:` section: crash-mechanism frames and
	// product namespaces (StackKnowledge); a catalog uses the union of its
	// files' sections.
	Stack StackKnowledge
}
