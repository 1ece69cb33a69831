// Package magic recognizes the compression formats crashsig reads by their
// first bytes, for the packages that must tell them apart without reading
// them: the pipeline (which decompresses text and cores), the ELF reader
// (which cannot map a compressed binary and says so) and the CLI.
package magic

import "bytes"

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
