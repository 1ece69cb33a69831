package symbolize

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// anchorPCs is the size of the PC list of BenchmarkSymbolizeVsAnchors: the
// instruction-ish addresses of the committed o2-fp-dw5 (every third byte
// of every function, testPCs) repeated, as the README's earlier manual
// runs used (105,600 PCs).
const anchorPCs = 105_600

// BenchmarkSymbolizeVsAnchors symbolizes the same PC list of the committed
// o2-fp-dw5 with `crashsig symbolize --binary BIN` (the CLI, built by the
// benchmark, as a process), `llvm-symbolizer --obj=BIN --inlining` and
// `addr2line -f -i -C -e BIN`, alternately in each iteration, and reports
// each one's wall time per op and the anchors' times over the CLI's
// (x-slower), so that the ratios are of one run. library-ms is the same
// work in process (open the binary cold, look up every PC with its inline
// chain, print function and file:line): the CLI's time less its start-up,
// input parsing and output.
// Pin it to one core for the one-core figure:
//
//	cd symbolize && go test -c -o /tmp/sym.test . && taskset -c 1 /tmp/sym.test -test.run XXX -test.bench SymbolizeVsAnchors -test.benchtime 3x -test.cpu 1
func BenchmarkSymbolizeVsAnchors(b *testing.B) {
	path := cxxBinary(b, "o2-fp-dw5")
	ref, err := OpenBinary(path, BinaryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	base := testPCs(ref)
	ref.Close()
	if len(base) == 0 {
		b.Fatal("no PCs")
	}
	pcs := make([]uint64, anchorPCs)
	for i := range pcs {
		pcs[i] = base[i%len(base)]
	}
	pcFile := filepath.Join(b.TempDir(), "pcs")
	f, err := os.Create(pcFile)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, pc := range pcs {
		fmt.Fprintf(w, "0x%x\n", pc)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	type anchor struct {
		name string
		args []string
		wall time.Duration
		cpu  time.Duration
	}
	var anchors []*anchor
	if p, err := exec.LookPath("llvm-symbolizer"); err == nil {
		anchors = append(anchors, &anchor{name: "llvm-symbolizer", args: []string{p, "--obj=" + path, "--inlining"}})
	}
	if p, err := exec.LookPath("addr2line"); err == nil {
		anchors = append(anchors, &anchor{name: "addr2line", args: []string{p, "-f", "-i", "-C", "-e", path}})
	}
	// crashsig as the anchors run: the CLI, built once, as a process
	// (start-up, reading the PC list, printing included).
	cli := filepath.Join(b.TempDir(), "crashsig")
	if out, err := exec.Command("go", "build", "-o", cli, "github.com/crashsig/crashsig/examples/crashsig").CombinedOutput(); err != nil {
		b.Fatalf("building the CLI: %v\n%s", err, out)
	}
	anchors = append([]*anchor{{name: "crashsig-cli", args: []string{cli, "symbolize", "--no-system-debug-dir", "--binary", path}}}, anchors...)
	var own time.Duration
	lines := 0
	for b.Loop() {
		t0 := time.Now()
		lines = symbolizeAll(b, path, pcs, io.Discard)
		own += time.Since(t0)
		for _, a := range anchors {
			in, err := os.Open(pcFile)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(a.args[0], a.args[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = in, io.Discard, io.Discard
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v", a.name, err)
			}
			a.wall += time.Since(t0)
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				a.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			in.Close()
		}
	}
	n := float64(b.N)
	b.ReportMetric(own.Seconds()*1e3/n, "library-ms")
	b.ReportMetric(float64(lines), "library-lines")
	cliWall := anchors[0].wall
	b.ReportMetric(cliWall.Seconds()*1e3/n, "crashsig-cli-ms")
	for _, a := range anchors[1:] {
		b.ReportMetric(a.wall.Seconds()*1e3/n, a.name+"-ms")
		// Same-run ratios against the CLI (what a user runs).
		b.ReportMetric(a.wall.Seconds()/cliWall.Seconds(), a.name+"-x-slower")
	}
}

// symbolizeAll opens path cold and prints every PC's inline chain (function,
// then file:line, innermost first, a blank line after each PC), returning
// the number of lines printed.
func symbolizeAll(b *testing.B, path string, pcs []uint64, out io.Writer) int {
	bin, err := OpenBinary(path, BinaryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer bin.Close()
	w := bufio.NewWriterSize(out, 64<<10)
	var locs []Location
	var buf []byte
	lines := 0
	for _, pc := range pcs {
		locs, _ = bin.AppendLookup(locs[:0], pc, LookupOptions{})
		for _, l := range locs {
			buf = append(buf[:0], l.Function...)
			buf = append(buf, '\n')
			buf = append(buf, l.File...)
			buf = append(buf, ':')
			buf = strconv.AppendInt(buf, int64(l.Line), 10)
			buf = append(buf, ':')
			buf = strconv.AppendInt(buf, int64(l.Column), 10)
			buf = append(buf, '\n')
			w.Write(buf)
			lines += 2
		}
		w.WriteByte('\n')
		lines++
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return lines
}
