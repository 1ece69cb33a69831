package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCollectorReportsWithinThreeSeconds appends a crash to a followed
// be.out and stops writing, as a crashed backend does: the JSON line
// arrives within 3 s of the crash's last line, and it is a
// pipeline.Result (unknown keys refused), byte-identical to what the
// pipeline gives for the same text.
func TestCollectorReportsWithinThreeSeconds(t *testing.T) {
	// A Doris check failure and its abort dump: the last line is a frame,
	// so only the idle flush can tell that the incident is complete.
	crash, err := os.ReadFile("../../testdata/formats/f3-doris-check-then-f1.txt")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, []byte("I0303 10:15:02.118230 1 a.cpp:1] started\n"), 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(ctx, path, true, pipeline.Options{NoSystemDebugDirs: true}, pw, io.Discard)
		pw.Close()
	}()
	time.Sleep(time.Second) // the collector is running and following
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(crash)
	require.NoError(t, err)
	f.Close()
	written := time.Now()

	lines := make(chan []byte, 1)
	go func() {
		l, _ := bufio.NewReader(pr).ReadBytes('\n')
		lines <- l
	}()
	var line []byte
	select {
	case line = <-lines:
	case <-time.After(5 * time.Second):
		cancel()
		pr.Close()
		t.Fatal("no crash reported 5 s after its last line")
	}
	elapsed := time.Since(written)
	assert.Less(t, elapsed, 3*time.Second)
	t.Logf("crash reported %v after its last line", elapsed.Round(time.Millisecond))
	cancel()
	pr.Close()
	assert.Equal(t, 0, <-done)

	var res pipeline.Result
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&res))
	assert.Equal(t, "SIGABRT", res.Signal)
	assert.Equal(t, pipeline.SchemaVersion, res.SchemaVersion)
	assert.Equal(t, 2, res.StartLine)

	assert.Contains(t, strings.Join(res.Notes, "\n"), "without input", "emitted by the idle flush")

	// The same text through the pipeline directly, as classify --json:
	// the same Result but for the idle note.
	p, err := pipeline.New(context.Background(), pipeline.Options{NoSystemDebugDirs: true})
	require.NoError(t, err)
	defer p.Close()
	for want, err := range p.Text(context.Background(), path, io.MultiReader(strings.NewReader("I0303 10:15:02.118230 1 a.cpp:1] started\n"), bytes.NewReader(crash))) {
		require.NoError(t, err)
		for _, pair := range [][2]any{{want.Signature, res.Signature}, {want.Classification, res.Classification}, {want.Threads, res.Threads}} {
			a, _ := json.Marshal(pair[0])
			b, _ := json.Marshal(pair[1])
			assert.JSONEq(t, string(a), string(b))
		}
		break
	}
}

// TestCollectorOnce reads a file once without following: its line is
// byte for byte the one `crashsig classify --json` prints for the file
// (the CLI's golden, made from the same relative path), '<' and '&'
// unescaped.
func TestCollectorOnce(t *testing.T) {
	const file = "../../testdata/formats/f3-doris-check-then-f1.txt"
	var out bytes.Buffer
	code := run(context.Background(), file, false, pipeline.Options{NoSystemDebugDirs: true}, &out, io.Discard)
	require.Equal(t, 0, code)
	var res pipeline.Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	assert.Equal(t, "check", string(res.Kind))

	golden, err := os.ReadFile("../../testdata/golden/crashsig/classify-formats.jsonl")
	require.NoError(t, err)
	var want string
	for _, l := range strings.SplitAfter(string(golden), "\n") {
		if strings.HasPrefix(l, `{"schema_version":1,"source":"`+file+`",`) {
			want += l
		}
	}
	require.NotEmpty(t, want)
	require.Contains(t, want, "<", "the line holds a character a default encoder escapes")
	assert.Equal(t, want, out.String())
}

// TestMain runs main itself when COLLECTOR_TEST_ARG is set (the followed
// file), so that a test can send the process a signal.
func TestMain(m *testing.M) {
	if arg, ok := os.LookupEnv("COLLECTOR_TEST_ARG"); ok {
		os.Args = []string{"collector", arg}
		main()
	}
	os.Exit(m.Run())
}

// TestCollectorSIGTERM: a collector stopped by SIGTERM (systemd, docker
// stop, kubernetes) still reports the crash it has read but not yet
// emitted (the idle flush waits 2 s for more lines), as Ctrl-C does, and
// exits 0. Before, SIGTERM killed it at once and the crash was lost.
func TestCollectorSIGTERM(t *testing.T) {
	crash, err := os.ReadFile("../../testdata/formats/f3-doris-check-then-f1.txt")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "be.out")
	require.NoError(t, os.WriteFile(path, crash, 0o644)) // the last line is a frame: only the idle flush or the end emits it
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "COLLECTOR_TEST_ARG="+path)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	// Signalled once it has read the whole file, within the 2 s idle
	// flush (a fixed second was too short under -race with other
	// packages' tests running: it had not read the crash yet).
	require.Eventually(t, func() bool { return readUpTo(cmd.Process.Pid, path, int64(len(crash))) },
		10*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait(), errs.String())
	var res pipeline.Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), "stdout: %q", out.String())
	assert.Equal(t, "SIGABRT", res.Signal)
}

// TestCollectorOnceCompressed: --follow=false reads a file as classify
// does: a rotated, compressed be.out gives its crash, and binary junk is
// refused with the reason. Before, both printed nothing and exited 0.
func TestCollectorOnceCompressed(t *testing.T) {
	crash, err := os.ReadFile("../../testdata/formats/f3-doris-check-then-f1.txt")
	require.NoError(t, err)
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(crash)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	rotated := filepath.Join(dir, "be.out.1.gz")
	require.NoError(t, os.WriteFile(rotated, gz.Bytes(), 0o644))
	var out, errs bytes.Buffer
	require.Equal(t, 0, run(context.Background(), rotated, false, pipeline.Options{NoSystemDebugDirs: true}, &out, &errs), errs.String())
	var res pipeline.Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), "stdout: %q", out.String())
	assert.Equal(t, "SIGABRT", res.Signal)

	junk := filepath.Join(dir, "be.out")
	require.NoError(t, os.WriteFile(junk, bytes.Repeat([]byte{0, 0xff, 0x13, 0x80}, 4096), 0o644))
	out.Reset()
	errs.Reset()
	assert.Equal(t, 1, run(context.Background(), junk, false, pipeline.Options{NoSystemDebugDirs: true}, &out, &errs))
	assert.Empty(t, out.String())
	assert.Contains(t, errs.String(), "skipped")
}

// TestCollectorWaitsAloud: following a file that does not exist yet waits
// for it (tail -F), and says so on stderr; it waited in silence, so a
// mistyped path looked like a quiet log forever.
func TestCollectorWaitsAloud(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log", "be.out")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out, errs bytes.Buffer
	assert.Equal(t, 0, run(ctx, path, true, pipeline.Options{NoSystemDebugDirs: true}, &out, &errs))
	assert.Equal(t, "collector: "+path+" does not exist yet; waiting for it\n", errs.String())
	assert.Empty(t, out.String())
}

// readUpTo reports whether process pid holds path open at offset size or
// past it (Linux /proc).
func readUpTo(pid int, path string, size int64) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err != nil || target != path {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		var pos int64
		if _, err := fmt.Sscanf(string(info), "pos:\t%d", &pos); err == nil && pos >= size {
			return true
		}
	}
	return false
}
