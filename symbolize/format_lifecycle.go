package symbolize

import "strings"

// Lifecycle log lines (issue 14): glog messages a backend prints only while
// it starts or stops. Seen between incidents, such a line is context for the
// next incident of the same input (like a memory-limit line): an Event of
// kind EventLifecycleLog whose text is the whole line. The catalog decides
// what a line means for the crash's path (catalog/data/paths.yaml,
// `log_context:`); this table only says which lines to keep, from the
// sources:
//
//   - StarRocks start_be (be/src/service/service_be/starrocks_be.cpp):
//     `BE start step N: …` / `CN start step N: …`, `BE started successfully`,
//     then, once process_exit_in_progress(), `BE exit step N: …` and
//     `BE exited successfully`; sigterm_handler (be/src/common/daemon.cpp):
//     `got signal: Terminated from pid: N, is going to exit`.
//   - Doris main (be/src/service/doris_main.cpp): `Doris main exiting.` when
//     k_doris_exit is set, then `Doris main exited.` (quick exit) or the
//     servers' `… stopped` lines and `All service stopped, doris main exited.`
const EventLifecycleLog = "lifecycle-log"

// lifecycleMsgs are the glog messages kept, by the start of the message
// (prefix) and a part it must contain.
var lifecycleMsgs = []struct{ prefix, contains string }{
	{"BE ", " start step "}, {"CN ", " start step "},
	{"BE ", " exit step "}, {"CN ", " exit step "},
	{"BE started successfully", ""}, {"CN started successfully", ""},
	{"BE exited successfully", ""}, {"CN exited successfully", ""},
	{"got signal: ", "is going to exit"},
	{"Doris main exit", ""},
	{"All service stopped, doris main exited", ""},
}

// isLifecycleMsg reports whether a glog message is a lifecycle log line.
// The first byte is tested first: most glog lines start with none of them.
func isLifecycleMsg(msg string) bool {
	if msg == "" {
		return false
	}
	switch msg[0] {
	case 'B', 'C', 'g', 'D', 'A':
	default:
		return false
	}
	for _, m := range lifecycleMsgs {
		if strings.HasPrefix(msg, m.prefix) && (m.contains == "" || strings.Contains(msg, m.contains)) {
			return true
		}
	}
	return false
}
