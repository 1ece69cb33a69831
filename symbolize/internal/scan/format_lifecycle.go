package scan

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
//     servers' `… stopped` lines and `All service stopped, doris main exited.`;
//     at start, `Doris backend JNI is initialized.` (before the storage
//     engine and the services start, with enable_java_support).
//   - Workers that end their loop only when the process stops their
//     ExecEnv manager: both products' FragmentMgr::cancel_worker logs
//     `FragmentMgr cancel worker is going to exit.` once
//     _stop_background_threads_latch fires (be/src/runtime/fragment_mgr.cpp,
//     every stored version); StarRocks' RuntimeFilterWorker::execute and
//     ProfileReportWorker::execute log `RuntimeFilterWorker going to
//     exit.` / `ProfileReportWorker going to exit.` when their queue is
//     shut down or _stop is set by close() (runtime_filter_worker.cpp,
//     profile_report_worker.cpp).
//
// Restart markers are kept the same way (lifecycleRules): they say that a
// new process wrote what follows, so that an exit line of an earlier run
// is no longer the last lifecycle line before a crash of the next one
// (followed or concatenated be.INFO files). They are no evidence of a path:
// no rule of catalog/data/paths.yaml matches them. be.out's `start time:`
// (F0.start, kStart) resets all context events instead.
const EventLifecycleLog = "lifecycle-log"

// lifecycleRules are the lifecycle lines that are not glog messages. A
// restart marker: glog
// opens every log file it creates with a header whose first line is
// `Log file created at: yyyy/mm/dd hh:mm:ss` (glog logging.cc,
// LogFileObject::CreateLogfile; then `Running on machine: …` and `Log line
// format: …`). A new process always creates a new be.INFO file (named by
// time and pid); glog also creates one when the file reaches max_log_size,
// which then ends an exit context of the same run (a rotation during the
// seconds of a shutdown).
var lifecycleRules = []lineRule{
	{id: "F0.glog_file", kind: kLifecycleLog, prefix: "Log file created at: ",
		re: mustCompile(`^Log file created at: \d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}`)},
	// A unit-test binary (be/test, googletest) prints this when every
	// test has run and it tears the global environment down: what
	// crashes after it crashes in the binary's exit (googletest's
	// PrettyUnitTestResultPrinter::OnEnvironmentsTearDownStart).
	{id: "F0.gtest_teardown", kind: kLifecycleLog, prefix: "[----------] Global test environment tear-down",
		re: mustCompile(`^\[-{10}\] Global test environment tear-down$`)},
}

// lifecycleMsg is a glog message kept, by the start of the message
// (prefix, at least two bytes) and a part it must contain.
type lifecycleMsg struct{ prefix, contains string }

// lifecycleMsgs are the glog messages kept.
var lifecycleMsgs = []lifecycleMsg{
	{"BE ", " start step "}, {"CN ", " start step "},
	{"BE ", " exit step "}, {"CN ", " exit step "},
	{"BE started successfully", ""}, {"CN started successfully", ""},
	{"BE exited successfully", ""}, {"CN exited successfully", ""},
	{"got signal: ", "is going to exit"},
	{"Doris main exit", ""},
	{"Doris backend JNI is initialized", ""},
	{"All service stopped, doris main exited", ""},
	{"FragmentMgr cancel worker is going to exit", ""},
	{"RuntimeFilterWorker going to exit", ""},
	{"ProfileReportWorker going to exit", ""},
}

// lifecycleByFirst holds lifecycleMsgs by the first byte of their prefix,
// derived from the table so that a message added there is never skipped by
// the cheap first-byte test (every glog INFO line reaches isLifecycleMsg,
// and many start with a byte some prefix starts with: `Current memory
// usage…` and `CN `).
var lifecycleByFirst = func() (t [256][]lifecycleMsg) {
	for _, m := range lifecycleMsgs {
		t[m.prefix[0]] = append(t[m.prefix[0]], m)
	}
	return t
}()

// isLifecycleMsg reports whether a glog message is a lifecycle log line.
func isLifecycleMsg(msg string) bool {
	if msg == "" {
		return false
	}
	for _, m := range lifecycleByFirst[msg[0]] {
		// The second byte first: a call of HasPrefix per candidate costs
		// a third of the scan of plain glog INFO lines (issue 11).
		if len(msg) > 1 && msg[1] == m.prefix[1] && strings.HasPrefix(msg, m.prefix) && (m.contains == "" || strings.Contains(msg, m.contains)) {
			return true
		}
	}
	return false
}
