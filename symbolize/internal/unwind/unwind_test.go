package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coreData holds the committed test core material (binaries and the libc
// and ld.so they ran with).
var coreData = filepath.Join("..", "..", "..", "testdata", "core")

// openELF decompresses a gzip-compressed ELF file of coreData and opens it.
func openELF(t *testing.T, rel string) *elf.File {
	t.Helper()
	p := testutil.Gunzip(t, filepath.Join(coreData, rel), filepath.Join(t.TempDir(), filepath.Base(rel)+".elf"))
	ef, err := elf.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { ef.Close() })
	return ef
}

// TestEHHdrIndex checks the lazy .eh_frame_hdr lookup against a full
// parse of .eh_frame for every FDE of the test binary, libc and ld.so.
func TestEHHdrIndex(t *testing.T) {
	checked := 0
	for _, rel := range []string{"bin/sim_fp.gz", "lib/libc.so.6.gz", "lib/ld-linux-x86-64.so.2.gz"} {
		ef := openELF(t, rel)
		x := newEHHdrIndex(ef)
		require.NotNil(t, x, "%s: no usable .eh_frame_hdr", rel)
		b, addr, ok := sectionData(ef, ".eh_frame")
		require.True(t, ok, "%s: no .eh_frame", rel)
		all, err := parseFDEs(b, addr)
		require.NoError(t, err)
		for _, f := range all {
			for _, pc := range []uint64{f.Begin(), f.End() - 1} {
				g := x.fdeFor(pc)
				if g == nil || g.Begin() != f.Begin() || g.End() != f.End() || !bytes.Equal(g.Instructions, f.Instructions) || g.CIE.Augmentation != f.CIE.Augmentation {
					t.Fatalf("%s: pc %#x: index gives %v, full parse [%#x,%#x)", rel, pc, g, f.Begin(), f.End())
				}
			}
			checked++
		}
		assert.Nil(t, x.fdeFor(0), "%s: FDE for pc 0", rel)
	}
	assert.GreaterOrEqual(t, checked, 1000)
}

// fakeProcess is a Process over a few memory ranges, all code executable
// in [codeLo, codeHi), with no module (frame-pointer unwinding).
type fakeProcess struct {
	mem            map[uint64][]byte // base -> bytes
	codeLo, codeHi uint64
}

func (p *fakeProcess) ReadMemory(b []byte, addr uint64) (int, error) {
	for base, m := range p.mem {
		if addr >= base && addr-base < uint64(len(m)) {
			n := copy(b, m[addr-base:])
			if n < len(b) {
				return n, fmt.Errorf("short read at %#x", addr)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("no memory at %#x", addr)
}
func (p *fakeProcess) IsExec(addr uint64) bool           { return addr >= p.codeLo && addr < p.codeHi }
func (p *fakeProcess) Module(uint64) (int, uint64, *CFI) { return -1, 0, nil }
func (p *fakeProcess) Label(i int, pc uint64) string     { return fmt.Sprintf("%#x (no module)", pc) }
func put64(b []byte, off int, v uint64)                  { binary.LittleEndian.PutUint64(b[off:], v) }
func regs(pc, sp, bp uint64) Regs {
	var r Regs
	r.Set(dwRIP, pc)
	r.Set(dwRSP, sp)
	r.Set(dwRBP, bp)
	return r
}

// TestWalkFramePointers follows an rbp chain of three frames; the chain
// ends in a zero rbp, which only CFI could call the outermost frame, so
// the walk is truncated with the frame-pointer reason.
func TestWalkFramePointers(t *testing.T) {
	const stack = 0x7ff000000000
	s := make([]byte, 256)
	put64(s, 0x10, stack+0x40) // frame 0: saved rbp
	put64(s, 0x18, 0x401100)   // return address
	put64(s, 0x40, 0)          // frame 1: saved rbp = 0 (end)
	put64(s, 0x48, 0x401200)
	p := &fakeProcess{mem: map[uint64][]byte{stack: s}, codeLo: 0x400000, codeHi: 0x500000}
	th := Walk(p, regs(0x401000, stack, stack+0x10), 64)
	require.Len(t, th.Frames, 3)
	assert.Equal(t, []uint64{0x401000, 0x401100, 0x401200}, []uint64{th.Frames[0].PC, th.Frames[1].PC, th.Frames[2].PC})
	assert.Equal(t, []Method{Context, FP, FP}, []Method{th.Frames[0].Method, th.Frames[1].Method, th.Frames[2].Method})
	assert.True(t, th.Frames[0].Exact)
	assert.False(t, th.Frames[1].Exact)
	assert.True(t, th.Truncated)
	assert.Contains(t, th.Reason, "frame-pointer chain ends")
}

// TestWalkLoopAndDepth: an rbp chain that points at itself stops (a
// frame pointer below the stack pointer); a chain stops at maxFrames.
func TestWalkLoopAndDepth(t *testing.T) {
	const stack = 0x7ff000000000
	s := make([]byte, 64)
	put64(s, 0, stack) // saved rbp points at itself
	put64(s, 8, 0x401100)
	p := &fakeProcess{mem: map[uint64][]byte{stack: s}, codeLo: 0x400000, codeHi: 0x500000}
	th := Walk(p, regs(0x401000, stack, stack), 64)
	require.True(t, th.Truncated)
	assert.Contains(t, th.Reason, "below the stack pointer")

	th = Walk(p, regs(0x401000, stack, stack), 1)
	require.Len(t, th.Frames, 1)
	assert.Equal(t, "depth limit of 1 frames", th.Reason)
}

// TestWalkStackTop: a first PC outside executable memory (a call through a
// bad pointer) continues from the return address at [rsp].
func TestWalkStackTop(t *testing.T) {
	const stack = 0x7ff000000000
	s := make([]byte, 64)
	put64(s, 0, 0x401234)
	p := &fakeProcess{mem: map[uint64][]byte{stack: s}, codeLo: 0x400000, codeHi: 0x500000}
	th := Walk(p, regs(0, stack, 0), 64)
	require.GreaterOrEqual(t, len(th.Frames), 2)
	assert.Equal(t, uint64(0), th.Frames[0].PC)
	assert.Equal(t, uint64(0x401234), th.Frames[1].PC)
	assert.Equal(t, StackTop, th.Frames[1].Method)
}

// TestWalkSignalFrame: a PC at glibc's __restore_rt code is a signal
// trampoline; the walk continues from the ucontext at rsp with an exact
// PC, and the signal frame carries the siginfo and fault registers.
func TestWalkSignalFrame(t *testing.T) {
	const stack, code = 0x7ff000000000, 0x400000
	text := make([]byte, 0x2000)
	copy(text[0x1000:], restoreRT)
	s := make([]byte, 1024)
	uc := s[0:]
	put64(uc, 40+8*6, 0)                                 // rbp
	put64(uc, 40+8*15, stack+0x300)                      // rsp
	put64(uc, 40+8*16, code+0x1800)                      // rip (interrupted)
	put64(uc, 40+176, 0x40)                              // cr2
	binary.LittleEndian.PutUint32(uc[ucontextSize:], 11) // si_signo SIGSEGV
	p := &fakeProcess{mem: map[uint64][]byte{stack: s, code: text}, codeLo: code, codeHi: code + 0x2000}
	th := Walk(p, regs(code+0x1000, stack, 0), 64)
	require.GreaterOrEqual(t, len(th.Frames), 2)
	assert.True(t, th.Frames[0].SignalTrampoline)
	assert.Equal(t, Signal, th.Frames[1].Method)
	assert.True(t, th.Frames[1].Exact)
	assert.Equal(t, uint64(code+0x1800), th.Frames[1].PC)
	require.Len(t, th.SignalFrames, 1)
	sf := th.SignalFrames[0]
	assert.Equal(t, 0, sf.Frame)
	assert.Equal(t, uint64(0x40), sf.CR2)
	assert.Equal(t, uint32(11), binary.LittleEndian.Uint32(sf.SigInfo[:]))
}

// TestMethodNames pins the names symbolize.FrameMethod documents.
func TestMethodNames(t *testing.T) {
	assert.Equal(t, []string{"context", "cfi", "fp", "stack-top", "signal"},
		[]string{Context.String(), CFIRule.String(), FP.String(), StackTop.String(), Signal.String()})
}

// FuzzCFI feeds arbitrary bytes to the CFI parser as an .eh_frame and runs
// the CFA program of every FDE it yields at both ends of its range: errors
// are fine, panics are not (delve's interpreter panics on truncated
// programs; every call into it is behind recover).
func FuzzCFI(f *testing.F) {
	f.Add([]byte{0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0})
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		fdes, err := parseFDEs(b, 0x1000)
		if err != nil {
			return
		}
		for i, fde := range fdes {
			if i >= 64 {
				break
			}
			_, _ = establish(fde, fde.Begin())
			_, _ = establish(fde, fde.End()-1)
		}
	})
}

// FuzzWalk unwinds arbitrary stack bytes from arbitrary registers: the
// walk must end, within maxFrames, without a panic.
func FuzzWalk(f *testing.F) {
	f.Add(make([]byte, 64), uint64(0x401000), uint64(0x10))
	f.Add(append(bytes.Repeat([]byte{0}, 16), restoreRT...), uint64(0x400010), uint64(0))
	f.Fuzz(func(t *testing.T, stackBytes []byte, pc, bp uint64) {
		const stack = 0x7ff000000000
		p := &fakeProcess{mem: map[uint64][]byte{stack: stackBytes, 0x400000: stackBytes}, codeLo: 0x400000, codeHi: 0x500000}
		th := Walk(p, regs(pc, stack, stack+bp%512), 32)
		if len(th.Frames) == 0 || len(th.Frames) > 32 {
			t.Fatalf("%d frames", len(th.Frames))
		}
	})
}
