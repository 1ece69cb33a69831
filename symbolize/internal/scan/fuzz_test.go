package scan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// addCorpusSeeds adds every crash text under testdata as a fuzz seed.
func addCorpusSeeds(f *testing.F) {
	pats := []string{filepath.Join("..", "..", "..", "testdata", "corpus/*/*.txt"), filepath.Join("..", "..", "..", "testdata", "formats/*.txt"), filepath.Join("testdata", "paste", "*.txt")}
	for _, pat := range pats {
		ms, _ := filepath.Glob(pat)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
	}
}

// essence is what must not change when an incident's own span is parsed
// alone: the lines outside it may only add context (a banner version, the
// line that closed it).
type essence struct {
	Kind                    Kind
	Signal, Message, Check  string
	Exception, SanitizerBug string
	Fault                   Addr
	Functions               []string
	PCs                     []Addr
}

func essenceOf(c *Crash) essence {
	e := essence{Kind: c.Kind, Signal: c.Signal, Message: c.Message, Check: c.CheckExpr, Exception: c.ExceptionType, SanitizerBug: c.SanitizerBug, Fault: c.FaultAddress}
	if ct := c.CrashingThread(); ct != nil {
		for _, f := range ct.Frames {
			e.Functions = append(e.Functions, f.Function)
			e.PCs = append(e.PCs, f.PC)
		}
	}
	return e
}

// FuzzScan checks the scanner's invariants on arbitrary input: no panic,
// output bounded by the input, every span inside the input, and an
// incident's span parsed alone gives the same incident.
func FuzzScan(f *testing.F) {
	addCorpusSeeds(f)
	f.Add([]byte("*** SIGSEGV (@0x0) received by PID 1 (TID 0x1) from PID 0; stack trace: ***\n    @ 0x1 f\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseAll(context.Background(), bytes.NewReader(data), ScanOptions{MaxLineBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(data, []byte("\n"))
		nlines := len(lines)
		if len(data) > 0 && data[len(data)-1] == '\n' {
			nlines--
			lines = lines[:nlines]
		}
		// A collapsed paste (several dump lines joined into one physical
		// line, lines.go splitCollapsed) holds one logical line per marker:
		// the bound counts logical lines.
		logical := 0
		for _, l := range lines {
			if parts := splitCollapsed(string(l)); len(parts) > 1 {
				logical += len(parts)
			} else {
				logical++
			}
		}
		if len(cs) > logical+1 {
			t.Fatalf("%d incidents from %d lines (%d logical)", len(cs), nlines, logical)
		}
		frames := 0
		for _, c := range cs {
			if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > nlines {
				t.Fatalf("span %d-%d outside 1-%d", c.StartLine, c.EndLine, nlines)
			}
			for _, th := range c.Threads {
				frames += len(th.Frames)
			}
		}
		if frames > len(data) {
			t.Fatalf("%d frames from %d bytes", frames, len(data))
		}
		for _, c := range cs {
			span := bytes.Join(lines[c.StartLine-1:c.EndLine], []byte("\n"))
			again, err := ParseAll(context.Background(), bytes.NewReader(span), ScanOptions{MaxLineBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
			// A collapsed line can hold several incidents, so the span
			// may give more than one: one of them must be this one.
			want := essenceOf(c)
			found := hasEssence(again, want)
			if !found && slices.ContainsFunc(c.Notes, func(n string) bool { return strings.HasPrefix(n, "removed paste prefixes") }) {
				// A line prefix the scanner learned from the lines before
				// the span (docs/PERFORMANCE.md, "Log scanning": the prefix learner)
				// is part of what the span means: read it from the input's
				// start (FUZZING.md, crasher d1bb2ba1ccb2cbf7). A dump
				// header after a prefix on the line right after the span
				// teaches the prefix too, and the line before is read
				// again without it (reprocessPrev): read that line as well
				// (crasher 685bf3e931a45421).
				lead := bytes.Join(lines[:min(nlines, c.EndLine+1)], []byte("\n"))
				withLead, err := ParseAll(context.Background(), bytes.NewReader(lead), ScanOptions{MaxLineBytes: 4096})
				if err != nil {
					t.Fatal(err)
				}
				found = hasEssence(withLead, want)
			}
			if len(again) == 0 && !found {
				t.Fatalf("span %d-%d alone gives no incident", c.StartLine, c.EndLine)
			}
			if !found {
				t.Fatalf("span %d-%d alone parses differently:\n%+v\n%+v", c.StartLine, c.EndLine, want, essenceOf(again[0]))
			}
		}
	})
}

// hasEssence says whether one of cs has the essence want.
func hasEssence(cs []*Crash, want essence) bool {
	return slices.ContainsFunc(cs, func(a *Crash) bool { return reflect.DeepEqual(want, essenceOf(a)) })
}
