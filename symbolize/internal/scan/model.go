package scan

import (
	"strconv"
	"time"
)

// Product names the backend that wrote a crash.
type Product string

// Products crashsig knows. The empty Product means the input did not say.
const (
	ProductUnknown   Product = ""
	ProductDoris     Product = "doris"
	ProductStarRocks Product = "starrocks"
)

// Kind says what sort of incident a Crash is.
type Kind string

// Incident kinds. A composite incident (a Check failure followed by the
// SIGABRT dump it causes) takes the kind of its most specific part: a
// CHECK failure is KindCheck even though a signal dump follows it.
const (
	KindUnknown     Kind = ""
	KindSignal      Kind = "signal"      // fatal signal caught by the BE handler (F1/F2), kernel segfault line, core
	KindCheck       Kind = "check"       // glog FATAL / Check failed (F3)
	KindTerminate   Kind = "terminate"   // std::terminate, uncaught exception (F4)
	KindJVM         Kind = "jvm"         // JVM fatal error, hs_err (F5)
	KindSanitizer   Kind = "sanitizer"   // ASAN/UBSAN/TSAN/MSAN error (F6)
	KindLeak        Kind = "leak"        // LeakSanitizer report at exit (F6.2): not a crash
	KindAssert      Kind = "assert"      // C assert() or allocator abort message (F8.4)
	KindTermination Kind = "termination" // SIGTERM/SIGINT dump: the process was told to stop
	KindThreadDump  Kind = "threaddump"  // jstack, gdb thread apply all bt, BE stack dumps (F7): diagnostics
)

// Addr is a memory address or offset. It marshals as a 0x-prefixed hex string
// in JSON and text. Zero means "not known" wherever an address may be absent.
type Addr uint64

// String returns the address as 0x-prefixed lowercase hex.
func (a Addr) String() string { return "0x" + strconv.FormatUint(uint64(a), 16) }

// MarshalText implements encoding.TextMarshaler.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts 0x-prefixed
// hex or decimal.
func (a *Addr) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(string(b), 0, 64)
	if err != nil {
		return err
	}
	*a = Addr(v)
	return nil
}

// Frame is one stack frame as the input printed it, plus what symbolization
// or demangling added. Function keeps the text exactly as printed; Demangled
// holds the demangled form when the printed name was mangled.
type Frame struct {
	// Index is the frame's position in its thread, 0 = innermost. Inline
	// frames expanded by the symbolizer share the index of their physical frame.
	Index int `json:"index"`
	// PC is the address printed for the frame (a return address except for
	// the faulting frame). Zero when none was printed.
	PC Addr `json:"pc,omitempty"`
	// Function is the function name as printed (possibly mangled, truncated
	// or damaged), or as filled in by the symbolizer when nothing was printed.
	Function string `json:"function,omitempty"`
	// Demangled is the demangled Function when Function was a mangled name.
	Demangled string `json:"demangled,omitempty"`
	// Module is the object file the frame lies in (path or basename as printed).
	Module string `json:"module,omitempty"`
	// Offset is the module-relative offset when the input printed one
	// (`(libc.so.6+0x4251f)`, `[doris_be+0x9a8b7c6]`); valid when HasOffset.
	Offset    Addr `json:"offset,omitempty"`
	HasOffset bool `json:"-"`
	// File and Line are the source location, when known. Column is optional.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Inlined is true for a frame that the compiler inlined into its caller.
	Inlined bool `json:"inlined"`
	// Java is true for a Java frame (jstack, hs_err j/J frames).
	Java bool `json:"java,omitempty"`
	// Symbolized is true when the symbolizer filled in Function/File/Line.
	Symbolized bool `json:"symbolized,omitempty"`
	// Raw is the input line the frame was parsed from (after paste repair).
	Raw string `json:"-"`
}

// Name returns the best available function name: Demangled if set, else Function.
func (f *Frame) Name() string {
	if f.Demangled != "" {
		return f.Demangled
	}
	return f.Function
}

// Thread is one thread of an incident. The crashing thread is marked Crashed
// and is the first thread of its Crash.
type Thread struct {
	// ID is the best thread identifier the input gave: kernel TID (LWP) when
	// printed, else the pthread handle, else a dump-local number. Zero if none.
	ID int64 `json:"id"`
	// Handle is the pthread_t (as 0x-hex) when printed.
	Handle string `json:"handle,omitempty"`
	// Name is the thread name as observed (gdb, jstack, sanitizer). Names are
	// informational only: a JVM thread inherits the name of the native thread
	// that created it, so nothing may be decided from a name alone.
	Name string `json:"name,omitempty"`
	// State is a thread state when the dump printed one (jstack).
	State   string  `json:"state,omitempty"`
	Crashed bool    `json:"crashed"`
	Frames  []Frame `json:"frames"`
	// Truncated is set when the stack was cut short (input ended, damage, depth cap).
	Truncated bool `json:"truncated,omitempty"`
}

// Event is a single-line message attached to an incident: allocator
// diagnostics, memory-limit messages, kernel lines, JVM summary lines.
type Event struct {
	Line int    `json:"line"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Tracker is one StarRocks memory-tracker line of the crash preamble.
type Tracker struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// Crash is one incident found in the input: a signal dump, a check failure,
// an uncaught exception, a sanitizer report, a JVM fatal error, a thread dump,
// or a composite of several of these that belong together.
type Crash struct {
	// Source names the input (a file path, "-" for stdin); StartLine and
	// EndLine are the 1-based, inclusive line span of the incident in it.
	Source    string `json:"source"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`

	// Product is the backend the crash is from (ProductDoris,
	// ProductStarRocks), from the dump's own evidence, a startup banner,
	// then its frames and modules; ProductUnknown when nothing says.
	Product Product `json:"product"`
	// Version is the product version when the input stated it (dump
	// preamble or a startup banner earlier in the same input).
	Version string `json:"version"`
	// VersionFromBanner says that Version came from a startup banner
	// earlier in the same input (same process lifetime), not from the
	// incident's own text. It is not part of the JSON; the pipeline
	// package reports it as the result's version_source.
	VersionFromBanner bool `json:"-"`
	// VersionGiven says that Version was filled in by the caller (the
	// pipeline's Options.VersionOf or AssumeVersion), not read from the
	// input: completing the crash again takes it for given, not printed.
	// Not part of the JSON (the result's version_source says it).
	VersionGiven bool `json:"-"`
	// Build is the build commit hash printed by the dump, BuildType the
	// build type (RELEASE, DEBUG, ASAN).
	Build     string `json:"build,omitempty"`
	BuildType string `json:"build_type,omitempty"`

	// Kind is what the incident is: a signal dump, a failed CHECK, an
	// uncaught exception, a sanitizer report, a JVM crash, a thread dump…
	// (the Kind constants).
	Kind Kind `json:"kind"`
	// Formats lists the format families that make up the incident in order
	// of appearance, e.g. ["F3","F1"] for a Doris check failure.
	Formats []string `json:"formats,omitempty"`

	// Signal is the signal's name as printed ("SIGSEGV"; "" when none was
	// printed) and SignalReason the si_code text Doris' dumps add
	// ("SEGV_MAPERR").
	Signal       string `json:"signal"`
	SignalReason string `json:"signal_reason,omitempty"`
	// FaultAddress is si_addr as printed; only meaningful for kernel
	// generated signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL). HasFaultAddress
	// says whether it was printed at all (fault_address is "0x0" both for a
	// printed null address and for none).
	FaultAddress    Addr `json:"fault_address"`
	HasFaultAddress bool `json:"has_fault_address"`
	// FaultPC is the faulting PC when the dump printed it separately (glog `PC: @`, kernel `ip`).
	FaultPC Addr `json:"fault_pc,omitempty"`

	// PID and TID are the process and the crashing thread (the kernel
	// thread id when printed), zero when not printed.
	PID int64 `json:"pid,omitempty"`
	TID int64 `json:"tid,omitempty"`

	// QueryID, FragmentID, PlanNodeID, TabletID and IsNereids are the
	// dump preamble's ids as printed (`0-0` or an all-zero id: no query
	// was attached to the thread).
	QueryID    string `json:"query_id"`
	FragmentID string `json:"fragment_id,omitempty"`
	PlanNodeID string `json:"plan_node_id,omitempty"`
	TabletID   string `json:"tablet_id,omitempty"`
	IsNereids  string `json:"is_nereids,omitempty"`

	// Message is the abort message: the Check expression with its values,
	// the FATAL text, the exception what(), the sanitizer description.
	Message string `json:"message"`
	// CheckExpr is the expression of a `Check failed:` message without
	// the printed values.
	CheckExpr string `json:"check_expr,omitempty"`
	// ExceptionType is the type named by `terminate called after throwing`.
	ExceptionType string `json:"exception_type,omitempty"`
	// SanitizerBug is the sanitizer's bug type (heap-use-after-free, ...).
	SanitizerBug string `json:"sanitizer_bug,omitempty"`
	// SiteFile and SiteLine are the source location the failure line itself
	// printed: a glog FATAL line's `file.cpp:N]` (a basename: glog strips
	// the directory) or UBSAN's `path/file.h:N:C: runtime error:` (the
	// path as compiled). It names where the check or the undefined
	// behaviour is, which is evidence of the code that ran when no frame
	// says more. Empty when the incident printed none.
	SiteFile string `json:"site_file,omitempty"`
	SiteLine int    `json:"site_line,omitempty"`

	// Time is the crash time when the dump printed it (`Aborted at <epoch>`),
	// in UTC.
	Time time.Time `json:"time,omitzero"`

	// Threads holds every thread the incident printed, the crashing one
	// first and marked Crashed.
	Threads []Thread `json:"threads"`

	Trackers []Tracker `json:"trackers,omitempty"`
	Events   []Event   `json:"events,omitempty"`

	// Corrupted is set when the incident's text was damaged beyond repair
	// (truncated, interleaved, frames missing); CorruptedReason says how.
	// What is sound is still reported; nothing is invented.
	Corrupted       bool   `json:"corrupted"`
	CorruptedReason string `json:"corrupted_reason"`
	// Notes records repairs and observations (`joined 2 hard-wrapped lines`).
	Notes []string `json:"notes,omitempty"`
}

// CrashingThread returns the thread marked Crashed, or nil.
func (c *Crash) CrashingThread() *Thread {
	for i := range c.Threads {
		if c.Threads[i].Crashed {
			return &c.Threads[i]
		}
	}
	return nil
}
