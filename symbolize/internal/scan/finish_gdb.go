// Finishing gdb stacks: the frames gdb prints after the crash handler, stacks
// repeated by thread, and the cut a gdb paste shows.

package scan

import (
	"fmt"
	"path"
	"strings"
)

// dropGDBStopFrames removes the stop location gdb prints when it loads a
// core (`#0  0x… in f () at x.cc:12`, no thread header) when a thread of a
// later `thread apply all bt` repeats it: it is that thread, not another.
func (in *incident) dropGDBStopFrames() {
	kept := in.stacks[:0]
	for _, s := range in.stacks {
		if s.origin == "gdb" && s.th.ID == 0 && s.th.Name == "" && len(s.th.Frames) > 0 && in.repeatedByThread(s) {
			in.note("gdb's stop location repeated by thread apply all bt: counted once")
			continue
		}
		kept = append(kept, s)
	}
	in.stacks = kept
}

// repeatedByThread reports whether a thread with a header starts with the
// frames of the headerless stack h.
func (in *incident) repeatedByThread(h *stack) bool {
	for _, s := range in.stacks {
		if s == h || s.th.ID == 0 || len(s.th.Frames) < len(h.th.Frames) {
			continue
		}
		same := true
		for i, f := range h.th.Frames {
			if !sameGDBFrame(f, s.th.Frames[i]) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// checkGDBCut marks a gdb backtrace that the text does not hold whole.
// What is true of gdb's output: `bt` numbers the frames of a thread from
// #0 one by one, and a frame line ends with its argument list `(…)`,
// ` at FILE:LINE`, or ` from LIBRARY.so…`. So the crashing thread's frames
// not starting at #0 were cut above, and a last frame line that ends
// otherwise, or a frame number without a frame after the last frame, was
// cut by the end of the paste. A backtrace cut exactly at a line end after
// a whole frame line (start_thread, clone) cannot be told from a whole
// one. (Frame numbers that jump are not flagged: the scanner's learned
// line prefixes can drop frame lines of a backtrace whose lines share a
// long beginning, onekey's `#1  std::_Rb_tree<…>` lines.)
func (in *incident) checkGDBCut() {
	c := in.c
	if !in.hasStack("gdb") {
		return
	}
	if ct := c.CrashingThread(); ct != nil && len(ct.Frames) > 0 && ct.Frames[0].Index > 0 && isGDBStack(ct.Frames) {
		in.corrupt(fmt.Sprintf(noteGDBStartsAt+"%d: the frames above it are missing", ct.Frames[0].Index))
	}
	var last *stack
	for _, s := range in.stacks {
		if len(s.th.Frames) > 0 {
			last = s
		}
	}
	switch {
	case in.gdbPartial > in.prevNo:
		in.corrupt(fmt.Sprintf("gdb backtrace cut inside a frame line (line %d)", in.gdbPartial))
	case last != nil && last.origin == "gdb" && in.cutBy != "" && in.prevNo == c.EndLine && !gdbLineWhole(last.th.Frames[len(last.th.Frames)-1].Raw):
		in.corrupt("gdb backtrace cut inside its last frame line")
	}
}

// isGDBStack reports whether frames were read from gdb frame lines.
func isGDBStack(frames []Frame) bool {
	t := strings.TrimSpace(frames[0].Raw)
	return len(t) > 1 && t[0] == '#' && isDigit(t[1])
}

// gdbLineWhole reports whether a gdb frame line ends as gdb ends one: with
// ` at FILE:LINE`, ` from LIBRARY` (a shared object), or its argument
// list; `<signal handler called>` is whole too.
func gdbLineWhole(raw string) bool {
	t := strings.TrimSpace(raw)
	if strings.HasSuffix(t, "<signal handler called>") {
		return true
	}
	if i := strings.LastIndex(t, " at "); i > 0 && strings.Contains(t[:i], "(") && openParens(t[:i]) == 0 {
		loc := t[i+4:]
		c := strings.LastIndexByte(loc, ':')
		return c > 0 && c+1 < len(loc) && allDigits(loc[c+1:])
	}
	if i := strings.LastIndex(t, " from "); i > 0 && strings.Contains(t[:i], "(") && openParens(t[:i]) == 0 {
		return strings.Contains(path.Base(t[i+6:]), ".so")
	}
	return strings.HasSuffix(t, ")") && openParens(t) == 0
}
