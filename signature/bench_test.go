package signature

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashsig/crashsig/symbolize"
)

// mangledNames reads testdata/signature/mangled-names.txt.
func mangledNames(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "signature", "mangled-names.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// nameStream is a realistic crash stream: names drawn with a Zipf law
// (a few hot frames such as handlers and thread trampolines dominate).
func nameStream(names []string, n int) []string {
	r := rand.New(rand.NewPCG(7, 11))
	z := rand.NewZipf(r, 1.1, 1, uint64(len(names)-1))
	out := make([]string, n)
	for i := range out {
		out[i] = names[z.Uint64()]
	}
	return out
}

func BenchmarkNormalizeCachedStream(b *testing.B) {
	s := nameStream(mangledNames(b), 100000)
	n := NewNormalizer(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n.Normalize(s[i%len(s)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "names/s")
}

func BenchmarkNormalizeUncached(b *testing.B) {
	s := nameStream(mangledNames(b), 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Normalize(s[i%len(s)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "names/s")
}

func BenchmarkDemanglerCachedStream(b *testing.B) {
	s := nameStream(mangledNames(b), 100000)
	d := symbolize.NewDemangler(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Demangle(s[i%len(s)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "names/s")
}

// TestCppfiltSideBySide times c++filt and the cached Normalizer on the
// same 100,000-name stream (c++filt only demangles; Normalize demangles
// and normalizes). Skipped without c++filt or with -short.
func TestCppfiltSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	path, err := exec.LookPath("c++filt")
	if err != nil {
		t.Skip("c++filt not installed")
	}
	s := nameStream(mangledNames(t), 100000)
	in := strings.Join(s, "\n") + "\n"
	cmd := exec.Command(path)
	cmd.Stdin = strings.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Skipf("c++filt: %v", err)
	}
	cppfilt := time.Since(start)
	lines := 0
	for sc := bufio.NewScanner(&out); sc.Scan(); {
		lines++
	}
	if lines != len(s) {
		t.Fatalf("c++filt printed %d lines for %d names", lines, len(s))
	}
	n := NewNormalizer(0)
	start = time.Now()
	for _, x := range s {
		n.Normalize(x)
	}
	ours := time.Since(start)
	start = time.Now()
	for _, x := range s {
		Normalize(x)
	}
	uncached := time.Since(start)
	rate := func(d time.Duration) float64 { return float64(len(s)) / d.Seconds() }
	t.Logf("100000 names (Zipf over %d distinct): c++filt %v (%.0f names/s), Normalizer cached %v (%.0f names/s), Normalize uncached %v (%.0f names/s)",
		len(mangledNames(t)), cppfilt.Round(time.Millisecond), rate(cppfilt), ours.Round(time.Millisecond), rate(ours), uncached.Round(time.Millisecond), rate(uncached))
	if ours >= cppfilt {
		t.Errorf("cached Normalizer (%v) not faster than c++filt (%v) on a repeating stream", ours, cppfilt)
	}
}

// benchCrashes parses every crash text under testdata once and returns
// the crash incidents (threadDumps false) or the thread dumps.
func benchCrashes(tb testing.TB, threadDumps bool) []*symbolize.Crash {
	var cs []*symbolize.Crash
	for _, f := range corpusFiles(tb) {
		for _, c := range parseTestdata(tb, f) {
			if (c.Kind == symbolize.KindThreadDump) == threadDumps {
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// BenchmarkGenerateThreadDump: thread dumps are keyed after aggregating all
// their threads (testdata has a 2,059-thread jstack), so they are
// measured apart.
func BenchmarkGenerateThreadDump(b *testing.B) {
	cs := benchCrashes(b, true)
	g, _ := NewGenerator(Options{})
	b.ResetTimer()
	threads := 0
	for i := 0; i < b.N; i++ {
		c := cs[i%len(cs)]
		threads += len(c.Threads)
		g.Generate(c)
	}
	b.ReportMetric(float64(threads)/b.Elapsed().Seconds(), "threads/s")
}

// BenchmarkGenerate: signatures per second on one core from parsed crashes
// (every crash incident under testdata, round robin; name caches warm).
func BenchmarkGenerate(b *testing.B) {
	cs := benchCrashes(b, false)
	g, _ := NewGenerator(Options{})
	for _, c := range cs {
		g.Generate(c)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Generate(cs[i%len(cs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
}

// BenchmarkGenerateCold: a one-entry name cache, so every frame name is
// demangled, normalized and matched against the rules anew.
func BenchmarkGenerateCold(b *testing.B) {
	cs := benchCrashes(b, false)
	g, _ := NewGenerator(Options{CacheSize: 1})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Generate(cs[i%len(cs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
}

func BenchmarkAggregate35k(b *testing.B) {
	ts := genThreads(35000)
	threads := make([]symbolize.Thread, len(ts))
	for i, x := range ts {
		th := symbolize.Thread{ID: int64(i + 1), Name: x.name}
		for j, f := range x.stack {
			th.Frames = append(th.Frames, symbolize.Frame{Index: j, Function: f, Java: true})
		}
		threads[i] = th
	}
	g := Default()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Aggregate(threads)
	}
}
