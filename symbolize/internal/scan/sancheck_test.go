package scan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sanitizer runtime's own CHECK (F6.check_failed): compiler-rt's
// CheckFailed printers, current (`Tool: CHECK failed: … (tid=N)`) and
// older (`==PID==Tool CHECK failed: …`), each followed by the stack of
// the check.
func TestSanitizerCheckFailed(t *testing.T) {
	frames := "    #0 0x557a503468e1 in __asan::CheckUnwind() (/opt/be/lib/doris_be+0x1f2a08e1)\n" +
		"    #1 0x557a50361182 in __sanitizer::CheckFailed(char const*, int, char const*, unsigned long long, unsigned long long) (/opt/be/lib/doris_be+0x1f2bb182)\n" +
		"    #2 0x5586889a1405 in localtime_r (/opt/be/lib/doris_be+0x12672405)\n" +
		"    #3 0x5586b4ce3eea in google::LogMessageTime::LogMessageTime(long, double) logging.cc:12\n"
	cases := []struct {
		name, header, message, bug string
		pid                        int64
	}{
		{"current printer, tid dropped",
			`AddressSanitizer: CHECK failed: asan_thread.cpp:369 "((ptr[0] == kCurrentStackFrameMagic)) != (0)" (0x0, 0x0) (tid=13525)`,
			`AddressSanitizer: CHECK failed: asan_thread.cpp:369 "((ptr[0] == kCurrentStackFrameMagic)) != (0)" (0x0, 0x0)`, "CHECK failed: ((ptr[0] == kCurrentStackFrameMagic)) != (0)", 0},
		{"older printer through Report",
			`==9826==AddressSanitizer CHECK failed: /b/compiler-rt/lib/asan/asan_thread.cpp:368 "((ptr[0] == kCurrentStackFrameMagic)) != (0)" (0x0, 0x0)`,
			`AddressSanitizer: CHECK failed: /b/compiler-rt/lib/asan/asan_thread.cpp:368 "((ptr[0] == kCurrentStackFrameMagic)) != (0)" (0x0, 0x0)`, "CHECK failed: ((ptr[0] == kCurrentStackFrameMagic)) != (0)", 9826},
		{"LeakSanitizer's check is not a leak",
			`LeakSanitizer: CHECK failed: lsan_common.cpp:611 "((root_regions)) != (0)" (0x0, 0x0) (tid=77)`,
			`LeakSanitizer: CHECK failed: lsan_common.cpp:611 "((root_regions)) != (0)" (0x0, 0x0)`, "CHECK failed: ((root_regions)) != (0)", 0},
		{"ThreadSanitizer",
			`ThreadSanitizer: CHECK failed: tsan_rtl.cpp:1012 "((thr->slot)) != (0)" (0x0, 0x0) (tid=4)`,
			`ThreadSanitizer: CHECK failed: tsan_rtl.cpp:1012 "((thr->slot)) != (0)" (0x0, 0x0)`, "CHECK failed: ((thr->slot)) != (0)", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := parseText(t, "start BE in local mode\n"+tc.header+"\n"+frames)
			require.Len(t, cs, 1)
			c := cs[0]
			assert.Equal(t, KindSanitizer, c.Kind)
			assert.Equal(t, tc.bug, c.SanitizerBug)
			assert.Equal(t, tc.message, c.Message)
			assert.Equal(t, tc.pid, c.PID)
			assert.Equal(t, 2, c.StartLine, "the report starts at the check line")
			assert.Equal(t, 6, c.EndLine)
			assert.Contains(t, c.Formats, "F6")
			th := c.CrashingThread()
			require.NotNil(t, th)
			require.Len(t, th.Frames, 4)
			assert.Equal(t, "localtime_r", th.Frames[2].Function)
		})
	}
}

// Lines that only look like the check: glog's `Check failed:`, the check
// quoted inside prose, and a check line without its file:line.
func TestSanitizerCheckFailedNotMatched(t *testing.T) {
	for _, line := range []string{
		`F1203 06:14:30.000000 123 tablet.cpp:10] Check failed: x != nullptr`,
		`we saw AddressSanitizer: CHECK failed: asan_thread.cpp:369 "x" (0x0, 0x0) in CI`,
		`AddressSanitizer: CHECK failed: the stack frame magic`,
	} {
		assert.False(t, checkFailedRule(t).re.MatchString(line), line)
		for _, c := range parseText(t, line+"\n") {
			assert.NotContains(t, c.SanitizerBug, "CHECK failed", line)
		}
	}
}

func checkFailedRule(t *testing.T) lineRule {
	for _, r := range sanitizerRules {
		if r.id == "F6.check_failed" {
			return r
		}
	}
	t.Fatal("no rule F6.check_failed")
	return lineRule{}
}

// The runtime's own mmap failure (F6.mmap_failed), in the three printers
// compiler-rt has had (`(error code: N)`, `(errno: N)`, `: N`). With the
// recursion guard's `ERROR: Failed to mmap` after it (F6.mmap_die) the
// report is whole without a stack; without it, the paste may be cut
// before the process map and the CHECK that follow a first failure.
func TestSanitizerMmapFailure(t *testing.T) {
	for _, tail := range []string{" (error code: 22)", " (errno: 22)", ": 22"} {
		head := "==45593==ERROR: AddressSanitizer failed to allocate 0x0 (0) bytes of ReadFileToBuffer" + tail
		t.Run(tail, func(t *testing.T) {
			cs := parseText(t, "start time: Wed Sep 28 10:21:07 CST 2022\n"+head+"\nERROR: Failed to mmap\nI0928 10:21:08.000000 1 daemon.cpp:1] next start\n")
			require.Len(t, cs, 1)
			c := cs[0]
			assert.Equal(t, KindSanitizer, c.Kind)
			assert.Equal(t, "failed to allocate ReadFileToBuffer", c.SanitizerBug)
			assert.Equal(t, "AddressSanitizer: failed to allocate 0x0 (0) bytes of ReadFileToBuffer"+tail, c.Message)
			assert.Equal(t, int64(45593), c.PID)
			assert.Equal(t, 2, c.StartLine)
			assert.Equal(t, 3, c.EndLine, "the report ends at the recursion guard's line")
			assert.False(t, c.Corrupted, c.CorruptedReason)
			assert.Contains(t, c.Notes, "the sanitizer runtime died in its own mmap (ERROR: Failed to mmap): it prints no stack")

			cut := parseText(t, head+"\n")
			require.Len(t, cut, 1)
			assert.True(t, cut[0].Corrupted, "without the guard's line the stack may follow in the real output")
		})
	}
	// `ERROR: Failed to mmap` alone (another program's message) opens nothing.
	assert.Empty(t, parseText(t, "ERROR: Failed to mmap\n"))
}

// A sanitizer frame whose symbolizer found the file but no line prints
// the file alone (compiler-rt RenderSourceLocation adds `:line` only when
// line > 0): the file is the frame's, not part of the function's name.
func TestSanitizerFrameFileWithoutLine(t *testing.T) {
	var p parser
	p.init(ScanOptions{})
	for _, tc := range []struct{ line, fn, file string }{
		{"    #0 0x56414f0e8ed1 in __asan::CheckUnwind() crtstuff.c", "__asan::CheckUnwind()", "crtstuff.c"},
		{"    #7 0x564177940521 in google::LogMessage::Init(char const*, int, int, void (google::LogMessage::*)()) crtstuff.c", "google::LogMessage::Init(char const*, int, int, void (google::LogMessage::*)())", "crtstuff.c"},
		{"    #3 0x5 in doris::Foo::bar() /root/doris/be/src/olap/foo.h", "doris::Foo::bar()", "/root/doris/be/src/olap/foo.h"},
		// with a line, or a module: as before
		{"    #1 0x5 in doris::Foo::bar() /root/doris/be/src/olap/foo.cpp:12:3", "doris::Foo::bar()", "/root/doris/be/src/olap/foo.cpp"},
		{"    #6 0x5 in gmtime_r (/b/doris_be+0x17ef3885) (BuildId: f58eb5e327529636)", "gmtime_r", ""},
		// a last word that is no source file stays the function's
		{"    #2 0x5 in operator delete(void*, unsigned long)", "operator delete(void*, unsigned long)", ""},
	} {
		f, ok := p.parseSanitizerFrame(tc.line)
		require.True(t, ok, tc.line)
		assert.Equal(t, tc.fn, f.Function, tc.line)
		assert.Equal(t, tc.file, f.File, tc.line)
	}
	assert.False(t, sourceFileOnly("a.c:12"))
	assert.False(t, sourceFileOnly(".c"))
	assert.False(t, sourceFileOnly("(module+0x1)"))
}
