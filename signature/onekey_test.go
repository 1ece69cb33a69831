package signature

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/symbolize"
)

// The golden groups of testdata/onekey (issue 10.2): one crash of a
// committed test program read from its core, gdb's bt and thread apply all
// bt, glog 0.4 and 0.7 dumps with names, a Doris boost dump with names, a
// glog 0.7 dump of module+offset addresses and a Doris dump of bare
// addresses (both symbolized with the binary), for a PIE and a non-PIE
// build, and cut copies of each, must all get one key. gen.sh makes them.

const onekeyDir = "../testdata/onekey"

// onekeyKeys are the keys the groups must share: physical frames only
// (std::map::find and _Rb_tree::find are inlined into
// collect_garbage_files; the lambda's body into std::function's invoker),
// no fault-address fact in the kind.
var onekeyKeys = map[string]string{
	"null":   "FAULT | starrocks::lake::collect_garbage_files",
	"abort":  "ABORT | starrocks::check_failed",
	"lambda": "FAULT | starrocks::ExchangeSinkOperator::send_chunk::{lambda}",
}

// onekeyDeepKeys are the same groups' keys with three significant frames:
// the sources must agree below the default key's one frame too.
var onekeyDeepKeys = map[string]string{
	"null":   "FAULT | starrocks::lake::collect_garbage_files | starrocks::lake::vacuum_tablet | starrocks::lake::vacuum",
	"abort":  "ABORT | starrocks::check_failed | starrocks::CompactionTask::run | worker",
	"lambda": "FAULT | starrocks::ExchangeSinkOperator::send_chunk::{lambda} | starrocks::ExchangeSinkOperator::send_chunk | worker", // ThreadPool::dispatch_thread is a thread-start rule
}

// onekeyWant is what bothKeys must give for a group.
func onekeyWant(mode string) string { return onekeyKeys[mode] + " ‖ " + onekeyDeepKeys[mode] }

// bothKeys is the default key and the three-frame key of one crash.
func bothKeys(t testing.TB, c *symbolize.Crash) string {
	t.Helper()
	g, err := NewGenerator(Options{Frames: 3})
	require.NoError(t, err)
	return Generate(c).Key + " ‖ " + g.Generate(c).Key
}

// onekeyTexts are the text sources of a group; withBinary ones are read
// with symbolize.Frames and the binary.
var onekeyTexts = []struct {
	kind       string
	withBinary bool
}{
	{"gdb-bt", false}, {"gdb-all", false}, {"glog04", false}, {"glog07", false}, {"boost", false},
	{"glog07-offsets", true}, {"boost-addrs", true},
}

type onekeyMeta struct {
	ExeBias uint64 `json:"exe_bias"`
	Frames  []struct {
		Name string `json:"name"`
	} `json:"frames"`
}

func gunzipFile(t *testing.T, src, dst string) string { return testutil.Gunzip(t, src, dst) }

// onekeyIncident parses text and returns its one crash incident.
func onekeyIncident(t *testing.T, text []byte, name string) *symbolize.Crash {
	t.Helper()
	crashes, err := symbolize.ParseAll(context.Background(), bytes.NewReader(text), symbolize.ScanOptions{Source: name})
	require.NoError(t, err)
	var got []*symbolize.Crash
	for _, c := range crashes {
		if len(c.Threads) > 0 {
			got = append(got, c)
		}
	}
	require.Len(t, got, 1, "%s: incidents with threads", name)
	return got[0]
}

// cutText cuts a text in the middle of its last frame line (a dump cut by
// the end of input, below the frames the key uses).
func cutText(text []byte) []byte {
	lines := strings.SplitAfter(strings.TrimRight(string(text), "\n"), "\n")
	for i := len(lines) - 1; i > 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "@") || strings.Contains(l, "# ") {
			cut := strings.Join(lines[:i], "") + lines[i][:len(lines[i])/2]
			return []byte(cut)
		}
	}
	return text[:len(text)/2]
}

func TestOneKey(t *testing.T) {
	dir := t.TempDir()
	libs := []string{
		gunzipFile(t, "../testdata/core/lib/libc.so.6.gz", filepath.Join(dir, "libc.so.6")),
		gunzipFile(t, "../testdata/core/lib/ld-linux-x86-64.so.2.gz", filepath.Join(dir, "ld-linux-x86-64.so.2")),
	}
	ctx := context.Background()
	for _, build := range []string{"pie", "nopie"} {
		binPath := gunzipFile(t, filepath.Join(onekeyDir, "bin", "onekey_"+build+".gz"), filepath.Join(dir, "onekey_"+build))
		bin, err := symbolize.OpenBinary(binPath, symbolize.BinaryOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { bin.Close() })
		require.Equal(t, build == "pie", bin.IsPIE())
		for _, mode := range []string{"null", "abort", "lambda"} {
			name := build + "-" + mode
			want := onekeyWant(mode)
			t.Run(name, func(t *testing.T) {
				var meta onekeyMeta
				mb, err := os.ReadFile(filepath.Join(onekeyDir, "meta", name+".json"))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(mb, &meta))

				corePath := gunzipFile(t, filepath.Join(onekeyDir, "cores", name+".core.gz"), filepath.Join(t.TempDir(), name+".core"))
				core, err := symbolize.OpenCore(ctx, corePath, symbolize.CoreOptions{Binaries: append([]string{binPath}, libs...), NoDiskLookup: true})
				require.NoError(t, err)
				defer core.Close()
				cr, err := core.Crash(ctx)
				require.NoError(t, err)
				s := Generate(cr)
				require.Equal(t, want, bothKeys(t, cr), "core:\n%s", strings.Join(s.Trace, "\n"))
				require.False(t, cr.Corrupted, cr.CorruptedReason)
				coreCrashFrame := s.CrashFrame

				t.Run("live-gdb", func(t *testing.T) {
					if testing.Short() {
						t.Skip("-short: live gdb takes seconds per core")
					}
					gdb, err := exec.LookPath("gdb")
					if err != nil {
						t.Skip("gdb not installed: the committed gdb texts are checked instead")
					}
					for _, what := range []string{"bt", "thread apply all bt"} {
						out, err := exec.CommandContext(ctx, gdb, "-batch", "-nx", "-iex", "set auto-load off", "-iex", "set debuginfod enabled off", "-ex", "set width 0",
							"-ex", what, binPath, corePath).Output()
						require.NoError(t, err)
						c := onekeyIncident(t, out, "live gdb "+what)
						assert.Equal(t, want, bothKeys(t, c), "live gdb %s:\n%s", what, out)
					}
				})

				t.Run("cut-core", func(t *testing.T) {
					whole, err := os.ReadFile(corePath)
					require.NoError(t, err)
					cut := filepath.Join(t.TempDir(), "cut.core")
					require.NoError(t, os.WriteFile(cut, whole[:len(whole)*9/10], 0o644))
					core, err := symbolize.OpenCore(ctx, cut, symbolize.CoreOptions{Binaries: append([]string{binPath}, libs...), NoDiskLookup: true})
					if err != nil {
						// Refusing is an answer too, but only with the typed error.
						require.ErrorIs(t, err, symbolize.ErrCorruptCore)
						return
					}
					defer core.Close()
					c, err := core.Crash(ctx)
					require.NoError(t, err)
					assert.True(t, c.Corrupted)
					assert.Contains(t, c.CorruptedReason, "truncated")
					if th := c.CrashingThread(); th != nil && !th.Truncated {
						assert.Equal(t, want, bothKeys(t, c))
					}
				})

				for _, src := range onekeyTexts {
					file := filepath.Join(onekeyDir, "texts", name+"."+src.kind+".txt")
					text, err := os.ReadFile(file)
					require.NoError(t, err)
					read := func(text []byte) *symbolize.Crash {
						c := onekeyIncident(t, text, file)
						if src.withBinary {
							m := symbolize.Module{Binary: bin, Name: "onekey_" + build}
							if build == "pie" && src.kind == "boost-addrs" {
								// Bare addresses of a PIE: the caller knows the bias
								// (crashsig --bias); glog's offsets need none.
								m.Bias, m.HasBias = meta.ExeBias, true
							}
							_, err := symbolize.SymbolizeInPlace(ctx, c, m)
							require.NoError(t, err)
						}
						return c
					}
					c := read(text)
					s := Generate(c)
					assert.Equal(t, want, bothKeys(t, c), "%s:\n%s", src.kind, strings.Join(s.Trace, "\n"))
					assert.False(t, c.Corrupted, "%s: %s", src.kind, c.CorruptedReason)
					if src.withBinary {
						// The faulting frame was looked up at its exact PC:
						// the same inline chain as the core's.
						assert.Equal(t, coreCrashFrame, s.CrashFrame, src.kind)
					}

					t.Run("cut-"+src.kind, func(t *testing.T) {
						c := read(cutText(text))
						s := Generate(c)
						assert.Equal(t, want, bothKeys(t, c), "%s:\n%s", src.kind, strings.Join(s.Trace, "\n"))
						assert.True(t, c.Corrupted, "a dump cut by the end of input is corrupted")
						assert.NotEmpty(t, c.CorruptedReason)
					})
				}
			})
		}
	}
}

// TestOneKeyKernelLine: the kernel's `segfault at … ip … in
// onekey_BUILD[base+size]` line (dmesg, journal) before a dump of bare
// addresses or module offsets is the crash's event, and its mapping gives
// the load bias of the PIE, so that the dump resolves with the binary
// alone (crashsig --binary, no --bias) to the core's key.
func TestOneKeyKernelLine(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, build := range []string{"pie", "nopie"} {
		binPath := gunzipFile(t, filepath.Join(onekeyDir, "bin", "onekey_"+build+".gz"), filepath.Join(dir, "onekey_"+build))
		bin, err := symbolize.OpenBinary(binPath, symbolize.BinaryOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { bin.Close() })
		ef, err := elf.Open(binPath)
		require.NoError(t, err)
		t.Cleanup(func() { ef.Close() })
		var start, end uint64 // the executable segment, page-rounded
		for _, p := range ef.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
				start, end = p.Vaddr&^0xfff, (p.Vaddr+p.Memsz+0xfff)&^0xfff
			}
		}
		require.NotZero(t, end)
		for _, mode := range []string{"null", "lambda"} { // the kernel prints no segfault line for SIGABRT
			name := build + "-" + mode
			var meta struct {
				onekeyMeta
				SiAddr uint64 `json:"si_addr"`
				TID    int64  `json:"tid"`
				Frames []struct {
					PC uint64 `json:"pc"`
				} `json:"frames"`
			}
			mb, err := os.ReadFile(filepath.Join(onekeyDir, "meta", name+".json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(mb, &meta))
			base := start
			if build == "pie" {
				base += meta.ExeBias
			}
			kernel := fmt.Sprintf("[ 8123.456789] onekey_%s[%d]: segfault at %x ip %016x sp 00007ffd6baf1160 error 4 in onekey_%s[%x+%x]\n",
				build, meta.TID, meta.SiAddr, meta.Frames[0].PC, build, base, end-start)
			for _, kind := range []string{"boost-addrs", "glog07-offsets"} {
				t.Run(name+"/"+kind, func(t *testing.T) {
					text, err := os.ReadFile(filepath.Join(onekeyDir, "texts", name+"."+kind+".txt"))
					require.NoError(t, err)
					c := onekeyIncident(t, append([]byte(kernel), text...), name+" "+kind)
					require.NotEmpty(t, symbolize.KernelMappings(c), "the kernel line is an event of the incident: %+v", c.Events)
					rep, err := symbolize.SymbolizeInPlace(ctx, c, symbolize.Module{Binary: bin, Name: "onekey_" + build})
					require.NoError(t, err)
					s := Generate(c)
					assert.Equal(t, onekeyWant(mode), bothKeys(t, c), "%s:\n%s", kind, strings.Join(s.Trace, "\n"))
					assert.False(t, c.Corrupted, c.CorruptedReason)
					if build == "pie" && kind == "boost-addrs" {
						// Bare addresses name no offset: the bias is the kernel line's.
						est := rep.Biases["onekey_pie"]
						assert.Equal(t, "kernel-line", est.Source)
						assert.Equal(t, meta.ExeBias, est.Bias)
					}
				})
			}
		}
	}
}
