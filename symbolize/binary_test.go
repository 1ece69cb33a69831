package symbolize

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cxxVariants are the committed test binaries (testdata/cxx/bin/*.gz, see
// testdata/cxx/build.sh).
var cxxVariants = []string{"o2-fp-dw5", "o2-nofp-dw4", "o2-gz", "o2-zstd", "split",
	"gcc-types", "gcc-split", "clang-o2-dw5", "clang-o2-dw4", "clang-split",
	"threads-gcc", "threads-gcc-dw4", "threads-clang"}

// nonPIEVariants are the variants linked as ET_EXEC at 0x400000.
var nonPIEVariants = map[string]bool{"o2-nofp-dw4": true, "clang-o2-dw4": true, "threads-gcc-dw4": true}

// extractCxx decompresses the named committed binaries into dir.
func extractCxx(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		src := filepath.Join("testdata", "cxx", "bin", n+".gz")
		f, err := os.Open(src)
		if err != nil {
			t.Fatalf("open %s: %v", src, err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, n)
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, zr); err != nil {
			t.Fatal(err)
		}
		out.Close()
		f.Close()
	}
}

// cxxBinary extracts a variant (and split.debug for "split") and returns its path.
func cxxBinary(t testing.TB, variant string) string {
	t.Helper()
	dir := t.TempDir()
	names := []string{variant}
	switch variant {
	case "split":
		names = append(names, "split.debug")
	case "clang-split":
		names = append(names, "clang-split.dwo") // found beside the binary
	}
	if _, err := os.Stat(filepath.Join("testdata", "cxx", "bin", variant+".gz")); err != nil {
		t.Skipf("variant %s not built: %v", variant, err)
	}
	extractCxx(t, dir, names...)
	return filepath.Join(dir, variant)
}

func openCxx(t testing.TB, variant string, opts BinaryOptions) *Binary {
	t.Helper()
	b, err := OpenBinary(cxxBinary(t, variant), opts)
	if err != nil {
		t.Fatalf("OpenBinary(%s): %v", variant, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestOpenBinaryVariants(t *testing.T) {
	for _, v := range cxxVariants {
		t.Run(v, func(t *testing.T) {
			b := openCxx(t, v, BinaryOptions{RequireDebugInfo: true})
			if len(b.BuildID()) != 40 {
				t.Errorf("BuildID = %q, want 40 hex digits", b.BuildID())
			}
			if !b.HasDWARF() {
				t.Fatal("no DWARF")
			}
			wantPIE := !nonPIEVariants[v]
			if b.IsPIE() != wantPIE {
				t.Errorf("IsPIE = %v, want %v", b.IsPIE(), wantPIE)
			}
			if !wantPIE && (b.Type() != elf.ET_EXEC || b.LoadBase() != 0x400000) {
				t.Errorf("Type/LoadBase = %v/%#x, want ET_EXEC/0x400000", b.Type(), b.LoadBase())
			}
			if v == "split" && filepath.Base(b.DebugPath()) != "split.debug" {
				t.Errorf("DebugPath = %q, want .../split.debug", b.DebugPath())
			}
			if v != "split" && b.DebugPath() != "" {
				t.Errorf("DebugPath = %q, want none", b.DebugPath())
			}
		})
	}
}

func TestDebugFileSearch(t *testing.T) {
	dir := t.TempDir()
	extractCxx(t, dir, "split", "split.debug", "o2-nofp-dw4")
	bin := filepath.Join(dir, "split")
	dbg := filepath.Join(dir, "split.debug")
	main, err := OpenBinary(bin, BinaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := main.BuildID()
	main.Close()

	// 1. build-id directory.
	bidDir := t.TempDir()
	bin2Dir := t.TempDir()
	extractCxx(t, bin2Dir, "split")
	p := filepath.Join(bidDir, ".build-id", id[:2], id[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dbg, p); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBinary(filepath.Join(bin2Dir, "split"), BinaryOptions{DebugDirs: []string{bidDir}, RequireDebugInfo: true})
	if err != nil {
		t.Fatalf("build-id dir: %v", err)
	}
	if b.DebugPath() != p {
		t.Errorf("DebugPath = %q, want %q", b.DebugPath(), p)
	}
	b.Close()

	// 2. .debug/ beside the binary via .gnu_debuglink.
	if err := os.MkdirAll(filepath.Join(dir, ".debug"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p, filepath.Join(dir, ".debug", "split.debug")); err != nil {
		t.Fatal(err)
	}
	b, err = OpenBinary(bin, BinaryOptions{RequireDebugInfo: true})
	if err != nil {
		t.Fatalf(".debug/: %v", err)
	}
	b.Close()

	// 3. A debug file of another build: typed mismatch error.
	other := filepath.Join(dir, "o2-nofp-dw4")
	_, err = OpenBinary(filepath.Join(bin2Dir, "split"), BinaryOptions{DebugFile: other, RequireDebugInfo: true})
	var mm *BuildIDMismatchError
	if !errors.Is(err, ErrBuildIDMismatch) || !errors.As(err, &mm) {
		t.Fatalf("mismatched debug file: err = %v, want ErrBuildIDMismatch", err)
	}
	if mm.BinaryID != id || mm.DebugID == "" || mm.DebugID == id {
		t.Errorf("mismatch ids = %q / %q", mm.BinaryID, mm.DebugID)
	}
	if !errors.Is(err, ErrNoDebugInfo) {
		t.Errorf("err %v should also be ErrNoDebugInfo", err)
	}
	// Without RequireDebugInfo the binary opens with symbols only and warns.
	b, err = OpenBinary(filepath.Join(bin2Dir, "split"), BinaryOptions{DebugFile: other})
	if err != nil {
		t.Fatal(err)
	}
	if b.HasDWARF() || len(b.Warnings()) == 0 || !errors.Is(b.Warnings()[0], ErrBuildIDMismatch) {
		t.Errorf("HasDWARF=%v warnings=%v", b.HasDWARF(), b.Warnings())
	}
	locs, err := b.Lookup(symAddr(t, b, "main"), LookupOptions{Exact: true})
	if err != nil || len(locs) != 1 || locs[0].Function != "main" || locs[0].File != "" {
		t.Errorf("symbol-only lookup of main = %+v, %v", locs, err)
	}
	b.Close()
}

func TestNewBinaryReader(t *testing.T) {
	p := cxxBinary(t, "o2-fp-dw5")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	b, err := NewBinary(f, st.Size(), BinaryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	pc := symAddr(t, m, "main") + 4
	a, err1 := b.Lookup(pc, LookupOptions{Exact: true})
	c, err2 := m.Lookup(pc, LookupOptions{Exact: true})
	if err1 != nil || err2 != nil || len(a) == 0 || !equalLocs(a, c) {
		t.Errorf("reader lookup %+v (%v) != mmap lookup %+v (%v)", a, err1, c, err2)
	}
}

func TestOpenBinaryErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "notelf")
	os.WriteFile(p, []byte("#!/bin/sh\necho hi\n"), 0o644)
	if _, err := OpenBinary(p, BinaryOptions{}); !errors.Is(err, ErrNotELF) {
		t.Errorf("err = %v, want ErrNotELF", err)
	}
	if _, err := OpenBinary(filepath.Join(dir, "missing"), BinaryOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
	b := openCxx(t, "o2-fp-dw5", BinaryOptions{})
	b.Close()
	if _, err := b.Lookup(0x1000, LookupOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("lookup after close: %v", err)
	}
}

// withinSeconds runs f and fails the test if it has not returned after d
// (opening a FIFO blocks until a writer comes, which never happens here).
func withinSeconds(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
	}
}

// TestOpenBinaryNotRegular: a path that is not a regular file (a FIFO, a
// directory, a device) is refused with ErrNotELF at once; opening a FIFO
// used to block forever, as the binary, as the explicit debug file, and
// as a build-id debug file under DebugDirs.
func TestOpenBinaryNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	withinSeconds(t, 5*time.Second, "OpenBinary(fifo)", func() {
		_, err := OpenBinary(fifo, BinaryOptions{})
		assert.ErrorIs(t, err, ErrNotELF)
		assert.ErrorContains(t, err, fifo)
	})
	_, err := OpenBinary(dir, BinaryOptions{})
	assert.ErrorIs(t, err, ErrNotELF)

	bin := cxxBinary(t, "split")
	withinSeconds(t, 5*time.Second, "DebugFile: fifo", func() {
		b, err := OpenBinary(bin, BinaryOptions{DebugFile: fifo})
		require.NoError(t, err)
		defer b.Close()
		assert.Equal(t, filepath.Join(filepath.Dir(bin), "split.debug"), b.DebugPath(), "the debuglink is used instead")
		require.NotEmpty(t, b.Warnings())
		assert.ErrorIs(t, b.Warnings()[0], ErrNotELF)
	})
	id := openCxx(t, "split", BinaryOptions{}).BuildID()
	require.NotEmpty(t, id)
	ddir := filepath.Join(dir, "debug", ".build-id", id[:2])
	require.NoError(t, os.MkdirAll(ddir, 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(ddir, id[2:]+".debug"), 0o644))
	withinSeconds(t, 5*time.Second, "DebugDirs with a fifo", func() {
		b, err := OpenBinary(bin, BinaryOptions{DebugDirs: []string{filepath.Join(dir, "debug")}})
		require.NoError(t, err)
		b.Close()
	})
}

func TestConcurrentLookup(t *testing.T) {
	for _, v := range []string{"o2-fp-dw5", "o2-gz"} {
		t.Run(v, func(t *testing.T) { testConcurrentLookup(t, v) })
	}
}

// testConcurrentLookup starts 8 goroutines right after open (for o2-gz
// while .debug_info may still be inflating) and closes the binary while
// more lookups run: results must equal a sequential reference, and
// lookups after Close must fail cleanly.
func testConcurrentLookup(t *testing.T, variant string) {
	ref := openCxx(t, variant, BinaryOptions{})
	pcs := testPCs(ref)
	want := make([][]Location, len(pcs))
	for i, pc := range pcs {
		want[i], _ = ref.Lookup(pc, LookupOptions{Exact: true})
	}
	b := openCxx(t, variant, BinaryOptions{})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := range pcs {
				i := (k*7 + g*131) % len(pcs)
				got, err := b.Lookup(pcs[i], LookupOptions{Exact: true})
				if err != nil || !equalLocs(got, want[i]) {
					select {
					case errs <- strings.TrimSpace(formatLocs(got)):
					default:
					}
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent lookup differs: %s", e)
	}
	// Close while lookups are running.
	var wg2 sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for _, pc := range pcs {
				if _, err := b.Lookup(pc, LookupOptions{}); err != nil && !errors.Is(err, ErrClosed) {
					t.Errorf("lookup during Close: %v", err)
					return
				}
			}
		}()
	}
	b.Close()
	wg2.Wait()
}

func equalLocs(a, b []Location) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// symAddr returns the address of the symbol called name.
func symAddr(t testing.TB, b *Binary, name string) uint64 {
	t.Helper()
	for i := range b.syms.Addr {
		if b.syms.NameAt(i) == name {
			return b.syms.Addr[i]
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}

// TestLookupIFUNC: the outermost frame is named like llvm-symbolizer names
// it from the symbol table, which counts STT_GNU_IFUNC symbols among the
// functions: at the resolver of an indirect function (testdata/ifunc,
// `fast_sum`, whose resolver is the local `resolve_sum` at the same
// address and size) llvm says fast_sum, and so do we now; before, IFUNC
// symbols were skipped, which gave the local name with the STT_FILE name as
// the file where DWARF has none (every glibc IFUNC resolver of a static or
// static-pie binary: memchr_ifunc in memchr.o for llvm's __memchr in ??).
func TestLookupIFUNC(t *testing.T) {
	p := testutil.Gunzip(t, filepath.Join("testdata", "ifunc", "ifunc.gz"), filepath.Join(t.TempDir(), "ifunc"))
	ef, err := elf.Open(p)
	require.NoError(t, err)
	syms, err := ef.Symbols()
	require.NoError(t, err)
	ef.Close()
	var ifunc elf.Symbol
	for _, s := range syms {
		if s.Name == "fast_sum" {
			ifunc = s
		}
	}
	require.Equal(t, elf.STT_GNU_IFUNC, elf.ST_TYPE(ifunc.Info))

	b, err := OpenBinary(p, BinaryOptions{})
	require.NoError(t, err)
	defer b.Close()
	for _, pc := range []uint64{ifunc.Value, ifunc.Value + ifunc.Size - 1} {
		locs, err := b.Lookup(pc, LookupOptions{Exact: true})
		require.NoError(t, err)
		require.NotEmpty(t, locs)
		out := locs[len(locs)-1]
		assert.Equal(t, "fast_sum", out.Linkage, "%#x", pc)
		assert.Equal(t, "fast_sum", out.Symbol, "%#x", pc)
		assert.Equal(t, "/src/ifunc/ifunc.c", out.File, "%#x", pc)
	}
}

// zeroedSection returns the o2-fp-dw5 test binary with the named
// (uncompressed) section zeroed, its ELF view, the section and the
// address of main.
func zeroedSection(t *testing.T, name string) (raw []byte, ef *elf.File, sec *elf.Section, mainAddr uint64) {
	t.Helper()
	raw, err := os.ReadFile(cxxBinary(t, "o2-fp-dw5"))
	require.NoError(t, err)
	ef, err = elf.NewFile(bytes.NewReader(raw))
	require.NoError(t, err)
	sec = ef.Section(name)
	require.NotNil(t, sec)
	require.Zero(t, sec.Flags&elf.SHF_COMPRESSED)
	syms, err := ef.Symbols()
	require.NoError(t, err)
	for _, s := range syms {
		if s.Name == "main" {
			mainAddr = s.Value
		}
	}
	require.NotZero(t, mainAddr)
	clear(raw[sec.Offset : sec.Offset+sec.FileSize])
	return raw, ef, sec, mainAddr
}

// TestArangesIntoNothing: .debug_aranges says which unit covers a PC; when
// no unit header is at that offset (a .debug_info zeroed or cut by a
// damaged copy), the lookup gave the symbol name with a nil error, so a
// caller could not tell "no line information here" from "the debug info is
// broken". It returns the symbol name and ErrBadDWARF now, as documented
// ("Lookups that hit the malformed part return it").
func TestArangesIntoNothing(t *testing.T) {
	raw, ef, info, mainAddr := zeroedSection(t, ".debug_info")
	require.NotNil(t, ef.Section(".debug_aranges"))
	// A whole number of 4-byte zero "units": the open-time scan sees
	// nothing wrong (a cut last unit would be reported by Warnings).
	le := binary.LittleEndian
	idx := slices.IndexFunc(ef.Sections, func(s *elf.Section) bool { return s == info })
	hdr := le.Uint64(raw[0x28:]) + uint64(idx)*uint64(le.Uint16(raw[0x3a:]))
	le.PutUint64(raw[hdr+0x20:], info.FileSize&^3)

	b, err := NewBinary(bytes.NewReader(raw), int64(len(raw)), BinaryOptions{})
	require.NoError(t, err)
	defer b.Close()
	require.Empty(t, b.Warnings())
	locs, err := b.Lookup(mainAddr, LookupOptions{Exact: true})
	require.ErrorIs(t, err, ErrBadDWARF)
	require.Len(t, locs, 1, "the symbol table still names the function")
	assert.Equal(t, "main", locs[0].Function)

	// SymbolizeInPlace keeps that name (it dropped a frame whose lookup
	// returned an error with a result, as unresolved).
	const bias = 0x55d4a1200000
	c := &Crash{Threads: []Thread{{Crashed: true, Frames: []Frame{{Index: 0, PC: Addr(bias + mainAddr + 5)}}}}}
	rep, err := SymbolizeInPlace(context.Background(), c, Module{Binary: b, Bias: bias, HasBias: true})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Symbolized, "%+v", rep)
	assert.Equal(t, "main", c.Threads[0].Frames[0].Function)
}

// TestDamagedLineTable: a unit whose line table cannot be read (here a
// zeroed .debug_line) gave its functions without file and line and a nil
// error: the reader kept the line table's error and never returned it.
// Lookups in the unit return the function names and ErrBadDWARF now.
func TestDamagedLineTable(t *testing.T) {
	raw, _, _, mainAddr := zeroedSection(t, ".debug_line")

	b, err := NewBinary(bytes.NewReader(raw), int64(len(raw)), BinaryOptions{})
	require.NoError(t, err)
	defer b.Close()
	locs, err := b.Lookup(mainAddr, LookupOptions{Exact: true})
	require.ErrorIs(t, err, ErrBadDWARF)
	assert.ErrorContains(t, err, "line table")
	require.NotEmpty(t, locs)
	assert.Equal(t, "main", locs[len(locs)-1].Function)
	assert.Empty(t, locs[len(locs)-1].File)
}

// TestOpenRelocatableObjectWarns: an object file (ET_REL) opens, since its
// symbols still name its functions, but with a warning that says why lines
// are missing (its DWARF is not relocated) and what to give instead;
// llvm-symbolizer and addr2line relocate it and print rel.c:1.
func TestOpenRelocatableObjectWarns(t *testing.T) {
	b, err := OpenBinary(filepath.Join("testdata", "relobj", "rel.o"), BinaryOptions{})
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, elf.ET_REL, b.Type())
	var msgs []string
	for _, w := range b.Warnings() {
		msgs = append(msgs, w.Error())
	}
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "rel.o is a relocatable object (ET_REL), not a linked binary")
	assert.Contains(t, msgs[0], "symbolize the executable or shared object it was linked into")
	locs, err := b.Lookup(0, LookupOptions{Exact: true})
	require.NoError(t, err)
	require.NotEmpty(t, locs)
	assert.Equal(t, "f", locs[len(locs)-1].Symbol)

	// A linked binary gets no such warning.
	p := testutil.Gunzip(t, filepath.Join("testdata", "ifunc", "ifunc.gz"), filepath.Join(t.TempDir(), "ifunc"))
	lb, err := OpenBinary(p, BinaryOptions{})
	require.NoError(t, err)
	defer lb.Close()
	for _, w := range lb.Warnings() {
		assert.NotContains(t, w.Error(), "relocatable")
	}
}
