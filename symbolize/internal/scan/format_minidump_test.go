package scan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseMinidumpFrame: each frame shape PrintStack writes, and lines
// that are not frames (gdb's, registers, a bare name, a table row).
func TestParseMinidumpFrame(t *testing.T) {
	var p parser
	p.init(ScanOptions{})
	frame := func(index int, module, file string, line int) *Frame {
		return &Frame{Index: index, Module: module, File: file, Line: line}
	}
	cases := map[string]*Frame{
		" 0  palo_be!tcmalloc::CentralFreeList::FetchFromOneSpans(int, void**, void**) [central_freelist.cc : 299 + 0x0]": frame(0, "palo_be", "central_freelist.cc", 299),
		" 4  palo_be!bshuf_untrans_bit_elem_AVX_avx2 + 0x26":                                                              frame(4, "palo_be", "", 0),
		"12  libc.so.6 + 0x2173e": {Index: 12, Module: "libc.so.6", Offset: 0x2173e, HasOffset: true},
		"13  0x7f0c5b7fe6c8":      {Index: 13, PC: 0x7f0c5b7fe6c8},
		" 7  palo_be!doris::segment_v2::BitShufflePageDecoder<(doris::FieldType)5>::init() [bitshuffle_page.h : 389 + 0x5]": frame(7, "palo_be", "bitshuffle_page.h", 389),
		"#0  0x00007f3a4c5d6e7f in raise () from /lib64/libc.so.6":                                                          nil, // gdb
		"    rax = 0x0000000000000000   rdx = 0x00007f0c5b7fe6c8":                                                           nil,
		"0  palo_be!f":  nil, // no offset or location: not what breakpad prints
		"2019  12 rows": nil,
	}
	names := map[int]string{
		0: "tcmalloc::CentralFreeList::FetchFromOneSpans(int, void**, void**)",
		4: "bshuf_untrans_bit_elem_AVX_avx2",
		7: "doris::segment_v2::BitShufflePageDecoder<(doris::FieldType)5>::init()",
	}
	for line, want := range cases {
		f, ok := p.parseMinidumpFrame(line)
		require.Equal(t, want != nil, ok, line)
		if want == nil {
			continue
		}
		assert.Equal(t, names[want.Index], f.Name(), line)
		got := Frame{Index: f.Index, Module: f.Module, File: f.File, Line: f.Line, PC: f.PC, Offset: f.Offset, HasOffset: f.HasOffset}
		assert.Equal(t, *want, got, line)
	}
}

// minidumpReport is minidump_stackwalk's output for a crash, in the shape
// breakpad's PrintProcessState prints (src/processor/stackwalk_common.cc):
// the system, the crash, the crashing thread first with registers and
// `Found by:` after each frame, another thread, the module list.
const minidumpReport = `Operating system: Linux
                  0.0.0 Linux 3.10.0-957.el7.x86_64 #1 SMP Thu Nov 8 23:39:32 UTC 2018 x86_64
CPU: amd64
     family 6 model 85 stepping 7
     96 CPUs

GPU: UNKNOWN

Crash reason:  SIGSEGV /SEGV_MAPERR
Crash address: 0x10
Process uptime: not available

Thread 65 (crashed)
 0  palo_be!doris::segment_v2::BinaryDictPageDecoder::next_batch(unsigned long*, doris::vectorized::MutableColumnPtr&) [binary_dict_page.cpp : 248 + 0x4]
    rax = 0x0000000000000000   rdx = 0x00007f0c5b7fe6c8
    rcx = 0x0000000000000001   rbx = 0x00007f0c4a1d2e00
    rip = 0x0000000002a1b4c4
    Found by: given as instruction pointer in context
 1  palo_be!doris::segment_v2::FileColumnIterator::next_batch(unsigned long*, doris::vectorized::MutableColumnPtr&, bool*) [column_reader.cpp : 812 + 0x11]
    rbx = 0x00007f0c4a1d2e00   rbp = 0x00007f0c5b7fe7a0
    rsp = 0x00007f0c5b7fe740   rip = 0x0000000002a0f3a2
    Found by: call frame info
 2  palo_be!doris::segment_v2::SegmentIterator::_read_columns(std::vector<unsigned int, std::allocator<unsigned int> > const&, std::vector<COW<doris::vectorized::IColumn>::mutable_ptr<doris::vectorized::IColumn>, std::allocator<COW<doris::vectorized::IColumn>::mutable_ptr<doris::vectorized::IColumn> > >&, unsigned long) [segment_iterator.cpp : 1003 + 0x18]
    Found by: call frame info
 3  palo_be!doris::vectorized::VOlapScanner::get_block(doris::RuntimeState*, doris::vectorized::Block*, bool*) + 0x2f1
    Found by: call frame info
 4  libpthread-2.17.so + 0x7ea5
    Found by: call frame info
 5  0x7f0c5b7fe6c8
    Found by: stack scanning

Thread 0
 0  libc-2.17.so + 0xe3f8d
    rax = 0xfffffffffffffdfc   rdx = 0x0000000000000000
    Found by: given as instruction pointer in context
 1  palo_be!main [doris_main.cpp : 487 + 0x8]
    Found by: call frame info

Loaded modules:
0x00400000 - 0x0a1fffff  palo_be  ???  (main)
0x7f0c6a000000 - 0x7f0c6a1c3fff  libc-2.17.so  ???
`

// TestMinidumpIncident: one incident, the crash reason's signal and
// address, the marked thread crashed, functions, files and lines of its
// frames, a bare address as the PC, the other thread kept; nothing of the
// registers, `Found by:` or module lines becomes a frame.
func TestMinidumpIncident(t *testing.T) {
	cs := parseString(t, "I0303 10:15:09.145 12 daemon.cpp:312] Current memory usage\n"+minidumpReport+"I0303 10:16:00.000 1 doris_main.cpp:400] Doris BE start\n")
	require.Len(t, cs, 1)
	c := cs[0]
	assert.Equal(t, KindSignal, c.Kind)
	assert.Equal(t, "SIGSEGV", c.Signal)
	assert.True(t, c.HasFaultAddress)
	assert.Equal(t, Addr(0x10), c.FaultAddress)
	assert.Contains(t, c.Formats, "F7")
	assert.False(t, c.Corrupted, c.CorruptedReason)
	// From `Crash reason:` (line 10: the glog line, then the system lines)
	// to the last module line: registers, `Found by:` and the module list
	// belong to the report.
	assert.Equal(t, 10, c.StartLine)
	assert.Equal(t, 1+strings.Count(minidumpReport, "\n"), c.EndLine)
	require.Len(t, c.Threads, 2)
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	require.Len(t, ct.Frames, 6)
	assert.Equal(t, "doris::segment_v2::BinaryDictPageDecoder::next_batch(unsigned long*, doris::vectorized::MutableColumnPtr&)", ct.Frames[0].Name())
	assert.Equal(t, "binary_dict_page.cpp", ct.Frames[0].File)
	assert.Equal(t, 248, ct.Frames[0].Line)
	assert.Equal(t, "palo_be", ct.Frames[0].Module)
	assert.Equal(t, "doris::vectorized::VOlapScanner::get_block(doris::RuntimeState*, doris::vectorized::Block*, bool*)", ct.Frames[3].Name())
	assert.Equal(t, "libpthread-2.17.so", ct.Frames[4].Module)
	assert.Equal(t, Addr(0x7ea5), ct.Frames[4].Offset)
	assert.Equal(t, Addr(0x7f0c5b7fe6c8), ct.Frames[5].PC)
	for _, th := range c.Threads {
		for _, f := range th.Frames {
			assert.False(t, strings.Contains(f.Raw, " = 0x") || strings.Contains(f.Raw, "Found by"), f.Raw)
		}
	}
	assert.Equal(t, "main", c.Threads[1].Frames[1].Name())

	// With -s, stack contents and possible instruction pointers follow
	// each frame: read past, not frames, not the incident's end.
	cs = parseString(t, "Crash reason:  SIGABRT\nCrash address: 0x3e80000007b\n\nThread 0 (crashed)\n"+
		" 0  libc-2.17.so + 0x36277\n    rax = 0x0000000000000000   rdx = 0x0000000000000006\n    Found by: given as instruction pointer in context\n"+
		"\n    Stack contents:\n     00007ffd4f7d2f70 00 00 00 00 00 00 00 00 68 2f 7d 4f fd 7f 00 00  ........h/}O....\n"+
		"     00007ffd4f7d2f80                                                   \n"+
		"    Possible instruction pointers:\n     *(0x00007ffd4f7d2f88) = 0x0000000002a1b4c4 <doris::Daemon::run()> [daemon.cpp : 12 + 0x4]\n"+
		" 1  palo_be!doris::Daemon::run() [daemon.cpp : 12 + 0x4]\n    Found by: call frame info\n")
	require.Len(t, cs, 1)
	assert.Equal(t, 15, cs[0].EndLine, "the stack contents are the report's")
	assert.Equal(t, "SIGABRT", cs[0].Signal)
	require.NotNil(t, cs[0].CrashingThread())
	require.Len(t, cs[0].CrashingThread().Frames, 2)
	assert.Equal(t, "doris::Daemon::run()", cs[0].CrashingThread().Frames[1].Name())
}

// TestMinidumpRequestedDump: a dump requested without a crash (Doris 1.0
// writes one on SIGUSR1) is a thread dump, not a crash; a paste that
// starts at the crashed thread's header is still one incident; a bare
// `Thread N` line outside a report starts nothing, and gdb's thread
// headers stay gdb's.
func TestMinidumpRequestedDump(t *testing.T) {
	cs := parseString(t, "Crash reason:  DUMP_REQUESTED\nCrash address: 0x0\n\nThread 3 (requested dump, did not crash)\n 0  palo_be!doris::Daemon::memory_maintenance_thread() [daemon.cpp : 210 + 0x9]\n 1  libpthread-2.17.so + 0x7ea5\n")
	require.Len(t, cs, 1)
	assert.Equal(t, KindThreadDump, cs[0].Kind)
	assert.Empty(t, cs[0].Signal)
	require.NotNil(t, cs[0].CrashingThread())
	assert.Equal(t, "doris::Daemon::memory_maintenance_thread()", cs[0].CrashingThread().Frames[0].Name())

	cs = parseString(t, "```c++\nThread 65 (crashed)\n 0  palo_be!tcmalloc::CentralFreeList::FetchFromOneSpans(int, void**, void**) [central_freelist.cc : 299 + 0x0]\n 1  palo_be!bshuf_untrans_bit_elem_AVX_avx2 + 0x26\n```\n")
	require.Len(t, cs, 1)
	require.NotNil(t, cs[0].CrashingThread())
	assert.Len(t, cs[0].CrashingThread().Frames, 2)

	assert.Empty(t, parseString(t, "I0303 10:15:09.145 12 a.cpp:1] x\nThread 3\n 0  palo_be!f() [a.cc : 1 + 0x0]\n"))

	cs = parseString(t, "Thread 2 (Thread 0x7f0c5b7ff700 (LWP 4711)):\n#0  0x00007f3a4c5d6e7f in raise () from /lib64/libc.so.6\n#1  0x0000000001064335 in doris::Foo::bar (this=0x0) at foo.cpp:12\n")
	require.Len(t, cs, 1)
	require.NotEmpty(t, cs[0].Threads)
	assert.Equal(t, int64(4711), cs[0].Threads[0].ID)
}

// FuzzMinidumpFrame: the frame parser never panics and a frame it accepts
// came from its line with a module or an address.
func FuzzMinidumpFrame(f *testing.F) {
	f.Add(" 0  palo_be!tcmalloc::CentralFreeList::FetchFromOneSpans(int, void**, void**) [central_freelist.cc : 299 + 0x0]")
	f.Add("12  libc.so.6 + 0x2173e")
	f.Add("13  0x7f0c5b7fe6c8")
	f.Add(" 4  palo_be!bshuf_untrans_bit_elem_AVX_avx2 + 0x26")
	var p parser
	p.init(ScanOptions{})
	f.Fuzz(func(t *testing.T, line string) {
		fr, ok := p.parseMinidumpFrame(line)
		if !ok {
			return
		}
		if fr.Raw != line || fr.Index < 0 || fr.Module == "" && fr.PC == 0 && !strings.Contains(line, "0x0") {
			t.Fatalf("frame %+v from %q", fr, line)
		}
	})
}
