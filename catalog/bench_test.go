package catalog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

// generatedCatalog returns the default path rules plus n generated defects
// shaped like real entries: two or three frame globs (class::method names,
// a third of them with a wildcard), some with callers, kinds or messages.
func generatedCatalog(t testing.TB, n int) *Catalog {
	t.Helper()
	files, err := DefaultFiles()
	if err != nil {
		t.Fatal(err)
	}
	var paths *File
	for _, f := range files {
		if strings.HasSuffix(f.Name, "paths.yaml") {
			paths = f
		}
	}
	if paths == nil {
		t.Fatal("default catalog has no paths.yaml")
	}
	var b strings.Builder
	// The generated file belongs to the default catalog's revision (New
	// refuses files of different revisions).
	fmt.Fprintf(&b, "schema: 1\nrevision: %q\ndefects:\n", paths.Revision)
	for i := 0; i < n; i++ {
		prod, pfx := "starrocks", "SR"
		if i%2 == 1 {
			prod, pfx = "doris", "DORIS"
		}
		g1, g2, _, caller := genNames(i)
		if i%3 == 0 {
			g2 = strings.Replace(g2, fmt.Sprint(i%89), "*", 1)
		}
		fmt.Fprintf(&b, "  - id: %s-%d-gen\n    product: %s\n    title: \"generated %d\"\n    match:\n", pfx, 100000+i, prod, i)
		fmt.Fprintf(&b, "      - frames: [%q, %q]\n", g1, g2)
		if i%4 == 0 {
			fmt.Fprintf(&b, "        callers: [%q]\n", caller)
		}
		if i%5 == 0 {
			b.WriteString("        kind: \"SIGSEGV*\"\n")
		}
		if i%7 == 0 {
			fmt.Fprintf(&b, "        message: \"bad value %d\"\n", i)
		}
		fmt.Fprintf(&b, "    affected: [\"3.%d.0 - 3.%d.5\"]\n    fixed: [\"3.%d.6\"]\n", i%5, i%5, i%5)
		fmt.Fprintf(&b, "    links: [\"https://example.com/%d\"]\n    tests: [\"testdata/x.txt\"]\n", i)
	}
	gen, err := Parse("generated.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(paths, gen)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var subsystems = []string{"SegmentIterator", "ColumnReader", "HashJoiner", "AggregateFunction", "TabletManager", "CompactionTask", "MemTable", "DeltaWriter", "ExchangeSinkOperator", "OrcReader"}

// genNames returns the frame names of generated defect i: the two frames,
// the namespace and a caller glob (with a frame it matches via namespace).
func genNames(i int) (g1, g2, ns, caller string) {
	ns = "starrocks"
	if i%2 == 1 {
		ns = "doris::vectorized"
	}
	sub := subsystems[i%len(subsystems)]
	g1 = fmt.Sprintf("%s::%s%d::method_%d", ns, sub, i%97, i)
	g2 = fmt.Sprintf("%s::%s%d::caller_%d", ns, sub, i%89, i%13)
	caller = "*::" + subsystems[(i+1)%len(subsystems)] + "::*"
	return
}

type benchCase struct {
	crash  *symbolize.Crash
	sig    signature.Signature
	frames []string
}

// benchCrashes: every incident of the labelled corpus plus crashes built
// to hit generated defects, so both the miss and the hit paths are timed.
func benchCrashes(t testing.TB) []benchCase {
	var out []benchCase
	for _, prod := range []string{"doris", "starrocks"} {
		for _, l := range readLabels(t, prod) {
			p := parseLog(t, "testdata/corpus/"+prod+"/"+l.File)
			for i, c := range p.crashes {
				out = append(out, benchCase{c, p.sigs[i], FrameNames(c)})
			}
		}
	}
	for i := 0; i < 40; i += 4 { // starrocks defects 0, 4, ... 36
		g1, g2, ns, _ := genNames(i)
		c := crashOf(symbolize.ProductStarRocks, "3.0.2", "1-2", g1, g2, ns+"::"+subsystems[(i+1)%len(subsystems)]+"::run", "starrocks::pipeline::ScanOperator::run")
		c.Kind, c.Signal, c.Message = symbolize.KindSignal, "SIGSEGV", fmt.Sprintf("bad value %d", i)
		sig := signature.Generate(c)
		out = append(out, benchCase{c, sig, FrameNames(c)})
	}
	return out
}

func TestGeneratedCatalogMatches(t *testing.T) {
	c := generatedCatalog(t, 2000)
	hits := 0
	for _, bc := range benchCrashes(t) {
		if v := c.Classify(bc.crash, bc.sig); v.Defect != nil && strings.HasSuffix(v.Defect.ID, "-gen") {
			hits++
		}
	}
	if hits != 10 {
		t.Errorf("%d generated defects matched, want 10", hits)
	}
}

// BenchmarkClassify2000 times Classify (normalizing the crashing stack
// included) against the default path rules plus 2,000 generated defects.
func BenchmarkClassify2000(b *testing.B) {
	c := generatedCatalog(b, 2000)
	cases := benchCrashes(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		bc := &cases[i%len(cases)]
		c.Classify(bc.crash, bc.sig)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "classifications/s")
}

// BenchmarkClassifyFrames2000 is the same with the normalized stack given
// (ClassifyFrames), i.e. the catalog's own cost.
func BenchmarkClassifyFrames2000(b *testing.B) {
	c := generatedCatalog(b, 2000)
	cases := benchCrashes(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		bc := &cases[i%len(cases)]
		c.ClassifyFrames(bc.crash, bc.sig, bc.frames)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "classifications/s")
}

// BenchmarkLoadDefault times parsing and compiling the embedded catalog.
func BenchmarkLoadDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Default(); err != nil {
			b.Fatal(err)
		}
	}
}
