// Package magic recognizes the compression formats crashsig reads by their
// first bytes, for the packages that must tell them apart without reading
// them: the pipeline (which decompresses text and cores), the ELF reader
// (which cannot map a compressed binary and says so) and the CLI; and it
// measures how much of a head is text (TextBytes), for the pipeline's
// binary sniff and the CLI's note on an input that yielded nothing.
package magic

import (
	"bytes"
	"unicode/utf8"
)

// HoleNULs is the shortest NUL run taken for a hole in a log file (the
// preallocated tail a crash leaves, which the next process writes after),
// not binary content; the scanner's threshold too.
const HoleNULs = 8

// TextBytes counts, in head, the bytes that are not in a hole (text), the
// control bytes among them (tab, newline, CR, form feed, vertical tab and
// escape excepted; NULs of runs shorter than HoleNULs count) and the bytes
// outside valid UTF-8 sequences (a sequence cut by head's end counts as
// valid). A log that starts with a hole is still text. The scanner's
// binary-junk weight (symbolize/internal/scan, binaryWeight) is another
// measure for another question (is this line junk to skip?) and counts
// vertical tab and DEL too; this one decides about whole inputs.
func TextBytes(head []byte) (text, control, notUTF8 int) {
	nuls := 0
	flush := func() {
		if nuls < HoleNULs {
			control += nuls
			text += nuls
		}
		nuls = 0
	}
	for i := 0; i < len(head); {
		c := head[i]
		if c == 0 {
			nuls++
			i++
			continue
		}
		flush()
		text++
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' && c != 0x1b {
				control++
			}
			i++
			continue
		}
		if !utf8.FullRune(head[i:]) {
			text += len(head) - i - 1 // a sequence cut by head's end
			break
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			notUTF8++
		}
		text += size - 1
		i += size
	}
	flush()
	return text, control, notUTF8
}

// Compression names the compression format whose magic bytes start head
// ("gzip", "zstd", "xz", "bzip2"), or "" for none of them. head needs at
// most 6 bytes.
func Compression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "xz"
	case len(head) >= 4 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9':
		return "bzip2"
	}
	return ""
}
