package scan

import "strings"

// glog failure-signal dumps (F2: StarRocks, Doris 0.x–1.0) with the
// StarRocks preamble, and glog FATAL / Check-failure traces (F3); formats
// spec §4 F2, F3. Frames (`    @ 0x… symbol`, one space; `    @ 0x…  symbol`,
// two spaces) are parsed by parseAtFrame. glog lines themselves (the
// `F0611 08:02:41.118230 90211 file.cpp:247] msg` prefix) are recognized by
// glogLine, which needs no regular expression.
var glogRules = []lineRule{
	// F1 and F2 signal lines. Group 2 (reason text) is present only in F1.
	// Tolerant of pastes cut after the PID (`received by PID 7`) or
	// abbreviated with `...`.
	{id: "X.signal", kind: kSignal, prefix: "*** S",
		re: mustCompile(`^(?:\*\*\* )?(SIG[A-Z0-9]+|Signal \d+) (?:([a-z][a-z -]*[a-z]) )?\(@0x([0-9a-fA-F]+)\) received by PID (\d+)(?: \(TID (?:(\d+) OR )?0x([0-9a-fA-F]+)(?: LWP (\d+))?\))?(?: \(LWP (\d+)\)| LWP\((\d+)\))?(?: from PID (\d+))?`)},
	{id: "F3.header", kind: kCheckHeader, prefix: "*** Check failure stack trace: ***"},
	{id: "F2.pc", kind: kPC, prefix: "PC: ",
		re: mustCompile(`^PC: (?:@ +(0x[0-9a-fA-F]+) ?)?(.*)$`)},
	{id: "F2.pre_query", kind: kSRQuery, prefix: "query_id:",
		re: mustCompile(`^query_id:([0-9a-f-]{36}), ?fragment_instance:([0-9a-f-]{36})(?:, plan_node_id:(-?\d+))?`)},
	// StarRocks 3.1+ (common/logconfig.cpp dump_trace_info): after the
	// query_id line, the thread's custom coredump message, set around a
	// ChunkSource read (ScanOperator::_trigger_next_scan): the file a
	// connector data source was reading. HiveDataSource (external tables
	// of the Hive, Hudi, Iceberg… catalogs) prints
	// `Hive file path: P, partition id: N, length: N, offset: N`;
	// FileDataSource (the load scan: broker, stream and routine load, and
	// the FILES() table function) prints `Load file path: P`. The line is
	// the event srFileEvents names.
	{id: "F2.pre_file", kind: kSRFile, prefix: "Hive file path: ",
		re: mustCompile(`^Hive file path: (.*), partition id: (-?\d+), length: (-?\d+), offset: (-?\d+)\s*$`)},
	{id: "F2.pre_file", kind: kSRFile, prefix: "Load file path: ",
		re: mustCompile(`^Load file path: (\S.*)$`)},
	{id: "F2.pre_tracker", kind: kTracker, prefix: "tracker:",
		re: mustCompile(`^tracker:(\S+) consumption: (-?\d+)$`)},
	{id: "F2.je_mallctl", kind: kAfterDump, prefix: "[",
		re: mustCompile(`^\[\d+\.\d+\]\[thread: \d+\] je_mallctl execute `)},
	{id: "F2.watchdog", kind: kAfterDump, prefix: "[crash_watchdog] "},
	{id: "F2.minidump", kind: kMinidump, prefix: "Minidump created at: "},
	// P1 build line: `3.3.19 RELEASE (build 5e6f7a8 distro ubuntu arch x86_64)`,
	// `main DEBUG (build 2b3c4d5e6f)`. Weak alone: the assembler requires a
	// query, tracker or Aborted line to follow.
	{id: "F2.pre_version", kind: kVersion, contains: " (build ",
		re: mustCompile(`^(\S+) ([A-Z][A-Z_]*(?: with [A-Z]+)?) \(build ([^)]*)\)$`)},
}

// glogPCNext are the lines that may follow a glog dump's `PC:` line (F2,
// blank lines aside): its signal line, which has no reason text (formats
// spec §4 F2), or, when two threads crashed at once and their dumps are
// interleaved line by line (`Aborted at` twice, then `PC:` twice, corpus
// formats/damage-two-dumps-interleaved), the twin's `PC:` line. Any other
// line a rule recognizes, or a frame, means the text was cut after the
// `PC:` line (corpus starrocks/050, a 3.1.5 preamble cut there): the
// header is a dump of its own, cut, and that line is the next text's. An
// unrecognized line passes (a mangled signal line, corpus doris/056).
var glogPCNext = map[lineKind]func(in *incident, m []string) bool{
	kSignal: func(_ *incident, m []string) bool { return m[2] == "" },
	kPC:     func(in *incident, _ []string) bool { return in.twinAborted },
}

// glogHeaderCut reports whether line ln (of kind k, submatches m) cannot
// follow the `PC:` line before it (glogPCNext): the incident ends before
// it.
func (in *incident) glogHeaderCut(p *parser, ln lineInfo, k lineKind, m []string) bool {
	if in.lastLine != kPC || in.hasSig || k == kBlank || k == kOther && !startsIncident(k, ln.text, p) {
		return false
	}
	if f := glogPCNext[k]; f != nil && f(in, m) {
		return false
	}
	in.note("dump header cut after its PC: line (line %d): line %d is another text's", in.c.EndLine, ln.no)
	return true
}

// keepCauseStack settles between a check failure's own stack (F3, `***
// Check failure stack trace: ***` and its `@ 0x… fn` lines) and the
// signal dump of the abort that follows it (F1 or F2), which usually
// repeats the failing code's frames with more of the abort path and so is
// preferred. A dump that holds no frame of the failing code — only the
// handler, libc's abort path and glog's machinery, because the text is
// cut there — tells less than the check failure's stack: that stack stays
// the crashing thread's (formats spec §4 F3).
func (in *incident) keepCauseStack(best *stack) *stack {
	causeStackName := map[string]string{"F3": "check failure's", "F4": "exception's"}
	if best == nil || best.origin != "F1" && best.origin != "F2" {
		return best
	}
	for i := range best.th.Frames {
		if comparableName(&best.th.Frames[i]) != "" {
			return best
		}
	}
	for _, s := range in.stacks {
		if s.origin != "F3" && s.origin != "F4" { // F4: a doris::Exception's own stack (format_terminate.go)
			continue
		}
		for i := range s.th.Frames {
			if comparableName(&s.th.Frames[i]) != "" {
				in.note("the %s dump holds no frame of the failing code (cut after the abort path): kept the %s stack", best.origin, causeStackName[s.origin])
				return s
			}
		}
	}
	return best
}

// glogContent reports whether the text before the dump header at k on a
// line is a glog FATAL line whose dump was collapsed onto the same line
// (`F0924 15:34:25.221317 1398… file.h:172] Check failed: … *** Aborted at
// … *** PC: @ … *** SIGABRT … @ 0x… f …`): content to split, not a paste
// prefix. A StarRocks ≥ 3.x check failure prints no `*** Check failure
// stack trace: ***` marker before its preamble, so nothing else before the
// header marks the line as collapsed; the dump after it must hold a second
// marker (a frame, the signal line), as splitCollapsed needs.
func glogContent(line string, k int) bool {
	if sev, _, _, ok := glogLine(trimBlanks(line[:k])); !ok || sev != 'F' {
		return false
	}
	return len(collapsedMarker.FindAllStringIndex(line[k:], 2)) >= 2
}

// glogRawCheck reports whether a FATAL message is glog's own RAW_CHECK
// failing in logging.cc (`F00000000 00:00:00.000000 … logging.cc:1962]
// RAW: Check data_->num_chars_to_log_ > 0 … failed:`), which happens when
// a second thread logs FATAL while one does: the same death. Inside a
// check failure or a dump, before its frames, it is an event of that
// incident (acceptLine); alone it opens one.
func glogRawCheck(msg string) bool { return strings.HasPrefix(msg, "RAW: ") }
