package main

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/crashsig/crashsig/internal/magic"
)

// binarySniff is how much of a file binaryFile reads.
const binarySniff = 64 << 10

// binaryFile says why the regular file at path is no text, or "" when it
// may be text (or cannot be read: the run reported that already). The
// pipeline skips an input whose first 8 KiB are a third control bytes
// (pipeline.SkipBinary) and reads the rest as text, so random bytes,
// encrypted or unknown-format files come out as "no crash found"; this
// names them. The test is stricter than the pipeline's and runs only
// after the input yielded nothing, so it never hides a crash: more than
// 2% control bytes (NUL runs of a log's holes excepted) and more than a
// fifth of the bytes outside valid UTF-8. A log in a legacy encoding
// (GBK, Latin-1) fails the second test but not the first.
func binaryFile(path string) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, binarySniff)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if magic.Compression(head) != "" {
		return "" // the pipeline read it decompressed
	}
	ctl, invalid := binaryShare(head)
	if ctl*50 <= n || invalid*5 <= n {
		return ""
	}
	return fmt.Sprintf("binary data, not a crash log or a core: of its first %d bytes, %d are control bytes and %d are not UTF-8", n, ctl, invalid)
}

// binaryShare counts the control bytes of b (NUL runs of 8 or more, a
// log's holes, and tab, newline, CR, form feed, vertical tab and escape
// excepted) and the bytes outside valid UTF-8 sequences (a sequence cut
// by b's end counts as valid).
func binaryShare(b []byte) (ctl, invalid int) {
	nuls := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			nuls++
			i++
			continue
		}
		if nuls > 0 && nuls < 8 {
			ctl += nuls
		}
		nuls = 0
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' && c != 0x1b || c == 0x7f {
				ctl++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 && utf8.FullRune(b[i:]) {
			invalid++
		}
		i += size
	}
	if nuls > 0 && nuls < 8 {
		ctl += nuls
	}
	return ctl, invalid
}
