package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

const classifyUsage = `usage: crashsig classify [flags] PATH...
PATH: files, directories (recursively), - for stdin; .gz, .zst, .xz and .bz2
are read transparently; ELF cores are unwound; flags may come anywhere.
explain, buckets and report take the same input flags.`

func cmdClassify(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON Lines, one pipeline.Result per incident (schema: pipeline/result.schema.json)")
	var pf pipelineFlags
	pf.registerInput(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, classifyUsage)
		fmt.Fprintln(stderr, exitStatusText)
		fs.PrintDefaults()
	}
	paths, code, ok := parsePaths(fs, args)
	if !ok {
		return code
	}
	var prog pipeline.Progress
	p, code, err := pf.open(ctx, stderr, &prog, paths)
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return code
	}
	defer p.Close()
	st := runStatus{stderr: stderr}
	stop := startProgress(stderr, &prog)
	out := newOutput(stdout)
	enc := pipeline.NewEncoder(out)
	for res, err := range p.Run(ctx, stdin, paths...) {
		if err != nil {
			if !st.report(ctx, err) {
				break
			}
			continue
		}
		st.incidents++
		st.got(res)
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "crashsig: %s: warning: %s\n", res.Source, w)
		}
		if *asJSON {
			enc.Encode(res)
		} else {
			printHuman(out, res)
		}
		out.Flush() // one incident at a time, for a follower of a live log
		if out.failed() {
			break
		}
	}
	stop()
	st.noteBinary(paths)
	for _, err := range p.MissingDWO() {
		fmt.Fprintf(stderr, "crashsig: warning: %v\n", err)
	}
	if !*asJSON && st.incidents == 0 && !st.failed {
		fmt.Fprintln(out, "no crash found")
	}
	return out.close(stderr, st.code())
}

// threadLabel names a thread as glog and gdb print it: the pthread handle
// in hex, with the kernel thread id (LWP) in decimal when known.
func threadLabel(th *symbolize.Thread) string {
	switch {
	case th.Handle != "" && th.ID > 0 && fmt.Sprintf("%#x", th.ID) != th.Handle:
		return fmt.Sprintf("thread %s (LWP %d)", th.Handle, th.ID)
	case th.Handle != "":
		return "thread " + th.Handle
	case th.ID > 1<<32:
		return fmt.Sprintf("thread %#x", th.ID) // a pthread handle printed in decimal
	case th.ID > 0:
		return fmt.Sprintf("thread LWP %d", th.ID)
	}
	return "thread"
}

// printHuman writes the readable summary of one incident, leading with the
// answer.
func printHuman(w io.Writer, r *pipeline.Result) {
	c := r.Crash
	if c.EndLine > 0 {
		fmt.Fprintf(w, "%s:%d-%d\n", c.Source, c.StartLine, c.EndLine)
	} else {
		fmt.Fprintf(w, "%s\n", c.Source) // a core file has no lines
	}
	if v := r.Classification; v != nil {
		fmt.Fprintf(w, "  answer: %s\n", v.Advice)
		// The path with its area and how sure the decision is (low: a
		// guess from weak evidence; the JSON's path_evidence says why).
		var about []string
		if v.Area != "" {
			about = append(about, v.Area)
		}
		if v.PathConfidence != "" {
			about = append(about, "confidence "+string(v.PathConfidence))
		}
		where := string(v.Path)
		if len(about) > 0 {
			where += " (" + strings.Join(about, "; ") + ")"
		}
		fmt.Fprintf(w, "  path:   %s\n", where)
		if v.Defect != nil {
			status := string(v.Status)
			if v.Defect.Confidence != "" {
				// how sure the entry is (low: the fix is linked by crash site or wording,
				// or its branch is assumed; the entry's note says why)
				status += "; entry confidence " + v.Defect.Confidence
			}
			fmt.Fprintf(w, "  defect: %s — %s [%s]\n", v.Defect.ID, v.Defect.Title, status)
			if len(v.Defect.Links) > 0 {
				fmt.Fprintf(w, "          %s\n", strings.Join(v.Defect.Links, " "))
			}
		} else {
			fmt.Fprintf(w, "  defect: none known [%s]\n", v.Status)
			for _, s := range v.Similar {
				fmt.Fprintf(w, "          similar: %s %.2f — %s\n", s.ID, s.Score, s.Title)
			}
		}
	}
	if r.Signature != nil {
		fmt.Fprintf(w, "  key:    %s  [%s]\n", r.Signature.Key, r.Signature.ID)
	}
	var head []string
	if c.Product != "" {
		p := string(c.Product)
		if c.Version != "" {
			p += " " + c.Version
		}
		head = append(head, p)
	}
	head = append(head, string(c.Kind))
	if c.Signal != "" {
		s := c.Signal
		if c.HasFaultAddress {
			s += " @" + c.FaultAddress.String()
		}
		if c.SignalReason != "" {
			s += " (" + c.SignalReason + ")"
		}
		head = append(head, s)
	}
	if c.QueryID != "" {
		head = append(head, "query "+c.QueryID)
	}
	fmt.Fprintf(w, "  crash:  %s\n", strings.Join(head, ", "))
	if r.VersionSource == pipeline.VersionFromBanner || r.VersionSource == pipeline.VersionFromOptions {
		fmt.Fprintf(w, "  version: %s (from the %s)\n", c.Version, map[pipeline.VersionSource]string{pipeline.VersionFromBanner: "startup banner", pipeline.VersionFromOptions: "command line"}[r.VersionSource])
	}
	if c.ExceptionType != "" {
		fmt.Fprintf(w, "  exception: %s\n", c.ExceptionType)
	}
	if c.Message != "" {
		msg := c.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] + " …"
		}
		fmt.Fprintf(w, "  message: %s\n", clip(msg, 200))
	}
	if c.Corrupted {
		fmt.Fprintf(w, "  CORRUPTED: %s\n", c.CorruptedReason)
	}
	if s := r.Symbolization; s != nil {
		fmt.Fprintf(w, "  symbolized: %d frames (+%d inlined)", s.Symbolized, s.Inlined)
		if n := len(s.Unresolved); n > 0 {
			u := s.Unresolved[0]
			fmt.Fprintf(w, "; %d left unresolved, first frame #%d", n, u.Frame)
			if u.PC != 0 {
				fmt.Fprintf(w, " %s", u.PC)
			}
			fmt.Fprintf(w, ": %s", u.Reason)
		}
		fmt.Fprintln(w)
	}
	if ct := c.CrashingThread(); ct != nil {
		fmt.Fprintf(w, "  crashing %s: %d frames\n", threadLabel(ct), len(ct.Frames))
		for i, f := range ct.Frames {
			if i == 12 {
				fmt.Fprintf(w, "    … %d more\n", len(ct.Frames)-i)
				break
			}
			fmt.Fprintf(w, "    %s\n", frameText(f))
		}
	}
	if others := len(c.Threads) - 1; c.CrashingThread() == nil && len(c.Threads) > 0 {
		fmt.Fprintf(w, "  %d threads\n", len(c.Threads))
	} else if others == 1 {
		fmt.Fprintln(w, "  1 other thread")
	} else if others > 1 {
		fmt.Fprintf(w, "  %d other threads\n", others)
	}
	if len(r.ThreadGroups) > 0 {
		fmt.Fprintf(w, "  threads by stack (%d groups):\n", len(r.ThreadGroups))
		for i, g := range r.ThreadGroups {
			if i == 5 {
				fmt.Fprintf(w, "    … %d more groups\n", len(r.ThreadGroups)-i)
				break
			}
			top := "(no frames)"
			if len(g.Frames) > 0 {
				top = g.Frames[0]
			}
			names := strings.Join(g.NamePatterns, ", ")
			if len(g.NamePatterns) > 3 {
				names = strings.Join(g.NamePatterns[:3], ", ") + ", …"
			}
			fmt.Fprintf(w, "    %6d  %s  [%s]\n", g.Count, clip(top, 100), clip(names, 80))
		}
	}
	fmt.Fprintln(w)
}

func frameText(f symbolize.Frame) string {
	name := f.Name()
	switch {
	case name != "":
	case f.HasOffset:
		name = fmt.Sprintf("%s+%s", f.Module, f.Offset)
	case f.PC != 0:
		name = f.PC.String()
		if f.Module != "" {
			name += " in " + f.Module
		}
	default:
		name = "??"
	}
	s := fmt.Sprintf("#%-2d %s", f.Index, clip(name, 160))
	if f.File != "" {
		s += fmt.Sprintf(" at %s:%d", f.File, f.Line)
	}
	if f.Inlined {
		s += " (inlined)"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
