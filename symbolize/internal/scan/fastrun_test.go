package scan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// substDigits returns line with each digit replaced, with probability
// 1/2, by a random digit (the same length: what repeatsLine accepts).
func substDigits(r *rand.Rand, line string) string {
	b := []byte(line)
	for i, c := range b {
		if isDigit(c) && r.IntN(2) == 0 {
			b[i] = byte('0' + r.IntN(10))
		}
	}
	return string(b)
}

// isRepeat is the reference of repeatsLine and countRepeats: b starts with
// t with some digits replaced by digits, then a newline.
func isRepeat(b, t []byte) bool {
	if len(b) <= len(t) || b[len(t)] != '\n' {
		return false
	}
	for i := range t {
		if b[i] != t[i] && !(isDigit(b[i]) && isDigit(t[i])) {
			return false
		}
	}
	return true
}

// TestRepeatsLine checks the word-at-a-time comparisons against isRepeat on
// lines with digits, bytes next to the digits ('/', ':', '\x00', 0xb9)
// and lengths around the word size.
func TestRepeatsLine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 7))
	alphabet := []byte("0123456789/:;ab \x00\xb9\xba\n")
	repeats := 0
	for range 100000 {
		size := 8 + r.IntN(40)
		if r.IntN(4) == 0 {
			size = 32 + r.IntN(200) // several vector blocks (countRepeatsAVX2)
		}
		line, buf := repeatInput(r, size, alphabet[:len(alphabet)-1], alphabet, 1+r.IntN(4), 4)
		want := isRepeat(buf, line)
		require.Equal(t, want, repeatsLine(buf, line), "%q %q", line, buf)
		n := 0
		for off := 0; isRepeat(buf[off:], line); off += len(line) + 1 {
			n++
			var h uint64
			for _, i := range repeatWords(len(line), nil) {
				h ^= binary.LittleEndian.Uint64(buf[off+i:])
			}
			if stopHash(h) {
				break
			}
		}
		require.Equal(t, n, countRepeats(buf, line), "%q %q", line, buf)
		if n > 1 {
			repeats++
		}
	}
	require.Greater(t, repeats, 10000)
	for c := range 256 {
		w := uint64(c) << 24
		assert.Equal(t, isDigit(byte(c)), digitBytes(w)>>31&1 == 1, "digitBytes(%#x)", c)
	}
}

// chunkReader returns its bytes in reads of random sizes, so that a run of
// repeats is cut at every place by the end of what the Scanner has read.
type chunkReader struct {
	r    *rand.Rand
	data []byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.r.IntN(70000))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// parseChunked is parseWith reading through a chunkReader.
func parseChunked(t testing.TB, data []byte, seed uint64, filtered bool) string {
	t.Helper()
	return scanJSON(t, &chunkReader{r: rand.New(rand.NewPCG(seed, 1)), data: data}, ScanOptions{}, filtered)
}

// requireFastSame fails when the fast paths (whole and in random-size
// reads) change the incidents of data against the scanner without the
// prefilter.
func requireFastSame(t *testing.T, data []byte, seed uint64) {
	t.Helper()
	want := parseWith(t, data, ScanOptions{}, false)
	if got := parseWith(t, data, ScanOptions{}, true); got != want {
		t.Fatalf("the fast paths change the incidents:\n got %s\nwant %s", got, want)
	}
	if got := parseChunked(t, data, seed, true); got != want {
		t.Fatalf("the fast paths change the incidents (chunked reads):\n got %s\nwant %s", got, want)
	}
}

// repeatLines are lines that log loops repeat, and lines whose meaning
// depends on their digits or on what came before them (a frame number, a
// glog header, a prefix a neighbour teaches).
var repeatLines = []string{
	"start time: Tue Nov 12 14:20:05 CST 2024",
	"start time: Tue Nov 12 14:20:05 CST 2024 117",
	"StdoutLogger 2024-11-12 14:20:05,117 Start time: Tue Nov 12 14:20:05 CST 2024",
	"DEBUG   2025-03-03 10:15:09,145 196     org.apache.hadoop.security.Groups       [main]   Creating new Groups object",
	"SLF4J: Found binding in [jar:file:/opt/doris/be/lib/java_extensions/preload.jar!/org/slf4j/impl/StaticLoggerBinder.class] 12 345",
	"SLF4J: See http://www.slf4j.org/codes.html#multiple_bindings for an explanation.",
	"2025-03-03 10:15:09,145 INFO  [pool-3-thread-1] org.apache.doris.common.jni.JniScanner - scanner opened, batch size 4064",
	"10:15:09.145 [main] INFO  org.apache.hadoop.hdfs.DFSClient - retry 3",
	"2025/03/03 10:15:09 scanner opened 12",
	"12# not a frame",
	"0x00005555 in ?? ()",
	"I0303 10:15:02.118230 140073341400640 daemon.cpp:312] Current memory usage: process 12.3 GB",
	"W0303 10:15:02.118230 140073341400640 mem_tracker.cpp:12] Memory of process exceed limit. 12 GB",
	"Tue Nov 12 14:20:05 CST 2024 version doris-2.1.6-rc04(AVX2) RELEASE (build git://x@4f5a6b7)",
	"    @          0x7e8d9c2 google::(anonymous namespace)::FailureSignalHandler()",
	" 0# doris::Foo::bar() at /root/be/src/foo.cpp:12",
	" 1# doris::Foo::bar() at /root/be/src/foo.cpp:12",
	"#1  0x00005555 in doris::Foo::bar () at foo.cpp:12",
	"host-1 | DEBUG retry 3 of 10 in 200 ms",
	"host-1 | DEBUG retry 3 of 10 in 200 ms",
	"[12345.678901] some kernel chatter 12",
	"Mar  3 10:15:02 host prog[123]: retried 4 times",
	"Segmentation fault (core dumped) 12",
	"tcmalloc: large alloc 1073741824 bytes == 0x7f0e2d7fe700 @  0x7e8d9c2",
	"be_worker[48390]: segfault at 8 ip 00007f0e2d7fe700 sp 00007f0e2d7fe6f0 error 4 in libc.so[7f0e2d700000+1b0000]",
	"*** Query id: 1d2c3b4a5e6f7a8b-9c0d1e2f3a4b5c6d ***",
	"Thread 12 (Thread 0x7f0e2d7fe700 (LWP 4711)):",
	"Signal 11 received, retrying in 5 s",
	"   at org.apache.doris.Foo.bar(Foo.java:12)",
	"Memory of process exceed limit. Used: 12 GB, Limit: 10 GB",
	"Killed process 4711 (starrocks_be) total-vm:12345kB",
	"x=12 y=34 &lt;retry&gt; 5",
	"abcdefg 1",
	"   \t 12 padded line with blanks first 34",
	"line with a CR at the end 12\r",
	"> quoted line 12",
	"",
}

// TestRepeatSkipEquivalence: runs of lines equal but for their digits,
// long enough to cross the Scanner's buffer, between and around crash
// texts, give the same incidents (line numbers included) with the fast
// path as with every rule on every line, read whole or in chunks of any
// size.
func TestRepeatSkipEquivalence(t *testing.T) {
	heavyUnderRace(t)
	r := rand.New(rand.NewPCG(9, 9))
	inputs := prefilterInputs(t)
	var texts [][]byte
	for _, d := range inputs {
		texts = append(texts, d)
	}
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	for round := range rounds {
		var b bytes.Buffer
		for b.Len() < 300<<10+round*20<<10 {
			switch r.IntN(5) {
			case 0:
				b.Write(texts[r.IntN(len(texts))])
				b.WriteByte('\n')
			case 1:
				b.WriteString(repeatLines[r.IntN(len(repeatLines))] + "\n")
			default:
				l := repeatLines[r.IntN(len(repeatLines))]
				for range 1 + r.IntN(20000) {
					if r.IntN(500) == 0 {
						// An odd one: another length, another line.
						b.WriteString(repeatLines[r.IntN(len(repeatLines))] + "\n")
					}
					b.WriteString(substDigits(r, l) + "\n")
				}
			}
		}
		data := b.Bytes()
		want := parseWith(t, data, ScanOptions{}, false)
		require.Equal(t, want, parseWith(t, data, ScanOptions{}, true), "round %d", round)
		require.Equal(t, want, parseChunked(t, data, uint64(round), true), "round %d, chunked", round)
	}
}

// TestRepeatSkipEngages: on a run of start markers, of DEBUG lines and of
// SLF4J lines the Scanner skips most lines (few steps), counts them
// exactly, and a crash after the run gets its line numbers.
func TestRepeatSkipEngages(t *testing.T) {
	for _, l := range []string{repeatLines[0], repeatLines[3], repeatLines[4]} {
		var b bytes.Buffer
		n := 0
		for ; b.Len() < 200<<10; n++ {
			fmt.Fprintf(&b, "%s\n", substDigits(rand.New(rand.NewPCG(uint64(n), 2)), l))
		}
		b.WriteString(tailDump)
		s := NewScanner(bytes.NewReader(b.Bytes()), ScanOptions{})
		steps := 0
		for s.p.lineNo < n {
			require.True(t, s.step())
			steps++
		}
		assert.Less(t, steps, n/20, "%q: steps over %d lines", l, n)
		s = NewScanner(bytes.NewReader(b.Bytes()), ScanOptions{})
		require.True(t, s.Next())
		assert.Equal(t, n+1, s.Crash().StartLine, "%q: the crash's first line", l)
		assert.Equal(t, parseWith(t, b.Bytes(), ScanOptions{}, false), parseWith(t, b.Bytes(), ScanOptions{}, true))
	}
}

// TestNormalizeDigitBlind is step 1 of the proof in fastrun.go: when
// normalizeLine leaves a line repeatFirstByte lets by as it is (digit-led
// dates and times included), it leaves the line with other digits as it
// is too.
func TestNormalizeDigitBlind(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	n := 0
	for _, data := range prefilterInputs(t) {
		for _, l := range strings.Split(string(mutate(r, data))+"\n"+string(data), "\n") {
			if l == "" || !repeatFirstByte([]byte(l)) {
				continue
			}
			text, rl, pre := normalizeLine([]byte(l))
			if rl || pre || len(text) != len(l) {
				continue
			}
			for range 3 {
				v := substDigits(r, l)
				text, rl, pre := normalizeLine([]byte(v))
				require.False(t, rl || pre || len(text) != len(v), "%q is left as it is, %q is not", l, v)
				n++
			}
		}
	}
	require.Greater(t, n, 10000)
}

// TestBlindMatch is step 5: when blindMatch says a line's rule does not
// depend on its digits, the prefilter finds that rule on the line with
// other digits.
func TestBlindMatch(t *testing.T) {
	p := &parser{}
	p.init(ScanOptions{})
	r := rand.New(rand.NewPCG(6, 6))
	blind, kinds := 0, map[lineKind]bool{}
	lines := append([]string(nil), repeatLines...)
	for _, data := range prefilterInputs(t) {
		lines = append(lines, strings.Split(string(data), "\n")...)
	}
	for _, l := range lines {
		tr := trimBlanks(l)
		if tr == "" || p.pf.scan(l) != 0 {
			continue
		}
		rule, ok := p.pf.blindMatch(tr)
		if !ok {
			continue
		}
		blind++
		want := kOther
		if rule != nil {
			want = rule.kind
		}
		kinds[want] = true
		for range 3 {
			v := substDigits(r, l)
			got, _ := p.pf.match(v, trimBlanks(v), true, p.pf.scan(v), true)
			gk := kOther
			if got != nil {
				gk = got.kind
			}
			require.Equal(t, want, gk, "%q vs %q", l, v)
		}
	}
	require.Greater(t, blind, 300)
	require.True(t, kinds[kStart] && kinds[kOther], "kinds seen: %v", kinds)
}

// FuzzRepeatSkip: a line repeated with other digits, between two inputs,
// gives the same incidents with the fast path as without the prefilter.
func FuzzRepeatSkip(f *testing.F) {
	for i, l := range repeatLines {
		f.Add([]byte(l), uint16(300+i*100), uint64(i), []byte(tailDump))
	}
	f.Fuzz(func(t *testing.T, line []byte, n uint16, seed uint64, tail []byte) {
		if bytes.IndexByte(line, '\n') >= 0 || len(line) > 2*maxRunLine {
			return
		}
		r := rand.New(rand.NewPCG(seed, 5))
		var b bytes.Buffer
		b.Write(tail)
		b.WriteByte('\n')
		for range int(n) {
			b.WriteString(substDigits(r, string(line)))
			b.WriteByte('\n')
		}
		b.Write(tail)
		data := b.Bytes()
		requireFastSame(t, data, seed)
	})
}

// TestRepeatSkipState: after every step of a Scanner that skips runs, its
// carried state (parallel_state.go) is the one a parser that processes
// every line gives at the same line; on runs of start markers, DEBUG and
// SLF4J lines most lines are skipped.
func TestRepeatSkipState(t *testing.T) {
	skippable := []string{repeatLines[0], repeatLines[3], repeatLines[4], repeatLines[5], "abcdefg 1"}
	for i, set := range [][]string{repeatLines, skippable} {
		r := rand.New(rand.NewPCG(4, uint64(i)))
		var b bytes.Buffer
		for b.Len() < 1<<20 {
			if r.IntN(8) == 0 {
				b.WriteString(tailDump)
				continue
			}
			l := set[r.IntN(len(set))]
			for range 1 + r.IntN(3000) {
				b.WriteString(substDigits(r, l) + "\n")
			}
		}
		data := b.Bytes()
		lines := bytes.SplitAfter(data, []byte("\n"))
		s := NewScanner(bytes.NewReader(data), ScanOptions{})
		opts := ScanOptions{}
		opts.fill()
		ref := &parser{}
		ref.init(opts)
		steps, compared := 0, 0
		for s.step() {
			steps++
			for ref.lineNo < s.p.lineNo {
				ref.physical(bytes.TrimSuffix(lines[ref.lineNo], []byte("\n")), false, false)
			}
			require.Equal(t, len(ref.out), len(s.p.out), "incidents at line %d", s.p.lineNo)
			ref.out, s.p.out = ref.out[:0], s.p.out[:0]
			if s.p.cur == nil {
				c := s.p.snapshot()
				require.True(t, ref.matches(&c), "state at line %d", s.p.lineNo)
				compared++
			}
		}
		if i == 1 {
			assert.Less(t, steps, len(lines)/10, "most lines skipped")
		}
		assert.Greater(t, compared, 100)
	}
}

// junkInput is binary junk with, now and then, what the full path does
// not skip as junk: text lines, glog lines, dumps, `*** ` inside junk, NUL
// holes, lines that repairs make empty, CRs, a learned prefix.
func junkInput(r *rand.Rand, size int) []byte {
	var b bytes.Buffer
	for b.Len() < size {
		switch r.IntN(12) {
		case 0:
			b.WriteString(tailDump)
		case 1:
			b.WriteString(ordinaryLines[r.IntN(len(ordinaryLines))] + "\n")
		case 2:
			b.WriteString("host-1 | a\nhost-1 | b\nhost-1 | \x01\x02\x03\x04\x05\x06\x07\x08\x0b\n")
		case 3:
			b.WriteString("```\n> \n\x01\x02\x03\x04*** \x05\x06\x07\x08\x0b\x0e\n")
		case 4:
			b.Write(bytes.Repeat([]byte{0}, 8+r.IntN(100)))
			b.WriteString("Segmentation fault\n")
		case 5:
			b.WriteString("I0303 10:15:02.118230 1400 daemon.cpp:312] \x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\n")
		default:
			n := r.IntN(600)
			for range n {
				c := byte(r.Uint32())
				if r.IntN(40) == 0 {
					c = '\r'
				}
				b.WriteByte(c)
			}
		}
	}
	return b.Bytes()
}

// TestJunkSkipEquivalence: binary junk with text, dumps and holes among it
// gives the same incidents with the fast paths as with every rule on every
// line, read whole or in chunks of any size, and the carried state after
// every step is the full path's.
func TestJunkSkipEquivalence(t *testing.T) {
	heavyUnderRace(t)
	r := rand.New(rand.NewPCG(7, 7))
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		data := junkInput(r, 200<<10+round*40<<10)
		want := parseWith(t, data, ScanOptions{}, false)
		require.Equal(t, want, parseWith(t, data, ScanOptions{}, true), "round %d", round)
		require.Equal(t, want, parseChunked(t, data, uint64(round), true), "round %d, chunked", round)
		require.Equal(t, parseWith(t, data, ScanOptions{MaxLineBytes: 300}, false), parseWith(t, data, ScanOptions{MaxLineBytes: 300}, true), "round %d, short lines", round)
	}
	data := junkInput(r, 1<<20)
	lines := bytes.SplitAfter(data, []byte("\n"))
	s := NewScanner(bytes.NewReader(data), ScanOptions{})
	opts := ScanOptions{}
	opts.fill()
	ref := &parser{}
	ref.init(opts)
	steps := 0
	for s.step() {
		steps++
		for ref.lineNo < s.p.lineNo {
			// holeSqueezer cuts NUL runs to 64: the reference reads the
			// same bytes.
			l := bytes.TrimSuffix(lines[ref.lineNo], []byte("\n"))
			ref.physical(squeezeNULs(l), false, false)
		}
		require.Equal(t, len(ref.out), len(s.p.out), "incidents at line %d", s.p.lineNo)
		ref.out, s.p.out = ref.out[:0], s.p.out[:0]
		if s.p.cur == nil {
			c := s.p.snapshot()
			require.True(t, ref.matches(&c), "state at line %d", s.p.lineNo)
		}
	}
	assert.Less(t, steps, len(lines)*4/5, "junk lines skipped")
}

// squeezeNULs cuts the NUL runs of b to maxHoleBytes, as holeSqueezer.
func squeezeNULs(b []byte) []byte {
	var h holeSqueezer
	c := append([]byte(nil), b...)
	return c[:h.squeeze(c, 0)]
}

// FuzzJunkSkip: junk, then the fuzzer's bytes, then a dump: the same
// incidents with the fast paths as without the prefilter.
func FuzzJunkSkip(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x0b\n"), uint64(1))
	f.Add([]byte("```\n> \nhost | \x01\x02\x03\x04\x05\x06\x07\x08\x0b*** x\n"), uint64(2))
	f.Fuzz(func(t *testing.T, mid []byte, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 3))
		var b bytes.Buffer
		b.Write(junkInput(r, 4<<10))
		b.Write(mid)
		b.Write(junkInput(r, 4<<10))
		b.WriteString(tailDump)
		data := b.Bytes()
		requireFastSame(t, data, seed)
	})
}

// TestMarkerStarts: a line collapsedMarker cuts twice or more has two
// places markerStarts counts (splitCandidate may then skip the expression
// on the others).
func TestMarkerStarts(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	var lines []string
	for _, data := range prefilterInputs(t) {
		ls := strings.Split(string(data), "\n")
		lines = append(lines, ls...)
		for i := 0; i+3 < len(ls); i += 3 {
			lines = append(lines, strings.Join(ls[i:i+3], " "), strings.Join(ls[i:i+3], "\t"))
		}
	}
	alphabet := "0123456789#@*P C:  \t\rx"
	for range 50000 {
		b := make([]byte, 24+r.IntN(60))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		lines = append(lines, string(b))
	}
	split := 0
	for _, l := range lines {
		cuts := 0
		for _, loc := range collapsedMarker.FindAllStringSubmatchIndex(l, 4096) {
			if loc[2] > 0 {
				cuts++
			}
		}
		if cuts >= 2 {
			split++
			require.GreaterOrEqual(t, markerStarts(l, 2), 2, "%q", l)
		}
	}
	require.Greater(t, split, 1000)
}

// TestSkipAlignment: two Scanners over the same runs and junk, one from
// the start and one from a line in the middle read in chunks of other
// sizes (as ScanParallel's chunk scans and its in-order scan), end steps
// after the same lines again and again (stopHash), so that snapshots
// taken at the end of steps can be compared.
func TestSkipAlignment(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	var b bytes.Buffer
	for b.Len() < 2<<20 {
		if r.IntN(3) == 0 {
			b.Write(junkInput(r, 64<<10))
			continue
		}
		l := repeatLines[[]int{0, 1, 3, 4, 5}[r.IntN(5)]]
		for range 1 + r.IntN(20000) {
			b.WriteString(substDigits(r, l) + "\n")
		}
	}
	data := b.Bytes()
	ends := func(s *Scanner) map[int]bool {
		m := map[int]bool{}
		for s.step() {
			m[s.p.lineNo] = true
		}
		return m
	}
	a := ends(NewScanner(bytes.NewReader(data), ScanOptions{}))
	mid := bytes.IndexByte(data[len(data)/3:], '\n') + len(data)/3 + 1
	first := bytes.Count(data[:mid], []byte("\n")) + 1
	bs := ends(NewScanner(&chunkReader{r: r, data: data[mid:]}, ScanOptions{FirstLine: first}))
	common := 0
	for l := range bs {
		if a[l] {
			common++
		}
	}
	lines := bytes.Count(data[mid:], []byte("\n"))
	assert.Greater(t, common, lines/1000, "common step ends over %d lines (%d and %d steps)", lines, len(a), len(bs))
	assert.Less(t, len(bs), lines/3, "steps")
}

// TestVecPatternLayout: the offsets countRepeatsAVX2 reads vecPattern by
// (prefilter_amd64.s, VP_*) are the struct's.
func TestVecPatternLayout(t *testing.T) {
	var vp vecPattern
	require.Equal(t, []uintptr{0, 8, 16, 280, 1336}, []uintptr{
		unsafe.Offsetof(vp.n), unsafe.Offsetof(vp.nb), unsafe.Offsetof(vp.off),
		unsafe.Offsetof(vp.pat), unsafe.Offsetof(vp.dig),
	}, "VP_N, VP_NB, VP_OFF, VP_PAT, VP_DIG")
}

// TestCountRepeatsVectorSame: the vector count and the word count agree
// on long runs of long lines, digits changing anywhere, a foreign byte
// now and then.
func TestCountRepeatsVectorSame(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := []byte("0123456789/:;ab \x00\xb9\x2f\x3a")
	for range 3000 {
		line, buf := repeatInput(r, 32+r.IntN(maxRunLine-31), alphabet, alphabet, 1+r.IntN(300), 200)
		var rp repeatPattern
		rp.prepare(line)
		var vp vecPattern
		vp.prepare(line)
		require.Equal(t, countRepeatsWords(buf, &rp), countRepeatsAVX2(buf, &vp), "%q", line)
	}
}

// repeatInput returns a random line of size bytes from lineBytes and runs
// copies of it with their digits changed (substDigits), one in foreign
// with a byte of mixBytes put in, each with a newline, the last zero to
// two bytes cut.
func repeatInput(r *rand.Rand, size int, lineBytes, mixBytes []byte, runs, foreign int) (line, buf []byte) {
	line = make([]byte, size)
	for i := range line {
		line[i] = lineBytes[r.IntN(len(lineBytes))]
	}
	for range runs {
		next := []byte(substDigits(r, string(line)))
		if r.IntN(foreign) == 0 {
			next[r.IntN(len(next))] = mixBytes[r.IntN(len(mixBytes))]
		}
		buf = append(append(buf, next...), '\n')
	}
	return line, buf[:len(buf)-r.IntN(3)]
}
