package report_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/report"
	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// fleet generates n crashes over nb buckets as the pipeline yields them:
// Zipf-like bucket sizes, six paths, a known defect for one bucket in
// five, 30 days, four versions, 40-frame crashing threads.
func fleet(n, nb int, yield func(*pipeline.Result)) {
	paths := catalog.Paths()
	// bucket b gets weight 1/(b+1); scale so the counts add up to n.
	var h float64
	for b := range nb {
		h += 1 / float64(b+1)
	}
	counts := make([]int, nb)
	left := n
	for b := range nb {
		counts[b] = max(1, int(float64(n)/(h*float64(b+1))))
		left -= counts[b]
	}
	for b := 0; left > 0; b = (b + 1) % nb {
		counts[b]++
		left--
	}
	for b := 0; left < 0; b = (b + 1) % nb {
		if counts[b] > 1 {
			counts[b]--
			left++
		}
	}
	versions := []string{"3.3.5", "3.3.8", "3.3.9", "2.1.6"}
	day0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for b := range nb {
		frames := make([]string, 40)
		for f := range frames {
			frames[f] = fmt.Sprintf("starrocks::Subsystem%d::Component%d::function_%d", b%97, (b/97)%53, f+b)
		}
		path := paths[b%len(paths)]
		var defect *catalog.DefectRef
		status, advice := catalog.StatusNoKnownDefect, "new: no known defect matches"
		if b%5 == 0 {
			defect = &catalog.DefectRef{ID: fmt.Sprintf("SR-%d-generated", 10000+b), Title: "generated defect " + frames[0],
				Links: []string{fmt.Sprintf("https://github.com/StarRocks/starrocks/issues/%d", 10000+b)}, Fixed: []string{"3.3.9"}}
			status, advice = catalog.StatusAffected, "upgrade to 3.3.9"
		}
		key := "SIGSEGV | " + strings.Join(frames[:5], " | ")
		sig := &signature.Signature{Algorithm: signature.Algorithm, Kind: "SIGSEGV", Frames: frames[:5], Key: key, ID: fmt.Sprintf("%016x", b*2654435761),
			Trace: []string{"frame 0 skipped: signal handler", "frame 1 skipped: abort path", "frame 2 kept", "frame 3 kept", "frame 4 kept", "frame 5 kept", "frame 6 kept", "5 frames: stop"}}
		verdict := &catalog.Verdict{Path: path, Area: "area-" + fmt.Sprint(b%11), Defect: defect, Status: status, Advice: advice,
			Evidence:        []string{"path rule " + string(path) + "-generated matched frame 2", "version 3.3.5 from the crash", "defect window 10"},
			CatalogRevision: "bench", SignatureAlgorithm: signature.Algorithm}
		// One thread per bucket, shared by its crashes (the Collector keeps
		// only the representative's).
		th := symbolize.Thread{ID: 140000 + int64(b), Crashed: true, Frames: make([]symbolize.Frame, len(frames))}
		for f, name := range frames {
			th.Frames[f] = symbolize.Frame{Index: f, PC: symbolize.Addr(0x5000000 + f*16), Function: name, File: "be/src/x.cpp", Line: f + 1}
		}
		threads := []symbolize.Thread{th}
		for k := range counts[b] {
			c := &symbolize.Crash{Source: fmt.Sprintf("fleet/be%03d/be.out", i%300), StartLine: 1 + 40*k, EndLine: 40 + 40*k,
				Product: "starrocks", Version: versions[(b+k)%len(versions)], Kind: symbolize.KindSignal, Signal: "SIGSEGV",
				Time: day0.Add(time.Duration((i*7919)%(30*24*60)) * time.Minute)}
			c.Threads = threads
			yield(&pipeline.Result{SchemaVersion: pipeline.SchemaVersion, Crash: c, Signature: sig, Classification: verdict})
			i++
		}
	}
}

// peakHeap samples the live heap every 5 ms until stopped; it returns the
// highest value seen.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// renderFleet collects n generated crashes into nb buckets and renders the
// page; it returns the page size.
func renderFleet(tb testing.TB, n, nb int, w io.Writer) {
	col := report.NewCollector()
	fleet(n, nb, col.Add)
	bs := col.Buckets(0.8)
	require.Len(tb, bs, nb)
	require.NoError(tb, report.Render(context.Background(), w, bs, report.Options{}))
}

// BenchmarkReport100k: 100,000 crashes into 5,000 buckets, from Results
// to the written page (collecting, bucketing with similar buckets,
// rendering every section).
//
//	go test ./report -run XXX -bench Report100k -benchtime 3x
func BenchmarkReport100k(b *testing.B) {
	for b.Loop() {
		runtime.GC()
		stop := peakHeap()
		var cw countWriter
		renderFleet(b, 100_000, 5_000, &cw)
		peak := stop()
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		b.ReportMetric(float64(cw.n)/1e6, "page-MB")
	}
}

// TestReport100k checks the limits of issue 12: under 5 s and 500 MB for
// 100,000 crashes into 5,000 buckets. It runs with CRASHSIG_REPORT_BIG=1
// (timing on a shared machine is not for every test run).
func TestReport100k(t *testing.T) {
	if os.Getenv("CRASHSIG_REPORT_BIG") == "" {
		t.Skip("set CRASHSIG_REPORT_BIG=1")
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	stop := peakHeap()
	t0 := time.Now()
	var cw countWriter
	renderFleet(t, 100_000, 5_000, &cw)
	took, cpu := time.Since(t0), cpuTime()-cpu0
	peak := stop()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("100,000 crashes, 5,000 buckets: wall %v, CPU %v, peak live heap %.0f MB, allocated %.0f MB, page %.1f MB",
		took.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(peak)/1e6, float64(after.TotalAlloc-before.TotalAlloc)/1e6, float64(cw.n)/1e6)
	// CPU time, not wall time: the machine running the tests is shared.
	require.Less(t, cpu, 5*time.Second)
	require.Less(t, peak, uint64(500e6))
}
