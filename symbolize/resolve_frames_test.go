package symbolize

import (
	"context"
	"debug/elf"
	"fmt"
	"strings"
	"testing"

	"github.com/crashsig/crashsig/symbolize/internal/scan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testBias = 0x55d4a1200000

// glogFrames builds frames like a PIE backend's glog dump: absolute
// return addresses (symbol start + 5, as after a call) with the printed,
// demangled function names.
func glogFrames(t *testing.T, b *Binary, bias uint64, names ...string) []Frame {
	var fr []Frame
	for i, n := range names {
		a := symAddr(t, b, n)
		d, _ := Demangle(n)
		fr = append(fr, Frame{Index: i, PC: Addr(bias + a + 5), Function: d, Demangled: d})
	}
	return fr
}

func TestRecoverBiasFromSymbols(t *testing.T) {
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	fr := glogFrames(t, b, testBias,
		"_ZN9starrocks11ChunkSource33buffer_next_batch_chunks_blockingEm",
		"_ZN9starrocks12_GLOBAL__N_111anon_workerEi",
		"_ZN5doris10segment_v215SegmentIterator10next_batchESt8functionIFiiEE.isra.0",
		"main")
	// glog prints names without parameter lists too.
	fr[0].Function, fr[0].Demangled = "starrocks::ChunkSource::buffer_next_batch_chunks_blocking()", ""
	fr = append(fr, Frame{Index: 9, PC: 0x7f0000001234, Function: "(unknown)"})
	est := RecoverBias(b, fr)
	if est.Source != "symbols" || est.Bias != testBias || est.Votes != 4 || est.Frames != 4 || est.Ambiguous {
		t.Fatalf("RecoverBias = %+v, want bias %#x from 4 frames", est, uint64(testBias))
	}
	// Direct evidence from module+offset frames wins.
	fr = append(fr, Frame{Index: 10, PC: Addr(testBias + 0x1234), Module: "/opt/be/lib/o2-fp-dw5", Offset: 0x1234, HasOffset: true})
	est = RecoverBias(b, fr)
	if est.Source != "module+offset" || est.Bias != testBias {
		t.Fatalf("RecoverBias with offsets = %+v", est)
	}
	// Nothing usable.
	est = RecoverBias(b, []Frame{{PC: 0x1234}})
	if est.Source != "" || est.Reason == "" {
		t.Fatalf("RecoverBias(no names) = %+v", est)
	}
}

func TestFramesPIE(t *testing.T) {
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	fr := glogFrames(t, b, testBias,
		"_ZN9starrocks12_GLOBAL__N_111anon_workerEi",
		"_ZN9starrocks11ChunkSource33buffer_next_batch_chunks_blockingEm",
		"main")
	fr[0].Function, fr[0].Demangled = "(unknown)", ""
	fr = append(fr,
		Frame{Index: 3, PC: 0x7f3a4c442520, Module: "/lib/x86_64-linux-gnu/libc.so.6"},
		Frame{Index: 4, Function: "start_thread"})
	c := &Crash{Threads: []Thread{{Crashed: true, Frames: fr}}}
	rep, err := SymbolizeInPlace(context.Background(), c, Module{Binary: b, Name: "doris_be"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Symbolized != 3 || rep.Biases["doris_be"].Bias != testBias {
		t.Fatalf("report = %+v", rep)
	}
	if len(rep.Unresolved) != 2 || !strings.Contains(rep.Unresolved[0].Reason, "libc.so.6") || !strings.Contains(rep.Unresolved[1].Reason, "no address") {
		t.Errorf("unresolved = %+v", rep.Unresolved)
	}
	got := c.Threads[0].Frames
	if len(got) != 5+rep.Inlined {
		t.Fatalf("%d frames, want %d", len(got), 5+rep.Inlined)
	}
	// Frame 0 printed (unknown): Function stays, Demangled gets the name.
	var f0 *Frame
	for i := range got {
		if got[i].Index == 0 && !got[i].Inlined {
			f0 = &got[i]
		}
	}
	if f0 == nil || f0.Function != "(unknown)" || f0.Demangled != "starrocks::(anonymous namespace)::anon_worker(int)" || !f0.Symbolized || f0.Line == 0 {
		t.Errorf("frame 0 = %+v", f0)
	}
	// Inline frames precede their physical frame and share its index.
	for i, f := range got {
		if f.Inlined && (i+1 >= len(got) || got[i+1].Index != f.Index || f.File == "" || !f.Symbolized) {
			t.Errorf("inline frame %d = %+v", i, f)
		}
	}
	// A printed name is never overwritten.
	for _, f := range got {
		if f.Index == 2 && !f.Inlined && f.Function != "main" {
			t.Errorf("frame 2 Function = %q", f.Function)
		}
	}
	// Idempotent.
	n := len(c.Threads[0].Frames)
	if rep2, _ := SymbolizeInPlace(context.Background(), c, Module{Binary: b, Name: "doris_be"}); rep2.Symbolized != 0 || len(c.Threads[0].Frames) != n {
		t.Errorf("second Frames call changed the crash: %+v", rep2)
	}
}

func TestFramesNonPIE(t *testing.T) {
	b := openCxx(t, "o2-nofp-dw4", BinaryOptions{})
	a := symAddr(t, b, "_ZN9starrocks12_GLOBAL__N_111anon_workerEi")
	c := &Crash{FaultPC: Addr(a + 4), Threads: []Thread{{Crashed: true, Frames: []Frame{
		{Index: 0, PC: Addr(a + 4)},
		{Index: 1, PC: Addr(symAddr(t, b, "main") + 9), Function: "main"},
		{Index: 2, Module: "o2-nofp-dw4", Offset: Addr(symAddr(t, b, "main") + 9), HasOffset: true},
	}}}}
	rep, err := SymbolizeInPlace(context.Background(), c, Module{Binary: b})
	if err != nil || rep.Symbolized != 3 || len(rep.Unresolved) != 0 {
		t.Fatalf("Frames = %+v, %v", rep, err)
	}
	// Frame 0 had no name: Function gets the raw name.
	var f0 Frame
	for _, f := range c.Threads[0].Frames {
		if f.Index == 0 && !f.Inlined {
			f0 = f
		}
	}
	if f0.Function != "_ZN9starrocks12_GLOBAL__N_111anon_workerEi" || f0.Demangled != "starrocks::(anonymous namespace)::anon_worker(int)" {
		t.Errorf("frame 0 = %+v", f0)
	}
	// Exact lookup for the fault PC equals Lookup(pc, Exact).
	want, _ := b.Lookup(a+4, LookupOptions{Exact: true})
	if f0.Line != want[len(want)-1].Line {
		t.Errorf("fault frame line %d, want %d", f0.Line, want[len(want)-1].Line)
	}
}

func TestNameKey(t *testing.T) {
	for in, want := range map[string]string{
		"starrocks::ChunkSource::buffer_next_batch_chunks_blocking(unsigned long)":                "starrocks::ChunkSource::buffer_next_batch_chunks_blocking",
		"starrocks::ChunkSource::buffer_next_batch_chunks_blocking()":                             "starrocks::ChunkSource::buffer_next_batch_chunks_blocking",
		"doris::Status doris::segment_v2::SegmentIterator::_read_columns<int>(int) [clone .cold]": "doris::segment_v2::SegmentIterator::_read_columns<int>",
		"starrocks::(anonymous namespace)::anon_worker(int)":                                      "starrocks::(anonymous namespace)::anon_worker",
		"std::function<int (int)>::operator()(int) const":                                         "std::function<int (int)>::operator()",
		"bool std::operator< <char>(std::string const&, std::string const&)":                      "std::operator< <char>",
		"main": "main",
	} {
		if got := scan.NameKey(in); got != want {
			t.Errorf("scan.NameKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFaultFrame(t *testing.T) {
	named := func(n ...string) []Frame {
		out := make([]Frame, len(n))
		for i, s := range n {
			out[i] = Frame{Index: i, Function: s, PC: Addr(0x1000 + i)}
		}
		return out
	}
	cases := []struct {
		name   string
		frames []Frame
		crash  Crash
		want   int
	}{
		{"gdb signal frame", named("raise", "abort", "handler", "<signal handler called>", "f", "g"), Crash{}, 4},
		{"doris boost", named("doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*)",
			"PosixSignals::chained_handler(int, siginfo*, void*)", "JVM_handle_linux_signal", "", "f", "g"), Crash{}, 4},
		{"glog without PC line", named("google::(anonymous namespace)::FailureSignalHandler()", "(unknown)", "f", "g"), Crash{}, 2},
		{"glog PC line", named("x", "y", "f"), Crash{FaultPC: 0x1002}, 2},
		{"handler followed by a named frame", named("doris::signal::FailureSignalHandler", "f", "g"), Crash{}, -1},
		{"no handler", named("f", "g"), Crash{}, -1},
	}
	for _, c := range cases {
		th := Thread{Crashed: true, Frames: c.frames}
		assert.Equal(t, c.want, faultFrame(&c.crash, &th), c.name)
	}
	// Only the crashing thread has a fault PC.
	th := Thread{Frames: named("f", "g")}
	assert.Equal(t, -1, faultFrame(&Crash{FaultPC: 0x1000}, &th))
}

func TestKernelMappings(t *testing.T) {
	c := &Crash{Message: "segfault at 0 ip 000055d0c0a02a56 sp 00007ffd5e1c8a10 error 4",
		Events: []Event{{Kind: "kernel", Text: "[1.2] starrocks_be[123]: segfault at 0 ip 000055d0c0a02a56 sp 00007ffd5e1c8a10 error 4 in starrocks_be[55d0c0a00000+4000] likely on CPU 3"}}}
	assert.Equal(t, []KernelMapping{{Module: "starrocks_be", Base: 0x55d0c0a00000, Size: 0x4000}}, KernelMappings(c))
	assert.Empty(t, KernelMappings(&Crash{Message: "segfault at 0 ip 0 sp 0 error 4"}))
	assert.Empty(t, KernelMappings(nil))
}

// The faulting frame of a glog dump printing `(module+0x…)`: the offset is
// that of PC-1, and the frame is looked up at its exact PC. A fault on a
// function's first instruction (a stack overflow's push) must name that
// function, not the one before it.
func TestFramesGlogOffsetFaultFrame(t *testing.T) {
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	sym := symAddr(t, b, "main")
	fr := []Frame{
		{Index: 0, PC: 0x7f00000010, Function: "google::(anonymous namespace)::FailureSignalHandler()", Raw: "    @     0x7f00000010 google::(anonymous namespace)::FailureSignalHandler()"},
		{Index: 1, PC: 0x7f00000520, Module: "/lib/libc.so.6", Offset: 0x4251f, HasOffset: true, Raw: "    @     0x7f00000520 (/lib/libc.so.6+0x4251f)"},
		{Index: 2, PC: Addr(testBias + sym), Module: "/opt/be/doris_be", Offset: Addr(sym - 1), HasOffset: true,
			Raw: fmt.Sprintf("    @     %#x (/opt/be/doris_be+%#x)", testBias+sym, sym-1)},
	}
	c := &Crash{Kind: KindSignal, Signal: "SIGSEGV", Threads: []Thread{{Crashed: true, Frames: fr}}}
	_, err := SymbolizeInPlace(context.Background(), c, Module{Binary: b, Name: "doris_be"})
	require.NoError(t, err)
	got := c.Threads[0].Frames
	last := got[len(got)-1]
	require.True(t, last.Symbolized, "%+v", last)
	assert.Equal(t, "main", last.Function)
}

// A kernel segfault line's mapping gives the bias of a PIE module; the
// faulting PC is looked up exactly.
func TestFramesKernelLineBias(t *testing.T) {
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	require.True(t, b.IsPIE())
	var text *elf.Prog
	for _, p := range b.main.File.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	require.NotNil(t, text)
	start := text.Vaddr &^ 0xfff
	size := (text.Vaddr+text.Memsz+0xfff)&^0xfff - start
	sym := symAddr(t, b, "main")
	ip := testBias + sym + 4
	c := &Crash{Kind: KindSignal, Signal: "SIGSEGV", FaultPC: Addr(ip),
		Message: fmt.Sprintf("segfault at 0 ip %016x sp 00007ffd5e1c8a10 error 4 in doris_be[%x+%x]", ip, testBias+start, size),
		Threads: []Thread{{Crashed: true, Frames: []Frame{{PC: Addr(ip), Module: "doris_be"}}}}}
	rep, err := SymbolizeInPlace(context.Background(), c, Module{Binary: b, Name: "doris_be"})
	require.NoError(t, err)
	assert.Equal(t, BiasEstimate{Bias: testBias, Source: "kernel-line", Votes: 1, Frames: 1}, rep.Biases["doris_be"])
	f := c.Threads[0].Frames[len(c.Threads[0].Frames)-1]
	assert.Equal(t, "main", f.Function)
}

// TestSymbolizeInPlaceClosedBinary: a Module whose Binary was closed used
// to give a nil error and every frame "unresolved" with a made-up reason
// ("PIE module without a known load bias: …"); it is the caller's error,
// reported as one matching ErrClosed, and the crash is left untouched.
func TestSymbolizeInPlaceClosedBinary(t *testing.T) {
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	fr := glogFrames(t, b, testBias, "_ZN9starrocks11ChunkSource33buffer_next_batch_chunks_blockingEm", "main")
	c := &Crash{Threads: []Thread{{Crashed: true, Frames: fr}}}
	before := fmt.Sprint(c.Threads)
	require.NoError(t, b.Close())
	_, err := SymbolizeInPlace(context.Background(), c, Module{Binary: b, Name: "doris_be"})
	require.ErrorIs(t, err, ErrClosed)
	assert.ErrorContains(t, err, "doris_be")
	assert.Equal(t, before, fmt.Sprint(c.Threads), "the crash is left as it was")
}
