package scan

import "strings"

// StarRocks crash preamble context (formats spec §4 F2): the file line that
// dump_trace_info prints after `query_id:…, fragment_instance:…` when the
// crashing thread was reading a file through a connector data source (the
// rules are F2.pre_file in format_glog.go). The line becomes an Event of the
// crash, of the kind below, with the line as its text; the catalog takes it
// as path evidence (catalog/data/paths.yaml, file_line).

// maxTrackers bounds the memory-tracker lines kept per incident (a
// preamble lists a few dozen at most), maxEvents its context events.
const (
	maxTrackers = 64
	maxEvents   = 64
)

// Event kinds of the StarRocks preamble's file line.
const (
	// EventHiveFile is `Hive file path: …, partition id: …, length: …,
	// offset: …`: HiveDataSource, a scan of an external table.
	EventHiveFile = "hive-file"
	// EventLoadFile is `Load file path: …`: FileDataSource, the scan of a
	// load (broker, stream, routine load; also the FILES() table function).
	EventLoadFile = "load-file"
)

// srFile takes the file line of a StarRocks preamble. It belongs to the
// preamble only (after the query_id line, before the signal line); anywhere
// else it is an ordinary line of the text.
func (in *incident) srFile(p *parser, ln lineInfo, k lineKind) bool {
	c := in.c
	if in.hasSig || in.isThreadDump() || c.QueryID == "" && c.FragmentID == "" {
		return in.frameOrNoise(p, ln, k)
	}
	kind := EventLoadFile
	if strings.HasPrefix(trimBlanks(ln.text), "Hive") {
		kind = EventHiveFile
	}
	in.event(ln, kind, ln.text)
	in.sec = secHeader
	return true
}

// A StarRocks crash preamble without the dump after it (corpus
// starrocks/118, 119: a paste cut after the `query_id:…,
// fragment_instance:…` line, the file line and the memory trackers).
// dump_trace_info prints the preamble only when the process fails (from
// the failure signal handler, and from the failure function of a check
// failure, before the `*** Check failure stack trace: ***` frames:
// common/logconfig.cpp), so the preamble alone is a crash whose kind and
// stack were cut away. It is kept as an incident of unknown kind with an
// empty crashing thread, so that its ids, file line and trackers — the
// evidence the catalog reads for the path — are not lost.

// srPreambleOnly says whether the incident holds nothing but a StarRocks
// crash preamble: a query_id line or at least two tracker lines, and no
// signal, message, stack or format.
func (in *incident) srPreambleOnly() bool {
	c := in.c
	if len(in.stacks) > 0 || c.Kind != KindUnknown || in.hasSig || c.Message != "" || len(c.Formats) > 0 || in.pcFrame.Raw != "" {
		return false
	}
	return c.QueryID != "" || c.FragmentID != "" || len(c.Trackers) >= 2
}

// finishSRPreamble gives a preamble-only incident its empty crashing
// thread and says what is missing.
func (in *incident) finishSRPreamble() {
	in.c.Threads = []Thread{{Crashed: true, Truncated: true, Frames: []Frame{}}}
	in.corrupt("StarRocks crash preamble (query id, memory trackers) without the dump after it: the crash's kind and stack are not in the text")
}

// adoptPreamble gives an incident that starts right after a preamble-only
// incident (a gdb session or a sanitizer report pasted after the
// `query_id:…` line and the trackers) that preamble: its first line, ids,
// trackers and events. dump_trace_info prints the preamble just before the
// dump, so the two are one crash, not a cut preamble and a dump without
// context.
func (in *incident) adoptPreamble(pre *incident) {
	c, pc := in.c, pre.c
	c.StartLine = pc.StartLine
	c.Product = ProductStarRocks
	c.QueryID, c.FragmentID, c.PlanNodeID = pc.QueryID, pc.FragmentID, pc.PlanNodeID
	c.Trackers = prependBounded(pc.Trackers, c.Trackers, maxTrackers)
	c.Events = prependBounded(pc.Events, c.Events, maxEvents)
	if c.Version == "" {
		c.Version, c.BuildType, c.Build = pc.Version, pc.BuildType, pc.Build
	}
}

// prependBounded returns earlier followed by later, cut to at most n
// items: what an incident adopting an earlier one (a preamble, a shell's
// report) keeps of both. earlier is not written to.
func prependBounded[T any](earlier, later []T, n int) []T {
	out := append(earlier[:len(earlier):len(earlier)], later...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}
