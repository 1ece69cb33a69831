//go:build unix

package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// argSep separates the arguments ChildMain reads from its environment
// variable (an environment variable cannot hold a NUL).
const argSep = "\x1f"

// ChildMain is a TestMain for a program's tests that run the program
// itself in a child process (to send it a signal): when the environment
// variable env is set, it runs main with the arguments env holds
// (separated by U+001F) under the name name, and exits 0 when main
// returns; otherwise it runs the tests.
func ChildMain(m *testing.M, env, name string, main func()) {
	if args, ok := os.LookupEnv(env); ok {
		os.Args = append([]string{name}, strings.Split(args, argSep)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// SIGTERMDuringCoreCopy runs the test binary as a child running main (see
// ChildMain; env is its variable) with the arguments args gives for a
// FIFO named core.41237.gz, writes the compressed core at corePath into
// the FIFO but for its gzip trailer (so that the temporary copy of the
// core is written and waits for the rest), sends SIGTERM once the copy is
// there, and returns the child's exit code (-1: killed by the signal), its
// standard error and the temporary copies it left behind.
func SIGTERMDuringCoreCopy(t *testing.T, env, corePath string, args func(fifo string) []string) (code int, stderr string, left []string) {
	t.Helper()
	dir, tmp := t.TempDir(), t.TempDir()
	fifo := filepath.Join(dir, "core.41237.gz")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	core, err := os.ReadFile(corePath)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+strings.Join(args(fifo), argSep), "TMPDIR="+tmp)
	var errs bytes.Buffer
	cmd.Stderr = &errs
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Write(core[:len(core)-8])
	require.NoError(t, err)
	copies := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "crashsig-core-*"))
		return m
	}
	require.Eventually(t, func() bool { return len(copies()) > 0 }, 10*time.Second, 10*time.Millisecond, "no temporary copy of the core")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, errs.String())
	return exit.ExitCode(), errs.String(), copies()
}
