package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseWith parses data with the prefilter (filtered) or without it, every
// rule on every line (the reference), and returns the incidents as JSON.
func parseWith(t testing.TB, data []byte, opts ScanOptions, filtered bool) string {
	t.Helper()
	return scanJSON(t, bytes.NewReader(data), opts, filtered)
}

// scanJSON scans r (without the prefilter unless filtered) and returns the
// incidents as JSON.
func scanJSON(t testing.TB, r io.Reader, opts ScanOptions, filtered bool) string {
	t.Helper()
	s := NewScanner(r, opts)
	if !filtered {
		s.p.pf = nil
	}
	return scannerJSON(t, s)
}

// scannerJSON returns the incidents s reads, as JSON.
func scannerJSON(t testing.TB, s *Scanner) string {
	t.Helper()
	var cs []*Crash
	for s.Next() {
		cs = append(cs, s.Crash())
	}
	require.NoError(t, s.Err())
	b, err := json.Marshal(cs)
	require.NoError(t, err)
	return string(b)
}

// prefilterInputs are the crash texts of testdata: every corpus and format
// file (a format file added with a new table entry is covered at once).
func prefilterInputs(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"corpus/*/*.txt", "formats/*.txt", "validation/*/*.txt"} {
		ms, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", pat))
		require.NoError(t, err)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			require.NoError(t, err)
			out[m] = b
		}
	}
	require.Greater(t, len(out), 150, "crash texts found")
	return out
}

// ordinaryLines are the lines a be.out is made of between crashes.
var ordinaryLines = []string{
	"DEBUG   2025-03-03 10:15:09,145 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object",
	"2025-03-03 10:15:09,145 INFO  [pool-3-thread-1] org.apache.doris.common.jni.JniScanner - scanner opened, batch size 4064",
	"SLF4J: Found binding in [jar:file:/opt/doris/be/lib/java_extensions/preload.jar!/org/slf4j/impl/StaticLoggerBinder.class]",
	"start time: Tue Nov 12 14:20:05 CST 2024",
	"I0303 10:15:02.118230 140073341400640 daemon.cpp:312] Current memory usage: process 12.3 GB",
	"W0303 10:15:02.118230 140073341400640 mem_tracker.cpp:12] Memory of process exceed limit. 12 GB",
	"Tue Nov 12 14:20:05 CST 2024 version doris-2.1.6-rc04(AVX2) RELEASE (build git://x@4f5a6b7)",
	"",
	"   ",
}

// mutate returns a variant of a crash text damaged the way transports and
// log files damage it: prefixes, CRLF, quotes, entities, interleaved
// chatter, joined and cut lines, dropped and repeated lines, binary bytes.
func mutate(r *rand.Rand, data []byte) []byte {
	lines := strings.Split(string(data), "\n")
	pfx := []string{"host-1 | ", "[pod/be-0/be] ", "kube.var.log.containers.be-0.log: ", "2025-03-03 10:15:02,118 ", "> ", "\t"}[r.IntN(6)]
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch r.IntN(24) {
		case 0:
			l = pfx + l
		case 1:
			l += "\r"
		case 2:
			l = strings.NewReplacer("<", "&lt;", ">", "&gt;", "\"", "&quot;", "'", "&#39;").Replace(l)
		case 3:
			out = append(out, ordinaryLines[r.IntN(len(ordinaryLines))])
		case 4:
			if i+1 < len(lines) {
				l += " " + lines[i+1]
				i++
			}
		case 5:
			if len(l) > 2 {
				l = l[:r.IntN(len(l))]
			}
		case 6:
			continue
		case 7:
			out = append(out, l)
		case 8:
			if len(l) > 0 {
				b := []byte(l)
				b[r.IntN(len(b))] = byte(r.Uint32())
				l = string(b)
			}
		case 9:
			l = strings.Repeat(" ", r.IntN(6)) + l
		}
		if r.IntN(4) == 0 && pfx != "> " {
			l = pfx + l
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, "\n"))
}

// wholeVariants are damages applied to every line of a crash text.
var wholeVariants = []func(lines []string) []string{
	func(ls []string) []string { // a scraped paste
		return mapLines(ls, strings.NewReplacer("<", "&lt;", ">", "&gt;", "\"", "&quot;", "'", "&#39;", "&", "&amp;").Replace)
	},
	func(ls []string) []string { return mapLines(ls, func(l string) string { return l + "\r" }) },
	func(ls []string) []string { return mapLines(ls, func(l string) string { return "host-1 | " + l }) },
	func(ls []string) []string { return mapLines(ls, func(l string) string { return "> " + l }) },
	func(ls []string) []string { // chatter between every two lines
		var out []string
		for i, l := range ls {
			out = append(out, l, ordinaryLines[i%len(ordinaryLines)])
		}
		return out
	},
	func(ls []string) []string { // a paste that lost its newlines
		var out []string
		for i := 0; i < len(ls); i += 7 {
			out = append(out, strings.Join(ls[i:min(i+7, len(ls))], " "))
		}
		return out
	},
}

func mapLines(ls []string, f func(string) string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = f(l)
	}
	return out
}

// TestPrefilterEquivalence is the prefilter's promise: the scanner finds the
// same incidents, byte for byte, with it and with every rule run on every
// line, on every crash text of testdata and on damaged variants of them.
func TestPrefilterEquivalence(t *testing.T) {
	heavyUnderRace(t)
	inputs := prefilterInputs(t)
	r := rand.New(rand.NewPCG(11, 3))
	variants := 3
	if testing.Short() {
		variants = 1
	}
	for name, data := range inputs {
		cases := [][]byte{data}
		lines := strings.Split(string(data), "\n")
		for _, v := range wholeVariants {
			cases = append(cases, []byte(strings.Join(v(lines), "\n")))
		}
		for range variants {
			cases = append(cases, mutate(r, data))
		}
		for i, c := range cases {
			for _, opts := range []ScanOptions{{}, {MaxLineBytes: 200}} {
				want := parseWith(t, c, opts, false)
				got := parseWith(t, c, opts, true)
				if got != want {
					t.Errorf("%s variant %d (MaxLineBytes %d): the prefilter changes the incidents", name, i, opts.MaxLineBytes)
				}
			}
		}
	}
}

// TestPrefilterClassify checks the anchors rule by rule: on every line of
// the crash texts and of their variants, and on each line cut at every
// anchor, the rule the prefilter lets run is the one the full rule set
// finds, with the same submatches. A rule whose anchors missed a line it
// matches fails here.
func TestPrefilterClassify(t *testing.T) {
	inputs := prefilterInputs(t)
	r := rand.New(rand.NewPCG(5, 8))
	ref := &parser{}
	ref.init(ScanOptions{})
	ref.pf = nil
	flt := &parser{}
	flt.init(ScanOptions{})
	require.NotNil(t, flt.pf)
	checked := 0
	check := func(line string) {
		wk, wm := ref.classify(line)
		gk, gm := flt.classify(line)
		if wk != gk || fmt.Sprint(wm) != fmt.Sprint(gm) {
			t.Errorf("line %q: the full rule set gives kind %d %q, the prefilter %d %q", line, wk, wm, gk, gm)
		}
		assert.Equal(t, wk, flt.kindOf(line, 0, false), "kindOf(%q)", line)
		checked++
	}
	for _, data := range inputs {
		for _, l := range strings.Split(string(mutate(r, data))+"\n"+string(data), "\n") {
			check(l)
			if strings.Contains(l, "*** ") {
				check(strings.ReplaceAll(l, "*** ", ""))
			}
		}
	}
	for _, l := range ordinaryLines {
		check(l)
	}
	require.Greater(t, checked, 10000)
}

// TestAnchorsDerived checks that every rule of the tables has anchors the
// prefilter looks for, derived from its literal and expression.
func TestAnchorsDerived(t *testing.T) {
	pf := newPrefilter(allRules)
	n := 0
	for c := range pf.byFirst {
		for _, pr := range pf.byFirst[c] {
			require.True(t, byte(c) == pr.r.prefix[0] || pr.r.bare != "" && byte(c) == pr.r.bare[0], "rule %s indexed by its first byte", pr.r.id)
			n++
		}
	}
	for _, pr := range pf.contains {
		require.NotZero(t, pr.bit, pr.r.id)
		found := pf.scan(pr.r.contains) & pr.bit
		if pr.need != nil {
			for _, l := range pr.need {
				found |= pf.scan(l) & pr.bit
			}
		}
		require.NotZero(t, found, "rule %s: the scan finds its own anchors", pr.r.id)
		n++
	}
	require.Greater(t, n, 40, "rules")
	for _, l := range pf.lits {
		require.NotEmpty(t, l.lit)
		require.False(t, strings.ContainsAny(l.lit, "0123456789"), "scan literal %q has digits", l.lit)
		require.NotZero(t, pf.scan("xx "+l.lit+" yy")&l.bits, "scan finds %q", l.lit)
	}
	// The repairs' anchors: an HTML entity, a collapsed-paste marker, a
	// dump header after a prefix.
	for _, s := range []string{"a &lt;b", "x  0# doris::Foo", "@ 0x1 f", "y #3  0x1 in f", "host | *** SIGSEGV"} {
		require.NotZero(t, pf.scan(s)&(hitRepair|hitStars), s)
	}
	require.Zero(t, pf.scan(ordinaryLines[0]), ordinaryLines[0])
}

// TestRequiredLiterals pins the reading of expressions.
func TestRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		re   string
		want []string
	}{
		{`^Thread (\d+) \(`, []string{"Thread "}},
		{`^(?:\*\*\* )?Aborted at (\d+)`, []string{"*** Aborted at ", "Aborted at "}},
		{`(\S.{0,15})\[(\d+)\]: segfault at ([0-9a-f]+) ip`, []string{"]: segfault at "}},
		{`^(READ|WRITE) of size (\d+)`, []string{"READ of size ", "WRITE of size "}},
		{`^#(?:$|[^0-9])`, []string{"#"}},
		{`(?i)abort`, nil},
		{`^.*$`, nil},
		{`a|.*`, nil},
	} {
		got := bestTerm(requiredLiterals(regexp.MustCompile(c.re)))
		assert.Equal(t, c.want, got, c.re)
	}
	assert.Equal(t, "tid=", digitFree("tid=0x"))
	assert.Equal(t, "", digitFree("123"))
}

// FuzzPrefilter: on any input the scanner gives the same incidents with and
// without the prefilter, and each line classifies the same.
func FuzzPrefilter(f *testing.F) {
	addCorpusSeeds(f)
	for _, l := range ordinaryLines {
		f.Add([]byte(l + "\n" + l + "\n"))
	}
	ref := &parser{}
	ref.init(ScanOptions{})
	ref.pf = nil
	flt := &parser{}
	flt.init(ScanOptions{})
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := ScanOptions{MaxLineBytes: 4096}
		if got, want := parseWith(t, data, opts, true), parseWith(t, data, opts, false); got != want {
			t.Fatalf("the prefilter changes the incidents:\n got %s\nwant %s", got, want)
		}
		for _, l := range strings.Split(string(data), "\n") {
			wk, wm := ref.classify(l)
			gk, gm := flt.classify(l)
			if wk != gk || fmt.Sprint(wm) != fmt.Sprint(gm) {
				t.Fatalf("line %q: kind %d %q without the prefilter, %d %q with it", l, wk, wm, gk, gm)
			}
		}
	})
}

// TestEqualModDigits checks the fast walk against learnPrefix's own walk
// on pairs of lines that differ in their digits, their text or both.
func TestEqualModDigits(t *testing.T) {
	slow := func(a, b []byte) bool {
		i, j := 0, 0
		for i < len(a) && j < len(b) {
			ca, cb := a[i], b[j]
			if ca != cb || isDigit(cb) {
				if !isDigit(ca) || !isDigit(cb) {
					return false
				}
				for i < len(a) && isDigit(a[i]) {
					i++
				}
				for j < len(b) && isDigit(b[j]) {
					j++
				}
				continue
			}
			i, j = i+1, j+1
		}
		return i == len(a) && j == len(b)
	}
	r := rand.New(rand.NewPCG(2, 9))
	alphabet := "0123456789ab :"
	gen := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return b
	}
	same := 0
	for range 200000 {
		a := gen(r.IntN(40))
		var b []byte
		switch r.IntN(3) {
		case 0:
			b = gen(r.IntN(40))
		case 1: // the same line with other digits
			for _, c := range a {
				if isDigit(c) {
					b = append(b, []byte(fmt.Sprint(r.IntN(1000)))...)
					for len(b) > 0 && r.IntN(2) == 0 && isDigit(c) {
						break
					}
				} else {
					b = append(b, c)
				}
			}
		default:
			b = append([]byte(nil), a...)
			if len(b) > 0 {
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			}
		}
		want := slow(a, b)
		if want {
			same++
		}
		require.Equal(t, want, equalModDigits(a, b), "%q %q", a, b)
	}
	require.Greater(t, same, 10000)
}

// TestHeaderlessStartBytes: every unrecognized line that startsIncident
// lets open an incident begins with one of headerlessStartBytes (inertKind
// does not ask startsIncident about the others).
func TestHeaderlessStartBytes(t *testing.T) {
	p := &parser{}
	p.init(ScanOptions{})
	r := rand.New(rand.NewPCG(8, 1))
	starts := 0
	for _, data := range prefilterInputs(t) {
		for _, l := range strings.Split(string(data)+"\n"+string(mutate(r, data)), "\n") {
			for _, v := range []string{l, strings.TrimLeft(l, " \t>"), strings.TrimLeft(l, " \t0123456789:.-")} {
				if k, _ := p.classify(v); k != kOther || !startsIncident(kOther, v, p) {
					continue
				}
				starts++
				tr := trimBlanks(v)
				require.True(t, tr != "" && strings.IndexByte(headerlessStartBytes, tr[0]) >= 0, "startsIncident opens an incident at %q", v)
			}
		}
	}
	require.Greater(t, starts, 100, "headerless starts seen")
}

// TestBinaryLines: the scan's early stop agrees with isBinary; a NUL run
// before a dump on the same line still gives the crash; junk lines between
// incidents are skipped (no context event from bytes that happen to spell
// one) and the scanner stays equivalent with and without the prefilter.
func TestBinaryLines(t *testing.T) {
	pf := newPrefilter(allRules)
	r := rand.New(rand.NewPCG(4, 4))
	bins := 0
	for range 20000 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = byte(r.Uint32())
			} else {
				b[i] = "abc :*#@&\t"[r.IntN(10)]
			}
		}
		s := string(b)
		want := isBinary(s)
		if want {
			bins++
		}
		assert.Equal(t, want, pf.scanFrom(s, false)&hitBinary != 0, "%q", s)
		assert.Equal(t, want, pf.scan(s)&hitBinary != 0, "%q", s)
		assert.Equal(t, pf.scan(s)&^hitBinary, pf.scanFrom(s, true)&^hitBinary)
	}
	require.Greater(t, bins, 1000)
	require.False(t, isBinary("\x1b[32mINFO\x1b[0m\tcolour\r\f"))

	nul := strings.Repeat("\x00", 5000)
	dump := nul + tailDump
	for _, filtered := range []bool{true, false} {
		got := parseWith(t, []byte(dump), ScanOptions{}, filtered)
		assert.Contains(t, got, `"SIGSEGV"`, "the dump after the NUL run (filtered %v)", filtered)
	}
	// Control bytes make junk; a NUL run is a line break (holes), so the
	// shell's line after one is text.
	ctl := strings.Repeat("\x01\x02", 4)
	junk := ctl + "Segmentation fault\n" + ctl + " tcmalloc: large alloc\n" + tailDump
	cs, err := ParseAll(context.Background(), strings.NewReader(junk), ScanOptions{})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Empty(t, cs[0].Events, "no context event from junk lines")
	cs, err = ParseAll(context.Background(), strings.NewReader(nul+"Segmentation fault\n"+tailDump), ScanOptions{})
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, []Event{{Line: 1, Kind: "shell", Text: "Segmentation fault"}}, cs[0].Events, "the line after a NUL run")
	require.Equal(t, parseWith(t, []byte(junk), ScanOptions{}, false), parseWith(t, []byte(junk), ScanOptions{}, true))
	bin := make([]byte, 1<<20)
	for i := range bin {
		bin[i] = byte(r.Uint32())
	}
	bin = append(bin, tailDump...)
	require.Equal(t, parseWith(t, bin, ScanOptions{}, false), parseWith(t, bin, ScanOptions{}, true))
}
