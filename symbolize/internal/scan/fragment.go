package scan

import (
	"fmt"
	"strings"
)

// Headerless stack fragments: a paste that holds only a run of numbered
// frames of one family, cut off above the dump's header and its first
// frames (`10# doris::…(…) in /path/doris_be`, `12# f(…) at x.cpp:326`;
// gdb `#3  0x… in f (…) at x.cpp:12`). A boost frame numbered above 0 opens
// an incident only through fragmentStart; the incident is kept when it
// holds a consecutive run of at least minFragmentFrames frames, and then it
// is a crash of unknown kind, marked corrupted (fragmentReason): the
// signal, the header and the innermost frames are not in the text.
// A frame 0 (`0# …`, `#0 …`) starts a headerless dump as before: its stack
// is whole, only the header is missing.

// minFragmentFrames is the shortest run of frames kept as a fragment: one
// or two numbered lines are as likely a numbered list as a stack.
const minFragmentFrames = 3

// fragmentReason is the CorruptedReason of a fragment.
const fragmentReason = "stack without a dump header (fragment)"

// fragmentStart reports the index of the frame on an unrecognized line
// that may begin a headerless fragment: a boost frame or a gdb frame
// numbered above 0 that looks like a frame (it names a source file, a
// module or an address, not only words). It returns 0 when the line begins
// no fragment.
func fragmentStart(p *parser, text string) int {
	t := trimBlanks(text)
	if len(t) < 3 {
		return 0
	}
	var f Frame
	var ok bool
	switch {
	case isDigit(t[0]):
		if !boostNumbered(t) { // most digit-led lines are timestamps: no parse
			return 0
		}
		f, ok = p.parseBoostFrame(t)
	case t[0] == '#' && isDigit(t[1]):
		f, ok = p.parseGDBFrame(t)
		if ok && f.Index > 0 && gdbAddresslessOpener(f) {
			return f.Index
		}
	}
	if !ok || f.Index <= 0 || !plausibleFragmentFrame(f) {
		return 0
	}
	return f.Index
}

// gdbAddresslessOpener says whether a gdb frame numbered above 0 that has
// no address, no source file and no module may open a fragment all the
// same: gdb prints an inlined frame without `0x… in`, and when the
// terminal is narrow it wraps its location onto the next line
// (`#46 std::_Function_handler<…>::_M_invoke(std::_Any_data const&)
// (__functor=...)` then `    at …/std_function.h:291`), so a paste cut
// there starts on such a line. It must have gdb's shape: a function name
// without spaces outside its lists, a space, then the argument list
// (`f (this=0x1)`, `f ()`), which a numbered list item seldom has. The
// fragment is kept only when the location line follows it (frameOrNoise).
func gdbAddresslessOpener(f Frame) bool {
	if f.PC != 0 || f.File != "" || f.Module != "" || f.Function == "" {
		return false
	}
	_, rest, _ := hashIndex(f.Raw)
	rest = strings.TrimRight(rest, " ")
	if !strings.HasSuffix(rest, ")") || stripGDBArgs(rest) == rest {
		return false // no ` (args)` list
	}
	return oneWordName(f.Function)
}

// boostNumbered says whether t starts like a boost frame line, `N# `
// (the test parseBoostFrame starts with, without building a Frame).
func boostNumbered(t string) bool {
	i := 0
	for i < len(t) && i < 5 && isDigit(t[i]) {
		i++
	}
	return i > 0 && i+1 < len(t) && t[i] == '#' && t[i+1] == ' '
}

// plausibleFragmentFrame says whether a parsed numbered line carries what
// a stack frame carries (an address, a source file with a directory or an
// extension, a module path, a shared object or a backend binary such as
// doris_be) and a
// function name without spaces outside its argument and template lists,
// so that `1# item one` or `#2 see above` are not frames.
func plausibleFragmentFrame(f Frame) bool {
	file := strings.ContainsAny(f.File, "/.")
	module := strings.Contains(f.Module, "/") || strings.Contains(f.Module, ".so") || strings.HasSuffix(f.Module, "_be")
	return (f.PC != 0 || file || module) && oneWordName(f.Function)
}

// oneWordName says whether a function name has no blank before its
// argument or template list, so that `see above` is no function.
func oneWordName(name string) bool {
	if i := strings.IndexAny(name, "(<"); i >= 0 {
		name = name[:i]
	}
	return !strings.ContainsAny(strings.TrimSpace(name), " \t")
}

// finishFragment applies the fragment rules when the incident was opened
// by a fragment's first frame: it reports false when the incident is to be
// dropped (fewer than minFragmentFrames frames, or their numbers do not
// run consecutively), and otherwise makes it a crash of unknown kind,
// marked corrupted. It runs after the kind was decided.
func (in *incident) finishFragment() bool {
	in.sanitizerCrashPlaceholder() // format_sanitizer.go
	if in.sanFrag != 0 {
		return in.finishSanitizerFragment()
	}
	if in.fragment == 0 {
		return true
	}
	c := in.c
	ct := c.CrashingThread()
	if ct == nil || len(ct.Frames) < minFragmentFrames {
		return false
	}
	if ct.Frames[0].Index != in.fragment {
		return false // the fragment's first frame is not the crashing stack's
	}
	for i := 1; i < len(ct.Frames); i++ {
		if ct.Frames[i].Index != ct.Frames[i-1].Index+1 && !ct.Frames[i].Inlined && ct.Frames[i].Index != ct.Frames[i-1].Index {
			return false
		}
	}
	if c.Signal == "" {
		c.Kind = KindUnknown
	}
	in.corrupt(fragmentReason)
	return true
}

// finishSanitizerFragment applies the fragment rules to a sanitizer
// report's middle (format_sanitizer.go sanitizerRun, sanitizerFragment).
// A bare run of sanitizer frames is kept like the other fragments (a
// consecutive run of at least minFragmentFrames frames) and stays of
// unknown kind; one that a stack header, an address description or a
// SUMMARY attests is kept whatever its length (those lines are no
// numbered list) and is of kind sanitizer. Either is marked corrupted,
// the reason saying what is missing: the report's first lines, the crash
// stack's first frames, or the crash stack itself.
func (in *incident) finishSanitizerFragment() bool {
	c := in.c
	ct := c.CrashingThread()
	if in.sanFrag == sanFragBare {
		run := ct
		if run == nil || len(run.Frames) == 0 {
			for i := range c.Threads {
				if len(c.Threads[i].Frames) > 0 {
					run = &c.Threads[i]
					break
				}
			}
		}
		if run == nil || !consecutiveRun(run.Frames) {
			return false
		}
		c.Kind = KindUnknown
	}
	summaryOnly := in.sanSummary.Raw != "" && len(in.stacks) == 1 && len(in.stacks[0].th.Frames) == 1 && in.stacks[0].th.Frames[0].Raw == in.sanSummary.Raw
	switch {
	case summaryOnly:
		in.corrupt("only the SUMMARY line of a sanitizer report (fragment)")
	case ct == nil || len(ct.Frames) == 0:
		if strings.Contains(c.CorruptedReason, "without its crash stack") {
			in.corrupt("sanitizer report fragment: its ERROR and access lines are missing")
		} else {
			in.corrupt("sanitizer report fragment without its ERROR line and without its crash stack: " + in.auxStacksText())
		}
	case ct.Frames[0].Index > 0 && in.sanSummary.Raw == "":
		cut := "#0"
		if n := ct.Frames[0].Index; n > 1 {
			cut = fmt.Sprintf("#0-#%d", n-1)
		}
		in.corrupt("sanitizer stack without the report's ERROR and access lines and its frames " + cut + " (fragment)")
	default:
		in.corrupt("sanitizer report fragment: its ERROR and access lines are missing")
	}
	return true
}

// consecutiveRun says whether frames are a run of at least
// minFragmentFrames frames numbered one after the other (inlined frames
// may repeat a number).
func consecutiveRun(frames []Frame) bool {
	if len(frames) < minFragmentFrames {
		return false
	}
	for i := 1; i < len(frames); i++ {
		if frames[i].Index != frames[i-1].Index+1 && !frames[i].Inlined && frames[i].Index != frames[i-1].Index {
			return false
		}
	}
	return true
}
