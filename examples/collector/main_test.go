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
	"sync"
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
		done <- run(ctx, path, config{follow: true, opts: pipeline.Options{NoSystemDebugDirs: true}}, pw, io.Discard)
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
	code := run(context.Background(), file, config{follow: false, opts: pipeline.Options{NoSystemDebugDirs: true}}, &out, io.Discard)
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

// TestMain runs main itself when COLLECTOR_TEST_ARGS is set (its
// arguments, one a line), so that a test can send the process a signal.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("COLLECTOR_TEST_ARGS"); ok {
		os.Args = append([]string{"collector"}, strings.Split(args, "\n")...)
		main()
	}
	os.Exit(m.Run())
}

// collector starts the collector as a process of its own with args.
func collector(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "COLLECTOR_TEST_ARGS="+strings.Join(args, "\n"))
	out, errs := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out, errs
}

// syncBuffer is a bytes.Buffer a test reads while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
	cmd, out, errs := collector(t, path)
	// Signalled once it has read the whole file, within the 2 s idle
	// flush (a fixed second was too short under -race with other
	// packages' tests running: it had not read the crash yet).
	require.Eventually(t, func() bool { return readUpTo(cmd.Process.Pid, path, int64(len(crash))) },
		10*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait(), errs.String())
	var res pipeline.Result
	require.NoError(t, json.Unmarshal([]byte(out.String()), &res), "stdout: %q", out.String())
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
	require.Equal(t, 0, run(context.Background(), rotated, config{follow: false, opts: pipeline.Options{NoSystemDebugDirs: true}}, &out, &errs), errs.String())
	var res pipeline.Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), "stdout: %q", out.String())
	assert.Equal(t, "SIGABRT", res.Signal)

	junk := filepath.Join(dir, "be.out")
	require.NoError(t, os.WriteFile(junk, bytes.Repeat([]byte{0, 0xff, 0x13, 0x80}, 4096), 0o644))
	out.Reset()
	errs.Reset()
	assert.Equal(t, 1, run(context.Background(), junk, config{follow: false, opts: pipeline.Options{NoSystemDebugDirs: true}}, &out, &errs))
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
	assert.Equal(t, 0, run(ctx, path, config{follow: true, opts: pipeline.Options{NoSystemDebugDirs: true}}, &out, &errs))
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

const filler = "I0303 10:15:02.118230 1 a.cpp:1] started\n"

// crashes reads testdata/formats files and their signature keys.
func crashes(t *testing.T, names ...string) ([][]byte, []string) {
	t.Helper()
	p, err := pipeline.New(context.Background(), pipeline.Options{NoSystemDebugDirs: true})
	require.NoError(t, err)
	defer p.Close()
	var texts [][]byte
	var keys []string
	for _, name := range names {
		b, err := os.ReadFile("../../testdata/formats/" + name + ".txt")
		require.NoError(t, err)
		texts = append(texts, b)
		for r, err := range p.Reader(context.Background(), name, bytes.NewReader(b)) {
			require.NoError(t, err)
			keys = append(keys, r.Signature.Key)
		}
	}
	require.Len(t, keys, len(names), "one incident a file")
	return texts, keys
}

// keysOf returns the signature keys of the JSON lines in out.
func keysOf(t *testing.T, out string) []string {
	t.Helper()
	var keys []string
	for l := range strings.Lines(out) {
		var res pipeline.Result
		require.NoError(t, json.Unmarshal([]byte(l), &res), l)
		keys = append(keys, res.Signature.Key)
	}
	return keys
}

// waitKeys waits until out holds len(want) results and checks they are want.
func waitKeys(t *testing.T, out *syncBuffer, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= len(want) },
		15*time.Second, 20*time.Millisecond, "waiting for %d results; have %q", len(want), out.String())
	require.Equal(t, want, keysOf(t, out.String()))
}

func appendFile(t *testing.T, path string, b ...[]byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	for _, b := range b {
		_, err = f.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
}

func readState(t *testing.T, name string) state {
	t.Helper()
	s, err := loadState(name)
	require.NoError(t, err)
	require.NotNil(t, s)
	return *s
}

// TestCollectorRestart: a collector with --state restarted mid-stream
// (stopped by SIGTERM, then killed by SIGKILL once it has reported a
// crash) reports every crash once: those written while it was down by
// the next run, none again. Before, a restarted collector started at
// byte 0 and reported every old crash again.
func TestCollectorRestart(t *testing.T) {
	c, keys := crashes(t, "f3-doris-check-then-f1", "f9-kernel-segfault", "f2-glog04-preamble", "f4-terminate-bad-alloc", "f6-ubsan")
	dir := t.TempDir()
	path, st := filepath.Join(dir, "be.out"), filepath.Join(dir, "collector.state")
	appendFile(t, path, []byte(filler), c[0])

	cmd, out, errs := collector(t, "--state", st, path)
	waitKeys(t, out, keys[0])
	appendFile(t, path, []byte(filler), c[1])
	waitKeys(t, out, keys[0], keys[1])
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), errs.String())
	assert.Equal(t, keys[:2], keysOf(t, out.String()), "nothing more at the stop")

	appendFile(t, path, []byte(filler), c[2]) // while no collector runs
	cmd, out, errs = collector(t, "--state", st, path)
	waitKeys(t, out, keys[2])
	assert.Contains(t, errs.String(), "collector: resuming at byte ")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	appendFile(t, path, []byte(filler), c[3])
	waitKeys(t, out, keys[2], keys[3])
	// Killed once the state after the fourth crash is written (a kill
	// between its report and the write would report it again).
	require.Eventually(t, func() bool { return readState(t, st).Offset > fi.Size() }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()

	appendFile(t, path, []byte(filler), c[4])
	cmd, out, errs = collector(t, "--state", st, path)
	waitKeys(t, out, keys[4])
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), errs.String())
	assert.Equal(t, keys[4:], keysOf(t, out.String()))
}

// runFor runs the collector in this process until it has reported n
// crashes and then 300 ms more, or for 5 s at most; started is called
// once run is started, with the state file name.
func runFor(t *testing.T, path string, c config, n int, started func()) (keys []string, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.follow, c.opts.NoSystemDebugDirs = true, true
	out, errs := &syncBuffer{}, &syncBuffer{}
	done := make(chan int)
	go func() { done <- run(ctx, path, c, out, errs) }()
	if started != nil {
		started()
	}
	assert.Eventually(t, func() bool { return strings.Count(out.String(), "\n") >= n }, 5*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	cancel()
	assert.Equal(t, 0, <-done, errs.String())
	return keysOf(t, out.String()), errs.String()
}

// TestCollectorStateOtherFile: a state recorded for another file (be.out
// rotated since: another inode) is ignored and the file is read from its
// start; the state of the same file resumes at its offset, at the next
// line when the offset is inside one.
func TestCollectorStateOtherFile(t *testing.T) {
	c, keys := crashes(t, "f3-doris-check-then-f1", "f9-kernel-segfault")
	dir := t.TempDir()
	path, st := filepath.Join(dir, "be.out"), filepath.Join(dir, "collector.state")
	appendFile(t, path, c[0], []byte(filler), c[1])
	old, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Rename(path, path+".1"))
	appendFile(t, path, c[0], []byte(filler), c[1])
	cur, err := os.Stat(path)
	require.NoError(t, err)
	inFiller := int64(len(c[0]) + 5)

	for _, id := range []os.FileInfo{old, cur} {
		dev, ino, ok := fileID(id)
		require.True(t, ok)
		b, err := json.Marshal(state{Dev: dev, Ino: ino, Offset: inFiller})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(st, b, 0o644))
		got, errs := runFor(t, path, config{state: st}, 1, nil)
		if id == old {
			assert.Equal(t, keys, got, "another file: from its start")
			assert.Contains(t, errs, "is of another file (rotated): reading from the start")
		} else {
			assert.Equal(t, keys[1:], got, "the same file: from the line after the offset")
			assert.Contains(t, errs, fmt.Sprintf("resuming at byte %d", inFiller))
		}
		s := readState(t, st)
		dev, ino, _ = fileID(cur)
		assert.Equal(t, state{Dev: dev, Ino: ino, Offset: int64(len(c[0]) + len(filler) + bytes.IndexByte(c[1], '\n') + 1)}, s,
			"the state is the current file's, after the last crash")
	}

	// A damaged state (cut by a full disk) does not stop the collector: it
	// says so, reads as without a state and writes a good one.
	require.NoError(t, os.WriteFile(st, []byte(`{"dev":12,"ino`), 0o644))
	got, errs := runFor(t, path, config{state: st}, 2, nil)
	assert.Equal(t, keys, got)
	assert.Contains(t, errs, "not a collector state")
	assert.Contains(t, errs, "ignoring it (crashes already reported may be reported again)")
	dev, ino, _ := fileID(cur)
	assert.Equal(t, dev, readState(t, st).Dev)
	assert.Equal(t, ino, readState(t, st).Ino)
}

// TestCollectorFromEnd: --from-end without a state starts at the end of
// be.out: the crash already in it is not reported, one written after the
// start is; the state records the start at once, so that a restart before
// any crash does not skip what was written in between.
func TestCollectorFromEnd(t *testing.T) {
	c, keys := crashes(t, "f3-doris-check-then-f1", "f9-kernel-segfault")
	dir := t.TempDir()
	path, st := filepath.Join(dir, "be.out"), filepath.Join(dir, "collector.state")
	appendFile(t, path, c[0])
	got, _ := runFor(t, path, config{state: st, fromEnd: true}, 1, func() {
		require.Eventually(t, func() bool {
			s, err := loadState(st)
			return err == nil && s != nil
		}, 5*time.Second, 10*time.Millisecond)
		assert.Equal(t, int64(len(c[0])), readState(t, st).Offset)
		appendFile(t, path, []byte(filler), c[1])
	})
	assert.Equal(t, keys[1:], got)
}
