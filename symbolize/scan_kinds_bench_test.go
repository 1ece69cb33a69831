package symbolize

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// lineKinds are the kinds of ordinary lines a be.out or be.INFO is made of;
// BenchmarkScanKinds scans 64 MiB of each.
var lineKinds = []struct{ name, format string }{
	{"glog-info", "I0303 10:15:%02d.%06d 140073341400640 daemon.cpp:312] Current memory usage: process 12.3 GB, query_pool 1.2 GB, load 300 MB\n"},
	{"hadoop-debug", "DEBUG   2025-03-03 10:15:%02d,%03d 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object\n"},
	{"java-logger", "2025-03-03 10:15:%02d,%03d INFO  [pool-3-thread-1] org.apache.doris.common.jni.JniScanner - scanner opened, batch size 4064\n"},
	{"slf4j", "SLF4J: Found binding in [jar:file:/opt/doris/be/lib/java_extensions/preload-extensions-jar-with-dependencies.jar!/org/slf4j/impl/StaticLoggerBinder.class] %02d %03d\n"},
	{"start-time", "start time: Tue Nov 12 14:20:%02d CST 2024 %03d\n"},
}

func kindInput(format string, size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 256)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, format, i%60, i%1000)
	}
	return b.Bytes()
}

// BenchmarkScanKinds measures scan throughput per kind of ordinary line
// (64 MiB of one kind, from memory) and, in the same run, `grep -c
// Aborted` on the same bytes in a file, as a physical reference.
func BenchmarkScanKinds(b *testing.B) {
	for _, k := range lineKinds {
		data := kindInput(k.format, 64<<20)
		b.Run(k.name+"/crashsig", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu := startCPU()
			for b.Loop() {
				cs, err := ParseAll(context.Background(), bytes.NewReader(data), ScanOptions{})
				if err != nil || len(cs) != 0 {
					b.Fatalf("%d incidents, err %v", len(cs), err)
				}
			}
			cpu.report(b, len(data))
		})
		b.Run(k.name+"/grep-c", func(b *testing.B) {
			grep, err := exec.LookPath("grep")
			if err != nil {
				b.Skip("no grep")
			}
			path := filepath.Join(b.TempDir(), "be.out")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			var cpu time.Duration
			for b.Loop() {
				// grep exits 1 when it counts nothing.
				cmd := exec.Command(grep, "-c", "Aborted", path)
				out, _ := cmd.Output()
				if string(out) != "0\n" {
					b.Fatalf("grep: %q", out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			reportCPU(b, cpu, len(data))
		})
	}
}

// cpuClock measures the CPU time of this process (all its threads: the
// scanner, the garbage collector, the benchmark loop). On a machine shared
// with other work, wall-clock rates swing with the load; CPU-time rates
// (cpu-MB/s) much less, and grep's are measured the same way (its rusage).
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) report(b *testing.B, size int) { reportCPU(b, processCPU()-c.start, size) }

// reportCPU reports size bytes per iteration over cpu as cpu-MB/s.
func reportCPU(b *testing.B, cpu time.Duration, size int) {
	if cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
