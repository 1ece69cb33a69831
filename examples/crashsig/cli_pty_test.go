//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openPTY returns the two ends of a new pseudo-terminal, or skips.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip("no /dev/ptmx:", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skip("unlockpt:", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skip("ptsname:", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skip("open pts:", err)
	}
	return m, s
}

// TestProgressOnTerminal: with stderr on a terminal, a run over a second
// shows a progress line (inputs, incidents, bytes, the current input),
// cleared at the end; the output itself is unchanged.
func TestProgressOnTerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	crash, err := os.ReadFile(crashTxt)
	require.NoError(t, err)
	seen := make(chan string, 1)
	go func() {
		var all bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			all.Write(buf[:n])
			if err != nil || strings.Contains(all.String(), "\r\x1b[K\r\x1b[K") || strings.Contains(all.String(), "incidents, ") && strings.HasSuffix(all.String(), "\r\x1b[K") {
				seen <- all.String()
				return
			}
		}
	}()
	var out bytes.Buffer
	code := run(context.Background(), []string{"classify", "-"}, &slowReader{strings.NewReader(string(crash)), 1500 * time.Millisecond}, &out, slave)
	slave.Close()
	require.Equal(t, exitOK, code)
	assert.Contains(t, out.String(), "key:")
	select {
	case s := <-seen:
		assert.Contains(t, s, "crashsig: 1 inputs, 0 incidents")
		assert.Contains(t, s, "MB read: -")
	case <-time.After(5 * time.Second):
		t.Fatal("no progress line on the terminal")
	}
}
