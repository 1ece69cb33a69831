package symbolize

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// WriteCoreText writes cr (from c.Crash) as text in the style of gdb's
// `thread apply all bt`: a header with the process, the signal and where
// it was found, the modules, the notes, then every thread (crashing
// thread first) with its frames. Inline frames repeat their physical
// frame's number. The output is deterministic.
func WriteCoreText(w io.Writer, c *Core, cr *Crash) error {
	ew := &coreErrWriter{w: w}
	name := filepath.Base(c.Path)
	if c.Path == "" {
		name = "(reader)"
	}
	ew.printf("core %s: process %q pid %d", name, c.PsInfo.Fname, cr.PID)
	if c.PsInfo.Args != "" {
		ew.printf(" args %q", c.PsInfo.Args)
	}
	ew.printf("\n")
	ew.printf("signal %s", cr.Signal)
	if cr.SignalReason != "" {
		ew.printf(" (%s)", cr.SignalReason)
	}
	if cr.HasFaultAddress {
		ew.printf(" fault address %s", cr.FaultAddress)
	}
	ew.printf(" at pc %s on LWP %d [%s]\n", cr.FaultPC, cr.TID, c.CrashInfo().Cause)
	ew.printf("modules:\n")
	for _, m := range c.Modules {
		id := m.BuildID
		if id == "" {
			id = "-"
		}
		c.resolver(m)
		what := "no file"
		switch {
		case m.HasDebugInfo:
			what = "debug info"
		case m.HasSymbols:
			what = "symbols"
		case m.File != "":
			what = "no symbols"
		}
		ew.printf("  %s-%s %s build-id %s (%s)\n", m.Start, m.End, m.Path, id, what)
	}
	for _, n := range cr.Notes {
		ew.printf("note: %s\n", n)
	}
	for i := range cr.Threads {
		th := &cr.Threads[i]
		mark := ""
		if th.Crashed {
			mark = " [crashed]"
		}
		ew.printf("\nThread %d (LWP %d)%s:\n", i+1, th.ID, mark)
		for _, f := range th.Frames {
			ew.printf("%s\n", formatCoreFrame(&f))
		}
		if th.Truncated {
			reason := ""
			for _, t := range c.Threads {
				if t.TID == th.ID {
					reason = t.TruncatedReason
				}
			}
			ew.printf("(stack truncated: %s)\n", reason)
		}
	}
	return ew.err
}

func formatCoreFrame(f *Frame) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%-3d", f.Index)
	if f.Function == "<signal handler called>" {
		b.WriteString("<signal handler called>")
		return b.String()
	}
	fmt.Fprintf(&b, "0x%016x in ", uint64(f.PC))
	name := f.Name()
	if name == "" {
		name = "??"
	}
	b.WriteString(name)
	if f.Inlined {
		b.WriteString(" (inlined)")
	}
	if f.File != "" {
		fmt.Fprintf(&b, " at %s:%d", f.File, f.Line)
	}
	if f.Module != "" {
		fmt.Fprintf(&b, " (%s+%s)", f.Module, f.Offset)
	}
	return b.String()
}

type coreErrWriter struct {
	w   io.Writer
	err error
}

func (e *coreErrWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
