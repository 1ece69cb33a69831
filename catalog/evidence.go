package catalog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/signature"

	"github.com/crashsig/crashsig/symbolize"
)

// Confidence says how much a path (or defect) decision rests on.
type Confidence string

// The confidences of a path decision (Verdict.PathConfidence).
const (
	// ConfidenceHigh: a frame name (or the owner of a lambda frame) of the
	// crashing stack names a subsystem whose path is known.
	ConfidenceHigh Confidence = "high"
	// ConfidenceMedium: weaker evidence decided: a source path, a module, a
	// product type inside template arguments, a frame shared by every path
	// (column ops, RPC), or a rule whose answer the no-query hint changed.
	ConfidenceMedium Confidence = "medium"
	// ConfidenceLow: only the query id or the thread name decided, or
	// nothing did (path unknown).
	ConfidenceLow Confidence = "low"
)

// evidenceSource says where in a frame a glob matched.
type evidenceSource uint8

const (
	srcName   evidenceSource = iota // the normalized frame name
	srcOwner                        // the owner of a lambda frame (A::f of A::f::{lambda})
	srcType                         // a product name inside the raw name's template arguments
	srcFile                         // the frame's source path
	srcModule                       // the frame's module
	// Context sources (context.go): a universal rule ("*") whose context
	// condition held takes its evidence kind from it.
	srcFreedBy    // a frame of a sanitizer report's freed-by stack
	srcLogContext // the last lifecycle log line before the incident
	srcMainThread // the dump header's TID = PID: the process's main thread
)

// Evidence weights per source: how strongly a match says "this frame is
// that subsystem's work". A rule's Weight (default 1) multiplies them. The
// product decides the path confidence: >= 0.85 high, >= 0.5 medium, else low.
const (
	weightName   = 1.0
	weightOwner  = 0.9
	weightType   = 0.8
	weightFile   = 0.7
	weightModule = 0.5
	// weightSite: the crash site a failure line printed (site.go), a
	// source path like a frame's but the innermost code only, with no
	// caller to confirm it; weightSiteBase: a basename (glog strips the
	// directory), read against a files glob's last segment, which loses
	// the directory that made the glob specific: low confidence.
	weightSite     = 0.6
	weightSiteBase = 0.45
	// weightMessage: a product type the crash message names (a failed
	// cast's or down_cast's types, a check's object): what was being
	// worked on, not where; low confidence (message.go).
	weightMessage = 0.45
	// weightFreedBy: a freed-by stack under process teardown says the
	// memory was freed by the exit, not which thread's work the access was.
	weightFreedBy = 0.9
	// weightLogContext: a lifecycle line printed before the incident says
	// the process was starting or stopping when it crashed; the incident may
	// come long after the line when the log between was not pasted.
	weightLogContext = 0.8
	// weightMainThread: the kernel's thread id says the crashing thread is
	// the main thread, which only starts and stops the BE (and idles in
	// between); only a frame of main's own loop says otherwise.
	weightMainThread = 0.95
	weightQueryID    = 0.3
	weightThread     = 0.2

	highAt   = 0.85
	mediumAt = 0.5
)

func (s evidenceSource) weight() float64 {
	switch s {
	case srcName:
		return weightName
	case srcOwner:
		return weightOwner
	case srcType:
		return weightType
	case srcFile:
		return weightFile
	case srcFreedBy:
		return weightFreedBy
	case srcLogContext:
		return weightLogContext
	case srcMainThread:
		return weightMainThread
	}
	return weightModule
}

// isContext says whether the source is context read beside the stack
// (context.go): the evidence line quotes its text and where it is.
func (s evidenceSource) isContext() bool {
	return s == srcFreedBy || s == srcLogContext || s == srcMainThread
}

func (s evidenceSource) String() string {
	switch s {
	case srcName:
		return "frame"
	case srcOwner:
		return "lambda owner"
	case srcType:
		return "template type"
	case srcFile:
		return "source path"
	case srcFreedBy:
		return "freed-by frame"
	case srcLogContext:
		return "log line"
	case srcMainThread:
		return "main thread"
	}
	return "module"
}

func confidenceOf(score float64) Confidence {
	switch {
	case score >= highAt:
		return ConfidenceHigh
	case score >= mediumAt:
		return ConfidenceMedium
	}
	return ConfidenceLow
}

// Query id states (the `query_id:` evidence of path rules).
const (
	QueryIDPresent = "present" // a non-zero query (or load, fragment) id was printed
	QueryIDZero    = "zero"    // an all-zero id was printed: no task attached (Doris 0-0, StarRocks all-zero UUID)
	QueryIDAbsent  = "absent"  // the text printed no id
)

// queryIDState classifies the crash's query and fragment ids.
func queryIDState(crash *symbolize.Crash) string {
	q := strings.TrimSpace(crash.QueryID)
	if q == "" {
		q = strings.TrimSpace(crash.FragmentID)
	}
	switch {
	case q == "":
		return QueryIDAbsent
	case strings.Trim(q, "0-:") == "":
		return QueryIDZero
	}
	return QueryIDPresent
}

// The kinds of StarRocks crash-preamble file line (PathRule.FileLine).
const (
	FileLineHive = "hive" // `Hive file path: …`: HiveDataSource, an external-table scan
	FileLineLoad = "load" // `Load file path: …`: FileDataSource, a load's file scan
)

// fileLine returns the kind and text of the crash's StarRocks preamble file
// line (symbolize.EventHiveFile, EventLoadFile), or "" when it has none.
func fileLine(crash *symbolize.Crash) (kind, text string) {
	for _, e := range crash.Events {
		switch e.Kind {
		case symbolize.EventHiveFile:
			return FileLineHive, e.Text
		case symbolize.EventLoadFile:
			return FileLineLoad, e.Text
		}
	}
	return "", ""
}

// The kinds of Doris memory tracker task label (PathRule.TaskLabel).
const (
	TaskLabelQuery = "query" // `Query#Id=<id>`: a SELECT's query tracker
	TaskLabelLoad  = "load"  // `Load#Id=<id>`: a load's or INSERT's tracker
)

// taskLabel returns the kind and text of the first Doris task memory
// tracker label in the crash's message, preferring the thread's own tracker
// (`thread mem tracker label: Load#Id=…`) to an attached one, or "" when
// the message names none. QueryContext (be/src/runtime/query_context.cpp)
// names the tracker of a TQueryType::SELECT fragment `Query#Id=<id>` and of
// a TQueryType::LOAD one (stream, broker, routine load, INSERT) `Load#Id=<id>`;
// the orphan-tracker and allocator checks print it in their FATAL message.
func taskLabel(crash *symbolize.Crash) (kind, text string) {
	msg := crash.Message
	if len(msg) < 10 || !strings.Contains(msg, "#Id=") {
		return "", ""
	}
	const own = "thread mem tracker label: "
	if i := strings.Index(msg, own); i >= 0 {
		if k, t := taskLabelAt(msg[i+len(own):]); k != "" {
			return k, t
		}
	}
	for rest := msg; ; {
		i := strings.Index(rest, "#Id=")
		if i < 0 {
			return "", ""
		}
		j := i
		for j > 0 && isLabelByte(rest[j-1]) {
			j--
		}
		if k, t := taskLabelAt(rest[j:]); k != "" {
			return k, t
		}
		rest = rest[i+len("#Id="):]
	}
}

// taskLabels are the task tracker labels QueryContext makes (the id
// follows, `<hi>-<lo>` in hex), their kind and their bit in a rule's
// task_label condition (compiledRule.taskLabel, above the file line bits).
var taskLabels = [...]struct {
	prefix, kind string
	bit          uint16
}{
	{"Query#Id=", TaskLabelQuery, 1 << 8},
	{"Load#Id=", TaskLabelLoad, 1 << 9},
}

// taskLabelAt reads a task label with its id at the start of s.
func taskLabelAt(s string) (kind, text string) {
	for _, l := range taskLabels {
		if !strings.HasPrefix(s, l.prefix) {
			continue
		}
		end := len(l.prefix)
		for end < len(s) && (isHexByte(s[end]) || s[end] == '-') {
			end++
		}
		if end == len(l.prefix) {
			return "", "" // no id after the label
		}
		return l.kind, s[:end]
	}
	return "", ""
}

func isLabelByte(b byte) bool { return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' }

func isHexByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// tabletIDState classifies the Doris `*** tablet id: <n> ***` header field.
func tabletIDState(crash *symbolize.Crash) string {
	t := strings.TrimSpace(crash.TabletID)
	switch {
	case t == "":
		return QueryIDAbsent
	case strings.Trim(t, "0") == "":
		return QueryIDZero
	}
	return QueryIDPresent
}

// lambdaOwner returns A::f for a normalized lambda frame A::f::{lambda}
// (nested lambdas included), or "".
func lambdaOwner(name string) string {
	const suffix = "::{lambda}"
	if !strings.HasSuffix(name, suffix) {
		return ""
	}
	for strings.HasSuffix(name, suffix) {
		name = name[:len(name)-len(suffix)]
	}
	if name == "" || name == "{lambda}" {
		return ""
	}
	return name
}

// StackKnowledge is what a catalog knows about stacks besides its path
// rules (the `stack:` section of a catalog file; CATALOG.md): which frames
// are the crash mechanism, so that path evidence is taken below them, and
// which namespaces are the product's, whose names inside a library frame's
// template arguments tell what work the frame does.
type StackKnowledge struct {
	// MechanismMarks are substrings of normalized frame names of the crash
	// mechanism: signal handlers, glog's fatal path, sanitizer runtimes.
	MechanismMarks []string `json:"mechanism_marks,omitempty"`
	// MechanismNames are whole normalized names of it (C functions such as
	// abort: a product function such as TxnManager::abort_txn is work).
	MechanismNames []string `json:"mechanism_names,omitempty"`
	// ProductNamespaces are the products' top-level C++ namespaces
	// (doris, starrocks); their Itanium source names (5doris) are derived.
	ProductNamespaces []string `json:"product_namespaces,omitempty"`
	// ToolchainPaths are substrings of source paths of the C++ standard
	// library, libc and the toolchain (`/include/`, `./nptl/`): such a path
	// says nothing about the work, so it is not matched against file globs.
	ToolchainPaths []string `json:"toolchain_paths,omitempty"`
	// IdleWaits and IdleFrames recognize the idle threads of a thread dump
	// (threads.go, idleOf): globs on normalized frame names of the blocking
	// primitives and work-queue takes a waiting thread sits in, and of the
	// pool and daemon loops that wait for work below them.
	IdleWaits  []string `json:"idle_waits,omitempty"`
	IdleFrames []string `json:"idle_frames,omitempty"`
}

// stackTable is the compiled union of StackKnowledge sections.
type stackTable struct {
	know    StackKnowledge // the union, in file order, without repeats
	names   map[string]bool
	ns      []string // "doris::"
	mangled []string // "5doris"
	idle    idleTable
}

// stackOf returns the files' stack sections.
func stackOf(files []*File) []StackKnowledge {
	var out []StackKnowledge
	for _, f := range files {
		if f != nil {
			out = append(out, f.Stack)
		}
	}
	return out
}

func newStackTable(ks ...StackKnowledge) *stackTable {
	t := &stackTable{names: map[string]bool{}}
	for _, k := range ks {
		t.know.MechanismMarks = append(t.know.MechanismMarks, k.MechanismMarks...)
		t.know.MechanismNames = append(t.know.MechanismNames, k.MechanismNames...)
		t.know.ProductNamespaces = append(t.know.ProductNamespaces, k.ProductNamespaces...)
		t.know.ToolchainPaths = append(t.know.ToolchainPaths, k.ToolchainPaths...)
		t.know.IdleWaits = append(t.know.IdleWaits, k.IdleWaits...)
		t.know.IdleFrames = append(t.know.IdleFrames, k.IdleFrames...)
	}
	t.know.IdleWaits, t.know.IdleFrames = dedupe(t.know.IdleWaits), dedupe(t.know.IdleFrames)
	t.idle = compileIdle(t.know)
	t.know.ToolchainPaths = dedupe(t.know.ToolchainPaths)
	t.know.MechanismMarks = dedupe(t.know.MechanismMarks)
	t.know.MechanismNames = dedupe(t.know.MechanismNames)
	t.know.ProductNamespaces = dedupe(t.know.ProductNamespaces)
	for _, n := range t.know.MechanismNames {
		t.names[n] = true
	}
	for _, ns := range t.know.ProductNamespaces {
		t.ns = append(t.ns, ns+"::")
		t.mangled = append(t.mangled, strconv.Itoa(len(ns))+ns)
	}
	return t
}

// Stack returns the catalog's stack knowledge (the union of its files'
// `stack:` sections).
func (c *Catalog) Stack() StackKnowledge {
	k := c.stack.know
	return StackKnowledge{
		MechanismMarks:    append([]string(nil), k.MechanismMarks...),
		MechanismNames:    append([]string(nil), k.MechanismNames...),
		ProductNamespaces: append([]string(nil), k.ProductNamespaces...),
		ToolchainPaths:    append([]string(nil), k.ToolchainPaths...),
		IdleWaits:         append([]string(nil), k.IdleWaits...),
		IdleFrames:        append([]string(nil), k.IdleFrames...),
	}
}

// isProductName reports whether a normalized name lies in a product namespace.
func (t *stackTable) isProductName(name string) bool {
	for _, ns := range t.ns {
		if strings.HasPrefix(name, ns) {
			return true
		}
	}
	return false
}

// toolchainPath reports a source path of the C++ standard library, libc or
// the toolchain (`/usr/include/c++/11/bits/std_function.h`,
// `./nptl/pthread_mutex_lock.c`).
func (t *stackTable) toolchainPath(p string) bool {
	for _, m := range t.know.ToolchainPaths {
		if strings.Contains(p, m) {
			return true
		}
	}
	return false
}

// isMechanism reports whether a normalized frame name belongs to the crash mechanism.
func (t *stackTable) isMechanism(f string) bool {
	if t.names[f] {
		return true
	}
	for _, m := range t.know.MechanismMarks {
		if strings.Contains(f, m) {
			return true
		}
	}
	return false
}

// mechanismEnd returns the index of the first frame after the crash
// mechanism: the signature's crash frame when it is in the stack, else the
// frame after the last mechanism frame among the top 16.
func (t *stackTable) mechanismEnd(frames []string, sig signature.Signature) int {
	if sig.CrashFrame != "" {
		if i := indexOf(frames, sig.CrashFrame); i >= 0 {
			return i
		}
	}
	end := 0
	for i, f := range frames[:min(len(frames), 16)] {
		if t.isMechanism(f) {
			end = i + 1
		}
	}
	return end
}

// workStart returns the first frame of the work above the crash frame at
// index crash: the named frames directly above it that are not the crash
// mechanism. The signature's crash frame skips library frames (std::
// containers and invokers, the allocator, memcpy), but those frames are the
// work that crashed, and their template arguments and lambda owners name
// it: a `std::_Function_handler<…RoutineLoadTaskExecutor…>::_M_invoke` or
// `std::_Hashtable<…CloudBaseCompaction…>::_M_find` above the first product
// frame. An unnamed frame (a bare PC, the signal trampoline) or a mechanism
// frame ends the walk. Only the product types of those frames count
// (stackView.counts): their names (a logging sink, an exception tracer)
// are not the work.
func (t *stackTable) workStart(frames []string, crash int) int {
	i := min(crash, len(frames))
	for i > 0 && frames[i-1] != "" && !t.isMechanism(frames[i-1]) {
		i--
	}
	return i
}

// maxTypes bounds the names taken from one raw frame name.
const maxTypes = 8

// productTypes appends to dst the product names found inside a raw frame
// name that normalization drops: template arguments and lambda owners of
// library frames (`std::_Hashtable<long, std::pair<long const,
// std::shared_ptr<doris::CloudBaseCompaction>>…>::_M_find` gives
// doris::CloudBaseCompaction; a `__visit_invoke` whose lambda is
// `doris::vectorized::AggregationNode::_emplace_into_hash_table(…)::{lambda}`
// gives doris::vectorized::AggregationNode::_emplace_into_hash_table).
// Printed names are read as scope chains after `doris::`/`starrocks::`;
// mangled names (often cut short, so not demangleable) as runs of
// <length><identifier> after `5doris`/`9starrocks` (the namespaces are the
// catalog's product_namespaces). Each name once, at most maxTypes.
func (t *stackTable) productTypes(dst []string, raw string) []string {
	n0 := len(dst)
	add := func(s string) {
		if !strings.Contains(s, "::") || strings.HasSuffix(s, "::") || len(dst)-n0 >= maxTypes {
			return
		}
		for _, x := range dst[n0:] {
			if x == s {
				return
			}
		}
		dst = append(dst, s)
	}
	if isMangledText(raw) {
		for _, m := range t.mangled {
			for off := 0; off < len(raw); {
				i := strings.Index(raw[off:], m)
				if i < 0 {
					break
				}
				at := off + i
				off = at + len(m)
				if at > 0 && raw[at-1] >= '0' && raw[at-1] <= '9' {
					continue // part of a longer length prefix
				}
				add(readMangledChain(raw[at:]))
			}
		}
		return dst
	}
	for _, ns := range t.ns {
		for off := 0; off < len(raw); {
			i := strings.Index(raw[off:], ns)
			if i < 0 {
				break
			}
			at := off + i
			off = at + len(ns)
			if at > 0 && isIdentByte(raw[at-1]) {
				continue
			}
			add(readScopeChain(raw[at:]))
		}
	}
	return dst
}

func isMangledText(s string) bool { return len(s) > 2 && s[0] == '_' && s[1] == 'Z' }

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// readScopeChain reads `a::b::c` from the start of s, stopping at the
// first byte that is neither an identifier byte nor `::`; a trailing `::`
// is dropped. `(anonymous namespace)` is kept as a component.
func readScopeChain(s string) string {
	i := 0
	for i < len(s) {
		switch {
		case isIdentByte(s[i]):
			i++
		case strings.HasPrefix(s[i:], "::"):
			if strings.HasPrefix(s[i+2:], "(anonymous namespace)") {
				i += 2 + len("(anonymous namespace)")
				continue
			}
			if i+2 >= len(s) || !isIdentByte(s[i+2]) {
				return s[:i]
			}
			i += 2
		default:
			return s[:i]
		}
	}
	return s[:i]
}

// readMangledChain reads <len><id><len><id>… from the start of s and joins
// the identifiers with `::`; at least two components are required.
func readMangledChain(s string) string {
	var parts []string
	i := 0
	for i < len(s) && len(parts) < 16 {
		n := 0
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' && n < 1<<12 {
			n = n*10 + int(s[j]-'0')
			j++
		}
		if j == i || n == 0 || j+n > len(s) {
			break
		}
		id := s[j : j+n]
		for k := 0; k < len(id); k++ {
			if !isIdentByte(id[k]) {
				id = ""
				break
			}
		}
		if id == "" {
			break
		}
		parts = append(parts, id)
		i = j + n
	}
	if len(parts) < 2 {
		return ""
	}
	return strings.Join(parts, "::")
}

// sourcePath returns the frame's source path (Frame.File: the parser fills
// it from a path printed in the frame line's tail, ` at
// /root/doris/be/src/olap/x.cpp:83`, and the symbolizer from DWARF).
func sourcePath(f *symbolize.Frame) string { return f.File }

// lambdaMarkers start the name of a lambda's closure type after its
// owner: GCC's `::{lambda(…)#1}`, Clang's `::$_0` and older Clang's
// `::'lambda'(…)`.
var lambdaMarkers = []string{"::{lambda(", "::$_", "::'lambda"}

// lambdaArgOwners appends to dst the product functions that own a lambda
// passed to a product frame as a template or function argument:
// `doris::CalcDeleteBitmapToken::submit_func<doris::BaseBetaRowsetWriter::_generate_delete_bitmap(int)::$_0>`
// gives doris::BaseBetaRowsetWriter::_generate_delete_bitmap, the
// function that submitted the work (as a std::function invoker's lambda
// owner does, productTypes). name is the frame's normalized name: an owner
// that it starts with is the frame's own function (a lambda inside it,
// which lambdaOwner reads), not an argument. Template arguments inside an
// owner are dropped (globs see normalized names). At most maxTypes.
func (t *stackTable) lambdaArgOwners(dst []string, raw, name string) []string {
	n0 := len(dst)
	for _, m := range lambdaMarkers {
		for off := 0; off < len(raw) && len(dst)-n0 < maxTypes; {
			i := strings.Index(raw[off:], m)
			if i < 0 {
				break
			}
			at := off + i
			off = at + len(m)
			owner := ownerBefore(raw[:at])
			if owner == "" || !strings.Contains(owner, "::") || strings.HasSuffix(owner, "::") || strings.Contains(owner, "::::") ||
				!t.isProductName(owner) || strings.HasPrefix(name, owner) {
				continue
			}
			if !slices.Contains(dst[n0:], owner) {
				dst = append(dst, owner)
			}
		}
	}
	return dst
}

// ownerBefore reads backwards from the end of s the qualified function
// name a lambda marker follows: a parameter list `(…)` (and a ` const`
// after it) is skipped, then identifiers, `::` and balanced template
// argument lists `<…>` (dropped from the result) are read. It returns ""
// when s does not end in such a name.
func ownerBefore(s string) string {
	s = strings.TrimSuffix(s, " const")
	end := len(s)
	if end > 0 && s[end-1] == ')' {
		var ok bool
		if end, ok = openingBefore(s, end, '(', ')'); !ok {
			return ""
		}
	}
	var parts []string // the name's pieces, template argument lists left out, last first
	k := end
read:
	for k > 0 {
		c := s[k-1]
		switch {
		case isIdentByte(c):
			k--
		case c == ':' && k >= 2 && s[k-2] == ':':
			k -= 2
		case c == '>':
			parts = append(parts, s[k:end])
			var ok bool
			if k, ok = openingBefore(s, k, '<', '>'); !ok {
				return ""
			}
			end = k
		default:
			break read
		}
	}
	parts = append(parts, s[k:end])
	slices.Reverse(parts)
	return strings.TrimPrefix(strings.Join(parts, ""), "::")
}

// openingBefore returns the index of the open byte that balances the close
// byte at s[end-1], walking backwards; ok is false when none does.
func openingBefore(s string, end int, open, close byte) (int, bool) {
	depth := 0
	for j := end - 1; j >= 0; j-- {
		switch s[j] {
		case close:
			depth++
		case open:
			depth--
		}
		if depth == 0 {
			return j, true
		}
	}
	return 0, false
}
