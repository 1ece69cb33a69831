package catalog

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProductTypes(t *testing.T) {
	cases := []struct {
		raw  string
		want []string
	}{
		{"std::_Hashtable<long, std::pair<long const, std::shared_ptr<doris::CloudBaseCompaction> >, std::allocator<std::pair<long const, std::shared_ptr<doris::CloudBaseCompaction> > > >::_M_find(long const&)", []string{"doris::CloudBaseCompaction"}},
		{"std::__detail::__variant::__gen_vtable_impl<true, std::__detail::__variant::_Multi_array<void (*)(doris::vectorized::AggregationNode::_emplace_into_hash_table(char**, std::vector<doris::vectorized::IColumn const*>&, unsigned long)::{lambda(auto:1&)#1}&&)>>::__visit_invoke", []string{"doris::vectorized::AggregationNode::_emplace_into_hash_table", "doris::vectorized::IColumn"}},
		{"_ZNSt8__detail9__variant17__gen_vtable_implINS0_12_Multi_arrayIPFNS0_21__deduce_visit_resultIvEEOZN5doris10vectorized12HashJoinNode4pullEPNS5_12RuntimeStateE", []string{"doris::vectorized::HashJoinNode::pull"}},
		{"std::_Function_handler<void (), starrocks::StorageEngine::start_bg_threads()::$_3>::_M_invoke", []string{"starrocks::StorageEngine::start_bg_threads"}},
		{"std::vector<int>::push_back(int const&)", nil},
		{"xdoris::Foo", nil},
		{"", nil},
	}
	st := defaultCatalog(t).stack
	for _, c := range cases {
		got := st.productTypes(nil, c.raw)
		assert.Equal(t, c.want, got, c.raw)
	}
	// bounded
	raw := strings.Repeat("doris::A<doris::B> ", 50)
	assert.LessOrEqual(t, len(st.productTypes(nil, raw)), maxTypes)
	// the namespaces come from the catalog: none known, no product types
	assert.Empty(t, newStackTable().productTypes(nil, cases[0].raw))
	assert.Equal(t, []string{"acme::Thing"}, newStackTable(StackKnowledge{ProductNamespaces: []string{"acme"}}).productTypes(nil, "std::vector<acme::Thing>::push_back"))
	assert.Equal(t, []string{"acme::Thing::run"}, newStackTable(StackKnowledge{ProductNamespaces: []string{"acme"}}).productTypes(nil, "_ZN4acme5Thing3runEv"))
}

func TestLambdaOwnerAndSourcePath(t *testing.T) {
	assert.Equal(t, "doris::DataDir::load", lambdaOwner("doris::DataDir::load::{lambda}"))
	assert.Equal(t, "a::b", lambdaOwner("a::b::{lambda}::{lambda}"))
	assert.Equal(t, "", lambdaOwner("a::b"))
	assert.Equal(t, "", lambdaOwner("{lambda}"))
	assert.Equal(t, "/x/be/src/olap/a.cpp", sourcePath(&symbolize.Frame{File: "/x/be/src/olap/a.cpp"}))
	assert.Equal(t, "", sourcePath(&symbolize.Frame{}))
}

func TestQueryIDState(t *testing.T) {
	for q, want := range map[string]string{"": QueryIDAbsent, "0-0": QueryIDZero, "00000000-0000-0000-0000-000000000000": QueryIDZero, "66dcfbe890a240d8-b45c17c9fa19c124": QueryIDPresent} {
		assert.Equal(t, want, queryIDState(&symbolize.Crash{QueryID: q}), q)
	}
	assert.Equal(t, QueryIDPresent, queryIDState(&symbolize.Crash{FragmentID: "1-2"}))
}

const evidenceCatalog = `schema: 1
revision: e1
stack:
  mechanism_marks: ["JVM_handle_linux_signal", "SignalHandler"]
  mechanism_names: ["abort", "raise"]
  product_namespaces: [doris, starrocks]
paths:
  - id: bg-compaction
    path: background
    area: compaction
    priority: 90
    frames: ["*Compaction*"]
    files: ["*src/olap/*compaction*"]
    why: compaction
  - id: lc-startup
    path: lifecycle
    area: startup
    priority: 100
    frames: ["*::DataDir::load"]
    why: startup
  - id: scan-seg
    path: scan
    area: segment-read
    priority: 50
    frames: ["*::SegmentIterator::*"]
    files: ["*src/olap/rowset/segment_v2/*reader*"]
    why: readers
  - id: scan-hdfs
    path: scan
    area: remote-io
    priority: 50
    modules: ["*libhdfs*"]
    why: hdfs
  - id: q-leaf
    path: query
    area: column
    priority: 10
    weight: 0.6
    frames: ["*::Column*"]
    no_query: {path: background, area: storage-read}
    why: leaf
  - id: lc-t0
    path: lifecycle
    area: main-thread
    priority: 100
    frames: ["*"]
    threads: ["T0"]
    why: main
  - id: thread-scan
    path: scan
    area: scanner
    priority: 5
    threads: ["*scan*"]
    query_id: [present, absent]
    why: name
  - id: id-present
    path: query
    area: task
    priority: 5
    query_id: [present]
    why: id
  - id: id-zero
    path: background
    area: no-task
    priority: 5
    query_id: [zero]
    why: id
defects:
  - id: SR-1-anchor
    product: starrocks
    title: anchor and context
    match:
      - anchor: "starrocks::Foo::crash"
        near: ["starrocks::Foo::caller"]
        within: 2
        any_thread: ["starrocks::Other::work"]
    links: ["https://example.com/1"]
    tests: ["testdata/x.txt"]
  - id: SR-2-check
    product: starrocks
    title: check and exception
    match:
      - check: "^num_rows\\(\\) == "
      - exception: "bad_alloc"
    links: ["https://example.com/2"]
    tests: ["testdata/x.txt"]
`

func evidenceCat(t testing.TB) *Catalog {
	t.Helper()
	f, err := Parse("e.yaml", []byte(evidenceCatalog))
	require.NoError(t, err)
	c, err := New(f)
	require.NoError(t, err)
	return c
}

func frameCrash(query, thread string, frames ...symbolize.Frame) *symbolize.Crash {
	return &symbolize.Crash{QueryID: query, Threads: []symbolize.Thread{{Crashed: true, Name: thread, Frames: frames}}}
}

func TestPathEvidenceKinds(t *testing.T) {
	c := evidenceCat(t)
	classify := func(cr *symbolize.Crash) Verdict { return c.Classify(cr, signature.Signature{}) }

	// A template type of a library frame names the compaction.
	v := classify(frameCrash("", "", symbolize.Frame{Function: "std::_Hashtable<long, std::pair<long const, std::shared_ptr<doris::CloudBaseCompaction> > >::_M_find(long const&)"}))
	assert.Equal(t, PathBackground, v.Path)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "template type doris::CloudBaseCompaction")

	// A lambda's owner is the work: DataDir::load at startup.
	v = classify(frameCrash("", "", symbolize.Frame{Function: "doris::TabletManager::load_tablet_from_meta()"}, symbolize.Frame{Function: "doris::DataDir::load()::{lambda(long, int, std::string const&)#1}::operator()(long, int, std::string const&) const"}))
	assert.Equal(t, PathLifecycle, v.Path)
	assert.Equal(t, ConfidenceHigh, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "lambda owner doris::DataDir::load")

	// A source path alone (unresolved name) places the frame.
	v = classify(frameCrash("", "", symbolize.Frame{Function: "??", File: "/root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp", Line: 83}))
	assert.Equal(t, PathScan, v.Path)
	assert.Equal(t, ConfidenceMedium, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "source path /root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp")

	// A module, but not in the signal handler chain above the crash.
	v = classify(frameCrash("", "", symbolize.Frame{Function: "foo", Module: "/opt/hadoop/lib/native/libhdfs.so"}))
	assert.Equal(t, PathScan, v.Path)
	assert.Equal(t, "remote-io", v.Area)
	v = classify(frameCrash("", "", symbolize.Frame{Function: "JVM_handle_linux_signal", Module: "libhdfs.so"}, symbolize.Frame{Function: "bar"}))
	assert.Equal(t, PathUnknown, v.Path)

	// Precedence: a background root beats the scan frame above it.
	v = classify(frameCrash("1-2", "", symbolize.Frame{Function: "doris::segment_v2::SegmentIterator::next_batch"}, symbolize.Frame{Function: "doris::Merger::vmerge"}, symbolize.Frame{Function: "doris::CumulativeCompaction::execute"}))
	assert.Equal(t, PathBackground, v.Path)
	assert.Contains(t, strings.Join(v.Evidence, "\n"), "other path rules matched")

	// no_query moves a weak leaf; confidence drops.
	v = classify(frameCrash("0-0", "", symbolize.Frame{Function: "doris::vectorized::ColumnString::insert_from"}))
	assert.Equal(t, PathBackground, v.Path)
	assert.NotEqual(t, ConfidenceHigh, v.PathConfidence)

	// T0 (the sanitizers' main thread) is a condition of a frame rule.
	v = classify(frameCrash("", "T0", symbolize.Frame{Function: "doris::segment_v2::Segment::~Segment"}))
	assert.Equal(t, PathLifecycle, v.Path)

	// Weak evidence: thread name (not with a zero id), then the query id.
	v = classify(frameCrash("", "pip_scan_0", symbolize.Frame{Function: "memcpy"}))
	assert.Equal(t, PathScan, v.Path)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	v = classify(frameCrash("0-0", "pip_scan_0", symbolize.Frame{Function: "memcpy"}))
	assert.Equal(t, PathBackground, v.Path)
	assert.Equal(t, "no-task", v.Area)
	v = classify(frameCrash("1-2", "", symbolize.Frame{Function: "memcpy"}))
	assert.Equal(t, PathQuery, v.Path)
	assert.Contains(t, v.Evidence[0], "by id rule id-present")

	// Nothing at all: unknown, and the reason names what is missing.
	v = classify(frameCrash("", "", symbolize.Frame{Function: "memcpy"}))
	assert.Equal(t, PathUnknown, v.Path)
	assert.Equal(t, ConfidenceLow, v.PathConfidence)
	assert.Contains(t, v.Evidence[0], "no query id printed")
	assert.Contains(t, v.Evidence[0], "no thread name")
}

func TestDefectContext(t *testing.T) {
	c := evidenceCat(t)
	mk := func(names ...string) *symbolize.Crash {
		cr := crashOf(symbolize.ProductStarRocks, "", "", names...)
		cr.Threads = append(cr.Threads, symbolize.Thread{Name: "other", Frames: []symbolize.Frame{{Function: "starrocks::Other::work()"}}})
		return cr
	}
	sig := signature.Signature{Kind: "SIGSEGV"}
	v := c.Classify(mk("starrocks::Foo::crash()", "x", "starrocks::Foo::caller()"), sig)
	require.NotNil(t, v.Defect)
	assert.Equal(t, "SR-1-anchor", v.Defect.ID)
	ev := strings.Join(v.Evidence, "\n")
	assert.Contains(t, ev, "anchor #0")
	assert.Contains(t, ev, "near #2")
	assert.Contains(t, ev, `thread 1 ("other")`)
	// near is out of reach (within 2): no match, but a near miss through the anchor
	v = c.Classify(mk("starrocks::Foo::crash()", "x", "y", "starrocks::Foo::caller()"), sig)
	assert.Nil(t, v.Defect)
	require.NotEmpty(t, v.Similar)
	assert.Equal(t, "SR-1-anchor", v.Similar[0].ID)
	// no other thread doing the work
	cr := crashOf(symbolize.ProductStarRocks, "", "", "starrocks::Foo::crash()", "starrocks::Foo::caller()")
	assert.Nil(t, c.Classify(cr, sig).Defect)

	chk := crashOf(symbolize.ProductStarRocks, "", "", "a")
	chk.CheckExpr = "num_rows() == other.num_rows()"
	v = c.Classify(chk, sig)
	require.NotNil(t, v.Defect)
	assert.Equal(t, "SR-2-check", v.Defect.ID)
	chk.CheckExpr, chk.Message = "", "num_rows() == 3"
	assert.Nil(t, c.Classify(chk, sig).Defect, "check looks at the check expression only")
	chk.ExceptionType = "std::bad_alloc"
	v = c.Classify(chk, sig)
	require.NotNil(t, v.Defect)
	assert.Equal(t, 1, v.Defect.Match)
}

func TestDefectContextDecodeErrors(t *testing.T) {
	bad := map[string]string{
		"near without anchor":  `near: ["a"]`,
		"within without near":  "anchor: \"a\"\n        within: 3",
		"any_thread alone":     `any_thread: ["a"]`,
		"bad check expression": `check: "("`,
		"within out of range":  "anchor: \"a\"\n        near: [\"b\"]\n        within: 0",
	}
	for name, m := range bad {
		y := "schema: 1\nrevision: r\ndefects:\n  - id: SR-1-x\n    product: starrocks\n    title: t\n    match:\n      - " + m + "\n    links: [\"https://e.com/1\"]\n    tests: [\"t.txt\"]\n"
		_, err := Parse("bad.yaml", []byte(y))
		assert.Error(t, err, name)
	}
	for name, r := range map[string]string{
		"bad query_id": "query_id: [sometimes]",
		"bad weight":   "frames: [\"a\"]\n    weight: 2",
		"no evidence":  "callers: [\"a\"]",
	} {
		y := "schema: 1\nrevision: r\npaths:\n  - id: r1\n    path: scan\n    area: a\n    priority: 1\n    why: w\n    " + r + "\n"
		_, err := Parse("bad.yaml", []byte(y))
		assert.Error(t, err, name)
	}
}

func TestLintTaughtBy(t *testing.T) {
	y := `schema: 1
revision: r
paths:
  - id: one-crash
    path: query
    area: x
    priority: 40
    frames: ["doris::SystemMetrics::get_disks_io_time"]
    taught_by: ["testdata/corpus/doris/006-system-metrics-get-disks-io-time.txt"]
    why: "written from one log"
  - id: subsystem
    path: query
    area: y
    priority: 40
    frames: ["*::pipeline::*"]
    taught_by: ["testdata/corpus/doris/006-system-metrics-get-disks-io-time.txt"]
    why: "a subsystem"
  - id: from-validation
    path: query
    area: z
    priority: 40
    frames: ["*::Foo::*"]
    taught_by: ["testdata/validation/doris/001-x.txt"]
    why: "must not"
`
	f, err := Parse("t.yaml", []byte(y))
	require.NoError(t, err)
	errs := Lint(context.Background(), []*File{f}, LintOptions{})
	require.Len(t, errs, 1)
	assert.True(t, errors.Is(errs[0], ErrTaughtByValidation))
	assert.Equal(t, "paths[2].taught_by[0]", errs[0].Field)

	assert.Nil(t, LintWarnings(context.Background(), []*File{f}, LintOptions{}), "no root, no warnings")
	if testing.Short() {
		t.Skip("classifies every training log")
	}
	// A small tree: the log the rules were taught by and another pipeline crash.
	root := fstest.MapFS{}
	for _, rel := range []string{"testdata/corpus/doris/006-system-metrics-get-disks-io-time.txt", "testdata/corpus/starrocks/001-pipeline-mark-operator-finishing.txt"} {
		b, err := os.ReadFile(repoRoot + "/" + rel)
		require.NoError(t, err)
		root[rel] = &fstest.MapFile{Data: b}
	}
	root["testdata/corpus/doris/007-copy.txt"] = root["testdata/corpus/starrocks/001-pipeline-mark-operator-finishing.txt"]
	// a variant of the taught log is derived from it: no second witness
	root["testdata/defects/doris/variants/006-system-metrics-get-disks-io-time.variant.txt"] = root["testdata/corpus/doris/006-system-metrics-get-disks-io-time.txt"]
	ws := LintWarnings(context.Background(), []*File{f}, LintOptions{Root: root})
	require.Len(t, ws, 2, "%v", ws)
	assert.True(t, errors.Is(ws[0], ErrOverfit))
	assert.Contains(t, ws[0].Msg, "one-crash matches 1 log")
	assert.Contains(t, ws[0].Msg, "variants not counted")
	assert.Contains(t, ws[1].Msg, "from-validation matches 0 log")

	// The default catalog's taught path rules name subsystems, except the
	// known ones. Defects may warn: many are established by one report, and
	// their variants do not count as a second.
	files, err := DefaultFiles()
	require.NoError(t, err)
	for _, w := range LintWarnings(context.Background(), files, LintOptions{Root: os.DirFS(repoRoot)}) {
		if strings.HasPrefix(w.Field, "defects[") {
			assert.Contains(t, w.Msg, "defect ")
			continue
		}
		known := false
		for id := range knownOverfit {
			known = known || strings.Contains(w.Msg, " "+id+" ")
		}
		assert.True(t, known, "new overfit warning: %v", w)
	}
}

// knownOverfit are default rules that only the log they were taught by
// matches, with the reason they stay.
var knownOverfit = map[string]string{
	"background-queue-gauges":         "rests on one source fact (only GlobalDriverExecutor's metric gauges call the queues' size()); the corpus has one such crash",
	"lifecycle-http-worker-setup":     "the HTTP worker lambda with nothing placeable above it; its only other match was the generated variant of its log, which does not count",
	"lifecycle-daemon-use-after-free": "rests on one source fact (StorageEngine::wait_for_report_notify touches only the engine, a process singleton deleted at shutdown); the daemon loops it covered before are runtime races too (apache/doris#27434, #28092); the corpus has one such report",
	"lifecycle-staros-worker-gone":    "rests on source facts (StarRocks code reaches the StarOSWorker only through g_worker, which shutdown_staros_worker sets to nullptr, and its shard methods start by locking the worker's own shared_mutex); the corpus has one shared-data shutdown crash, and StarRocks PR #79058 (Fixes #78883) names the same race as the defect it fixes",
	"load-external-table-write":       "rests on one source fact (TableConnector's append, convert_column_data, exec_write_sql and transaction calls are its write half, used only by the JDBC/ODBC/MySQL table sinks: be/src/exec/table_connector.h); the corpus has one INSERT into an external table",
	"background-main-loop":            "rests on one source fact (Doris 1.x-2.0's main runs the process's memory bookkeeping in its `while (!k_doris_exit)` loop after start-up: be/src/service/doris_main.cpp); the corpus has one crash in that loop",
	"load-task-label":                 "rests on one source fact (QueryContext names a TQueryType::LOAD task's tracker `Load#Id=<id>`, and the orphan-tracker and allocator checks print the thread's tracker label: query_context.cpp, thread_context.h, allocator.cpp); the public trackers hold few such FATAL messages and the corpus has one",
	"query-task-label":                "the SELECT half of load-task-label (`Query#Id=<id>`, the same source fact); the corpus's one such message (doris/081) is decided by its fragment frames, which is why the rule is a fallback at weight 0.6",
	"background-manager-sweeper":      "rests on source facts (FragmentMgr's constructor starts cancel_worker on its own thread, cancel_timeout_plan_fragment, which sweeps timed-out fragments and probes brpc stubs; ResultBufferMgr and ExternalScanContextMgr sweep the same way: be/src/runtime/fragment_mgr.cpp, result_buffer_mgr.cpp, external_scan_context_mgr.cpp); the corpus has one crash in such a sweep (doris/186)",
	"lifecycle-log-exit":              "rests on source facts (each line it reads is logged only while the process stops: start_be's exit steps, Doris main's exit lines, FragmentMgr's cancel worker at its stop latch, StarRocks' RuntimeFilterWorker and ProfileReportWorker at close(), googletest's tear-down); the corpus has one crash after such a line (starrocks/148)",
	"background-starlet-worker":       "rests on source facts (the StarOSWorker methods are starlet's worker interface, called by starlet's heartbeat and StarMgr's shard RPCs, and by StarRocks code only through g_worker with a StarRocks caller below); the corpus has one starlet heartbeat crash",
}

func TestMechanismEndWholeNames(t *testing.T) {
	frames := []string{"google::LogMessage::Fail", "__GI_abort", "starrocks::TxnManager::abort_txn", "starrocks::lake::abort_compaction", "starrocks::Daemon::run"}
	st := defaultCatalog(t).stack
	assert.Equal(t, 2, st.mechanismEnd(frames, signature.Signature{}), "product functions named abort_* are work, not the crash mechanism")
	assert.True(t, st.isMechanism("raise"))
	assert.False(t, st.isMechanism("doris::raise_error"))
	assert.True(t, st.isMechanism("os::Linux::chained_handler"))
	// the knowledge is the catalog's: a catalog without a stack section knows no mechanism
	assert.Equal(t, 0, newStackTable().mechanismEnd(frames, signature.Signature{}))
}

// TestStackKnowledge: the `stack:` section decodes strictly, catalogs take
// the union of their files' sections (Merge too), and Stack returns a copy.
func TestStackKnowledge(t *testing.T) {
	def := defaultCatalog(t)
	k := def.Stack()
	assert.Equal(t, []string{"doris", "starrocks"}, k.ProductNamespaces)
	assert.Contains(t, k.MechanismNames, "abort")
	assert.Contains(t, k.MechanismMarks, "JVM_handle_linux_signal")
	assert.True(t, def.stack.toolchainPath("/usr/include/c++/11/bits/std_function.h"))
	assert.True(t, def.stack.toolchainPath("./nptl/pthread_mutex_lock.c"))
	assert.False(t, def.stack.toolchainPath("/root/doris/be/src/olap/tablet.cpp"))
	assert.False(t, newStackTable().toolchainPath("/usr/include/c++/11/bits/std_function.h"))
	k.ProductNamespaces[0] = "x"
	assert.Equal(t, "doris", def.Stack().ProductNamespaces[0], "Stack returns a copy")

	user, err := Parse("u.yaml", []byte("schema: 1\nrevision: u1\nstack:\n  product_namespaces: [acme, doris]\n  mechanism_names: [my_abort]\n"))
	require.NoError(t, err)
	m, err := Merge(def, user)
	require.NoError(t, err)
	assert.Equal(t, []string{"doris", "starrocks", "acme"}, m.Stack().ProductNamespaces)
	assert.True(t, m.stack.isMechanism("my_abort"))
	assert.True(t, m.stack.isProductName("acme::Widget::run"))
	assert.False(t, def.stack.isProductName("acme::Widget::run"))

	for _, bad := range []struct{ yaml, field string }{
		{"stack:\n  product_namespaces: [\"doris::\"]\n", "stack.product_namespaces[0]"},
		{"stack:\n  mechanism_marks: [\"\"]\n", "stack.mechanism_marks[0]"},
		{"stack:\n  mechanism: [abort]\n", "stack.mechanism"},
		{"stack: [abort]\n", "stack"},
	} {
		_, err := Parse("b.yaml", []byte("schema: 1\nrevision: b1\n"+bad.yaml))
		require.Error(t, err, bad.yaml)
		var e *Error
		require.True(t, errors.As(err, &e), bad.yaml)
		assert.Equal(t, bad.field, e.Field, bad.yaml)
	}
}
