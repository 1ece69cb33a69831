package symbolize

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func readGz(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "cxx", "bin", name+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzOpenBinary feeds mutated ELF images to NewBinary and looks up
// addresses in them: errors are fine, panics and runaway memory are not
// (sections are capped at 64 MiB, every loop is bounded by its input).
func FuzzOpenBinary(f *testing.F) {
	tiny := readGz(f, "tiny")
	f.Add(tiny)
	f.Add(tiny[:len(tiny)/2])
	// The same program built by clang: strx/addrx/rnglistx forms, no .debug_aranges.
	f.Add(readGz(f, "tiny-clang"))
	// The 600 KB C++ binaries are left out of the seeds: the fuzzer spends
	// its time minimizing them instead of exploring (the tests cover them).
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := NewBinary(bytes.NewReader(data), int64(len(data)), BinaryOptions{MaxSectionSize: 64 << 20})
		if err != nil {
			return
		}
		defer b.Close()
		var pcs []uint64
		for i, a := range b.syms.Addr {
			if i >= 64 {
				break
			}
			pcs = append(pcs, a, a+b.syms.Size[i]/2)
		}
		if b.dw != nil {
			for i, c := range b.dw.Ranges() {
				if i >= 64 {
					break
				}
				pcs = append(pcs, c.Lo, c.Lo+(c.Hi-c.Lo)/2)
			}
		}
		pcs = append(pcs, 0, 1, 0x1000, 0x401000, ^uint64(0))
		for _, pc := range pcs {
			locs, _ := b.Lookup(pc, LookupOptions{Exact: true})
			if len(locs) > 300 {
				t.Fatalf("Lookup(%#x): %d frames", pc, len(locs))
			}
			again, _ := b.Lookup(pc, LookupOptions{Exact: true})
			if !equalLocs(locs, again) {
				t.Fatalf("Lookup(%#x) not stable: %v vs %v", pc, locs, again)
			}
		}
		RecoverBias(b, []Frame{{PC: 0x555555554000 + 0x1000, Function: "main"}})
	})
}
