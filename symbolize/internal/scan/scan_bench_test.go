package scan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// genBeOut writes about size bytes of be.out/be.INFO-like text: ordinary
// glog lines of both glog generations, JVM chatter, and a real crash dump
// from the corpus every crashEvery bytes. It is deterministic.
func genBeOut(w io.Writer, size, crashEvery int64, crash []byte) (crashes int) {
	r := rand.New(rand.NewPCG(1, 2))
	msgs := []string{
		"scan_operator.cpp:478] scan fragment 5c1e9a0f3b2d4e1-9a7b6c5d4e3f2a10 finished, rows=1048576 bytes=104857600",
		"tablet_manager.cpp:1021] start to do tablet meta checkpoint, tablet_id=1234567 schema_hash=987654",
		"compaction.cpp:233] succeed to do cumulative compaction. tablet=10023.1234.abcd, output_version=2-10, current_max_version=10",
		"daemon.cpp:312] Current memory usage: process 12.3 GB, query_pool 1.2 GB, load 300 MB",
		"fragment_mgr.cpp:702] Register query/load memory tracker, query/load id: 9c40d77b5a2c474a-8663123a9dc9d2ea limit: 2.00 GB",
	}
	var n, next int64 = 0, crashEvery
	buf := make([]byte, 0, 512)
	for n < size {
		buf = buf[:0]
		switch r.IntN(20) {
		case 0:
			buf = append(buf, "DEBUG   2025-03-03 10:15:09,145 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object\n"...)
		case 1:
			buf = fmt.Appendf(buf, "W20250303 10:15:%02d.%06d %5d %s\n", r.IntN(60), r.IntN(1000000), r.IntN(99999), msgs[r.IntN(len(msgs))])
		default:
			buf = fmt.Appendf(buf, "I0303 10:15:%02d.%06d %d %s\n", r.IntN(60), r.IntN(1000000), 140073341400640+r.IntN(1000), msgs[r.IntN(len(msgs))])
		}
		w.Write(buf)
		n += int64(len(buf))
		if n >= next && crash != nil {
			w.Write(crash)
			n += int64(len(crash))
			next += crashEvery
			crashes++
		}
	}
	return crashes
}

func benchInput(b *testing.B, size int64) ([]byte, int) {
	crash, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "corpus", "doris", "062-attach-task-tuniqueid-copy-3-0-6.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Grow(int(size) + 1<<20)
	n := genBeOut(&buf, size, 4<<20, append(crash, '\n', '\n'))
	return buf.Bytes(), n
}

// BenchmarkScan measures scan throughput on a 256 MiB be.out-like file
// (ordinary glog and JVM lines with a real crash dump every 4 MiB), read
// from disk, and times `grep -c` on the same file in the same run as a
// physical reference. The README reports both.
func BenchmarkScan(b *testing.B) {
	data, want := benchInput(b, 256<<20)
	path := filepath.Join(b.TempDir(), "be.out")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("crashsig", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		cpu := startCPU()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := ParseAll(context.Background(), f, ScanOptions{})
			f.Close()
			if err != nil || len(cs) != want {
				b.Fatalf("got %d incidents (err %v), want %d", len(cs), err, want)
			}
		}
		cpu.report(b, len(data))
	})
	b.Run("grep-c", func(b *testing.B) {
		grep, err := exec.LookPath("grep")
		if err != nil {
			b.Skip("no grep")
		}
		b.SetBytes(int64(len(data)))
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command(grep, "-c", "Aborted at", path)
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if n := atoi(strings.TrimSpace(string(out))); n != want {
				b.Fatalf("grep counted %d, want %d", n, want)
			}
		}
		reportCPU(b, cpu, len(data))
	})
}
