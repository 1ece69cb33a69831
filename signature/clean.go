package signature

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// clean removes what no name contains: control bytes, invalid UTF-8, HTML
// entities of scraped pages, characters that print as nothing (Unicode
// format characters: zero width space, byte order mark, soft hyphen, bidi
// controls, which web pages and chats put in pastes), symbol versions and GCC
// clone suffixes of C names, and bounds the input. Other Unicode spaces
// (no-break space) are blanks.
func clean(s string) string {
	if len(s) > maxNormalizeInput {
		s = s[:maxNormalizeInput]
	}
	s = strings.TrimSpace(s)
	if strings.IndexByte(s, '&') >= 0 {
		s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
	}
	s = repairPasteDamage(s)
	s = printable(s)
	for {
		t := stripCloneSuffixes(stripSymbolVersion(s))
		if t == s {
			return s
		}
		s = t
	}
}

// printable drops what prints as nothing or is not text: control bytes,
// invalid UTF-8 and Unicode format characters; other Unicode spaces
// become blanks.
func printable(s string) string {
	needs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r):
			continue
		case r >= 0x80 && unicode.Is(unicode.Zs, r):
			r = ' '
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// stripSymbolVersion drops `@GLIBC_2.2.5`, `@@GLIBCXX_3.4` at the end
// (repeatedly), and the `@plt` of a PLT stub (gdb's `memcpy@plt`): a crash
// in the stub is one on entry to the function it jumps to.
func stripSymbolVersion(s string) string {
	for {
		t := stripOneSymbolVersion(s)
		if t == s {
			return s
		}
		s = t
	}
}

func stripOneSymbolVersion(s string) string {
	i := strings.LastIndexByte(s, '@')
	if i <= 0 {
		return s
	}
	j := i
	for j > 0 && s[j-1] == '@' {
		j--
	}
	v := s[i+1:]
	if v == "" || (v != "plt" && !isVersionTag(v)) {
		return s
	}
	return strings.TrimSpace(s[:j])
}

func isVersionTag(v string) bool {
	if v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	hasUnderscore := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.':
		case c == '_':
			hasUnderscore = true
		default:
			return false
		}
	}
	return hasUnderscore
}

// cloneSuffixes are GCC/LLVM suffixes of compiler-made copies of a function.
// Those with a number take `.<digits>` after them.
var cloneSuffixes = [...]struct{ s string }{
	{".cold"}, {".part"}, {".isra"}, {".constprop"}, {".lto_priv"}, {".llvm"}, {".localalias"}, {".specialized"},
}

// stripCloneSuffixes removes trailing `.cold`, `.part.N`, `.isra.N`,
// `.cold.0` … from a symbol (any number of them, in any order).
func stripCloneSuffixes(s string) string {
	for {
		t := s
		// an optional trailing .<digits>
		j := len(t)
		for j > 0 && t[j-1] >= '0' && t[j-1] <= '9' {
			j--
		}
		base := t
		if j < len(t) && j > 0 && t[j-1] == '.' {
			base = t[:j-1]
		}
		for _, c := range cloneSuffixes {
			if strings.HasSuffix(base, c.s) && len(base) > len(c.s) && true {
				t = base[:len(base)-len(c.s)]
				break
			}
		}
		if t == s || t == "" {
			return s
		}
		s = t
	}
}

// repairPasteDamage undoes what chat and issue trackers do to `::` in
// pasted names: a space put between the colons (`starrocks: :workgroup: :X`,
// keyed as `:X` before) and GitHub's `:thread:` shortcode turned into the
// emoji 🧵 (`std:🧵:join`). Neither form can occur in a C++ or Java name.
func repairPasteDamage(s string) string {
	if strings.Contains(s, ": :") {
		s = strings.ReplaceAll(s, ": :", "::")
	}
	if strings.Contains(s, ":\U0001F9F5:") {
		s = strings.ReplaceAll(s, ":\U0001F9F5:", "::thread::")
	}
	return s
}
