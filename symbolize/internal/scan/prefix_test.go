package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// incidentFacts is what a prefix or a neighbour must not change about an
// incident: kind, signal, the crashing thread's frame names, and (for the
// back-to-back test) the corrupted flag.
type incidentFacts struct {
	Kind      Kind
	Signal    string
	Frames    []string
	Corrupted bool
}

func factsOf(cs []*Crash, corrupted bool) []incidentFacts {
	out := make([]incidentFacts, 0, len(cs))
	for _, c := range cs {
		f := incidentFacts{Kind: c.Kind, Signal: c.Signal}
		if corrupted {
			f.Corrupted = c.Corrupted
		}
		if ct := c.CrashingThread(); ct != nil {
			for _, fr := range ct.Frames {
				f.Frames = append(f.Frames, fr.Name())
			}
		}
		out = append(out, f)
	}
	return out
}

func parseString(t testing.TB, s string) []*Crash {
	t.Helper()
	cs, err := ParseAll(context.Background(), strings.NewReader(s), ScanOptions{Source: "x"})
	require.NoError(t, err)
	return cs
}

// crashTexts returns every real and synthetic crash text of testdata.
func crashTexts(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pat := range []string{"corpus/*/*.txt", "formats/*.txt"} {
		ms, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", pat))
		require.NoError(t, err)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			require.NoError(t, err)
			rel, _ := filepath.Rel(filepath.Join("..", "..", "..", "testdata"), m)
			out[filepath.ToSlash(rel)] = string(b)
		}
	}
	require.Greater(t, len(out), 150)
	return out
}

// linePrefixes are the prefixes the property test puts before every line:
// families the tables know, prefixes no table knows that log shippers
// repeat on every line (some varying in digits only), and plain tags of
// lengths up to 4 KiB. Each gets the line number n.
var linePrefixes = map[string]func(n int) string{
	"k8s-cri": func(n int) string {
		return fmt.Sprintf("2025-03-03T10:15:%02d.%09d+08:00 stdout F ", n%60, n*7919%1000000000)
	},
	"syslog": func(n int) string {
		return fmt.Sprintf("Mar  3 10:15:%02d be-host-3 start_be.sh[%d]: ", n%60, 4000+n%7)
	},
	"dmesg":    func(n int) string { return fmt.Sprintf("[%d.%06d] ", 12345+n/10, n*37%1000000) },
	"markdown": func(int) string { return "> " },
	"fluent-bit": func(int) string {
		return "kube.var.log.containers.be-0_starrocks_be-" + strings.Repeat("3f9a1c0e", 8) + ".log: "
	},
	"pipe":        func(int) string { return "be-host-03 | " },
	"kubectl":     func(int) string { return "[pod/be-0/be] " },
	"log4j-time":  func(n int) string { return fmt.Sprintf("2025-03-03 10:%02d:%02d,%03d ", n/60%60, n%60, n*13%1000) },
	"line-number": func(n int) string { return fmt.Sprintf("be.out:%d: ", n+1) },
	"tab":         func(n int) string { return fmt.Sprintf("node%d\t", n%3+1) },
	"len2":        func(int) string { return ": " },
	"len16":       func(int) string { return strings.Repeat("t", 14) + ": " },
	"len127":      func(int) string { return strings.Repeat("p", 125) + ": " },
	"len128":      func(int) string { return strings.Repeat("q", 126) + " | " },
	"len1000":     func(int) string { return strings.Repeat("r", 998) + ": " },
	"len4096":     func(int) string { return strings.Repeat("s", 4094) + "] " },
}

// tablePrefixes are the linePrefixes whose family a table knows (they are
// stripped from a line alone); the others must be learned from two lines.
var tablePrefixes = map[string]bool{"k8s-cri": true, "syslog": true, "dmesg": true, "markdown": true}

func prefixLines(text string, pre func(int) string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		if l == "" {
			continue
		}
		b.WriteString(pre(i))
		b.WriteString(l)
	}
	return b.String()
}

// TestPrefixedCrashTexts is the prefix property of issue 13: every crash
// text of testdata, with each line prefixed, yields the same incidents
// (count, kind, signal, crashing-thread frame names) as bare.
func TestPrefixedCrashTexts(t *testing.T) {
	texts := crashTexts(t)
	total, same, oneLine := 0, 0, 0
	for name, text := range texts {
		want := factsOf(parseString(t, text), false)
		// One glog line alone: no dump header anchors a prefix before it
		// (headerAnchor), and no second line teaches one.
		_, _, _, glog := glogLine(strings.TrimSpace(text))
		single := glog && strings.Count(strings.TrimSpace(text), "\n") == 0
		for pname, pre := range linePrefixes {
			if single && !tablePrefixes[pname] {
				// A prefix no table knows is learned from two lines
				// (prefix.go): a text of one glog line cannot teach it,
				// and no dump header anchors it (corpus doris/188, a
				// glog F line alone). A be.WARNING shipped with such a
				// prefix has other lines before its F line to learn from.
				oneLine++
				continue
			}
			total++
			got := factsOf(parseString(t, prefixLines(text, pre)), false)
			if d := factsDiff(want, got); d == "" {
				same++
			} else {
				t.Errorf("%s with prefix %s: %s", name, pname, d)
			}
		}
	}
	t.Logf("prefixed texts parsing as bare: %d of %d (%d tries of one-glog-line texts with a learned-only prefix skipped)", same, total, oneLine)
}

// The collapsed and glog cases of issue 13, and its fuzz crasher.
func TestPrefixBeforeHeader(t *testing.T) {
	long := strings.Repeat("2025-03-03 10:15:02,118 be-host-3 doris_be ", 20)
	for _, n := range []int{0, 1, 2, 50, 100, 126, 127, 128, 300, 4096} {
		pre := strings.Repeat("0", n)
		cs := parseString(t, pre+"*** SIGA (@0x0) received by PID 000000 0# 0 0# ")
		require.Len(t, cs, 1, "prefix of %d bytes", n)
		assert.Equal(t, "SIGA", cs[0].Signal)

		text := "*** SIGSEGV (@0x0) received by PID 1 (TID 0x7f0e2d7fe700) from PID 0; stack trace: *** 0# foo 1# bar"
		for _, p := range []string{pre, long[:min(len(long), n)]} {
			cs = parseString(t, p+text)
			require.Len(t, cs, 1, "prefix of %d bytes", len(p))
			assert.Equal(t, "SIGSEGV", cs[0].Signal)
			require.NotNil(t, cs[0].CrashingThread())
			assert.Equal(t, []string{"foo", "bar"}, factsOf(cs, false)[0].Frames)
		}
	}

	// A glog signal line behind a prefix no table knows, then prefixed frames.
	glog := "*** Aborted at 1731400000 (unix time) try \"date -d @1731400000\" if you are using GNU date ***\n" +
		"*** SIGSEGV (@0x0) received by PID 12001 (TID 0x7f0e2d7fe700) from PID 0; stack trace: ***\n" +
		"    @          0x7e8d9c2 google::(anonymous namespace)::FailureSignalHandler()\n" +
		"    @     0x7f0f3a1c4630 (unknown)\n" +
		"    @          0x5a1b2c3 starrocks::ParsedPageV1::read()\n" +
		"    @          0x3c9e2a1 starrocks::ThreadPool::dispatch_thread()\n"
	for _, pre := range []string{"web-3 app: ", "some words before it ", strings.Repeat("x", 3000) + " "} {
		for _, from := range []int{0, 1} { // with and without the Aborted line
			lines := strings.SplitAfter(glog, "\n")[from:]
			var b strings.Builder
			for _, l := range lines {
				if l != "" {
					b.WriteString(pre + l)
				}
			}
			cs := parseString(t, b.String())
			require.Len(t, cs, 1)
			assert.Equal(t, "SIGSEGV", cs[0].Signal)
			assert.Equal(t, []string{"google::(anonymous namespace)::FailureSignalHandler()", "", "starrocks::ParsedPageV1::read()", "starrocks::ThreadPool::dispatch_thread()"}, factsOf(cs, false)[0].Frames)
		}
	}
}

// factsDiff describes the first difference between two incident lists
// briefly, or returns "".
func factsDiff(want, got []incidentFacts) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d incidents, want %d (%s)", len(got), len(want), briefFacts(got))
	}
	for i := range want {
		w, g := want[i], got[i]
		switch {
		case w.Kind != g.Kind || w.Signal != g.Signal || w.Corrupted != g.Corrupted:
			return fmt.Sprintf("incident %d: %s %s corrupted=%v, want %s %s corrupted=%v", i, g.Kind, g.Signal, g.Corrupted, w.Kind, w.Signal, w.Corrupted)
		case len(w.Frames) != len(g.Frames):
			return fmt.Sprintf("incident %d: %d frames, want %d", i, len(g.Frames), len(w.Frames))
		}
		for j := range w.Frames {
			if w.Frames[j] != g.Frames[j] {
				return fmt.Sprintf("incident %d frame %d: %.80q, want %.80q", i, j, g.Frames[j], w.Frames[j])
			}
		}
	}
	return ""
}

func briefFacts(fs []incidentFacts) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s/%s/%d", f.Kind, f.Signal, len(f.Frames)))
	}
	return strings.Join(parts, " ")
}
