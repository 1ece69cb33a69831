package scan

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCoredumpFrame(t *testing.T) {
	var p parser
	p.init(ScanOptions{})
	for _, tc := range []struct {
		line   string
		ok     bool
		index  int
		pc     Addr
		name   string
		module string
		offset Addr
	}{
		{"#0  0x00000000020f0685 _Z27check_required_instructionsv (doris_be)", true, 0, 0x20f0685, "check_required_instructions()", "doris_be", 0},
		{"                #3  0x00005a03100f669a args_process (fs-cli + 0xb69a)", true, 3, 0x5a03100f669a, "args_process", "fs-cli", 0xb69a},
		{"#12 0x000070ef25041c88 n/a (libc.so.6 + 0x27c88)", true, 12, 0x70ef25041c88, "", "libc.so.6", 0x27c88},
		{"#1  0x00007f3a4c5d6e7f in raise () from /lib64/libc.so.6", false, 0, 0, "", "", 0}, // gdb
		{"#2  0x0000000001064335 in doris::Foo::bar (this=0x0) at foo.cpp:12", false, 0, 0, "", "", 0},
		{"#0  0x12 f", false, 0, 0, "", "", 0},
	} {
		f, ok := p.parseCoredumpFrame(tc.line)
		require.Equal(t, tc.ok, ok, tc.line)
		if !ok {
			continue
		}
		assert.Equal(t, tc.index, f.Index, tc.line)
		assert.Equal(t, tc.pc, f.PC, tc.line)
		assert.Equal(t, tc.name, f.Name(), tc.line)
		assert.Equal(t, tc.module, f.Module, tc.line)
		assert.Equal(t, tc.offset != 0, f.HasOffset, tc.line)
		assert.Equal(t, tc.offset, f.Offset, tc.line)
	}
}

// TestCoredumpIncident: the journal's kernel line and systemd-coredump's
// report are one incident; the thread printed first is the one that
// dumped; a second report starts the next incident.
func TestCoredumpIncident(t *testing.T) {
	text := "Sep 13 18:05:37 be01 kernel: starrocks_be[4711]: segfault at 10 ip 000055d0c3a1f2e4 sp 00007f5a0c9fe0a0 error 4 in starrocks_be[55d0c0c00000+5a00000]\n" +
		"Sep 13 18:05:38 be01 systemd-coredump[4800]: Process 4700 (starrocks_be) of user 1000 dumped core.\n" +
		"                                              \n" +
		"                                              Stack trace of thread 4711:\n" +
		"                                              #0  0x000055d0c3a1f2e4 _ZN9starrocks4lake21collect_garbage_filesERKNS_14TabletMetadataEl (starrocks_be + 0x2e1f2e4)\n" +
		"                                              #1  0x000055d0c3a20b7c n/a (starrocks_be + 0x2e20b7c)\n" +
		"                                              #2  0x00007f5a1e694ac3 start_thread (libc.so.6 + 0x94ac3)\n" +
		"                                              \n" +
		"                                              Stack trace of thread 4700:\n" +
		"                                              #0  0x00007f5a1e6e57f8 __GI___clock_nanosleep (libc.so.6 + 0xe57f8)\n" +
		"                                              #1  0x000055d0c1c8d6a0 main (starrocks_be + 0x108d6a0)\n" +
		"Sep 13 19:00:01 be01 systemd-coredump[5900]: Process 5800 (starrocks_be) of user 1000 terminated abnormally with signal 6/ABRT, processing...\n" +
		"Sep 13 19:00:01 be01 systemd-coredump[5900]: Process 5800 (starrocks_be) of user 1000 dumped core.\n" +
		"                                              Stack trace of thread 5801:\n" +
		"                                              #0  0x00007f5a1e6969fc __pthread_kill_implementation (libc.so.6 + 0x969fc)\n" +
		"                                              #1  0x00007f5a1e642476 raise (libc.so.6 + 0x42476)\n" +
		"                                              #2  0x00007f5a1e6287f3 abort (libc.so.6 + 0x287f3)\n"
	cs := parseString(t, text)
	require.Len(t, cs, 2)
	c := cs[0]
	assert.Equal(t, KindSignal, c.Kind)
	assert.Equal(t, "SIGSEGV", c.Signal)
	assert.Equal(t, ProductStarRocks, c.Product)
	assert.Equal(t, int64(4700), c.PID)
	assert.Equal(t, []string{"F9", "F7"}, c.Formats)
	require.Len(t, c.Threads, 2)
	ct := c.CrashingThread()
	require.NotNil(t, ct)
	assert.Equal(t, int64(4711), ct.ID)
	assert.Equal(t, "starrocks_be", ct.Name)
	require.Len(t, ct.Frames, 3)
	assert.Equal(t, "starrocks::lake::collect_garbage_files(starrocks::TabletMetadata const&, long)", ct.Frames[0].Name())
	assert.Equal(t, Addr(0x2e20b7c), ct.Frames[1].Offset)
	assert.True(t, slices.ContainsFunc(c.Events, func(e Event) bool { return strings.Contains(e.Text, "segfault at ") }) || strings.Contains(c.Message, "segfault at "),
		"the kernel line is the incident's event (symbolize.KernelMappings reads it; coredump_pid_test.go there checks the mappings)")
	assert.False(t, c.Corrupted, c.CorruptedReason)

	c = cs[1]
	assert.Equal(t, "SIGABRT", c.Signal)
	assert.Equal(t, int64(5800), c.PID)
	require.NotNil(t, c.CrashingThread())
	assert.Equal(t, int64(5801), c.CrashingThread().ID)
}

// FuzzCoredumpFrame: the frame parser never panics and a frame it accepts
// came from its line.
func FuzzCoredumpFrame(f *testing.F) {
	f.Add("#0  0x00000000020f0685 _Z27check_required_instructionsv (doris_be)")
	f.Add("#12 0x000070ef25041c88 n/a (libc.so.6 + 0x27c88)")
	f.Add("#1  0x00007f3a4c5d6e7f in raise () from /lib64/libc.so.6")
	var p parser
	p.init(ScanOptions{})
	f.Fuzz(func(t *testing.T, line string) {
		fr, ok := p.parseCoredumpFrame(line)
		if !ok {
			return
		}
		if fr.Raw != line || fr.Index < 0 || fr.Module == "" {
			t.Fatalf("frame %+v from %q", fr, line)
		}
	})
}
