package signature

import (
	"context"
	"strings"
	"testing"

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
		text := "*** SIGSEGV (@0x0) received by PID 1 (TID 0x7f0e2d7fe700) from PID 0; stack trace: ***\n" +
			"    @          0x5a1b2c3 " + name + "\n" +
			"    @          0x5a1b400 doris::Baz::qux()\n"
		crashes, err := symbolize.ParseAll(context.Background(), strings.NewReader(text), symbolize.ScanOptions{})
		require.NoError(t, err)
		require.Len(t, crashes, 1)
		return Default().Generate(crashes[0]).Key
	}
	plain := key("doris::Foo::bar(int)")
	require.True(t, strings.HasSuffix(plain, "doris::Foo::bar"), plain)
	assert.Equal(t, plain, key("doris::Foo::bar\u200b(int)"))
}
