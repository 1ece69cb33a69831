package symbolize

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
)

// synthThread is one thread of a synthetic core.
type synthThread struct {
	tid          int32
	rip, rsp, bp uint64
}

// synthSeg is one PT_LOAD of a synthetic core.
type synthSeg struct {
	vaddr uint64
	data  []byte
	exec  bool
}

// buildCore writes a minimal x86-64 ELF core: one PT_NOTE with an
// NT_PRSTATUS per thread (and NT_SIGINFO SIGSEGV for the first), then the
// segments.
func buildCore(threads []synthThread, segs []synthSeg) []byte {
	le := binary.LittleEndian
	var notes bytes.Buffer
	note := func(typ uint32, desc []byte) {
		var h [12]byte
		le.PutUint32(h[0:], 5)
		le.PutUint32(h[4:], uint32(len(desc)))
		le.PutUint32(h[8:], typ)
		notes.Write(h[:])
		notes.WriteString("CORE\x00\x00\x00\x00")
		notes.Write(desc)
		for notes.Len()%4 != 0 {
			notes.WriteByte(0)
		}
	}
	for i, t := range threads {
		pr := make([]byte, corefile.PrstatusSize)
		le.PutUint32(pr[0:], 11)
		le.PutUint16(pr[12:], 11)
		le.PutUint32(pr[32:], uint32(t.tid))
		le.PutUint64(pr[corefile.PrstatusRegOff+8*corefile.RIP:], t.rip)
		le.PutUint64(pr[corefile.PrstatusRegOff+8*corefile.RSP:], t.rsp)
		le.PutUint64(pr[corefile.PrstatusRegOff+8*corefile.RBP:], t.bp)
		note(corefile.NTPrstatus, pr)
		if i == 0 {
			si := make([]byte, 128)
			le.PutUint32(si[0:], 11)
			le.PutUint32(si[8:], 1)
			le.PutUint64(si[16:], 0x40)
			note(corefile.NTSiginfo, si)
		}
	}
	nph := 1 + len(segs)
	off := uint64(64 + 56*nph)
	var out bytes.Buffer
	eh := make([]byte, 64)
	copy(eh, "\x7fELF\x02\x01\x01")
	le.PutUint16(eh[16:], 4)  // ET_CORE
	le.PutUint16(eh[18:], 62) // EM_X86_64
	le.PutUint32(eh[20:], 1)
	le.PutUint64(eh[32:], 64)
	le.PutUint16(eh[52:], 64)
	le.PutUint16(eh[54:], 56)
	le.PutUint16(eh[56:], uint16(nph))
	out.Write(eh)
	ph := func(typ, flags uint32, o, vaddr, sz uint64) {
		p := make([]byte, 56)
		le.PutUint32(p[0:], typ)
		le.PutUint32(p[4:], flags)
		le.PutUint64(p[8:], o)
		le.PutUint64(p[16:], vaddr)
		le.PutUint64(p[32:], sz)
		le.PutUint64(p[40:], sz)
		out.Write(p)
	}
	ph(4, 4, off, 0, uint64(notes.Len()))
	o := off + uint64(notes.Len())
	for _, s := range segs {
		fl := uint32(6)
		if s.exec {
			fl = 5
		}
		ph(1, fl, o, s.vaddr, uint64(len(s.data)))
		o += uint64(len(s.data))
	}
	out.Write(notes.Bytes())
	for _, s := range segs {
		out.Write(s.data)
	}
	return out.Bytes()
}

func openBytes(t testing.TB, b []byte, opts CoreOptions) (*Core, error) {
	opts.NoDiskLookup = true
	return NewCore(context.Background(), bytes.NewReader(b), int64(len(b)), opts)
}

// checkCoreInvariants asserts what must hold for any core that opened.
func checkCoreInvariants(t testing.TB, c *Core, opts CoreOptions) {
	if len(c.Threads) == 0 || len(c.Threads) > opts.maxThreads() {
		t.Fatalf("%d threads", len(c.Threads))
	}
	for _, th := range c.Threads {
		if len(th.Frames) > opts.maxFrames() {
			t.Fatalf("%d frames > cap", len(th.Frames))
		}
	}
	cr, err := c.Crash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !cr.Threads[0].Crashed {
		t.Fatal("first thread not crashed")
	}
	b1, _ := json.Marshal(cr)
	cr2, _ := c.Crash(context.Background())
	b2, _ := json.Marshal(cr2)
	if !bytes.Equal(b1, b2) {
		t.Fatal("Crash not deterministic")
	}
}

func TestCoreSynthetic(t *testing.T) {
	stack := make([]byte, 4096)
	code := make([]byte, 4096)
	const sBase, cBase = 0x7ff000000000, 0x400000
	le := binary.LittleEndian
	// frame-pointer loop: [bp] = bp, [bp+8] = a return address in code
	bp := uint64(sBase + 0x100)
	le.PutUint64(stack[0x100:], bp)
	le.PutUint64(stack[0x108:], cBase+0x20)
	// a chain that ends: bp2 -> bp3 -> 0
	le.PutUint64(stack[0x200:], sBase+0x300)
	le.PutUint64(stack[0x208:], cBase+0x30)
	le.PutUint64(stack[0x300:], 0)
	le.PutUint64(stack[0x308:], cBase+0x40)
	// call through a null pointer: rip 0, [rsp] = return address
	le.PutUint64(stack[0x400:], cBase+0x50)
	threads := []synthThread{
		{tid: 100, rip: cBase + 0x10, rsp: sBase + 0x80, bp: bp},
		{tid: 101, rip: cBase + 0x10, rsp: sBase + 0x180, bp: sBase + 0x200},
		{tid: 102, rip: 0, rsp: sBase + 0x400, bp: 0},
		{tid: 103, rip: 0xdead0000, rsp: 0x10, bp: 0x20},
	}
	b := buildCore(threads, []synthSeg{{vaddr: cBase, data: code, exec: true}, {vaddr: sBase, data: stack}})
	c, err := openBytes(t, b, CoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkCoreInvariants(t, c, CoreOptions{})
	loop := c.Threads[0]
	if !loop.Truncated || len(loop.Frames) != 2 {
		t.Errorf("fp loop: %d frames truncated=%v (%s)", len(loop.Frames), loop.Truncated, loop.TruncatedReason)
	}
	chain := c.Threads[1]
	// a frame-pointer chain that ends is still a truncated stack: only CFI can say "outermost"
	if !chain.Truncated || len(chain.Frames) != 3 || chain.Frames[2].PC != cBase+0x40 || chain.Frames[1].Method != MethodFP {
		t.Errorf("fp chain: %+v truncated=%v %s", chain.Frames, chain.Truncated, chain.TruncatedReason)
	}
	null := c.Threads[2]
	if len(null.Frames) < 2 || null.Frames[1].PC != cBase+0x50 || null.Frames[1].Method != MethodStackTop {
		t.Errorf("null call: %+v", null.Frames)
	}
	if bad := c.Threads[3]; !bad.Truncated || len(bad.Frames) != 1 {
		t.Errorf("bad pc: %+v %v", bad.Frames, bad.Truncated)
	}
	if ci := c.CrashInfo(); ci.Signal.Signo != 11 || ci.Signal.Addr != 0x40 || ci.Thread != 0 {
		t.Errorf("crash info %+v", ci)
	}
}

func TestCoreManyThreads(t *testing.T) {
	const n = 5000
	stack := make([]byte, 4096)
	// every thread: a frame-pointer chain of 3 frames
	le := binary.LittleEndian
	le.PutUint64(stack[0x100:], 0x7ff000000200)
	le.PutUint64(stack[0x108:], 0x400020)
	le.PutUint64(stack[0x200:], 0)
	le.PutUint64(stack[0x208:], 0x400030)
	threads := make([]synthThread, n)
	for i := range threads {
		threads[i] = synthThread{tid: int32(1000 + i), rip: 0x400010, rsp: 0x7ff000000080, bp: 0x7ff000000100}
	}
	b := buildCore(threads, []synthSeg{{vaddr: 0x400000, data: make([]byte, 4096), exec: true}, {vaddr: 0x7ff000000000, data: stack}})
	start := time.Now()
	c, err := openBytes(t, b, CoreOptions{MaxThreads: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Threads) != 1000 {
		t.Errorf("%d threads, want the cap of 1000", len(c.Threads))
	}
	found := false
	for _, n := range c.Notes {
		if n == "4000 threads beyond the limit of 1000 were not read" {
			found = true
		}
	}
	if !found {
		t.Errorf("no note about the thread cap: %q", c.Notes)
	}
	c2, err := openBytes(t, b, CoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if len(c2.Threads) != n {
		t.Errorf("%d threads", len(c2.Threads))
	}
	checkCoreInvariants(t, c2, CoreOptions{})
	// a total frame budget of 3000: later threads keep one frame
	c3, err := openBytes(t, b, CoreOptions{MaxTotalFrames: 3000})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	total := 0
	for _, th := range c3.Threads {
		total += len(th.Frames)
		if len(th.Frames) == 0 {
			t.Fatal("thread without frames")
		}
	}
	// 1000 threads get their 3 frames, the other 4000 keep one
	if total != 3000+(n-1000) || len(c2.Threads[0].Frames) != 3 {
		t.Errorf("%d frames in all with a budget of 3000 (%d per thread without)", total, len(c2.Threads[0].Frames))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("5000 synthetic threads took %v", d)
	}
}

func TestCoreHostile(t *testing.T) {
	dir := t.TempDir()
	real, err := os.ReadFile(gunzipTo(t, dir, "cores/kernk_fp.core.gz"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, b []byte) {
		t.Helper()
		c, err := openBytes(t, b, CoreOptions{})
		if err != nil {
			if !errors.Is(err, ErrNotCore) && !errors.Is(err, ErrCorruptCore) && !errors.Is(err, ErrUnsupportedCore) {
				t.Errorf("%s: untyped error %v", name, err)
			}
			return
		}
		defer c.Close()
		checkCoreInvariants(t, c, CoreOptions{})
	}
	for _, n := range []int{0, 3, 64, 100, 3000, 12 << 10, 1 << 20, len(real) - 1} {
		check("truncated", real[:n])
	}
	// notes overwritten with 0xff, then with random bytes
	noteOff := int(binary.LittleEndian.Uint64(real[64+8:])) // first phdr is PT_NOTE
	noteLen := int(binary.LittleEndian.Uint64(real[64+32:]))
	bad := bytes.Clone(real)
	for i := noteOff; i < noteOff+noteLen; i++ {
		bad[i] = 0xff
	}
	check("notes 0xff", bad)
	rng := rand.New(rand.NewSource(1))
	for k := 0; k < 50; k++ {
		bad := bytes.Clone(real)
		for j := 0; j < 20; j++ {
			bad[noteOff+rng.Intn(noteLen)] = byte(rng.Intn(256))
		}
		check("notes fuzzed", bad)
	}
	// a descsz of 0xF0000000
	huge := bytes.Clone(real)
	binary.LittleEndian.PutUint32(huge[noteOff+4:], 0xf0000000)
	check("huge descsz", huge)
	// stack memory scrambled: unwinding must stop, not loop
	for k := 0; k < 20; k++ {
		bad := bytes.Clone(real)
		for j := 0; j < 2000; j++ {
			bad[noteOff+noteLen+rng.Intn(len(real)-noteOff-noteLen)] = byte(rng.Intn(256))
		}
		check("memory fuzzed", bad)
	}
	// the binary given as the core
	check("exe as core", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00"))
}

func TestCoreContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	_, err := OpenCore(ctx, gunzipTo(t, dir, "cores/kern_fp.core.gz"), CoreOptions{NoDiskLookup: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// FuzzCore feeds arbitrary bytes to the core reader: it must return an
// error or a core whose invariants hold, never panic or hang.
func FuzzCore(f *testing.F) {
	stack := make([]byte, 512)
	binary.LittleEndian.PutUint64(stack[0x100:], 0x7ff000000100)
	f.Add(buildCore([]synthThread{{tid: 1, rip: 0x400010, rsp: 0x7ff000000080, bp: 0x7ff000000100}, {tid: 2}},
		[]synthSeg{{vaddr: 0x400000, data: make([]byte, 64), exec: true}, {vaddr: 0x7ff000000000, data: stack}}))
	f.Add([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x3e\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		opts := CoreOptions{MaxThreads: 64, MaxFrames: 64}
		c, err := openBytes(t, b, opts)
		if err != nil {
			return
		}
		defer c.Close()
		checkCoreInvariants(t, c, opts)
	})
}

// TestOpenCoreNotRegular: OpenCore of a FIFO (a core_pattern pipe given by
// mistake) or a directory is refused at once with ErrNotCore; opening the
// FIFO used to block forever, whatever the context.
func TestOpenCoreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "core.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	withinSeconds(t, 5*time.Second, "OpenCore(fifo)", func() {
		_, err := OpenCore(context.Background(), fifo, CoreOptions{})
		assert.ErrorIs(t, err, ErrNotCore)
		assert.ErrorContains(t, err, fifo)
	})
	_, err := OpenCore(context.Background(), dir, CoreOptions{})
	assert.ErrorIs(t, err, ErrNotCore)
}

// TestSymtabClaimingHugeSize: a module file whose .symtab header claims
// 1 GiB of zeros cost the core reader 4.3 GB of memory and 10 s (debug/elf's
// Symbols decodes every entry into a slice first); 2 GiB would not fit on
// most hosts. The core reader names frames by elfimage.LoadSymbols now,
// whose memory follows the symbols it keeps: here the table lies in a
// sparse file (256 MiB of zeros past the real end, no disk; 358 MB of
// entries before elfimage counted them first), is read through the mapping
// and keeps nothing, and .dynsym's symbols are used.
func TestSymtabClaimingHugeSize(t *testing.T) {
	dir := t.TempDir()
	p := gunzipTo(t, dir, "bin/sim_fp.gz")
	raw, err := os.ReadFile(p)
	require.NoError(t, err)
	ef, err := elf.NewFile(bytes.NewReader(raw))
	require.NoError(t, err)
	idx := -1
	for i, s := range ef.Sections {
		if s.Name == ".symtab" {
			idx = i
		}
	}
	require.GreaterOrEqual(t, idx, 0)
	le := binary.LittleEndian
	hdr := le.Uint64(raw[0x28:]) + uint64(idx)*uint64(le.Uint16(raw[0x3a:]))
	write := func(name string, b []byte) string {
		d := filepath.Join(dir, name)
		require.NoError(t, os.Mkdir(d, 0o755))
		out := filepath.Join(d, "sim_fp")
		require.NoError(t, os.WriteFile(out, b, 0o644))
		return out
	}
	// The reference: the file with its .symtab made NOBITS (not read),
	// whose symbols are .dynsym's.
	ref := bytes.Clone(raw)
	le.PutUint32(ref[hdr+4:], uint32(elf.SHT_NOBITS))
	rb, err := OpenBinary(write("ref", ref), BinaryOptions{})
	require.NoError(t, err)
	defer rb.Close()
	require.NotEmpty(t, rb.syms.Addr)
	// Point .symtab past the end of the file, make it 256 MiB, and extend
	// the file (sparse) to hold it.
	off := (uint64(len(raw)) + 0xfff) &^ 0xfff
	le.PutUint64(raw[hdr+0x18:], off)
	le.PutUint64(raw[hdr+0x20:], 256<<20)
	hostile := write("hostile", raw)
	require.NoError(t, os.Truncate(hostile, int64(off)+256<<20))

	c := openTestCore(t, dir, "kern_fp", "bin/sim_fp.gz") // the intact file opens the core
	var main *CoreModule
	for _, m := range c.Modules {
		if m.IsMain {
			main = m
		}
	}
	require.NotNil(t, main)
	// the module's resolver, on the hostile file
	main.File, main.res, main.resLoaded = hostile, nil, false
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := c.resolver(main)
	runtime.ReadMemStats(&after)
	require.NotNil(t, r)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "memory must not follow the claimed size")
	b := r.(*binaryResolver).b
	assert.Equal(t, rb.syms.Addr, b.syms.Addr, "the zeros hold no symbol; .dynsym's are used")
	for i := range rb.syms.Addr {
		assert.Equal(t, rb.syms.NameAt(i), b.syms.NameAt(i))
	}
}
