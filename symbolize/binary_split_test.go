package symbolize

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxDepthIn returns the deepest inline chain over the first n bytes of
// the function sym.
func maxDepthIn(t *testing.T, b *Binary, sym string, n uint64) []Location {
	t.Helper()
	var best []Location
	a := symAddr(t, b, sym)
	for off := uint64(0); off < n; off++ {
		l, err := b.Lookup(a+off, LookupOptions{Exact: true})
		if err != nil {
			t.Fatalf("%s+%d: %v", sym, off, err)
		}
		if len(l) > len(best) {
			best = l
		}
	}
	return best
}

func splitWarning(b *Binary) string {
	for _, w := range b.Warnings() {
		if strings.Contains(w.Error(), "split DWARF") {
			return "in Warnings, which must stay cheap: " + w.Error()
		}
	}
	if err := b.MissingDWO(); err != nil {
		return err.Error()
	}
	return ""
}

// TestSplitDWARF: a skeleton unit is followed into its .dwo (found beside
// the binary); without the .dwo, or with a .dwo of another build, lookups
// give the symbol name and the skeleton's line table and Warnings says why.
func TestSplitDWARF(t *testing.T) {
	const worker = "_ZN9starrocks12_GLOBAL__N_111anon_workerEi"
	path := cxxBinary(t, "clang-split") // with clang-split.dwo beside it
	t.Run("dwo", func(t *testing.T) {
		b, err := OpenBinary(path, BinaryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if w := splitWarning(b); w != "" {
			t.Errorf("warning with the .dwo present: %s", w)
		}
		chain := maxDepthIn(t, b, worker, 64)
		if len(chain) < 3 || !strings.HasPrefix(chain[0].Function, "starrocks::(anonymous namespace)::mix") {
			t.Errorf("anon_worker: want >= 3 frames through the .dwo, got %s", formatLocs(chain))
		}
		// Strings outlive Close, which also closes the .dwo.
		fn := chain[0].Function
		b.Close()
		if !strings.Contains(fn, "mix") {
			t.Errorf("name after Close = %q", fn)
		}
	})
	missing := func(t *testing.T, bin, wantWarn string) {
		t.Helper()
		b, err := OpenBinary(bin, BinaryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if w := splitWarning(b); w != "" {
			t.Errorf("warning before any lookup: %q", w)
		}
		for _, pc := range testPCs(b) {
			l, err := b.Lookup(pc, LookupOptions{Exact: true})
			if err != nil || len(l) != 1 {
				t.Fatalf("%#x: %s, %v: want one frame", pc, formatLocs(l), err)
			}
			if l[0].Symbol == "" || l[0].Linkage != l[0].Symbol || (l[0].File != "" && !strings.HasPrefix(l[0].File, "/")) {
				t.Fatalf("%#x: %s", pc, formatLocs(l))
			}
		}
		chain := maxDepthIn(t, b, worker, 64)
		if chain[0].File != "/src/crashsig-cxx/backend.cpp" || chain[0].Line == 0 {
			t.Errorf("no line from the skeleton's line table: %s", formatLocs(chain))
		}
		if w := splitWarning(b); !strings.Contains(w, wantWarn) {
			t.Errorf("MissingDWO = %q, want one containing %q", w, wantWarn)
		}
	}
	t.Run("no-dwo", func(t *testing.T) {
		dir := t.TempDir()
		extractCxx(t, dir, "clang-split")
		missing(t, filepath.Join(dir, "clang-split"), "1 skeleton units met without their .dwo file")
	})
	t.Run("wrong-dwo", func(t *testing.T) {
		// The .dwo of another build: its dwo id differs.
		dir := t.TempDir()
		extractCxx(t, dir, "clang-split", "clang-split.dwo")
		dwo := filepath.Join(dir, "clang-split.dwo")
		data, err := os.ReadFile(dwo)
		if err != nil {
			t.Fatal(err)
		}
		b, err := OpenBinary(filepath.Join(dir, "clang-split"), BinaryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dwoID, ok := b.dw.DWOIDAt(symAddr(t, b, worker))
		require.True(t, ok)
		var id [8]byte
		binary.LittleEndian.PutUint64(id[:], dwoID)
		b.Close()
		i := bytes.Index(data, id[:])
		if i < 0 {
			t.Fatalf("dwo id %x not in the .dwo", id)
		}
		data[i] ^= 0xff
		if err := os.WriteFile(dwo, data, 0o644); err != nil {
			t.Fatal(err)
		}
		missing(t, filepath.Join(dir, "clang-split"), "no split unit with dwo id")
	})
	t.Run("reader", func(t *testing.T) {
		// NewBinary does not look for files on disk.
		data := readGz(t, "clang-split")
		b, err := NewBinary(bytes.NewReader(data), int64(len(data)), BinaryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if l := maxDepthIn(t, b, worker, 64); len(l) != 1 {
			t.Errorf("reader: %s", formatLocs(l))
		}
		if w := splitWarning(b); !strings.Contains(w, "not looked for") {
			t.Errorf("MissingDWO = %q", w)
		}
	})
	t.Run("gcc-skeleton", func(t *testing.T) {
		missing(t, cxxBinary(t, "gcc-split"), "gcc-split.dwo")
	})
}
