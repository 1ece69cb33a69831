package main

import (
	"fmt"
	"io"
	"os"

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
// fifth of the bytes outside valid UTF-8 (magic.TextBytes, which the
// pipeline's sniff counts with too). A log in a legacy encoding
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
	_, ctl, invalid := magic.TextBytes(head)
	if ctl*50 <= n || invalid*5 <= n {
		return ""
	}
	return fmt.Sprintf("binary data, not a crash log or a core: of its first %d bytes, %d are control bytes and %d are not UTF-8", n, ctl, invalid)
}
