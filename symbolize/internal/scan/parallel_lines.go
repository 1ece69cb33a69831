// Line numbers in a worker's incidents: workers number lines from
// workerBase, so a printed line number is a run of at least ten digits; a
// replay numbered replayShift higher tells line numbers (moved by exactly
// the shift) from other numbers, and shiftCrash moves them to the single
// pass's numbering.

package scan

import (
	"io"
	"slices"
	"strconv"
)

// workerBase numbers the lines of a worker's scan: the first line of a
// chunk is workerBase+1. The parser depends on differences of line
// numbers only, so the in-order scan moves them by where the chunk
// starts, in snapshots (matchesAt, restore) and in Crashes (StartLine,
// EndLine, Events, and the line numbers notes and reasons print, found
// by lineSlots). Any line number of a worker then has ten digits or more,
// which is how lineSlots knows a text that holds none.
const workerBase = 1 << 30

// replayShift is how much further a worker's replay of an incident
// numbers its lines (lineSlots).
const replayShift = 1 << 20

// lineSlot is a line number printed in a text field of a Crash: Notes[f],
// or CorruptedReason when f is -1, bytes [a, b).
type lineSlot struct{ f, a, b int }

// lineSlots finds the line numbers that c, the worker's Crash number idx
// of chunk j (finished at line emitted), prints in its notes and corrupted reason
// (`dump cut by line N`, `joined hard-wrapped line N`): a text without a
// run of ten digits holds none. Otherwise the incident is read again from
// the chunk's latest snapshot before it (the worker's state there) with
// its lines numbered replayShift higher, and the two texts compared: a
// number that moved by replayShift is a line number, one that did not is
// not (a thread id), anything else — no snapshot before the incident,
// other differences — makes c one the in-order scan reads itself (false).
func (m *merger) lineSlots(j *chunkJob, w *worker, c *Crash, idx, emitted int) ([]lineSlot, bool) {
	if !longDigitRun(c.CorruptedReason) && !slices.ContainsFunc(c.Notes, longDigitRun) {
		return nil, true
	}
	k := len(j.snaps) - 1
	for k >= 0 && j.snaps[k].outs > idx {
		k--
	}
	if k < 0 || j.snaps[k].outs != idx {
		return nil, false
	}
	sn := &j.snaps[k]
	if w.replay == nil {
		w.replay = m.newScanner(nil, 1)
	}
	r := w.replay
	hs := &holeSqueezer{r: io.NewSectionReader(m.r, sn.off, max(j.end, j.limit)-sn.off)}
	r.readThrough(hs, hs)
	r.err = nil
	r.p.out = r.p.out[:0]
	r.p.restore(&sn.c, replayShift)
	var d *Crash
	for d == nil {
		more := r.step()
		if len(r.p.out) > 0 {
			d = r.p.out[0]
			clear(r.p.out)
			r.p.out = r.p.out[:0]
		}
		if r.err != nil || (!more && d == nil) || r.p.lineNo > emitted+replayShift {
			return nil, false
		}
	}
	if d.StartLine != c.StartLine+replayShift || d.EndLine != c.EndLine+replayShift || len(d.Notes) != len(c.Notes) || len(d.Events) != len(c.Events) {
		return nil, false
	}
	out, ok := diffSlots(nil, -1, c.CorruptedReason, d.CorruptedReason)
	for i := 0; ok && i < len(c.Notes); i++ {
		out, ok = diffSlots(out, i, c.Notes[i], d.Notes[i])
	}
	return out, ok
}

// diffSlots appends to out the numbers of a, field f, that are replayShift
// lower than the same numbers of b; the rest of a and b must be equal.
func diffSlots(out []lineSlot, f int, a, b string) ([]lineSlot, bool) {
	i, k := 0, 0
	for i < len(a) && k < len(b) {
		if !isDigit(a[i]) || !isDigit(b[k]) {
			if a[i] != b[k] {
				return nil, false
			}
			i++
			k++
			continue
		}
		i0, k0 := i, k
		for i < len(a) && isDigit(a[i]) {
			i++
		}
		for k < len(b) && isDigit(b[k]) {
			k++
		}
		if a[i0:i] == b[k0:k] {
			continue
		}
		va, err1 := strconv.ParseInt(a[i0:i], 10, 64)
		vb, err2 := strconv.ParseInt(b[k0:k], 10, 64)
		if err1 != nil || err2 != nil || vb-va != replayShift {
			return nil, false
		}
		out = append(out, lineSlot{f, i0, i})
	}
	return out, i == len(a) && k == len(b)
}

// longDigitRun says whether s holds ten or more decimal digits in a row.
func longDigitRun(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			if run++; run >= 10 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// shiftCrash moves the input line numbers of c, a worker's Crash, by d,
// also those its text prints (slots, lineSlots).
func shiftCrash(c *Crash, slots []lineSlot, d int) {
	c.StartLine += d
	c.EndLine += d
	for i := range c.Events {
		c.Events[i].Line += d
	}
	for i := 0; i < len(slots); {
		f := slots[i].f
		k := i
		for k < len(slots) && slots[k].f == f {
			k++
		}
		text := &c.CorruptedReason
		if f >= 0 {
			text = &c.Notes[f]
		}
		*text = moveNumbers(*text, slots[i:k], d)
		i = k
	}
}

// moveNumbers returns s with the numbers at slots (in order) moved by d.
func moveNumbers(s string, slots []lineSlot, d int) string {
	var b []byte
	last := 0
	for _, sl := range slots {
		v, _ := strconv.Atoi(s[sl.a:sl.b])
		b = append(b, s[last:sl.a]...)
		b = strconv.AppendInt(b, int64(v+d), 10)
		last = sl.b
	}
	return string(append(b, s[last:]...))
}
