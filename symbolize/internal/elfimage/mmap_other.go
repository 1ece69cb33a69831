//go:build !unix

package elfimage

import (
	"errors"
	"os"
)

// mmapFile is not available here; OpenBinary falls back to reads.
func mmapFile(f *os.File, size int64) ([]byte, func() error, error) {
	return nil, nil, errors.New("symbolize: mmap not supported on this platform")
}
