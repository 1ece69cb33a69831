package scan

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lineKinds are the kinds of ordinary lines a be.out or be.INFO is made of;
// BenchmarkScanKinds scans 64 MiB of each. Each kind but the last three is
// one line with changing numbers; "jvm-mixed" interleaves many different
// JVM lines (no two neighbours alike, so no line reuses the anchors of the
// one before), "binary" is random bytes and "nul-runs" the NUL runs a
// crash leaves in a log file, with a newline now and then.
var lineKinds = []struct {
	name, format string
	gen          func(size int) []byte
}{
	{name: "glog-info", format: "I0303 10:15:%02d.%06d 140073341400640 daemon.cpp:312] Current memory usage: process 12.3 GB, query_pool 1.2 GB, load 300 MB\n"},
	{name: "hadoop-debug", format: "DEBUG   2025-03-03 10:15:%02d,%03d 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object\n"},
	{name: "java-logger", format: "2025-03-03 10:15:%02d,%03d INFO  [pool-3-thread-1] org.apache.doris.common.jni.JniScanner - scanner opened, batch size 4064\n"},
	{name: "slf4j", format: "SLF4J: Found binding in [jar:file:/opt/doris/be/lib/java_extensions/preload-extensions-jar-with-dependencies.jar!/org/slf4j/impl/StaticLoggerBinder.class] %02d %03d\n"},
	{name: "start-time", format: "start time: Tue Nov 12 14:20:%02d CST 2024 %03d\n"},
	{name: "jvm-mixed", gen: jvmMixed},
	{name: "binary", gen: func(size int) []byte {
		r := rand.New(rand.NewPCG(3, 4))
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}},
	{name: "nul-runs", gen: func(size int) []byte {
		b := make([]byte, size)
		for i := 4095; i < size; i += 4096 {
			b[i] = '\n'
		}
		return b
	}},
}

// jvmMixed is JVM and Hadoop chatter of many shapes, shuffled.
func jvmMixed(size int) []byte {
	r := rand.New(rand.NewPCG(5, 6))
	levels := []string{"INFO ", "DEBUG", "WARN "}
	threads := []string{"main", "pool-3-thread-1", "IPC Server handler 7 on 8020", "BE-scanner-12", "Timer-0"}
	classes := []string{"org.apache.hadoop.security.Groups", "org.apache.doris.common.jni.JniScanner", "org.apache.hadoop.hdfs.DFSClient", "org.apache.paimon.io.DataFileReader", "com.zaxxer.hikari.pool.HikariPool"}
	msgs := []string{"Creating new Groups object", "scanner opened, batch size %d", "Connecting to datanode 10.0.%d.%d:9866", "opened file part-%05d.parquet with %d rows", "HikariPool-1 - Added connection conn%d", "Got token for user doris (auth:SIMPLE) %d"}
	var b bytes.Buffer
	b.Grow(size + 512)
	for b.Len() < size {
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "%s   2025-03-03 10:15:%02d,%03d %d     %s       [%s]   ", levels[r.IntN(3)], r.IntN(60), r.IntN(1000), r.IntN(9999), classes[r.IntN(len(classes))], threads[r.IntN(len(threads))])
		case 1:
			fmt.Fprintf(&b, "2025-03-03 10:15:%02d,%03d %s [%s] %s - ", r.IntN(60), r.IntN(1000), levels[r.IntN(3)], threads[r.IntN(len(threads))], classes[r.IntN(len(classes))])
		case 2:
			fmt.Fprintf(&b, "SLF4J: Class path contains multiple SLF4J bindings in /opt/doris/be/lib/java_extensions/%s.jar ", classes[r.IntN(len(classes))])
		default:
			fmt.Fprintf(&b, "%s: ", classes[r.IntN(len(classes))])
		}
		// As many numbers as the message has verbs (more would print
		// `%!(EXTRA …)`, which no logger writes).
		msg := msgs[r.IntN(len(msgs))]
		args := []any{r.IntN(100000), r.IntN(256)}
		fmt.Fprintf(&b, msg, args[:strings.Count(msg, "%")]...)
		b.WriteByte('\n')
	}
	return b.Bytes()
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
		// The input is made when a sub-benchmark of the kind runs (not for
		// kinds -bench filters out: a profile of one kind shows its scan).
		var data []byte
		input := func() []byte {
			if data == nil && k.gen != nil {
				data = k.gen(64 << 20)
			} else if data == nil {
				data = kindInput(k.format, 64<<20)
			}
			return data
		}
		b.Run(k.name+"/crashsig", func(b *testing.B) {
			data := input()
			b.SetBytes(int64(len(data)))
			cpu := startCPU()
			for b.Loop() {
				cs, err := ParseAll(context.Background(), bytes.NewReader(data), ScanOptions{})
				if err != nil || len(cs) != 0 && k.gen == nil {
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
			data := input()
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
				if string(out) != "0\n" && k.gen == nil {
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

// BenchmarkPrefilterScan measures the anchor scan alone (scanFrom, as the
// idle path calls it) over the lines of the jvm-mixed and binary kinds
// and of the be.out-like lines, 4 MiB each.
func BenchmarkPrefilterScan(b *testing.B) {
	for _, k := range lineKinds {
		if k.name != "jvm-mixed" && k.name != "binary" && k.name != "java-logger" {
			continue
		}
		var data []byte
		if k.gen != nil {
			data = k.gen(4 << 20)
		} else {
			data = kindInput(k.format, 4<<20)
		}
		lines := strings.Split(string(data), "\n")
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu := startCPU()
			var h scanHits
			for b.Loop() {
				for _, l := range lines {
					h |= anchored.scanFrom(l, false)
				}
			}
			cpu.report(b, len(data))
			_ = h
		})
	}
}
