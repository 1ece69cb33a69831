package symbolize

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// exampleFiles decompresses committed fixtures into dir (for the example,
// which has no testing.TB).
func exampleFiles(dir string, rels ...string) []string {
	var out []string
	for _, rel := range rels {
		p, err := gunzipFixture(dir, rel)
		if err != nil {
			panic(err)
		}
		out = append(out, p)
	}
	return out
}

// A core written by the kernel after a glog-style handler re-sent SIGSEGV
// with kill(): another thread dumped the core, and the real fault is read
// from the signal frame on the crashing thread's stack.
func ExampleOpenCore() {
	dir, _ := os.MkdirTemp("", "core-example")
	defer os.RemoveAll(dir)
	files := exampleFiles(dir, "cores/kernk_fp.core.gz", "bin/sim_fp.gz", "lib/libc.so.6.gz", "lib/ld-linux-x86-64.so.2.gz")

	ctx := context.Background()
	c, err := OpenCore(ctx, files[0], CoreOptions{Binaries: files[1:], NoDiskLookup: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	cr, err := c.Crash(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cr.Signal, cr.SignalReason, cr.FaultAddress, "cause:", c.CrashInfo().Cause)
	for _, f := range cr.CrashingThread().Frames[:6] {
		fmt.Printf("#%d %s\n", f.Index, f.Name())
	}
	// Output:
	// SIGSEGV SEGV_MAPERR 0x40 cause: signal-frame
	// #0 clock_nanosleep
	// #1 nanosleep
	// #2 sleep
	// #3 <signal handler called>
	// #4 starrocks::decode_value<int>
	// #4 starrocks::ParsedPageV1::read(starrocks::Column*, unsigned long*)
}

// BenchmarkCoreOpenCrash measures OpenCore plus the symbolized Crash of a
// committed 8-thread kernel core.
func BenchmarkCoreOpenCrash(b *testing.B) {
	dir := b.TempDir()
	files := exampleFiles(dir, "cores/kerna_fp.core.gz", "bin/sim_fp.gz", "lib/libc.so.6.gz", "lib/ld-linux-x86-64.so.2.gz")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, err := OpenCore(ctx, files[0], CoreOptions{Binaries: files[1:], NoDiskLookup: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Crash(ctx); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkCoreExternal measures a core named by CRASHSIG_BENCH_CORE with
// the binaries in CRASHSIG_BENCH_BINARIES (colon-separated), e.g. the
// 2,008-thread core or the large-binary core of testdata/core/bench.sh.
func BenchmarkCoreExternal(b *testing.B) {
	core := os.Getenv("CRASHSIG_BENCH_CORE")
	if core == "" {
		b.Skip("CRASHSIG_BENCH_CORE not set")
	}
	var bins []string
	if s := os.Getenv("CRASHSIG_BENCH_BINARIES"); s != "" {
		bins = strings.Split(s, ":")
	}
	ctx := context.Background()
	for b.Loop() {
		c, err := OpenCore(ctx, core, CoreOptions{Binaries: bins})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Crash(ctx); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
