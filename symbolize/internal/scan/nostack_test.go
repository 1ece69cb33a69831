package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noStackCase is what the scanner must make of one constructed text of
// testdata/paste (README there): the classes of issue 14, texts that gave
// the classifier no frame before.
type noStackCase struct {
	file      string
	incidents int
	kind      Kind
	signal    string
	frames    int    // frames of the crashing thread; -1: no crashing thread
	frame     string // a function of the crashing thread (substring), "" for none
	threads   int
	corrupted string // substring of the corruption reason; "" for a sound incident
	note      string // substring of a note, "" for any
}

var noStackCases = []noStackCase{
	// F3 + F7.2: the FATAL line and glog's header from be.out, the stack
	// from gdb on the core.
	{file: "check-then-gdb-bt.txt", incidents: 1, kind: KindCheck, frames: 12, frame: "doris::RowDescriptor::RowDescriptor", threads: 1},
	{file: "check-then-gdb-thread-apply-all.txt", incidents: 1, kind: KindCheck, frames: 12, frame: "doris::vectorized::HashJoinNode::HashJoinNode", threads: 2},
	// F4 + F7.2.
	{file: "terminate-then-gdb-bt.txt", incidents: 1, kind: KindTerminate, frames: 12, frame: "doris::PlanFragmentExecutor::prepare", threads: 1},
	// F4 with a doris::Exception's stack (F7.6 c) and the F1 abort dump
	// cut after the terminate handler: one incident, the exception's stack.
	{file: "terminate-exception-stack-then-f1.txt", incidents: 1, kind: KindTerminate, signal: "SIGABRT", frames: 8, frame: "doris::segment_v2::BinaryDictPageDecoder::read_by_rowids", threads: 1, note: "kept the exception's stack"},
	// The same with the older trace shapes of F7.6 (a) (Doris 2.0, an
	// unsymbolized `? @ 0x…` frame) and (b) (2023, tab, file:line, object).
	{file: "terminate-exception-stack-2.0-shape.txt", incidents: 1, kind: KindTerminate, signal: "SIGABRT", frames: 8, frame: "doris::segment_v2::SegmentIterator::_convert_dict_code_for_predicate_if_necessary_impl", threads: 1, note: "kept the exception's stack"},
	{file: "terminate-exception-stack-2023-shape.txt", incidents: 1, kind: KindTerminate, signal: "SIGABRT", frames: 5, frame: "doris::segment_v2::BinaryDictPageDecoder::read_by_rowids", threads: 1, note: "kept the exception's stack"},
	// StarRocks check failure whose failure function purges jemalloc
	// before abort(), no `*** Check failure stack trace: ***` line.
	{file: "sr-check-jemalloc-purge-then-f2.txt", incidents: 1, kind: KindCheck, signal: "SIGABRT", frames: 16, frame: "starrocks::ColumnHelper::create_column", threads: 1},
	// The same collapsed onto one line: the FATAL text before `*** Aborted
	// at` is content, not a paste prefix (format_glog.go glogContent).
	{file: "sr-check-one-line-no-marker.txt", incidents: 1, kind: KindCheck, signal: "SIGABRT", frames: 16, frame: "starrocks::ColumnHelper::create_column", threads: 1, note: "collapsed dump lines"},
	// Paste damage.
	{file: "line-numbered-glog-dump.txt", incidents: 1, kind: KindSignal, signal: "SIGSEGV", frames: 11, frame: "doris::OlapScanner::prepare", threads: 1, note: "removed paste prefixes"},
	{file: "markdown-link-prefix-boost.txt", incidents: 1, kind: KindSignal, signal: "SIGSEGV", frames: 10, frame: "doris::vectorized::NewOlapScanner::prepare", threads: 1, note: "removed paste prefixes"},
	{file: "boost-wrapped-template.txt", incidents: 1, kind: KindSignal, signal: "SIGSEGV", frames: 7, frame: "bvar::Reducer<long, bvar::detail::AddTo<long>, bvar::detail::MinusFrom<long>>::SeriesSampler::take_sample", threads: 1, note: "F1.wrap_template"},
	// gdb and pstack shapes (F7.2).
	{file: "gdb-bt-from-frame-3.txt", incidents: 1, kind: KindUnknown, frames: 6, frame: "doris::segment_v2::ColumnReader::read_page", threads: 1, corrupted: "starts at frame #3"},
	{file: "gdb-thread-lwp-only.txt", incidents: 1, kind: KindThreadDump, frames: -1, threads: 1},
	{file: "gdb-unknown-frames.txt", incidents: 1, kind: KindSignal, frames: 6, frame: "doris::segment_v2::FileColumnIterator::_read_data_page", threads: 1},
	{file: "pstack.txt", incidents: 1, kind: KindThreadDump, frames: -1, threads: 3},
	// F9: the shell's report alone is a crash with no stack.
	{file: "shell-start-be-segfault.txt", incidents: 1, kind: KindSignal, signal: "SIGSEGV", frames: -1, corrupted: "only the shell's report of the crash (Segmentation fault)"},
	{file: "shell-start-be-aborted.txt", incidents: 1, kind: KindSignal, signal: "SIGABRT", frames: -1, corrupted: "only the shell's report of the crash (Aborted)"},
	{file: "shell-core-dumped-alone.txt", incidents: 1, kind: KindSignal, signal: "SIGSEGV", frames: -1, corrupted: "no stack was printed"},
	// After a dump, the shell's line is that dump's context, not a second crash.
	{file: "shell-after-dump.txt", incidents: 1, kind: KindSignal, signal: "SIGSEGV", frames: 10, frame: "doris::vectorized::NewOlapScanner::prepare", threads: 1},
}

// TestExceptionTraceOffsets: the F7.6 (a)/(b) address is the frame's
// object-relative offset, not a PC.
func TestExceptionTraceOffsets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "paste", "terminate-exception-stack-2.0-shape.txt"))
	require.NoError(t, err)
	cs, err := ParseAll(context.Background(), strings.NewReader(string(b)), ScanOptions{})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.NotEmpty(t, cs[0].Threads)
	fr := cs[0].Threads[0].Frames
	require.Len(t, fr, 8)
	assert.Equal(t, Addr(0xc6f7081), fr[4].Offset)
	assert.True(t, fr[4].HasOffset)
	assert.Zero(t, fr[4].PC)
	assert.Empty(t, fr[4].Function, "`?` is no name")
	assert.Equal(t, "/opt/doris/be/lib/doris_be", fr[4].Module)
	assert.Equal(t, 1765, fr[3].Line)
}

func TestNoStackClasses(t *testing.T) {
	for _, tc := range noStackCases {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "paste", tc.file))
			require.NoError(t, err)
			cs, err := ParseAll(context.Background(), strings.NewReader(string(b)), ScanOptions{Source: tc.file})
			require.NoError(t, err)
			require.Len(t, cs, tc.incidents)
			c := cs[0]
			assert.Equal(t, tc.kind, c.Kind)
			assert.Equal(t, tc.signal, c.Signal)
			require.Len(t, c.Threads, tc.threads)
			if tc.corrupted == "" {
				assert.False(t, c.Corrupted, c.CorruptedReason)
			} else {
				assert.True(t, c.Corrupted)
				assert.Contains(t, c.CorruptedReason, tc.corrupted)
			}
			if tc.frames < 0 {
				for _, th := range c.Threads {
					assert.False(t, th.Crashed, "no thread is the crashing one")
				}
			} else {
				require.NotEmpty(t, c.Threads)
				th := c.Threads[0]
				assert.True(t, th.Crashed)
				assert.Len(t, th.Frames, tc.frames)
				if tc.frame != "" {
					var names []string
					for _, f := range th.Frames {
						names = append(names, f.Function)
					}
					assert.Contains(t, strings.Join(names, "\n"), tc.frame)
				}
			}
			if tc.note != "" {
				assert.Contains(t, strings.Join(c.Notes, "\n"), tc.note)
			}
		})
	}
}

// TestShellCrashLine: which shell lines are a crash report of their own.
func TestShellCrashLine(t *testing.T) {
	for line, want := range map[string]string{
		"/opt/starrocks/be/bin/start_be.sh: line 234: 12345 Segmentation fault      (core dumped) ${START_BE_CMD}": "Segmentation fault",
		"./bin/start_be.sh: line 210:  4567 Aborted                 (core dumped) nohup $LIMIT":                    "Aborted",
		"Segmentation fault (core dumped)":              "Segmentation fault",
		"Segmentation fault":                            "",
		"段错误 (核心已转储)":                                   "段错误",
		"Aborted":                                       "",
		"Aborted by the user":                           "",
		"the query hit a Segmentation fault in the UDF": "",
		"W20240308 10:15:09.145 196 x.cpp:1] Segmentation fault (core dumped)": "",
		// the other fatal signals in glibc's strsignal words, English and zh_CN
		// (real lines: StarRocks operator#92, apache/doris#6251 and #7266)
		"/opt/starrocks/be/bin/start_backend.sh: line 185:   807 Illegal instruction     (core dumped) ${START_BE_CMD} \"$@\" >> ${LOG_FILE} 2>&1 < /dev/null": "Illegal instruction",
		"./start_be.sh: line 119: 27813 Illegal instruction     $LIMIT ${DORIS_HOME}/lib/palo_be \"$@\"":                                                       "Illegal instruction",
		"start_be.sh: 行 102: 23022 非法指令            (吐核)$LIMIT ${DORIS_HOME}/lib/palo_be":                                                                       "非法指令",
		"Bus error (core dumped)":                "Bus error",
		"Floating point exception (core dumped)": "Floating point exception",
		"Illegal instruction":                    "",
		"an Illegal instruction in the JIT":      "",
		// supervisord (StarRocks' allin1 images): the backend's programs only
		"2024-10-23 16:28:26,887 INFO exited: beservice (terminated by SIGILL (core dumped); not expected)": "SIGILL",
		"2025-07-03 10:08:28,756 INFO exited: beservice (terminated by SIGILL; not expected)":               "SIGILL",
		"2025-07-03 10:08:28,756 INFO exited: feservice (terminated by SIGKILL; not expected)":              "",
		"2025-07-03 10:08:28,756 INFO exited: beservice (exit status 1; not expected)":                      "",
	} {
		m := shellCrash(line)
		if want == "" {
			assert.Nil(t, m, line)
			continue
		}
		require.NotNil(t, m, line)
		assert.Equal(t, want, m[2], line)
	}
}

// TestShellDeathIncident: a shell's or supervisord's report of the
// backend's death is an incident of its own, with the signal it names and
// the product its words name (start script variables, binaries, program).
func TestShellDeathIncident(t *testing.T) {
	for _, tc := range []struct {
		text, signal string
		product      Product
	}{
		{"[Mon Apr 17 08:00:50 UTC 2023] run start_be.sh\n/opt/starrocks/be/bin/start_backend.sh: line 185:   807 Illegal instruction     (core dumped) ${START_BE_CMD} \"$@\" >> ${LOG_FILE} 2>&1 < /dev/null\n", "SIGILL", ProductStarRocks},
		{"./start_be.sh: line 119: 27813 Illegal instruction     $LIMIT ${DORIS_HOME}/lib/palo_be \"$@\" >> $LOG_DIR/be.out 2>&1 < /dev/null\n", "SIGILL", ProductDoris},
		{"start_be.sh: 行 102: 23022 非法指令            (吐核)$LIMIT ${DORIS_HOME}/lib/palo_be\n", "SIGILL", ProductDoris},
		{"2024-10-23 16:28:26,887 INFO exited: beservice (terminated by SIGILL (core dumped); not expected)\n", "SIGILL", ProductStarRocks},
		// Markdown inline code around the whole line (a one-line paste)
		{"`platform@dc:/opt/starrocks-3.3.3$ ./be/bin/start_cn.sh`\n`Illegal instruction (core dumped)`\n", "SIGILL", ProductUnknown},
		{"`Bus error (core dumped)`\n", "SIGBUS", ProductUnknown},
	} {
		cs, err := ParseAll(context.Background(), strings.NewReader(tc.text), ScanOptions{})
		require.NoError(t, err, tc.text)
		require.Len(t, cs, 1, tc.text)
		c := cs[0]
		assert.Equal(t, tc.signal, c.Signal, tc.text)
		assert.Equal(t, KindSignal, c.Kind, tc.text)
		assert.Equal(t, tc.product, c.Product, tc.text)
		assert.True(t, c.Corrupted, tc.text)
		assert.Contains(t, c.CorruptedReason, "no stack was printed", tc.text)
	}
}

// TestPastePrefix: the prefix shapes learned from two consecutive lines.
func TestPastePrefix(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"105 Minidump created at: /x", "106 *** Aborted at 1647611812", 4},
		{"109     @     0x7f398a558672 f()", "110     @     0x7f3986224270 (unknown)", 8},
		{"9 foo", "10 bar", 3},
		{"105 Minidump", "107 Aborted", 0},    // not consecutive: two lines that start with numbers
		{"3 tids: 1,2,3", "3 tids: 4,5,6", 0}, // equal numbers
		{"105", "106", 0},                     // nothing after the number
		// A known family, removed by normalizeLine, not learned.
		{"[16:54:50 ](http://h/x?focusLine=48797)   0# f", "[16:54:50 ](http://h/x?focusLine=48798)   1# g", 0},
	} {
		assert.Equal(t, tc.want, pastePrefix([]byte(tc.a), []byte(tc.b)), "%q / %q", tc.a, tc.b)
	}
	for pre, want := range map[string]bool{"106 ": true, "7\t": true, "12345678 ": false, "10a ": false, " ": false, "106": false} {
		assert.Equal(t, want, lineNumberAnchor(pre), "%q", pre)
	}
}

// TestMarkdownLink: the CI console link prefix normalizeLine removes.
func TestMarkdownLink(t *testing.T) {
	const link = "[16:54:50 ](http://ci.example.org/viewLog.html?buildId=1&focusLine=48797)   "
	for line, want := range map[string]int{
		link + " 0# doris::signal::FailureSignalHandler": len(link) + 1,
		link:                               0, // nothing after it
		"[E-3113](string column) length":   0, // no URL
		"[link](http://x/y)no blank":       0,
		"[16:54:50 ](http://a/b c)   0# f": 0, // a blank inside the URL
		"> " + link + "0# f":               0, // normalizeLine removes the quote first
	} {
		assert.Equal(t, want, markdownLink([]byte(line)), "%q", line)
	}
	got, _, prefixed := normalizeLine([]byte("> " + link + "1# f"))
	assert.Equal(t, "1# f", string(got))
	assert.True(t, prefixed)
}

// TestShellThenCoreBacktrace: a ticket shows the death as the shell saw it
// and then gdb's backtrace of the core it dumped. When gdb names the
// shell's signal (or none) the two are one crash, spanning both; a core of
// another signal is another crash.
func TestShellThenCoreBacktrace(t *testing.T) {
	gdb := "$ gdb lib/doris_be core.27813\n" +
		"GNU gdb (GDB) Red Hat Enterprise Linux 8.2-19.el8\n" +
		"Reading symbols from lib/doris_be...done.\n" +
		"[New LWP 27813]\n" +
		"Core was generated by `/opt/doris/be/lib/doris_be'.\n" +
		"%s" +
		"#0  0x000055d1c0a1b2c3 in doris::segment_v2::ColumnReader::read_page (this=0x0) at /root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp:83\n" +
		"#1  0x000055d1c0a1b3d4 in doris::segment_v2::FileColumnIterator::_read_data_page (this=0x7f) at /root/doris/be/src/olap/rowset/segment_v2/column_reader.cpp:412\n"
	shell := "./start_be.sh: line 119: 27813 %s     (core dumped) $LIMIT ${DORIS_HOME}/lib/doris_be \"$@\" >> $LOG_DIR/be.out 2>&1 < /dev/null\n"
	for _, tc := range []struct {
		name, shellSignal, gdbSignal string
		want                         []string // signals of the incidents
	}{
		{"same signal", "Segmentation fault", "Program terminated with signal SIGSEGV, Segmentation fault.\n", []string{"SIGSEGV"}},
		{"gdb names none", "Segmentation fault", "", []string{"SIGSEGV"}},
		{"another signal", "Illegal instruction", "Program terminated with signal SIGSEGV, Segmentation fault.\n", []string{"SIGILL", "SIGSEGV"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := fmt.Sprintf(shell, tc.shellSignal) + fmt.Sprintf(gdb, tc.gdbSignal)
			cs, err := ParseAll(context.Background(), strings.NewReader(text), ScanOptions{})
			require.NoError(t, err)
			require.Len(t, cs, len(tc.want))
			for i, s := range tc.want {
				assert.Equal(t, s, cs[i].Signal, "incident %d", i)
			}
			last := cs[len(cs)-1]
			require.NotEmpty(t, last.Threads)
			assert.Len(t, last.CrashingThread().Frames, 2)
			hasShell := false
			for _, e := range last.Events {
				hasShell = hasShell || strings.Contains(e.Text, "start_be.sh")
			}
			if len(tc.want) == 1 {
				assert.Equal(t, 1, last.StartLine, "the incident starts at the shell's line")
				assert.True(t, hasShell, "the shell's report is an event of the crash")
				assert.Equal(t, int64(27813), last.PID)
			} else {
				assert.Greater(t, last.StartLine, 1)
				assert.False(t, hasShell)
				assert.Contains(t, cs[0].CorruptedReason, "no stack was printed")
			}
		})
	}
	// gdb opened the core and printed neither the signal nor a backtrace:
	// one incident still, with the shell's signal, and still no stack.
	text := fmt.Sprintf(shell, "Segmentation fault") + "Core was generated by `/opt/doris/be/lib/doris_be'.\n"
	cs, err := ParseAll(context.Background(), strings.NewReader(text), ScanOptions{})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, "SIGSEGV", cs[0].Signal)
	assert.True(t, cs[0].Corrupted)
	assert.Contains(t, cs[0].CorruptedReason, "no stack was printed")
}

// TestPCLineThenBareFrames: a stack quoted by hand gives the `PC:` line
// and then the callers as bare, indented names (no addresses, no signal
// line); they are the crashing thread's frames, with or without the
// namespace. Without the PC line such lines stay prose.
func TestPCLineThenBareFrames(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"PC: starrocks::BinaryColumnBase<unsigned int>::append_selective\n    starrocks::MemTable::insert\n    starrocks::DeltaWriter::write\n", []string{"starrocks::MemTable::insert", "starrocks::DeltaWriter::write"}},
		{"PC: BinaryColumnBase<unsigned int>::append_selective(starrocks::Column const&)\n    MemTable::insert(...)\n    lake::DeltaWriterImpl::write(...)\n    ...\n", []string{"MemTable::insert", "lake::DeltaWriterImpl::write"}},
	} {
		cs, err := ParseAll(context.Background(), strings.NewReader(tc.text), ScanOptions{})
		require.NoError(t, err, tc.text)
		require.Len(t, cs, 1, tc.text)
		th := cs[0].CrashingThread()
		require.NotNil(t, th, tc.text)
		var got []string
		for _, f := range th.Frames {
			got = append(got, f.Name())
		}
		for _, w := range tc.want {
			assert.Contains(t, strings.Join(got, "\n"), w, tc.text)
		}
	}
	// bare names with no PC line before them are not a stack
	cs, err := ParseAll(context.Background(), strings.NewReader("see\n    starrocks::MemTable::insert\n    starrocks::DeltaWriter::write\n"), ScanOptions{})
	require.NoError(t, err)
	assert.Empty(t, cs)
}
