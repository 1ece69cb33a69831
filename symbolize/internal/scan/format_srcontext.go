package scan

import "strings"

// StarRocks crash preamble context (formats spec §4 F2): the file line that
// dump_trace_info prints after `query_id:…, fragment_instance:…` when the
// crashing thread was reading a file through a connector data source (the
// rules are F2.pre_file in format_glog.go). The line becomes an Event of the
// crash, of the kind below, with the line as its text; the catalog takes it
// as path evidence (catalog/data/paths.yaml, file_line).

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
