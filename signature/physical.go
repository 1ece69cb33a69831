package signature

import (
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// physicalMask tells, for each frame of a thread, whether the compiler
// inlined it into the next (physical) frame. Symbolized and core frames
// carry Frame.Inlined. gdb text needs reading: after #0, gdb prints
// `0xADDR in` only on the innermost frame of each inline group and no
// address on the other frames of the group, whose last one is the
// physical function; with `set print frame-info location-and-address` it
// prints the same address on every frame of the group, whose last one is
// again the physical function. So a parsed frame is inlined exactly when
// the next frame continues its group: an address-less frame (the scanner
// marks those Inlined), or a frame printing the same address.
//
// Text whose frames print no address at all (hand-written or abbreviated
// pastes) has no grouping to read: its frames are taken as physical.
func physicalMask(fs []symbolize.Frame) []bool {
	inl := make([]bool, len(fs))
	anyPC := anyTextPC(fs)
	for i := range fs {
		inl[i] = inlinedAt(fs, i, anyPC)
	}
	return inl
}

// anyTextPC reports a parsed (not symbolized) frame printing an address
// or a module offset.
func anyTextPC(fs []symbolize.Frame) bool {
	for i := range fs {
		if (fs[i].PC != 0 || fs[i].HasOffset) && !fs[i].Symbolized {
			return true
		}
	}
	return false
}

// inlinedAt is physicalMask's answer for frame i (anyPC: anyTextPC(fs)).
func inlinedAt(fs []symbolize.Frame, i int, anyPC bool) bool {
	f := &fs[i]
	if !anyPC && !f.Symbolized {
		return f.Inlined && f.PC != 0
	}
	continues := i+1 < len(fs) && (gdbLike(&fs[i+1]) || sameTextPC(fs, i))
	if f.Symbolized || f.Java || !continues && !gdbLike(f) {
		return f.Inlined
	}
	return continues
}

// gdbLike: a parsed gdb frame (`#N …`) that printed no address, or one
// the scanner marked inlined without an address: a frame of an inline
// group after its first. The grouping is read from the addresses, so it
// holds whichever frames of a group the scanner marks.
func gdbLike(f *symbolize.Frame) bool {
	if f.PC != 0 || f.HasOffset || f.Symbolized || f.Java {
		return false
	}
	t := strings.TrimLeft(f.Raw, " \t")
	return f.Inlined || len(t) > 1 && t[0] == '#' && t[1] >= '0' && t[1] <= '9'
}

// sameTextPC: parsed frames i and i+1 print the same non-zero address (or
// module offset) under different names: gdb's location-and-address form
// of an inline group, and sanitizers, which print every frame of an
// inline chain with its physical frame's address. Recursion repeats the
// name and is collapsed later anyway.
func sameTextPC(fs []symbolize.Frame, i int) bool {
	if i+1 >= len(fs) {
		return false
	}
	a, b := &fs[i], &fs[i+1]
	same := a.PC != 0 && a.PC == b.PC ||
		a.PC == 0 && b.PC == 0 && a.HasOffset && b.HasOffset && a.Offset != 0 && a.Offset == b.Offset && a.Module == b.Module // TSAN prints offsets only
	return same && !a.Symbolized && !b.Symbolized && !a.Java && !b.Java &&
		a.Name() != b.Name() && a.Function != "<signal handler called>" && b.Function != "<signal handler called>"
}
