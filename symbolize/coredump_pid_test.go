package symbolize

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoredumpOtherProcessKernelLine: a kernel segfault line joins the
// systemd-coredump report after it only when it can name a thread of the
// reported process: the main thread (TID = PID, same comm) or a thread
// created after it (TID > PID). Another process's line stays an incident
// of its own and gives the report neither its fault address nor its PC.
func TestCoredumpOtherProcessKernelLine(t *testing.T) {
	report := "Sep 13 18:05:38 be01 systemd-coredump[48400]: Process 48377 (starrocks_be) of user 1000 dumped core.\n" +
		"                                              Stack trace of thread 48390:\n" +
		"                                              #0  0x000055d0c3a1f2e4 _ZN9starrocks4lake21collect_garbage_filesERKNS_14TabletMetadataEl (starrocks_be + 0x2e1f2e4)\n" +
		"                                              #1  0x000055d0c3a20b7c n/a (starrocks_be + 0x2e20b7c)\n" +
		"                                              #2  0x00007f5a1e694ac3 start_thread (libc.so.6 + 0x94ac3)\n"
	kernel := func(task string) string {
		return "Sep 13 18:05:37 be01 kernel: " + task + ": segfault at 8 ip 00007f0000000abc sp 00007ffd6baf1160 error 4 in libjvm.so[7f0000000000+1000]\n"
	}
	for _, tc := range []struct {
		task   string
		merged bool
	}{
		{"java[1111]", false},         // another process (TID below the PID)
		{"java[48377]", false},        // the PID, but not the process's comm
		{"starrocks_be[48377]", true}, // the main thread
		{"starrocks_be[48390]", true}, // a thread of the process
		{"brpc_worker[48390]", true},  // a named thread of the process
	} {
		cs := parseFaceString(t, kernel(tc.task)+report)
		if !tc.merged {
			require.Len(t, cs, 2, tc.task)
			k, c := cs[0], cs[1]
			assert.Equal(t, []string{"F9"}, k.Formats, tc.task)
			assert.Equal(t, []string{"F7"}, c.Formats, tc.task)
			assert.Equal(t, int64(48377), c.PID, tc.task)
			assert.False(t, c.HasFaultAddress, tc.task)
			assert.Zero(t, c.FaultPC, tc.task)
			assert.Empty(t, KernelMappings(c), tc.task)
			require.NotNil(t, c.CrashingThread(), tc.task)
			assert.Equal(t, int64(48390), c.CrashingThread().ID, tc.task)
			continue
		}
		require.Len(t, cs, 1, tc.task)
		c := cs[0]
		assert.Equal(t, []string{"F9", "F7"}, c.Formats, tc.task)
		assert.Equal(t, int64(48377), c.PID, tc.task)
		assert.True(t, c.HasFaultAddress, tc.task)
		assert.Equal(t, Addr(8), c.FaultAddress, tc.task)
		assert.NotEmpty(t, KernelMappings(c), tc.task)
	}
}

// TestDumpOtherProcessKernelLine: a kernel line inside a glog dump that
// printed its PID is the dump's event (its mapping gives the load bias)
// only when it names the PID or the dump's thread; another process's line
// is noise.
func TestDumpOtherProcessKernelLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "formats", "f2-glog07-lwp.txt"))
	require.NoError(t, err)
	plain := parseFaceString(t, string(data))
	require.Len(t, plain, 1)
	require.Equal(t, int64(3021), plain[0].PID)
	require.Equal(t, int64(3577), plain[0].TID)
	lines := strings.SplitAfter(string(data), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "*** SIGSEGV") })
	require.Positive(t, at)
	for task, own := range map[string]bool{"java[1111]": false, "java[3022]": false, "starrocks_be[3021]": true, "pip_exec_7[3577]": true} {
		kl := "kernel: " + task + ": segfault at 0 ip 000000000d3c4b2a sp 00007f6b1c3fe000 error 4 in starrocks_be[400000+14000000]\n"
		in := strings.Join(slices.Insert(slices.Clone(lines), at+1, kl), "")
		cs := parseFaceString(t, in)
		require.Len(t, cs, 1, task)
		c := cs[0]
		assert.Equal(t, plain[0].Signal, c.Signal, task)
		assert.Equal(t, plain[0].Threads, c.Threads, task)
		if own {
			assert.Equal(t, []KernelMapping{{Module: "starrocks_be", Base: 0x400000, Size: 0x14000000}}, KernelMappings(c), task)
		} else {
			assert.Empty(t, KernelMappings(c), task)
		}
	}
}

// TestCoredumpKernelThreadNote: a kernel line taken for a thread of the
// reported process (TID above the PID) that is not the thread the report
// prints first is noted, not silently merged.
func TestCoredumpKernelThreadNote(t *testing.T) {
	report := "Process 48377 (starrocks_be) of user 1000 dumped core.\n" +
		"Stack trace of thread 48390:\n" +
		"#0  0x000055d0c3a1f2e4 n/a (starrocks_be + 0x2e1f2e4)\n" +
		"#1  0x00007f5a1e694ac3 start_thread (libc.so.6 + 0x94ac3)\n"
	kernel := func(tid string) string {
		return "kernel: be_worker[" + tid + "]: segfault at 8 ip 00007f0000000abc sp 00007ffd6baf1160 error 4 in libjvm.so[7f0000000000+1000]\n"
	}
	noted := func(c *Crash) bool {
		return slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "the kernel line names thread") })
	}
	cs := parseFaceString(t, kernel("48390")+report)
	require.Len(t, cs, 1)
	assert.False(t, noted(cs[0]), "%q", cs[0].Notes)
	cs = parseFaceString(t, kernel("50001")+report)
	require.Len(t, cs, 1)
	assert.True(t, noted(cs[0]), "%q", cs[0].Notes)
}

// parseFaceString parses s with the public scanner (the scanner's own tests
// live in internal/scan; this file tests how the symbolizer's
// KernelMappings reads what the scanner kept).
func parseFaceString(t testing.TB, s string) []*Crash {
	t.Helper()
	cs, err := ParseAll(context.Background(), strings.NewReader(s), ScanOptions{Source: "x"})
	require.NoError(t, err)
	return cs
}
