package elfimage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// Options configure Open, New and LocateDebugFile.
type Options struct {
	// MaxSection bounds a section's (decompressed) size; ≤ 0 means 8 GiB.
	MaxSection int64
	// DebugFile is an explicit debug file, tried first by LocateDebugFile.
	DebugFile string
	// DebugDirs are the debug directories (.build-id trees and debuglink
	// directories) LocateDebugFile searches.
	DebugDirs []string
}

// Errors of this package. Package symbolize exports these very values
// under the same names (symbolize/binary.go documents them), so errors.Is
// gives the same answer on either side of the boundary.
var (
	ErrNotELF       = errors.New("symbolize: not an ELF file")
	ErrNoDebugInfo  = errors.New("symbolize: no DWARF debug info found")
	ErrDebuglinkCRC = errors.New("symbolize: debug file CRC32 does not match .gnu_debuglink")
	ErrBadDWARF     = errors.New("symbolize: malformed DWARF")
	ErrClosed       = errors.New("symbolize: binary is closed")
	ErrTooLarge     = errors.New("symbolize: section exceeds size limit")
	// ErrCompressed: the file is a gzip, zstd, xz or bzip2 stream; a
	// binary is read in place (random access), so it must be decompressed
	// first. Such an error matches ErrNotELF too.
	ErrCompressed = errors.New("symbolize: a compressed file (a binary is read in place: decompress it first)")
)

// BuildIDMismatch is a debug-file candidate whose build-id is not the
// binary's (symbolize turns it into its *BuildIDMismatchError).
type BuildIDMismatch struct {
	Binary, DebugFile string
	BinaryID, DebugID string
}

// Error has the text of symbolize.BuildIDMismatchError.
func (e *BuildIDMismatch) Error() string {
	return fmt.Sprintf("symbolize: debug file %s has build-id %q, binary %s has %q", e.DebugFile, e.DebugID, e.Binary, e.BinaryID)
}

// FileSize returns the size of an open file.
func FileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// CStringAt returns the NUL-terminated string at off in b (nil when off
// is out of range or no NUL follows). The DWARF index uses it for its
// string sections too.
func CStringAt(b []byte, off uint64) []byte {
	if off >= uint64(len(b)) {
		return nil
	}
	s := b[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return nil
}
