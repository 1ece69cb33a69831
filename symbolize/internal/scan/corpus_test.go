package scan

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type corpusLabel struct {
	File       string   `json:"file"`
	Source     string   `json:"source"`
	Version    *string  `json:"version"`
	Signal     *string  `json:"signal"`
	Format     string   `json:"format"`
	CrashFrame *string  `json:"crash_frame"`
	AppFrame   *string  `json:"app_frame"`
	TopFrames  []string `json:"top_frames"`
	Path       string   `json:"path"`
}

func readLabels(t testing.TB, dir string) []corpusLabel {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "labels.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLabel
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l corpusLabel
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// loose reduces a C++ name for a tolerant comparison in tests: template
// arguments, parameter lists, clone suffixes and blanks removed.
func loose(s string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<' || c == '(' || c == '[':
			if c == '(' && strings.HasPrefix(s[i:], "(anonymous namespace)") {
				b.WriteString("(anonymousnamespace)")
				i += len("(anonymous namespace)") - 1
				continue
			}
			depth++
		case c == '>' || c == ')' || c == ']':
			if depth > 0 {
				depth--
			}
		case depth == 0 && c != ' ':
			b.WriteByte(c)
		}
	}
	r := b.String()
	r = strings.ReplaceAll(r, "_gnu_cxx", "__gnu_cxx")
	r = strings.ReplaceAll(r, "___gnu_cxx", "__gnu_cxx")
	return r
}

func parseFile(t testing.TB, path string) []*Crash {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cs, err := ParseAll(context.Background(), f, ScanOptions{Source: filepath.ToSlash(path)})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestCorpusCrashFrame checks every labelled corpus file: it parses to at
// least one incident, and the labelled crash frame is among the frames of
// a crashing thread.
func TestCorpusCrashFrame(t *testing.T) {
	total, found := 0, 0
	for _, prod := range []string{"doris", "starrocks"} {
		dir := filepath.Join("..", "..", "..", "testdata", "corpus", prod)
		for _, l := range readLabels(t, dir) {
			cs := parseFile(t, filepath.Join(dir, l.File))
			if len(cs) == 0 {
				if knownMiss[l.File] == "" {
					t.Errorf("%s/%s: no incident found", prod, l.File)
				} else {
					t.Logf("%s/%s: known miss: %s", prod, l.File, knownMiss[l.File])
				}
				continue
			}
			if l.CrashFrame == nil {
				continue
			}
			total++
			want := loose(*l.CrashFrame)
			ok := false
			for _, c := range cs {
				ct := c.CrashingThread()
				if ct == nil {
					continue
				}
				for _, f := range ct.Frames {
					// The label names the frame as printed (mangled or not).
					for _, name := range []string{f.Name(), f.Function} {
						if n := loose(name); n != "" && (strings.Contains(n, want) || strings.HasSuffix(want, n) && strings.Contains(n, "::")) {
							ok = true
						}
					}
				}
			}
			if ok {
				found++
			} else {
				var got []string
				for _, c := range cs {
					if ct := c.CrashingThread(); ct != nil {
						for i, f := range ct.Frames {
							if i < 8 {
								got = append(got, f.Name())
							}
						}
					}
				}
				if knownMiss[l.File] == "" {
					t.Errorf("%s/%s: crash frame %q not in crashing thread; %d incidents; frames: %q", prod, l.File, *l.CrashFrame, len(cs), got)
				} else {
					t.Logf("%s/%s: known miss: %s", prod, l.File, knownMiss[l.File])
				}
			}
		}
	}
	t.Logf("labelled crash frame found in the crashing thread for %d of %d files", found, total)
	if found*100 < total*98 {
		t.Errorf("labelled crash frame found for %d of %d files, want ≥ 98%%", found, total)
	}
}

// knownMiss lists labelled files whose crash frame the parser cannot show,
// and why. Each entry is a disagreement worth knowing about, not a bug.
var knownMiss = map[string]string{
	"169-1.1.1-odbc-psqlodbca-unsymbolized-palo-be-frames.txt":      "every frame is an address without a name (palo_be, libc, psqlodbca.so); the label names the ODBC driver module the addresses point into, which the dump prints only as the path of each line",
	"140-agg-group-by-null-emplace-visit-invoke-mangled-gdb.txt":    "the paste is one gdb frame (#12, no address) whose mangled name is hard-wrapped: no stack, no signal, nothing to make an incident of",
	"141-agg-emplace-into-hash-table-mangled-1-2-5.txt":             "the crash frame is a mangled std::visit thunk the paste cut short (the boost line stops inside the name), so it cannot be demangled; the label names it demangled",
	"128-check-fatal-uninited-hash-table-probe-mangled-variant.txt": "the printed frame is a mangled std::visit thunk cut at 495 characters; neither c++filt nor the Go demangler can demangle a truncated name, so the label's __visit_invoke only appears mangled",
}
