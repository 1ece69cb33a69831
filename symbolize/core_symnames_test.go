package symbolize

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawName is the name a raw-PC lookup (OpenBinary + Lookup) gives the
// outermost function at pc, without its ELF symbol version, as the core
// reader prints it; "" when the lookup knows nothing.
func rawName(t *testing.T, b *Binary, pc uint64, exact bool) string {
	t.Helper()
	locs, err := b.Lookup(pc, LookupOptions{Exact: exact, NoDemangle: true})
	require.NoError(t, err)
	if len(locs) == 0 {
		return ""
	}
	return stripSymVersion(locs[len(locs)-1].Linkage)
}

// TestCoreAndRawPCNamesAgree: a core frame and a raw-PC lookup of the same
// address in the same file give the same function name, in modules with
// DWARF (the executable) and without (libc, ld.so: symbol tables only).
// The two paths used to read the symbol tables with their own rules: the
// core reader, among aliases of one size, the public name (read), OpenBinary
// the last in the table (__read); 20 nanosleep frames of the committed cores
// came out __nanosleep by raw PC. Both now follow elfimage.LoadSymbols.
func TestCoreAndRawPCNamesAgree(t *testing.T) {
	checked := map[string]int{}
	libcNames := map[string]int{} // the libc names the cores' frames get
	for _, cc := range coreCases {
		c := openTestCore(t, t.TempDir(), cc.name, "bin/"+cc.bin+".gz")
		bins := map[*CoreModule]*Binary{}
		for _, m := range c.Modules {
			if m.IsVDSO || m.File == "" {
				continue
			}
			b, err := OpenBinary(m.File, BinaryOptions{})
			require.NoError(t, err)
			defer b.Close()
			bins[m] = b
		}
		for ti, th := range c.Threads {
			frames := c.ThreadFrames(ti)
			for _, f := range th.Frames {
				b := bins[f.Module]
				if b == nil || f.SignalTrampoline {
					continue
				}
				// the core's outermost frame at this PC
				var core string
				for _, fr := range frames {
					if fr.PC == f.PC && !fr.Inlined {
						core = fr.Function
					}
				}
				raw := rawName(t, b, uint64(f.PC-f.Module.Bias), f.Exact)
				assert.Equal(t, raw, core, "%s thread %d pc %s (%s+%#x)", cc.name, ti, f.PC, f.Module.Name(), uint64(f.PC-f.Module.Bias))
				checked[f.Module.Name()]++
				if f.Module.Name() == "libc.so.6" {
					libcNames[core]++
				}
			}
		}
	}
	t.Logf("frames checked per module: %v", checked)
	require.NotZero(t, checked["libc.so.6"])
	require.NotZero(t, checked["sim_fp"])
	// Both paths now share one reader, so their agreement alone proves
	// little: the rule they share is pinned too. Among aliases of one size
	// the public name, as gdb prints it (the raw-PC path gave __nanosleep
	// and __read before).
	assert.Positive(t, libcNames["nanosleep"], "%v", libcNames)
	assert.Positive(t, libcNames["read"], "%v", libcNames)
	assert.Zero(t, libcNames["__nanosleep"], "%v", libcNames)
	assert.Zero(t, libcNames["__read"], "%v", libcNames)
}

// TestCoreSymbolsEveryAddress: at the address of every symbol of libc and
// ld.so (no DWARF: names from the symbol tables), the core reader's
// resolver and a raw-PC lookup give the same name. With the core reader's
// own symbol reader 193 of these 2,355 addresses differed: it preferred the
// shortest alias (ldexp over scalbn, signal over bsd_signal, where both
// paths take the last in the table now) and read no STT_OBJECT symbols.
func TestCoreSymbolsEveryAddress(t *testing.T) {
	c := openTestCore(t, t.TempDir(), "kern_fp", "bin/sim_fp.gz")
	n := 0
	for _, m := range c.Modules {
		if m.Name() != "libc.so.6" && m.Name() != "ld-linux-x86-64.so.2" {
			continue
		}
		r := c.resolver(m)
		require.NotNil(t, r, m.Name())
		assert.False(t, m.HasDebugInfo)
		b, err := OpenBinary(m.File, BinaryOptions{})
		require.NoError(t, err)
		defer b.Close()
		for _, a := range b.syms.Addr {
			var core string
			if locs := r.resolve(a, true); len(locs) > 0 {
				core = locs[len(locs)-1].Function
			}
			require.Equal(t, rawName(t, b, a, true), core, "%s+%#x", m.Name(), a)
			n++
		}
	}
	require.Equal(t, 2355, n)
}

// TestCoreDebugFileRules: the core reader accepts a separate debug file by
// OpenBinary's rules (elfimage.LocateDebugFile). Its own finder took any
// regular file at <debug-dir>/.build-id/xx/rest.debug, whatever its
// build-id, and a debug file without DWARF: a file of another build
// there, here the executable's, had its symbols merged into libc's and was
// reported as libc's DebugFile. It is refused now (build-id mismatch), and
// so is a file with libc's build-id but no DWARF (libc itself); libc's
// frames are those found without a debug directory.
func TestCoreDebugFileRules(t *testing.T) {
	ref := openTestCore(t, t.TempDir(), "kern_fp", "bin/sim_fp.gz")
	var libcID string
	for _, m := range ref.Modules {
		if m.Name() == "libc.so.6" {
			libcID = m.BuildID
		}
	}
	require.Len(t, libcID, 40)
	for _, candidate := range []string{"bin/sim_fp.gz", "lib/libc.so.6.gz"} {
		dir, dbgDir := t.TempDir(), t.TempDir()
		p := gunzipTo(t, t.TempDir(), candidate)
		dst := filepath.Join(dbgDir, ".build-id", libcID[:2], libcID[2:]+".debug")
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.Rename(p, dst))
		corePath := gunzipTo(t, dir, "cores/kern_fp.core.gz")
		paths := []string{gunzipTo(t, dir, "bin/sim_fp.gz"), gunzipTo(t, dir, "lib/libc.so.6.gz"), gunzipTo(t, dir, "lib/ld-linux-x86-64.so.2.gz")}
		c, err := OpenCore(context.Background(), corePath, CoreOptions{Binaries: paths, NoDiskLookup: true, DebugDirs: []string{dbgDir}})
		require.NoError(t, err)
		defer c.Close()
		assertSameFrames(t, ref, c, candidate)
		for _, m := range c.Modules {
			if m.Name() == "libc.so.6" {
				assert.Empty(t, m.DebugFile, candidate)
				assert.True(t, m.HasSymbols, candidate)
			}
		}
	}
}

// assertSameFrames checks that every thread of got has the frames of want:
// same PCs, same names.
func assertSameFrames(t *testing.T, want, got *Core, what string) {
	t.Helper()
	require.Equal(t, len(want.Threads), len(got.Threads), what)
	for i := range got.Threads {
		a, b := got.ThreadFrames(i), want.ThreadFrames(i)
		require.Equal(t, len(b), len(a), "%s, thread %d: frames", what, i)
		for k := range a {
			assert.Equal(t, b[k].PC, a[k].PC, "%s, thread %d frame %d", what, i, k)
			assert.Equal(t, b[k].Name(), a[k].Name(), "%s, thread %d frame %d", what, i, k)
		}
	}
}

// TestCoreNotesDamagedDWARF: a module whose .debug_info is damaged (zeroed
// by a bad copy) still names the core's frames from its symbol table, and
// the core's notes say once why those frames have no lines (the lookup's
// ErrBadDWARF was dropped before).
func TestCoreNotesDamagedDWARF(t *testing.T) {
	dir := t.TempDir()
	bin := gunzipTo(t, dir, "bin/sim_fp.gz")
	raw, err := os.ReadFile(bin)
	require.NoError(t, err)
	ef, err := elf.NewFile(bytes.NewReader(raw))
	require.NoError(t, err)
	sec := ef.Section(".debug_info")
	require.NotNil(t, sec)
	require.Zero(t, sec.Flags&elf.SHF_COMPRESSED)
	clear(raw[sec.Offset : sec.Offset+sec.FileSize])
	require.NoError(t, os.WriteFile(bin, raw, 0o644))
	c, err := OpenCore(context.Background(), gunzipTo(t, dir, "cores/kern_fp.core.gz"), CoreOptions{Binaries: []string{bin}, NoDiskLookup: true})
	require.NoError(t, err)
	defer c.Close()
	cr, err := c.Crash(context.Background())
	require.NoError(t, err)
	th := cr.CrashingThread()
	require.NotNil(t, th)
	require.NotEmpty(t, th.Frames)
	named := 0
	for _, f := range th.Frames {
		if strings.Contains(f.Function, "ParsedPageV1") {
			named++
		}
	}
	assert.Positive(t, named, "frames named from the symbol table")
	bad := 0
	for _, n := range cr.Notes {
		if strings.Contains(n, "sim_fp") && strings.Contains(n, "malformed DWARF") {
			bad++
		}
	}
	assert.Equal(t, 1, bad, "%q", c.Notes)
}
