package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeBeOut writes about size bytes of be.out-like text to path: glog
// lines of both glog generations, JVM and Hadoop chatter (DEBUG lines,
// Java logger lines, SLF4J), and a real crash text of the corpus every
// crashEvery bytes, rotating through texts from texts[first]. It is
// deterministic and returns the number of crash texts written.
func writeBeOut(t testing.TB, path string, size, crashEvery int64, texts [][]byte, first int, seed uint64) int {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(seed, 7))
	msgs := []string{
		"scan_operator.cpp:478] scan fragment 5c1e9a0f3b2d4e1-9a7b6c5d4e3f2a10 finished, rows=1048576 bytes=104857600",
		"tablet_manager.cpp:1021] start to do tablet meta checkpoint, tablet_id=1234567 schema_hash=987654",
		"compaction.cpp:233] succeed to do cumulative compaction. tablet=10023.1234.abcd, output_version=2-10, current_max_version=10",
		"daemon.cpp:312] Current memory usage: process 12.3 GB, query_pool 1.2 GB, load 300 MB",
		"fragment_mgr.cpp:702] Register query/load memory tracker, query/load id: 9c40d77b5a2c474a-8663123a9dc9d2ea limit: 2.00 GB",
	}
	var n, next int64 = 0, crashEvery
	crashes := 0
	buf := make([]byte, 0, 512)
	for n < size {
		buf = buf[:0]
		switch r.IntN(24) {
		case 0:
			buf = append(buf, "DEBUG   2025-03-03 10:15:09,145 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object\n"...)
		case 1:
			buf = fmt.Appendf(buf, "2025-03-03 10:15:%02d,%03d INFO [pool-3-thread-1] org.apache.hadoop.hdfs.DFSClient: block pool refreshed %d\n", r.IntN(60), r.IntN(1000), r.IntN(1e6))
		case 2:
			buf = append(buf, "SLF4J: Class path contains multiple SLF4J bindings.\n"...)
		case 3:
			buf = fmt.Appendf(buf, "W20250303 10:15:%02d.%06d %5d %s\n", r.IntN(60), r.IntN(1000000), r.IntN(99999), msgs[r.IntN(len(msgs))])
		default:
			buf = fmt.Appendf(buf, "I0303 10:15:%02d.%06d %d %s\n", r.IntN(60), r.IntN(1000000), 140073341400640+r.IntN(1000), msgs[r.IntN(len(msgs))])
		}
		w.Write(buf)
		n += int64(len(buf))
		if n >= next && len(texts) > 0 {
			txt := texts[(first+crashes)%len(texts)]
			w.Write(txt)
			w.WriteString("\n\n")
			n += int64(len(txt)) + 2
			next += crashEvery
			crashes++
		}
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return crashes
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchMB is the size of the generated input of the parallel benchmarks:
// CRASHSIG_BENCH_MB, default 1024.
func benchMB() int64 {
	if v, err := strconv.ParseInt(os.Getenv("CRASHSIG_BENCH_MB"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 1024
}

// BenchmarkClassifyParallel classifies about 1 GiB of generated be.out
// (CRASHSIG_BENCH_MB) with Jobs = GOMAXPROCS: as one file, and split in
// 8 files. Run it with -cpu 1,2 and compare: several inputs are read at
// once, and one file of 256 MiB or more is scanned in chunks
// (symbolize.ScanParallel). With two or more cores, one-file-ratio runs
// the one file with one core (GOMAXPROCS 1, Jobs 1) and with all of them
// alternately in each iteration and reports the ratio of their times,
// wall and CPU, in the same run: on a shared machine the load changes
// less within one iteration than between two benchmark runs.
//
//	go test ./pipeline -run XXX -bench ClassifyParallel -benchtime 3x -count 2 -cpu 1,2
func BenchmarkClassifyParallel(b *testing.B) {
	texts := corpusTexts(b)
	size := benchMB() << 20
	dir := b.TempDir()
	one := filepath.Join(dir, "be.out")
	writeBeOut(b, one, size, 4<<20, texts, 0, 1)
	// The same crash texts in 8 files of an eighth each.
	var eight []string
	first := 0
	for i := range 8 {
		p := filepath.Join(dir, fmt.Sprintf("be-%d.out", i))
		first += writeBeOut(b, p, size/8, 4<<20, texts, first, uint64(i+2))
		eight = append(eight, p)
	}
	run := func(b *testing.B, paths []string) {
		p, err := New(context.Background(), Options{NoSystemDebugDirs: true, Jobs: runtime.GOMAXPROCS(0)})
		require.NoError(b, err)
		defer p.Close()
		b.SetBytes(size)
		cpu0 := cpuTime()
		for b.Loop() {
			n := 0
			for r, err := range p.Run(context.Background(), nil, paths...) {
				require.NoError(b, err)
				require.NotNil(b, r)
				n++
			}
			require.Greater(b, n, int(size>>23), "a crash text every 4 MiB")
		}
		// CPU seconds per op (user+system, the whole process): the work
		// done, which a loaded machine does not change as it changes the
		// wall time.
		b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	}
	b.Run("one-file", func(b *testing.B) { run(b, []string{one}) })
	b.Run("8-files", func(b *testing.B) { run(b, eight) })
	b.Run("one-file-ratio", func(b *testing.B) {
		cores := runtime.GOMAXPROCS(0)
		if cores < 2 {
			b.Skip("needs -cpu 2 or more")
		}
		{
			// classify runs the one file with n cores and returns its
			// wall and CPU time.
			classify := func(n int) (time.Duration, time.Duration) {
				prev := runtime.GOMAXPROCS(n)
				defer runtime.GOMAXPROCS(prev)
				p, err := New(context.Background(), Options{NoSystemDebugDirs: true, Jobs: n})
				require.NoError(b, err)
				defer p.Close()
				t0, c0 := time.Now(), cpuTime()
				for r, err := range p.Run(context.Background(), nil, one) {
					require.NoError(b, err)
					require.NotNil(b, r)
				}
				return time.Since(t0), cpuTime() - c0
			}
			var w1, w2, c1, c2 time.Duration
			for b.Loop() {
				w, c := classify(1)
				w1, c1 = w1+w, c1+c
				w, c = classify(cores)
				w2, c2 = w2+w, c2+c
			}
			b.ReportMetric(w1.Seconds()/float64(b.N), "1core-s/op")
			b.ReportMetric(w2.Seconds()/float64(b.N), "ncore-s/op")
			b.ReportMetric(w1.Seconds()/w2.Seconds(), "x-faster")
			b.ReportMetric(c1.Seconds()/float64(b.N), "1core-cpu-s/op")
			b.ReportMetric(c2.Seconds()/float64(b.N), "ncore-cpu-s/op")
		}
	})
}

// TestRunJobsConstantMemory: reading several large inputs at once keeps
// the heap bounded: 4 files of 64 MiB (CRASHSIG_BENCH_MB/4 each when set)
// of be.out-like text with a crash every 256 KiB, read with Jobs 3, never
// grow the live heap by more than 48 MiB over what it was before the
// run, although the Results total far more when kept.
func TestRunJobsConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB")
	}
	texts := corpusTexts(t)
	per := int64(64 << 20)
	if v := os.Getenv("CRASHSIG_BENCH_MB"); v != "" {
		per = benchMB() << 20 / 4
	}
	dir := t.TempDir()
	var paths []string
	crashes := 0
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("be-%d.out", i))
		crashes += writeBeOut(t, p, per, 256<<10, texts, crashes, uint64(i+10))
		paths = append(paths, p)
	}
	p := newPipeline(t, Options{Jobs: 3})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				mu.Lock()
				peak = max(peak, m.HeapAlloc)
				mu.Unlock()
			}
		}
	}()
	n := 0
	for r, err := range p.Run(context.Background(), nil, paths...) {
		require.NoError(t, err)
		require.NotNil(t, r)
		n++
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	growth := int64(peak) - int64(base)
	t.Logf("%d incidents from %d MiB in 4 files, jobs 3: live heap %d MiB before, peak %d MiB (+%d MiB)", n, 4*per>>20, base>>20, peak>>20, growth>>20)
	assert.Greater(t, n, crashes/2, "%d crash texts written", crashes)
	assert.Less(t, growth, int64(48<<20), "the heap grows with the input")
}
