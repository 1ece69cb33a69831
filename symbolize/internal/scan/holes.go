// NUL holes: the runs of NUL bytes a crash leaves in a log file end a line;
// long runs are squeezed before the line reader sees them.

package scan

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"strings"

	"github.com/crashsig/crashsig/internal/magic"
)

// physical handles one physical line: NUL runs, repair, prefixes, split
// collapsed pastes, and hand each logical line to the assembler. noNUL
// says that b holds no NUL (nothing the reader passed on so far did).
func (p *parser) physical(b []byte, truncated, noNUL bool) {
	p.lineNo++
	nul := -1
	if !noNUL {
		nul = bytes.IndexByte(b, 0)
	}
	if nul >= 0 {
		if i, j := nextHole(b, nul); i >= 0 {
			p.holes(b, i, j, truncated)
			return
		}
	}
	p.text(b, truncated, nul < 0)
}

// minHole is the shortest NUL run taken for a hole in the file (holes).
// Binary junk (a core or a compressed file cat'ed into the log) holds
// shorter runs all the time (a random byte is NUL once in 256), and so
// does UTF-16 text; a NUL run of 8 happens in random bytes once in 2^64.
const minHole = magic.HoleNULs

// holes handles a physical line holding a hole (b[i:j], the first). A
// run of minHole or more NULs is a hole in the file, not text: the
// preallocated tail a crash leaves in a log file, or the range a truncated
// file was never written to; the next process writes after it on the same
// physical line. So each hole ends the text before it, and the text after
// it is a new line with the same line number: a dump after the hole is
// read as if it began the line, and the old process's line cut before the
// hole does not swallow it. A line of NULs alone is junk (skipped between
// incidents, a foreign line inside one), as any line with control bytes.
// Only subslices of b are handed on, so memory does not grow.
func (p *parser) holes(b []byte, i, j int, truncated bool) {
	start, texts := 0, false
	for {
		if i > start {
			p.text(b[start:i], false, false)
			texts = true
		}
		if j == len(b) {
			break
		}
		k, l := nextHole(b, j)
		if k < 0 {
			p.text(b[j:], truncated, false)
			return
		}
		start, i, j = j, k, l
	}
	if texts {
		return
	}
	if p.cur == nil {
		// What text does with it: junk (isJunk), skipped.
		p.pfx.hasPrev = false
		return
	}
	p.text(b, truncated, false)
}

// nextHole returns where the first run of minHole or more NULs in b[i:]
// starts and ends, or -1, -1.
func nextHole(b []byte, i int) (int, int) {
	for {
		k := bytes.IndexByte(b[i:], 0)
		if k < 0 {
			return -1, -1
		}
		i += k
		n := skipNUL(b[i:])
		if n >= minHole {
			return i, i + n
		}
		i += n
	}
}

// maxHoleBytes is what holeSqueezer keeps of a NUL run: more than minHole,
// so a hole stays one (and a shorter run stays as it was).
const maxHoleBytes = 64

// holeSqueezer passes its reader's bytes on with every NUL run cut to
// maxHoleBytes: a hole of any size is then one line break (holes), and the
// text after a hole larger than ScanOptions.MaxLineBytes is not cut off
// with it (a crash can leave megabytes of NULs before the next process's
// first line). Line numbers do not change (no newline is removed).
type holeSqueezer struct {
	r   io.Reader
	run int // NULs at the end of what was passed on
	// sawNUL is set (once, false to true) by the first read that holds
	// a NUL: until then no line read through the squeezer holds one, and
	// the Scanner need not look for one in each line (Scanner.sq).
	sawNUL bool
}

func (h *holeSqueezer) Read(p []byte) (int, error) {
	for {
		n, err := h.r.Read(p)
		// Text holds no NUL: one IndexByte, at memory speed, passes it on.
		if i := bytes.IndexByte(p[:n], 0); i >= 0 || h.run > 0 {
			if i < 0 {
				i = n
			} else if !h.sawNUL {
				h.sawNUL = true
			}
			n = h.squeeze(p[:n], i)
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// squeeze cuts the NUL runs of b in place and returns the new length; the
// run before b, of h.run NULs, goes on in b when b starts with a NUL, and
// b[:i] holds no NUL (i is the first NUL of b, or len(b)).
//
// Only a run that, with h.run, is longer than maxHoleBytes changes, and a
// run of 15 NULs or more holds a whole eight-byte word of NULs at one of
// any eight positions in a row. So squeeze looks for NUL words at every
// eighth byte from i (zeroWord), not for each NUL: binary junk, a NUL in
// 256 bytes, passes at word speed, and a run is found from its word.
// Shorter runs, passed on as they are, can only be at b's end and go on
// in the next read, so h.run is the NULs b ends with.
func (h *holeSqueezer) squeeze(b []byte, i int) int {
	w := i
	if i == 0 && h.run > 0 {
		n := skipNUL(b)
		keep := max(0, min(n, maxHoleBytes-h.run))
		h.run += n
		if n == len(b) {
			return keep
		}
		w, i = keep, n // b[i] is not NUL
	}
	h.run = 0
	for {
		q := zeroWord(b, i)
		if q < 0 {
			break
		}
		s := q
		for s > i && b[s-1] == 0 {
			s--
		}
		e := q + skipNUL(b[q:])
		keep := min(e-s, maxHoleBytes)
		if w != i {
			copy(b[w:], b[i:s+keep])
		}
		w += s + keep - i
		i = e
		if e == len(b) {
			h.run = e - s
			return w
		}
	}
	t := 0
	for t < len(b)-i && b[len(b)-1-t] == 0 {
		t++
	}
	h.run = t
	if w != i {
		copy(b[w:], b[i:])
	}
	return w + len(b) - i
}

// zeroWord returns the first q = i, i+8, i+16, … with b[q:q+8] all NUL,
// or -1. With AVX2, 64 bytes a round (zeroBlockAVX2).
func zeroWord(b []byte, i int) int {
	if hasAVX2 && len(b)-i >= 64 {
		i += zeroBlockAVX2(b[i:])
	}
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:]) == 0 {
			return i
		}
	}
	return -1
}

// zeroBlock is compared with whole blocks of a NUL run (skipNUL); never
// written.
var zeroBlock = strings.Repeat("\x00", 256)

// skipNUL returns the length of the NUL run b starts with: eight bytes at
// a time, whole blocks once a run is long.
func skipNUL(b []byte) int {
	i := 0
	for i+8 <= len(b) {
		if x := binary.LittleEndian.Uint64(b[i:]); x != 0 {
			// Most runs are short (a NUL in binary junk is one byte in
			// 256): the first word ends them.
			return i + bits.TrailingZeros64(x)>>3
		}
		i += 8
		if i == 8 || i%len(zeroBlock) == 0 {
			for len(b)-i >= len(zeroBlock) && string(b[i:i+len(zeroBlock)]) == zeroBlock {
				i += len(zeroBlock)
			}
		}
	}
	for i < len(b) && b[i] == 0 {
		i++
	}
	return i
}
