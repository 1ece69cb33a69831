//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileID returns the device and inode of fi, the identity --state records.
func fileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}
