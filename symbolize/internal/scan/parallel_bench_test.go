package scan

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// parallelCPU is the process's user and system CPU time so far.
func parallelCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScanParallel scans BenchmarkScan's 256 MiB be.out-like file
// from disk with one Scanner (single) and with ScanParallel on GOMAXPROCS
// workers (parallel), reporting CPU seconds per run and, for parallel,
// the ParallelStats of the last run: chunks, chunks the in-order scan
// skipped lines in, lines it read itself, chunks scanned twice, incidents
// taken from the workers.
//
//	go test ./symbolize -run XXX -bench ScanParallel -benchtime 3x -cpu 1,2
func BenchmarkScanParallel(b *testing.B) {
	data, want := benchInput(b, 256<<20)
	path := filepath.Join(b.TempDir(), "be.out")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, scan func(f *os.File) int) {
		b.SetBytes(int64(len(data)))
		cpu0 := parallelCPU()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if n := scan(f); n < want {
				b.Fatalf("%d incidents, want %d", n, want)
			}
			f.Close()
		}
		b.ReportMetric((parallelCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	}
	b.Run("single", func(b *testing.B) {
		run(b, func(f *os.File) int {
			n := 0
			s := NewScanner(f, ScanOptions{})
			for s.Next() {
				n++
			}
			return n
		})
	})
	b.Run("parallel", func(b *testing.B) {
		var st ParallelStats
		run(b, func(f *os.File) int {
			n := 0
			for _, err := range ScanParallel(context.Background(), f, int64(len(data)), ScanOptions{}, ParallelOptions{Workers: runtime.GOMAXPROCS(0), Stats: &st}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			return n
		})
		b.ReportMetric(float64(st.Chunks), "chunks")
		b.ReportMetric(float64(st.Adopted), "skipped-in")
		b.ReportMetric(float64(st.ContinuedLines), "lines-in-order")
		b.ReportMetric(float64(st.Rescanned), "rescanned")
		b.ReportMetric(float64(st.Reused), "taken")
	})
}
