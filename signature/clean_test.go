package signature

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNormalizeInvisibleCharacters: a name pasted from a web page or a chat
// (Confluence, Slack, Lark) may carry characters that print as nothing (zero
// width space, byte order mark, soft hyphen, bidi controls) or as a blank
// (no-break space). The name the reader sees must get the key of the name
// as printed, else one crash gets two keys that look the same.
func TestNormalizeInvisibleCharacters(t *testing.T) {
	const want = "doris::Foo::bar"
	for _, in := range []string{
		"doris::Foo::bar\u200b(int)",
		"\ufeffdoris::Foo::bar(int)",
		"doris::\u200bFoo::bar(int)",
		"doris::Foo::bar\u00ad(int)",
		"doris::Foo::bar\u202e(int)",
		"doris::Foo::bar\u2060(int)",
		"void\u00a0doris::Foo::bar(int)",
		"void\u3000doris::Foo::bar(int)",
	} {
		assert.Equal(t, want, Normalize(in), "%q", in)
	}

	key := func(name string) string {
		return keyOfText(t, "*** SIGSEGV (@0x0) received by PID 1 (TID 0x7f0e2d7fe700) from PID 0; stack trace: ***\n"+
			"    @          0x5a1b2c3 "+name+"\n"+
			"    @          0x5a1b400 doris::Baz::qux()\n")
	}
	plain := key("doris::Foo::bar(int)")
	require.True(t, strings.HasSuffix(plain, "doris::Foo::bar"), plain)
	assert.Equal(t, plain, key("doris::Foo::bar\u200b(int)"))
}

// TestNormalizePLTStub: gdb (and perf) name a PLT stub `memcpy@plt`; a crash
// in the stub is a crash on entry to the function it jumps to, and must key
// like it (a crash-site rule's frame, not a significant frame of its own).
func TestNormalizePLTStub(t *testing.T) {
	assert.Equal(t, "memcpy", Normalize("memcpy@plt"))
	assert.Equal(t, "doris::Foo::bar", Normalize("_ZN5doris3Foo3barEv@plt"))
	assert.Equal(t, "doris::Foo::bar", Normalize("doris::Foo::bar()@plt"))

	key := func(frame0 string) string {
		return keyOfText(t, "Program terminated with signal SIGSEGV, Segmentation fault.\n"+
			"#0  "+frame0+"\n"+
			"#1  0x00005555555551db in starrocks::Status::to_string[abi:cxx11](int) const (this=0x7fffffffe54f, k=1) at crash.cc:24\n"+
			"#2  0x00005555555554b9 in starrocks::pipeline::ScanOperator::_trigger_next_scan (this=0x1, k=<optimized out>) at crash.cc:30\n")
	}
	want := key("__memmove_avx_unaligned_erms () at ../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:314")
	require.Equal(t, "FAULT | memcpy | starrocks::Status::to_string", want)
	assert.Equal(t, want, key("0x00007ffff7e4a4c0 in memcpy@plt () from /lib/x86_64-linux-gnu/libc.so.6"))
}

// keyOfText is the key of the one incident of a crash text.
func keyOfText(t *testing.T, text string) string {
	t.Helper()
	crashes, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{})
	require.NoError(t, err)
	require.Len(t, crashes, 1)
	return Default().Generate(crashes[0]).Key
}

// TestKindValidUTF8: a key is text. A check message with bytes that are
// not UTF-8 (a binary value streamed into the message) gave a key with
// those bytes, which JSON prints as U+FFFD: the key read back from
// `classify --json` was not the key, nor its ID the ID of it.
func TestKindValidUTF8(t *testing.T) {
	check := func(expr string) string {
		return keyOfText(t, "F0611 08:02:41.118230 90211 threadpool.cpp:247] Check failed: "+expr+" \n*** Check failure stack trace: ***\n")
	}
	want := check("p != nullptr")
	require.Equal(t, "EMPTY: CHECK(p != nullptr)", want)
	got := check("p\xff\xfe != nullptr")
	assert.True(t, utf8.ValidString(got), "%q", got)
	assert.Equal(t, want, got)
}

// TestUnsymbolizedModuleText: a module name printed with bytes that are
// not text (invalid UTF-8, an escape) is keyed without them, like a
// function name: the key stays valid UTF-8 and prints no escape sequence
// to the terminal that shows it.
func TestUnsymbolizedModuleText(t *testing.T) {
	asan := func(module string) string {
		return keyOfText(t, "==41233==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x55d1c2b3a4f5 bp 0x7f3a2bffe9d0 sp 0x7f3a2bffe9c8 T0)\n"+
			"    #0 0x55d1c2b3a4f4  (/opt/doris/be/lib/"+module+"+0x2a2c0ad)\n"+
			"    #1 0x55d1c2b3a4f9  (/opt/doris/be/lib/"+module+"+0x2a2c0f0)\n")
	}
	want := asan("doris_be")
	require.Equal(t, "FAULT | doris_be+0x2a2c0ad", want)
	for _, m := range []string{"doris\xff\xfe_be", "doris\x1b_be"} {
		got := asan(m)
		assert.True(t, utf8.ValidString(got), "%q", got)
		assert.Equal(t, want, got)
	}
}
