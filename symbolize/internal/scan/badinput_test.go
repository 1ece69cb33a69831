package scan

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields block over and over until n bytes, then tail.
type repeatReader struct {
	block []byte
	n     int64
	off   int
	tail  *strings.Reader
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return r.tail.Read(p)
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:], r.block[r.off:])
		if int64(c) > r.n {
			c = int(r.n)
		}
		k += c
		r.n -= int64(c)
		r.off = (r.off + c) % len(r.block)
	}
	return k, nil
}

const tailDump = "*** Aborted at 1731400000 (unix time) try \"date -d @1731400000\" if you are using GNU date ***\n" +
	"*** SIGSEGV (@0x28) received by PID 12001 (TID 0x7f0e2d7fe700) from PID 40; stack trace: ***\n" +
	"    @          0x7e8d9c2 google::(anonymous namespace)::FailureSignalHandler()\n" +
	"    @     0x7f0f3a1c4630 (unknown)\n" +
	"    @          0x5a1b2c3 starrocks::HashJoiner::_probe()\n" +
	"    @          0x3c9e2a1 starrocks::ThreadPool::dispatch_thread()\n"

func TestBinaryJunk(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	junk := make([]byte, 8<<20)
	for i := range junk {
		junk[i] = byte(r.Uint32())
	}
	cs, err := ParseAll(context.Background(), bytes.NewReader(junk), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.EndLine < c.StartLine {
			t.Fatalf("bad span %d-%d", c.StartLine, c.EndLine)
		}
	}
	t.Logf("%d incidents in 8 MiB of random bytes", len(cs))
}

// TestHugeLine feeds a 1 GiB line (no newline) followed by a crash: the
// line is cut at MaxLineBytes, memory stays small, the crash is found.
func TestHugeLine(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	block := bytes.Repeat([]byte("x"), 1<<20)
	r := &repeatReader{block: block, n: size, tail: strings.NewReader("\n" + tailDump)}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cs, err := ParseAll(context.Background(), r, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if len(cs) != 1 || cs[0].Signal != "SIGSEGV" || len(cs[0].Threads[0].Frames) != 4 {
		t.Fatalf("got %d incidents, want the one crash after the long line", len(cs))
	}
	if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 64<<20 {
		t.Errorf("allocated %d MiB for a %d MiB line", grew>>20, size>>20)
	}
}

// TestNoCrashConstantMemory streams ordinary log lines (512 MiB, or
// CRASHSIG_HUGE_GB gigabytes) and checks that the heap does not grow with
// the input.
func TestNoCrashConstantMemory(t *testing.T) {
	size := int64(512 << 20)
	if testing.Short() {
		size = 32 << 20
	}
	if gb := os.Getenv("CRASHSIG_HUGE_GB"); gb != "" {
		var n int64
		for _, c := range gb {
			n = n*10 + int64(c-'0')
		}
		size = n << 30
	}
	var block bytes.Buffer
	genBeOut(&block, 1<<20, 1<<62, nil)
	r := &repeatReader{block: block.Bytes(), n: size, tail: strings.NewReader("")}
	s := NewScanner(r, ScanOptions{})
	for s.Next() {
		t.Errorf("unexpected incident at line %d", s.Crash().StartLine)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak := ms.HeapInuse
	if peak > 64<<20 {
		t.Errorf("heap in use %d MiB after %d MiB of input", peak>>20, size>>20)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		r.n--
		return copy(p, "I0303 10:15:02.118230 1 a.cpp:1] x\n"), nil
	}
	return 0, errors.New("disk on fire")
}

func TestReadErrorIsTyped(t *testing.T) {
	_, err := ParseAll(context.Background(), &failingReader{n: 3}, ScanOptions{})
	if !errors.Is(err, ErrRead) || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v, want ErrRead wrapping the cause", err)
	}
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &repeatReader{block: []byte("I0303 10:15:02.118230 1 a.cpp:1] x\n"), n: 1 << 40, tail: strings.NewReader("")}
	_, err := ParseAll(ctx, r, ScanOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

var _ io.Reader = (*repeatReader)(nil)
