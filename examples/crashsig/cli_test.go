package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/signature"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	crashTxt   = "../../testdata/formats/f2-glog04-preamble.txt"
	noCrashTxt = "../../testdata/formats/README.md"
)

// TestExitCodes: 0 crashes found, 1 an input unreadable, 2 usage,
// 3 everything read and no crash, for classify, explain and buckets.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "be.INFO")
	require.NoError(t, os.WriteFile(empty, []byte("I0303 10:15:02.118230 1 a.cpp:1] nothing\n"), 0o644))
	missing := filepath.Join(dir, "missing.log")
	for _, cmd := range []string{"classify", "explain", "buckets"} {
		cases := []struct {
			args []string
			want int
		}{
			{[]string{crashTxt}, exitOK},
			{[]string{empty}, exitNoCrash},
			{[]string{missing}, exitInput},
			{[]string{crashTxt, missing}, exitInput},
			{nil, exitUsage},
			{[]string{"--no-such-flag", crashTxt}, exitUsage},
		}
		for _, c := range cases {
			code, _, errs := runCLI(t, "", append([]string{cmd}, c.args...)...)
			assert.Equal(t, c.want, code, "%s %v: %s", cmd, c.args, errs)
		}
	}
	code, _, _ := runCLI(t, "", "no-such-command")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, "")
	assert.Equal(t, exitUsage, code)
	// Skipped inputs are not failures: a directory of junk holds no crash.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.bin"), bytes.Repeat([]byte{0, 1, 2, 3}, 100), 0o644))
	code, _, errs := runCLI(t, "", "classify", filepath.Join(dir, "junk.bin"))
	assert.Equal(t, exitNoCrash, code)
	assert.Contains(t, errs, "junk.bin: skipped: binary data")
}

// TestHelpDocumentsExitCodes: `crashsig help` lists the exit codes.
func TestHelpDocumentsExitCodes(t *testing.T) {
	code, out, _ := runCLI(t, "", "help")
	require.Equal(t, exitOK, code)
	for _, want := range []string{"exit status", "0  crashes found", "1  an input could not be read", "2  usage", "3  every input was read and none held a crash"} {
		assert.Contains(t, out, want)
	}
}

// TestWriteErrorsAreFatal runs commands with stdout on /dev/full: the
// output is lost, so the exit code is 1 and stderr says why.
func TestWriteErrorsAreFatal(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	for _, args := range [][]string{
		{"classify", crashTxt},
		{"classify", "--json", crashTxt},
		{"explain", crashTxt},
		{"buckets", "--json", crashTxt},
		{"catalog", "show"},
		{"--version"},
		{"help"},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), full, &errb)
		assert.Equal(t, exitInput, code, "%v", args)
		assert.Contains(t, errb.String(), "writing output", "%v", args)
		assert.Equal(t, 1, strings.Count(errb.String(), "crashsig:"), "one prefix: %q", errb.String())
	}
}

// TestFlagsAfterPaths: flags may follow the paths (`classify FILE --json`).
func TestFlagsAfterPaths(t *testing.T) {
	code, before, _ := runCLI(t, "", "classify", "--json", crashTxt)
	require.Equal(t, exitOK, code)
	code, after, errs := runCLI(t, "", "classify", crashTxt, "--json")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, before, after)
	assert.True(t, json.Valid([]byte(strings.TrimSpace(after))))

	code, out, _ := runCLI(t, "", "buckets", crashTxt, "--json", "--threshold", "0")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"schema_version":1`)

	// "--" ends the flags: a file named like a flag is read as a file.
	code, _, errs = runCLI(t, "", "classify", "--", "--json")
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "--json: stat: no such file")
}

// TestVersionFlag: --version (and `version`) print the library version,
// the catalog revision and the signature algorithm.
func TestVersionFlag(t *testing.T) {
	cat, err := catalog.Default()
	require.NoError(t, err)
	for _, arg := range []string{"--version", "version"} {
		code, out, _ := runCLI(t, "", arg)
		require.Equal(t, exitOK, code)
		assert.Contains(t, out, "crashsig "+pipeline.Version+"\n")
		assert.Contains(t, out, "catalog revision "+cat.Revision()+"\n")
		assert.Contains(t, out, "signature algorithm "+signature.Algorithm+"\n")
		assert.Contains(t, out, fmt.Sprintf("result schema %d\n", pipeline.SchemaVersion))
	}
}

// TestVersionOptions: --version-of and --assume-version fill the version
// of crashes that print none, say so, and reject bad values as usage.
func TestVersionOptions(t *testing.T) {
	f := "../../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt"
	var res pipeline.Result
	code, out, errs := runCLI(t, "", "classify", "--json", f, "--version-of", f+"=2.1.5")
	require.Equal(t, exitOK, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "2.1.5", res.Version)
	assert.Equal(t, pipeline.VersionFromOptions, res.VersionSource)
	assert.Equal(t, catalog.StatusAffected, res.Classification.Status)

	code, out, _ = runCLI(t, "", "classify", f, "--assume-version", "2.1.7")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "version: 2.1.7 (from the command line)")

	for _, bad := range [][]string{{"--version-of", "nonsense"}, {"--assume-version", "not a version"}} {
		code, _, errs := runCLI(t, "", append([]string{"classify", f}, bad...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", bad, errs)
	}
}

// TestErrorsNameInputOnce: a damaged gzip file is reported with one
// "crashsig:" prefix and its name once.
func TestErrorsNameInputOnce(t *testing.T) {
	data, err := os.ReadFile(crashTxt)
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	p := filepath.Join(t.TempDir(), "be.out.gz")
	require.NoError(t, os.WriteFile(p, gz.Bytes()[:gz.Len()/2], 0o644))
	code, _, errs := runCLI(t, "", "classify", p)
	assert.Equal(t, exitInput, code)
	line := strings.TrimSpace(errs)
	assert.Equal(t, 1, strings.Count(line, "crashsig:"), line)
	assert.Equal(t, 1, strings.Count(line, "be.out.gz"), line)
	assert.Contains(t, line, "gzip")
}

// TestThreadIDsInHex: the human output names a pthread handle in hex, as
// glog and gdb print it, and a kernel thread id as LWP.
func TestThreadIDsInHex(t *testing.T) {
	code, out, _ := runCLI(t, "", "classify", "../../testdata/corpus/starrocks/002-trash-sweep-rowsetmetapb-mergefrom.txt")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "crashing thread 0x7f5335458700:")
	assert.NotRegexp(t, `crashing thread \d{6,}`, out)
	code, out, _ = runCLI(t, "", "classify", "../../testdata/formats/f2-glog07-lwp.txt")
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `crashing thread (0x[0-9a-f]+ \()?LWP \d+`, out)
}

// TestSymbolizeExactByDefault: addresses are looked up as given (like
// addr2line and llvm-symbolizer); --return-addresses looks up pc-1. A ??
// is explained on stderr and is not a failure; a line that is not an
// address is (exit 1).
func TestSymbolizeExactByDefault(t *testing.T) {
	bin := extractTestBinary(t, "o2-nofp-dw4") // non-PIE, anon_worker at 0x402e10
	def, _, code := runSymbolize(t, "", "--binary", bin, "0x402e10")
	require.Equal(t, exitOK, code)
	exact, _, _ := runSymbolize(t, "", "--binary", bin, "--exact", "0x402e10")
	assert.Equal(t, exact, def)
	assert.Contains(t, def, "starrocks::(anonymous namespace)::anon_worker(int)\n")
	ret, _, _ := runSymbolize(t, "", "0x402e10", "--binary", bin, "--return-addresses")
	assert.NotEqual(t, def, ret, "pc-1 is the end of the previous function")

	out, errs, code := runSymbolize(t, "", "--binary", bin, "deadbeef0")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "??\n??:0\n", out)
	assert.Contains(t, errs, "deadbeef0: ?? because no symbol and no DWARF compile unit of the binary covers it")

	_, errs, code = runSymbolize(t, "0x402e10\nzz\n", "--binary", bin)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "line 2: bad address")
}

// TestClassifyBias: --bias is accepted by classify (raw PIE addresses).
func TestClassifyBias(t *testing.T) {
	code, _, errs := runCLI(t, "", "classify", crashTxt, "--bias", "0x5555")
	assert.Equal(t, exitOK, code, errs)
	code, _, _ = runCLI(t, "", "classify", crashTxt, "--bias", "zz")
	assert.Equal(t, exitUsage, code)
}

// slowReader gives its text after a pause, like a slow pipe.
type slowReader struct {
	r     *strings.Reader
	pause time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.pause)
	s.pause = 0
	return s.r.Read(p)
}

// TestNoProgressOffTerminal: a run over a second long prints no progress
// line when stderr is not a terminal (a pipe here); stderr stays clean
// for scripts.
func TestNoProgressOffTerminal(t *testing.T) {
	crash, err := os.ReadFile(crashTxt)
	require.NoError(t, err)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	var out bytes.Buffer
	code := run(context.Background(), []string{"classify", "-"}, &slowReader{strings.NewReader(string(crash)), 1300 * time.Millisecond}, &out, pw)
	pw.Close()
	require.Equal(t, exitOK, code)
	rest, err := io.ReadAll(pr)
	require.NoError(t, err)
	assert.Empty(t, string(rest))
}

// TestClassifyUnresolvedSaysWhy: with --binary, raw PCs that resolve to
// nothing are counted and the first reason is printed in text mode, not
// dropped silently.
func TestClassifyUnresolvedSaysWhy(t *testing.T) {
	bin := extractTestBinary(t, "o2-nofp-dw4") // non-PIE, anon_worker at 0x402e10
	dump := "*** Aborted at 1700000000 (unix time) try \"date -d @1700000000\" if you are using GNU date ***\n" +
		"PC: @           0x402e21 (unknown)\n" +
		"*** SIGSEGV (@0x0) received by PID 1 (TID 0x7f0000000700) from PID 0; stack trace: ***\n" +
		"    @           0x402e21 (unknown)\n" +
		"    @          0xdeadbeef0 (unknown)\n"
	code, out, errs := runCLI(t, dump, "classify", "-", "--binary", bin, "--no-system-debug-dir")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "anon_worker(int) at /src/crashsig-cxx/backend.cpp:36")
	assert.Regexp(t, `symbolized: 1 frames \(\+3 inlined\); 1 left unresolved, first frame #1 0xdeadbeef0: \S`, out)
}

// TestClassifyLivePipe: `tail -f be.out | crashsig classify -` prints a
// crash within 3 s of its last line although the pipe stays open.
func TestClassifyLivePipe(t *testing.T) {
	// Its last line is a frame: only the idle flush can end the incident.
	crash, err := os.ReadFile("../../testdata/formats/f3-doris-check-then-f1.txt")
	require.NoError(t, err)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"classify", "-"}, inR, outW, io.Discard)
		outW.Close()
	}()
	_, err = inW.Write(crash)
	require.NoError(t, err)
	written := time.Now()
	buf := make([]byte, 64<<10)
	got := ""
	for !strings.Contains(got, "key:") {
		n, err := outR.Read(buf)
		require.NoError(t, err)
		got += string(buf[:n])
	}
	assert.Less(t, time.Since(written), 3*time.Second)
	cancel()
	inW.Close()
	go io.Copy(io.Discard, outR)
	<-done
}
