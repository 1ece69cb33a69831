package symbolize

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The -update flag may also be defined by other test files of the package;
// register it only when nobody did, and read it by name.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const coreTestdata = "../testdata/core"

// gunzipFixture decompresses testdata/core/<rel>.gz into dir (once) and
// returns the path.
func gunzipFixture(dir, rel string) (string, error) {
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(rel), ".gz"))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	f, err := os.Open(filepath.Join(coreTestdata, rel))
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	w, err := os.Create(out)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(w, zr); err != nil {
		w.Close()
		return "", err
	}
	return out, w.Close()
}

func gunzipTo(t testing.TB, dir, rel string) string {
	t.Helper()
	p, err := gunzipFixture(dir, rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// coreCase is one committed core with the binary it was made with.
type coreCase struct {
	name, bin string
	signal    string
	fault     Addr // 0: no fault address expected
	cause     CrashCause
	frame     string // a function the crashing thread must show
}

const readFrame = "starrocks::ParsedPageV1::read"

var coreCases = []coreCase{
	{"kern_fp", "sim_fp", "SIGSEGV", 0x40, CauseSigInfo, readFrame},
	{"kern_nofp", "sim_nofp", "SIGSEGV", 0x40, CauseSigInfo, readFrame},
	{"kernr_fp", "sim_fp", "SIGSEGV", 0, CauseDumpSignal, readFrame},
	{"kernk_fp", "sim_fp", "SIGSEGV", 0x40, CauseSignalFrame, readFrame},
	{"kerna_fp", "sim_fp", "SIGSEGV", 0x40, CauseSignalFrame, readFrame},
	{"kerna_nofp", "sim_nofp", "SIGSEGV", 0x40, CauseSignalFrame, readFrame},
	// CHECK failure: abort() caught by a glog-style SIGABRT handler that kill()s
	{"kernc_fp", "sim_fp", "SIGABRT", 0, CauseSignalFrame, "starrocks::check_failed"},
	{"gdb_fp", "sim_fp", "SIGSEGV", 0x40, CauseSigInfo, readFrame},
	{"gdba_nofp", "sim_nofp", "SIGSEGV", 0x40, CauseSignalFrame, readFrame},
}

// openTestCore opens a committed core with its binary and the committed
// libc and ld.so (the files it was made with), never the host's.
func openTestCore(t testing.TB, dir, name string, bins ...string) *Core {
	t.Helper()
	corePath := gunzipTo(t, dir, "cores/"+name+".core.gz")
	var paths []string
	for _, b := range bins {
		paths = append(paths, gunzipTo(t, dir, b))
	}
	paths = append(paths, gunzipTo(t, dir, "lib/libc.so.6.gz"), gunzipTo(t, dir, "lib/ld-linux-x86-64.so.2.gz"))
	c, err := OpenCore(context.Background(), corePath, CoreOptions{Binaries: paths, NoDiskLookup: true})
	if err != nil {
		t.Fatalf("OpenCore(%s): %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// gdbFrame is one frame of gdb's `thread apply all bt`.
type gdbFrame struct {
	pc     uint64
	name   string
	signal bool
}

var (
	gdbThreadRe = regexp.MustCompile(`^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)\):`)
	gdbFrameRe  = regexp.MustCompile(`^#\d+\s+(?:(0x[0-9a-f]+) in )?(.*)$`)
)

// parseGDB reads gdb's output: LWP -> frames.
func parseGDB(t testing.TB, path string) map[int64][]gdbFrame {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][]gdbFrame{}
	var cur int64 = -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := gdbThreadRe.FindStringSubmatch(line); m != nil {
			cur, _ = strconv.ParseInt(m[1], 10, 64)
			out[cur] = nil
			continue
		}
		if cur < 0 {
			continue
		}
		m := gdbFrameRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := gdbFrame{}
		if strings.HasPrefix(m[2], "<signal handler called>") {
			f.signal = true
		} else {
			if m[1] == "" {
				t.Fatalf("%s: frame without address: %q", path, line)
			}
			f.pc, _ = strconv.ParseUint(m[1][2:], 16, 64)
			name := m[2]
			if i := strings.Index(name, " ("); i >= 0 {
				name = name[:i]
			}
			f.name = name
		}
		out[cur] = append(out[cur], f)
	}
	return out
}

// coreNameKey reduces a function name to its last scope component without
// template arguments, parameters or clone suffixes, for comparing our
// names with gdb's (which prints DWARF names in its own style).
func coreNameKey(s string) string {
	if i := strings.Index(s, " [clone"); i >= 0 {
		s = s[:i]
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '<', '(':
			depth++
		case '>', ')':
			if depth > 0 {
				depth--
			}
		default:
			if depth == 0 {
				b.WriteRune(r)
			}
		}
	}
	s = strings.TrimSpace(b.String())
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	s = strings.TrimPrefix(s, "__GI_")
	return s
}

// coreMatch is the comparison of one core with gdb.
type coreMatch struct {
	threads, threadsPCsEqual int
	gdbPCs, pcsFound         int
	gdbNamed, namesMatched   int
}

func compareWithGDB(t *testing.T, c *Core, gdb map[int64][]gdbFrame) coreMatch {
	var m coreMatch
	for i, th := range c.Threads {
		g, ok := gdb[th.TID]
		if !ok {
			t.Errorf("thread LWP %d not in gdb's output", th.TID)
			continue
		}
		m.threads++
		// physical PCs: ours without trampolines, gdb's without signal
		// frames and with inline frames (same PC, consecutive) merged
		var ours, theirs []uint64
		for _, f := range th.Frames {
			if !f.SignalTrampoline {
				ours = append(ours, uint64(f.PC))
			}
		}
		var groups [][]gdbFrame
		for _, f := range g {
			if f.signal {
				continue
			}
			if len(groups) > 0 && groups[len(groups)-1][0].pc == f.pc {
				groups[len(groups)-1] = append(groups[len(groups)-1], f)
				continue
			}
			groups = append(groups, []gdbFrame{f})
			theirs = append(theirs, f.pc)
		}
		m.gdbPCs += len(theirs)
		set := map[uint64]bool{}
		for _, pc := range ours {
			set[pc] = true
		}
		for _, pc := range theirs {
			if set[pc] {
				m.pcsFound++
			}
		}
		// gdb stops at main (backtrace past-main is off); we go on to _start
		if len(g) > 0 && g[len(g)-1].name == "main" && len(ours) > len(theirs) {
			ours = ours[:len(theirs)]
		}
		if fmt.Sprint(ours) == fmt.Sprint(theirs) {
			m.threadsPCsEqual++
		} else {
			t.Errorf("LWP %d: PCs differ\n ours %x\n gdb  %x", th.TID, ours, theirs)
		}
		// names: per physical frame, gdb's inline chain against ours
		frames := c.ThreadFrames(i)
		var ourGroups [][]Frame
		for _, f := range frames {
			if f.Function == "<signal handler called>" {
				continue
			}
			if len(ourGroups) > 0 && ourGroups[len(ourGroups)-1][0].Index == f.Index {
				ourGroups[len(ourGroups)-1] = append(ourGroups[len(ourGroups)-1], f)
				continue
			}
			ourGroups = append(ourGroups, []Frame{f})
		}
		for gi, grp := range groups {
			for k, gf := range grp {
				if gf.name == "??" {
					continue
				}
				m.gdbNamed++
				if gi < len(ourGroups) && k < len(ourGroups[gi]) && coreNameKey(ourGroups[gi][k].Name()) == coreNameKey(gf.name) {
					m.namesMatched++
				} else if testing.Verbose() {
					got := ""
					if gi < len(ourGroups) && k < len(ourGroups[gi]) {
						got = ourGroups[gi][k].Name()
					}
					t.Logf("LWP %d frame %d.%d: gdb %q, ours %q", th.TID, gi, k, gf.name, got)
				}
			}
		}
	}
	return m
}

// TestCoreAgainstGDB unwinds every committed core and compares each
// thread's PCs and names with gdb's `thread apply all bt` on the same core
// (recorded by gen.sh), and checks the crash verdict.
func TestCoreAgainstGDB(t *testing.T) {
	var total coreMatch
	var report strings.Builder
	fmt.Fprintf(&report, "%-11s %8s %10s %12s %12s\n", "core", "threads", "PCs=gdb", "gdb PCs", "names")
	for _, cc := range coreCases {
		t.Run(cc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openTestCore(t, dir, cc.name, "bin/"+cc.bin+".gz")
			m := compareWithGDB(t, c, parseGDB(t, filepath.Join(coreTestdata, "golden", cc.name+".gdb.txt")))
			fmt.Fprintf(&report, "%-11s %3d/%-4d %10s %5d/%-6d %5d/%-6d\n", cc.name, m.threadsPCsEqual, m.threads, "", m.pcsFound, m.gdbPCs, m.namesMatched, m.gdbNamed)
			total.threads += m.threads
			total.threadsPCsEqual += m.threadsPCsEqual
			total.gdbPCs += m.gdbPCs
			total.pcsFound += m.pcsFound
			total.gdbNamed += m.gdbNamed
			total.namesMatched += m.namesMatched

			ci := c.CrashInfo()
			cr, err := c.Crash(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cr.Signal != cc.signal || ci.Cause != cc.cause {
				t.Errorf("signal %s cause %s, want %s %s", cr.Signal, ci.Cause, cc.signal, cc.cause)
			}
			if cc.fault != 0 && (!cr.HasFaultAddress || cr.FaultAddress != cc.fault) {
				t.Errorf("fault address %s (%v), want %s", cr.FaultAddress, cr.HasFaultAddress, cc.fault)
			}
			if cc.fault == 0 && cr.HasFaultAddress {
				t.Errorf("fault address %s reported for a re-raised signal", cr.FaultAddress)
			}
			ct := cr.CrashingThread()
			if ct == nil || &cr.Threads[0] != ct {
				t.Fatalf("crashing thread is not first")
			}
			// the faulting frame (maybe under the handler frames)
			found := false
			for _, f := range ct.Frames {
				if strings.Contains(f.Name(), cc.frame) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("crashing thread LWP %d has no %s frame", ct.ID, cc.frame)
			}
			checkCoreGolden(t, cc.name, c, cr)
		})
	}
	if total.gdbNamed > 0 {
		fmt.Fprintf(&report, "%-11s %3d/%-4d %10s %5d/%-6d %5d/%-6d (%.1f%% names)\n", "total", total.threadsPCsEqual, total.threads, "",
			total.pcsFound, total.gdbPCs, total.namesMatched, total.gdbNamed, 100*float64(total.namesMatched)/float64(total.gdbNamed))
	}
	t.Logf("comparison with gdb:\n%s", report.String())
}

// checkCoreGolden compares the human rendering of the crash with
// testdata/core/golden/<name>.crashsig.txt.
func checkCoreGolden(t *testing.T, name string, c *Core, cr *Crash) {
	t.Helper()
	var b bytes.Buffer
	WriteCoreText(&b, c, cr)
	path := filepath.Join(coreTestdata, "golden", name+".crashsig.txt")
	if updateGolden() {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Core -update)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("%s differs from the golden file; rerun with -update and review the diff\n--- got\n%s", path, b.String())
	}
}

func TestCoreBuildIDMismatch(t *testing.T) {
	dir := t.TempDir()
	// a sim_nofp binary offered for a sim_fp core
	nofp := gunzipTo(t, dir, "bin/sim_nofp.gz")
	corePath := gunzipTo(t, dir, "cores/kern_fp.core.gz")
	c, err := OpenCore(context.Background(), corePath, CoreOptions{Binaries: []string{nofp}, NoDiskLookup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Mismatches) != 1 {
		t.Fatalf("mismatches = %v, want 1", c.Mismatches)
	}
	mm := c.Mismatches[0]
	if !mm.Used || mm.File != nofp || mm.CoreBuildID == mm.FileBuildID || mm.CoreBuildID == "" {
		t.Errorf("mismatch = %+v", mm)
	}
	var target *BuildIDMismatch
	if !errors.As(error(mm), &target) {
		t.Error("BuildIDMismatch is not an error")
	}
	cr, err := c.Crash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range cr.Notes {
		if strings.HasPrefix(n, "WARNING: build-id mismatch") {
			found = true
		}
	}
	if !found {
		t.Errorf("no mismatch warning in notes: %q", cr.Notes)
	}
}

// TestCoreStrippedWithDebugFile opens the fp cores with the stripped
// binary: unwinding needs only .eh_frame; names come from the debug file.
func TestCoreStrippedWithDebugFile(t *testing.T) {
	dir := t.TempDir()
	gunzipTo(t, dir, "bin/sim_strip.debug.gz") // next to the binary: found by .gnu_debuglink
	c := openTestCore(t, dir, "kern_fp", "bin/sim_strip.gz")
	ref := openTestCore(t, t.TempDir(), "kern_fp", "bin/sim_fp.gz")
	for i := range c.Threads {
		a, b := c.ThreadFrames(i), ref.ThreadFrames(i)
		if len(a) != len(b) {
			t.Fatalf("thread %d: %d frames stripped, %d unstripped", i, len(a), len(b))
		}
		for k := range a {
			if a[k].PC != b[k].PC || a[k].Name() != b[k].Name() {
				t.Errorf("thread %d frame %d: stripped %s %s, unstripped %s %s", i, k, a[k].PC, a[k].Name(), b[k].PC, b[k].Name())
			}
		}
	}
	for _, m := range c.Modules {
		if m.IsMain && m.DebugFile == "" {
			t.Errorf("main module: no debug file found")
		}
	}
	// without the debug file: same PCs, module+offset, build-id listed
	dir2 := t.TempDir()
	c2 := openTestCore(t, dir2, "kern_fp", "bin/sim_strip.gz")
	cr, err := c2.Crash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	refCrashed := ref.ThreadFrames(ref.CrashInfo().Thread)
	var refPCs, gotPCs []Addr
	for _, f := range refCrashed {
		if !f.Inlined {
			refPCs = append(refPCs, f.PC)
		}
	}
	for _, f := range cr.Threads[0].Frames {
		gotPCs = append(gotPCs, f.PC)
		if f.Module == "sim_fp" && (f.File != "" || f.Inlined || !f.HasOffset || f.Offset == 0) {
			t.Errorf("stripped frame without debug file: %+v", f)
		}
	}
	if fmt.Sprint(refPCs) != fmt.Sprint(gotPCs) {
		t.Errorf("stripped, no debug file: PCs %v, with debug info %v", gotPCs, refPCs)
	}
	want := "no debug info for " + c2.Modules[0].Path
	found := false
	for _, n := range cr.Notes {
		if strings.HasPrefix(n, want) && strings.Contains(n, c2.Modules[0].BuildID) {
			found = true
		}
	}
	if !found {
		t.Errorf("notes do not list the missing debug file: %q", cr.Notes)
	}
}

func TestCoreJSON(t *testing.T) {
	c := openTestCore(t, t.TempDir(), "kerna_fp", "bin/sim_fp.gz")
	cr, err := c.Crash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(cr)
	cr2, _ := c.Crash(context.Background())
	b2, _ := json.Marshal(cr2)
	if !bytes.Equal(b1, b2) {
		t.Error("Crash is not deterministic")
	}
	var back Crash
	if err := json.Unmarshal(b1, &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != KindSignal || back.Signal != "SIGSEGV" || back.FaultAddress != 0x40 || !back.Threads[0].Crashed || back.PID == 0 || back.TID != back.Threads[0].ID {
		t.Errorf("round trip: kind %s signal %s addr %s crashed %v pid %d tid %d", back.Kind, back.Signal, back.FaultAddress, back.Threads[0].Crashed, back.PID, back.TID)
	}
}

func TestIsCore(t *testing.T) {
	dir := t.TempDir()
	core := gunzipTo(t, dir, "cores/kern_fp.core.gz")
	bin := gunzipTo(t, dir, "bin/sim_fp.gz")
	for _, tc := range []struct {
		path string
		want bool
	}{{core, true}, {bin, false}} {
		f, err := os.Open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsCore(f); got != tc.want {
			t.Errorf("IsCore(%s) = %v", tc.path, got)
		}
		f.Close()
	}
	if IsCore(bytes.NewReader([]byte("\x7fEL"))) {
		t.Error("IsCore(short) = true")
	}
	if _, err := NewCore(context.Background(), bytes.NewReader([]byte("hello")), 5, CoreOptions{}); !errors.Is(err, ErrNotCore) {
		t.Errorf("NewCore(text) = %v, want ErrNotCore", err)
	}
}

// TestCoreDebugFileAsBinary: a debug file given among the binaries
// (objcopy --only-keep-debug output: the build-id of its executable, code
// sections NOBITS) is the debug file of its module, not its file. It used
// to be taken for the module's file, by build-id, before the real binary:
// nothing unwound past frame 0 ("no unwind information"), and the binary
// given after it matched no module. Either order now gives the frames of
// the unstripped binary.
func TestCoreDebugFileAsBinary(t *testing.T) {
	ref := openTestCore(t, t.TempDir(), "kern_fp", "bin/sim_fp.gz")
	for _, debugFirst := range []bool{true, false} {
		dir, dbgDir := t.TempDir(), t.TempDir() // apart: no .gnu_debuglink finds it
		corePath := gunzipTo(t, dir, "cores/kern_fp.core.gz")
		bin := gunzipTo(t, dir, "bin/sim_strip.gz")
		dbg := gunzipTo(t, dbgDir, "bin/sim_strip.debug.gz")
		paths := []string{bin, dbg}
		if debugFirst {
			paths = []string{dbg, bin}
		}
		paths = append(paths, gunzipTo(t, dir, "lib/libc.so.6.gz"), gunzipTo(t, dir, "lib/ld-linux-x86-64.so.2.gz"))
		c, err := OpenCore(context.Background(), corePath, CoreOptions{Binaries: paths, NoDiskLookup: true})
		require.NoError(t, err)
		defer c.Close()
		assertSameFrames(t, ref, c, fmt.Sprintf("debug first %v", debugFirst))
		var main *CoreModule
		for _, m := range c.Modules {
			if m.IsMain {
				main = m
			}
		}
		require.NotNil(t, main)
		assert.Equal(t, bin, main.File, "debug first %v", debugFirst)
		assert.Equal(t, dbg, main.DebugFile, "debug first %v", debugFirst)
		assert.True(t, main.HasDebugInfo)
	}
}

// TestCoreAfterClose: after Close, Crash used to return a crash without a
// single symbol and no error (the module files were closed), a silently
// worse answer; it fails with ErrClosed now, ThreadFrames returns nil and
// ReadMemory fails with ErrClosed, as Binary.Lookup does after Close.
func TestCoreAfterClose(t *testing.T) {
	c := openTestCore(t, t.TempDir(), "kern_fp", "bin/sim_fp.gz")
	cr, err := c.Crash(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, cr.Threads[0].Frames)
	sp := uint64(c.Threads[0].SP)
	require.NoError(t, c.Close())
	_, err = c.Crash(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	assert.ErrorContains(t, err, "core")
	assert.Nil(t, c.ThreadFrames(0))
	_, err = c.ReadMemory(make([]byte, 8), sp)
	assert.ErrorIs(t, err, ErrClosed)
	assert.NoError(t, c.Close(), "a second Close is harmless")
}

// TestGPFaultNoAddress: a load through a non-canonical pointer is a general
// protection fault; the kernel sends SIGSEGV with si_code SI_KERNEL and
// si_addr 0 (testdata/gpfault: `*(long *)0xdead000000000000`). The reader
// took that 0 for the fault address, so the crash read as a null-pointer
// dereference. SI_KERNEL carries no address: HasFaultAddress is false and
// a note says what the code means.
func TestGPFaultNoAddress(t *testing.T) {
	dir := t.TempDir()
	corePath := testutil.Gunzip(t, filepath.Join("testdata", "gpfault", "gp.core.gz"), filepath.Join(dir, "gp.core"))
	bin := testutil.Gunzip(t, filepath.Join("testdata", "gpfault", "gpbin.gz"), filepath.Join(dir, "gpbin"))
	c, err := OpenCore(context.Background(), corePath, CoreOptions{Binaries: []string{bin}, NoDiskLookup: true})
	require.NoError(t, err)
	defer c.Close()
	ci := c.CrashInfo()
	assert.Equal(t, CauseSigInfo, ci.Cause)
	assert.Equal(t, int32(11), ci.Signal.Signo)
	assert.Equal(t, int32(0x80), ci.Signal.Code)
	cr, err := c.Crash(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "SIGSEGV", cr.Signal)
	assert.Equal(t, "SI_KERNEL", cr.SignalReason)
	assert.False(t, cr.HasFaultAddress, "SI_KERNEL: si_addr is not a fault address")
	assert.Zero(t, cr.FaultAddress)
	require.NotEmpty(t, cr.Threads[0].Frames)
	assert.Equal(t, "main", cr.Threads[0].Frames[0].Function)
	assert.True(t, slices.ContainsFunc(cr.Notes, func(n string) bool { return strings.Contains(n, "general protection") }), "%q", cr.Notes)
}
