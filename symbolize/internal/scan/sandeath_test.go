package scan

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Shapes of a sanitizer report that a signal dump ends before the report's
// stack (sanitizerDeath): one process died once, so one incident.
const (
	// The ASAN report's opening lines, then glog's whole dump (StarRocks).
	sanDeathGlog = "==15638==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x606002b87b38 at pc 0x0000093d7821 bp 0x7f5602609d90 sp 0x7f5602609d88\n" +
		"READ of size 8 at 0x606002b87b38 thread T482 (con_wg_scan_io)\n" +
		"query_id:38cf52a3-8fa2-4a55-8960-bb6c79c58fb2, fragment_instance:38cf52a3-8fa2-4a55-8960-bb6c79c58fb6\n" +
		"*** Aborted at 1676066533 (unix time) try \"date -d @1676066533\" if you are using GNU date ***\n" +
		"PC: @          0x93e76f8 std::__fill_a1<>()\n" +
		"*** SIGSEGV (@0x62204b23565a) received by PID 15638 (TID 0x7f55f522f700) from PID 1260607066; stack trace: ***\n" +
		"    @         0x117caf62 google::(anonymous namespace)::FailureSignalHandler()\n" +
		"    @     0x7f571a0048e0 (unknown)\n" +
		"    @          0x93e76f8 std::__fill_a1<>()\n" +
		"    @          0x944a6bd starrocks::FixedLengthColumnBase<>::resize()\n" +
		"    @          0xae5ca38 starrocks::ArrowListConverter::list_offsets_copy<>()\n" +
		"    @          0xae5cb00 starrocks::ParquetScanner::get_next()\n" +
		"    @     0x7f571a5b0ea5 start_thread\n" +
		"    @     0x7f571a8b0b0d __clone\n"
	// The ASAN report's opening lines, the Doris handler's header, then the
	// report's own frames.
	sanDeathHeader = "==3623982==ERROR: AddressSanitizer: heap-use-after-free on address 0x60f0000056b8 at pc 0x56478bbe3ae0 bp 0x7f20953d2270 sp 0x7f20953d2268\n" +
		"READ of size 8 at 0x60f0000056b8 thread T41 (compaction)\n" +
		"*** Query id: 0-0 ***\n" +
		"*** Aborted at 1689749969 (unix time) try \"date -d @1689749969\" if you are using GNU date ***\n" +
		"*** Current BE git commitID: b3e9cad48e ***\n" +
		"*** SIGSEGV address not mapped to object (@0x0) received by PID 3623982 (TID 3624277 OR 0x7f19e06dd640) from PID 0; stack trace: ***\n" +
		"    #0 0x56478bbe3adf in std::__shared_ptr<doris::Rowset>::operator bool() const /usr/include/c++/11/bits/shared_ptr_base.h:1295:16\n" +
		"    #1 0x56478bbe306e in doris::Compaction::do_compaction() /doris/be/src/olap/compaction.cpp:149:13\n" +
		"    #2 0x56478bbec669 in doris::StorageEngine::_compaction_tasks_producer_callback() /doris/be/src/olap/olap_server.cpp:119:22\n" +
		"\n" +
		"0x60f0000056b8 is located 24 bytes inside of 168-byte region [0x60f0000056a0,0x60f000005748)\n" +
		"freed by thread T41 (compaction) here:\n" +
		"    #0 0x56478a0c8d4d in operator delete(void*) (/doris/lib/doris_be+0x1a0c8d4d)\n" +
		"    #1 0x56478bbe0000 in doris::Rowset::~Rowset() /doris/be/src/olap/rowset/rowset.cpp:40:1\n"
	// A UBSAN runtime error, then Doris' whole boost dump (CI timestamps).
	sanDeathUBSAN = "04:09:40   /build/be/src/core/column/column_struct.h:98:23: runtime error: member call on null pointer of type 'doris::IColumn'\n" +
		"04:09:40   *** Query id: 346501e80b2a4276-b032f92f6e9b6c3c ***\n" +
		"04:09:40   *** is nereids: 1 ***\n" +
		"04:09:40   *** tablet id: 0 ***\n" +
		"04:09:40   *** Aborted at 1786478874 (unix time) try \"date -d @1786478874\" if you are using GNU date ***\n" +
		"04:09:40   *** Current BE git commitID: 206d71cd3c ***\n" +
		"04:09:40   *** SIGSEGV address not mapped to object (@0x0) received by PID 12549 (TID 37198 OR 0x7af300fc4640) from PID 0; stack trace: ***\n" +
		"04:09:40    0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /root/be/src/common/signal_handler.h:421\n" +
		"04:09:40    1# 0x00007F5D70316400 in /lib64/libc.so.6\n" +
		"04:09:40    2# doris::ColumnStruct::get_column(unsigned long) at /root/be/src/core/column/column_struct.h:98\n" +
		"04:09:40    3# doris::ParquetReader::get_next_block(doris::Block*, unsigned long*, bool*) at /root/be/src/format/parquet/vparquet_reader.cpp:600\n" +
		"04:09:40    4# start_thread in /lib64/libpthread.so.0\n"
)

func TestSanitizerCutBySignalDump(t *testing.T) {
	t.Run("asan-then-glog-dump", func(t *testing.T) {
		c := oneSanitizerDeath(t, sanDeathGlog, "38cf52a3-8fa2-4a55-8960-bb6c79c58fb2")
		assert.Equal(t, "heap-buffer-overflow", c.SanitizerBug)
		assert.False(t, c.Corrupted, c.CorruptedReason)
		require.NotEmpty(t, c.Threads)
		assert.Equal(t, "starrocks::ArrowListConverter::list_offsets_copy<>()", crashingNames(c)[4])
		assert.Contains(t, strings.Join(c.Notes, "\n"), "the signal dump's stack is the crash stack")
	})
	t.Run("asan-frames-after-header", func(t *testing.T) {
		c := oneSanitizerDeath(t, sanDeathHeader, "0-0")
		assert.False(t, c.Corrupted, c.CorruptedReason)
		names := crashingNames(c)
		require.Len(t, names, 3, "the report's own frames are the crashing stack")
		assert.Equal(t, "doris::Compaction::do_compaction()", names[1])
		require.Len(t, c.Threads, 2, "and its freed-by stack stays an auxiliary one")
		assert.Equal(t, "doris::Rowset::~Rowset()", c.Threads[1].Frames[1].Name())
	})
	t.Run("ubsan-then-boost-dump", func(t *testing.T) {
		c := oneSanitizerDeath(t, sanDeathUBSAN, "346501e80b2a4276-b032f92f6e9b6c3c")
		assert.Equal(t, "member call on null pointer of type", c.SanitizerBug, "a quoted type's scope is not the end of the words")
		assert.Equal(t, "runtime error: member call on null pointer of type 'doris::IColumn'", c.Message)
		assert.Contains(t, crashingNames(c), "doris::ParquetReader::get_next_block(doris::Block*, unsigned long*, bool*)")
	})
	// Two crashes still: each negative breaks one condition.
	for name, text := range map[string]string{
		// the dump is another process's
		"other-pid": strings.Replace(sanDeathGlog, "received by PID 15638", "received by PID 15639", 1),
		// the report printed its stack before the dump
		"report-has-stack": strings.Replace(sanDeathGlog, "READ of size 8 at 0x606002b87b38 thread T482 (con_wg_scan_io)\n",
			"READ of size 8 at 0x606002b87b38 thread T482 (con_wg_scan_io)\n    #0 0x93d7821 in starrocks::Foo::bar() /src/foo.cpp:1:1\n    #1 0x93d7900 in starrocks::Foo::baz() /src/foo.cpp:2:1\n", 1),
		// a log line of the process between them
		"log-line-between": strings.Replace(sanDeathUBSAN, "04:09:40   *** Query id:",
			"04:09:40   I20260101 04:09:40.000001 37198 fragment_mgr.cpp:100] some other work\n04:09:40   *** Query id:", 1),
		// the dump comes many lines later
		"far-away": strings.Replace(sanDeathUBSAN, "04:09:40   *** Query id:",
			strings.Repeat("04:09:40   \n", maxSanDeathGap)+"04:09:40   *** Query id:", 1),
	} {
		t.Run(name, func(t *testing.T) {
			assert.Len(t, parseString(t, text), 2)
		})
	}
}

// An ASAN report whose own abort interrupted it: the glog SIGABRT header
// between the report's first line and its frames (two writers on one
// stderr), the paste opening with the backtick of an inline code span.
// The frames after the header are the report's stack, as after a fault
// dump (sanitizerFramesAfterDump); the abort stays the abort of a cause.
func TestSanitizerAbortHeaderInsideReport(t *testing.T) {
	text := "`==2157863==ERROR: AddressSanitizer: attempting double-free on 0x7f8da194e800 in thread T666:\n" +
		"*** SIGABRT unkown detail explain (@0x20ed27) received by PID 2157863 (TID 0x7f8eabd7b640) from PID 2157863; stack trace: ***\n" +
		"    #0 0x56406110d15f in __interceptor_free (/opt/be/lib/palo_be+0x4dac15f)\n" +
		"    #1 0x564067535ae0 in LZ4F_decompress (/opt/be/lib/palo_be+0xb1d4ae0)\n" +
		"    #2 0x5640623f2034 in doris::Lz4fBlockCompression::_decompress(LZ4F_dctx_s*, doris::Slice const&, doris::Slice*) const /src/be/src/util/block_compression.cpp:174\n" +
		"    #3 0x564061c6cee6 in doris::segment_v2::PageIO::read_and_decompress_page() /src/be/src/olap/rowset/segment_v2/page_io.cpp:120\n"
	for _, tc := range []struct{ name, text string }{{"backtick", text}, {"plain", text[1:]}} {
		t.Run(tc.name, func(t *testing.T) {
			cs := parseString(t, tc.text)
			require.Len(t, cs, 1, "one death")
			c := cs[0]
			assert.Equal(t, KindSanitizer, c.Kind)
			assert.Equal(t, "attempting double-free", c.SanitizerBug)
			assert.Equal(t, "SIGABRT", c.Signal)
			names := crashingNames(c)
			require.Len(t, names, 4)
			assert.Equal(t, "LZ4F_decompress", names[1])
		})
	}
	// The header after the report's stack is the abort after a cause, as
	// before: the report keeps its frames and the dump adds none.
	after := text[1:strings.Index(text, "*** SIGABRT")] + text[strings.Index(text, "    #0"):] + text[strings.Index(text, "*** SIGABRT"):strings.Index(text, "    #0")]
	cs := parseString(t, after)
	require.Len(t, cs, 1)
	assert.Len(t, crashingNames(cs[0]), 4)
}

// oneSanitizerDeath requires that text is one incident, a sanitizer's
// report ended by a SIGSEGV dump that names the query.
func oneSanitizerDeath(t *testing.T, text, query string) *Crash {
	t.Helper()
	cs := parseString(t, text)
	require.Len(t, cs, 1, "one death")
	c := cs[0]
	assert.Equal(t, KindSanitizer, c.Kind)
	assert.Equal(t, "SIGSEGV", c.Signal)
	assert.Equal(t, query, c.QueryID)
	return c
}

// crashingNames lists the names of the crashing thread's frames.
func crashingNames(c *Crash) []string {
	var out []string
	for _, th := range c.Threads {
		if th.Crashed {
			for i := range th.Frames {
				out = append(out, th.Frames[i].Name())
			}
			return out
		}
	}
	return out
}

func TestParallelSanitizerDeath(t *testing.T) {
	filler := []byte(strings.Repeat("I20260130 11:08:07.000001 140153981888064 daemon.cpp:312] ordinary line\n", 30))
	for _, text := range []string{sanDeathGlog, sanDeathHeader, sanDeathUBSAN} {
		requireOneDeathChunked(t, append(slices.Clone(filler), text...), 61)
	}
}
