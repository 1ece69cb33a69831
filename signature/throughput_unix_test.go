//go:build unix

package signature

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestThroughputCPU measures signatures per CPU-second (user+system time
// of the process), which a shared, loaded machine distorts far less than
// wall-clock benchmarks. Run with SIGTHROUGHPUT=1; it logs, and fails
// below 200,000 signatures per CPU-second.
func TestThroughputCPU(t *testing.T) {
	if os.Getenv("SIGTHROUGHPUT") == "" {
		t.Skip("set SIGTHROUGHPUT=1")
	}
	cs := benchCrashes(t, false)
	g, _ := NewGenerator(Options{})
	for _, c := range cs {
		g.Generate(c)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	runtime.GC()
	start, wall := cpuTime(), time.Now()
	n := 0
	for time.Since(wall) < 2*time.Second {
		for _, c := range cs {
			g.Generate(c)
		}
		n += len(cs)
	}
	cpu := cpuTime() - start
	rate := float64(n) / cpu.Seconds()
	t.Logf("%d signatures in %v CPU (%v wall): %.0f signatures per CPU-second", n, cpu.Round(time.Millisecond), time.Since(wall).Round(time.Millisecond), rate)
	if rate < 200000 {
		t.Errorf("%.0f signatures per CPU-second, target 200,000", rate)
	}
}
