package signature

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sanitizer runtime's failure in itself is keyed by that failure alone
// (crashsig-sig/12): the same check tripped by two different callers, and
// a report of it without any program frame, share one key; an ordinary
// ASAN report keeps its frames.
func TestSanitizerRuntimeFailureKey(t *testing.T) {
	const check = `AddressSanitizer: CHECK failed: asan_thread.cpp:369 "((ptr[0] == kCurrentStackFrameMagic)) != (0)" (0x0, 0x0) (tid=1)` + "\n" +
		"    #0 0x557a503468e1 in __asan::CheckUnwind() (/b/doris_be+0x1)\n" +
		"    #1 0x557a50361182 in __sanitizer::CheckFailed(char const*, int, char const*, unsigned long long, unsigned long long) (/b/doris_be+0x2)\n" +
		"    #2 0x557a5034a97b in __asan::AsanThread::GetStackFrameAccessByAddr(unsigned long, __asan::AsanThread::StackFrameAccess*) (/b/doris_be+0x3)\n"
	g, err := NewGenerator(Options{})
	require.NoError(t, err)
	want := "ASAN(CHECK failed: ((ptr[0] == kCurrentStackFrameMagic)) != (0))"
	bare := g.Generate(parseText(t, check))
	viaGlog := g.Generate(parseText(t, check+"    #3 0x5586889a1405 in localtime_r (/b/doris_be+0x4)\n    #4 0x5586b4ce3eea in google::LogMessageTime::LogMessageTime(long, double) logging.cc:12\n"))
	viaThrift := g.Generate(parseText(t, check+"    #3 0x557a3c1d2f10 in doris::ClientCacheHelper::reopen_client(void**, int) client_cache.cpp:160:5\n"))
	for _, s := range []Signature{bare, viaGlog, viaThrift} {
		assert.Equal(t, want, s.Key)
	}
	assert.Equal(t, "ASAN(failed to allocate ReadFileToBuffer)",
		g.Generate(parseText(t, "==1==ERROR: AddressSanitizer failed to allocate 0x0 (0) bytes of ReadFileToBuffer (error code: 22)\nERROR: Failed to mmap\n")).Key)

	uaf := g.Generate(parseText(t, "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6 at pc 0x5 bp 0x4 sp 0x3\n"+
		"READ of size 8 at 0x6 thread T1\n"+
		"    #0 0x5586b4ce3eea in doris::Tablet::rowset_with_max_version() tablet.cpp:10:3\n"+
		"    #1 0x5586b4ce3eeb in doris::Compaction::execute() compaction.cpp:20:3\n"))
	assert.Equal(t, "FAULT | doris::Tablet::rowset_with_max_version", uaf.Key)
}
