package dwarfindex

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binDir holds the gzip-compressed test binaries of package symbolize.
var binDir = filepath.Join("..", "..", "testdata", "cxx", "bin")

// open returns the image and DWARF index of a test binary.
func open(t testing.TB, variant string) (*elfimage.Image, *Data) {
	t.Helper()
	p := testutil.Gunzip(t, filepath.Join(binDir, variant+".gz"), filepath.Join(t.TempDir(), variant))
	img, err := elfimage.Open(p, elfimage.Options{})
	require.NoError(t, err)
	d, err := New(img, Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		d.Close()
		img.Close()
	})
	return img, d
}

func identity(s string) string { return s }

// TestLookupMain looks up the first instruction of main in the GCC and
// clang variants: the outermost frame is main in backend.cpp, and every
// frame of the chain has a name and a line.
func TestLookupMain(t *testing.T) {
	for _, v := range []string{"o2-fp-dw5", "o2-nofp-dw4", "o2-gz", "clang-o2-dw5"} {
		t.Run(v, func(t *testing.T) {
			img, d := open(t, v)
			syms := elfimage.LoadSymbols(img, nil)
			pc := uint64(0)
			for i := range syms.Addr {
				if syms.NameAt(i) == "main" {
					pc = syms.Addr[i]
				}
			}
			require.NotZero(t, pc, "no main symbol")
			frames, err := d.Lookup(nil, pc, identity, true, false)
			require.NoError(t, err)
			require.NotEmpty(t, frames)
			outer := frames[len(frames)-1]
			assert.Equal(t, "main", outer.Linkage)
			assert.True(t, strings.HasSuffix(outer.File, "backend.cpp"), outer.File)
			for _, f := range frames {
				assert.NotEmpty(t, f.Linkage)
				assert.Positive(t, f.Line)
			}
		})
	}
}

// TestLookupConcurrent checks that concurrent lookups over every indexed
// unit give the answers a sequential pass gives (units are parsed on
// first use by whichever goroutine gets there first).
func TestLookupConcurrent(t *testing.T) {
	_, seq := open(t, "o2-fp-dw5")
	_, par := open(t, "o2-fp-dw5")
	var pcs []uint64
	for _, r := range seq.Ranges() {
		for pc := r.Lo; pc < r.Hi; pc += 7 {
			pcs = append(pcs, pc)
		}
	}
	require.NotEmpty(t, pcs)
	want := make([][]Frame, len(pcs))
	for i, pc := range pcs {
		f, err := seq.Lookup(nil, pc, identity, false, false)
		require.NoError(t, err)
		want[i] = f
	}
	var wg sync.WaitGroup
	got := make([][]Frame, len(pcs))
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(pcs); i += 4 {
				got[i], _ = par.Lookup(nil, pcs[i], identity, false, false)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, want, got)
}

// TestNoDebugInfo: an image without .debug_info is refused with
// ErrNoDebugInfo (the stripped half of the split variant).
func TestNoDebugInfo(t *testing.T) {
	p := testutil.Gunzip(t, filepath.Join(binDir, "split.gz"), filepath.Join(t.TempDir(), "split"))
	img, err := elfimage.Open(p, elfimage.Options{})
	require.NoError(t, err)
	defer img.Close()
	_, err = New(img, Options{})
	require.ErrorIs(t, err, elfimage.ErrNoDebugInfo)
}

// FuzzIndex feeds arbitrary bytes as an ELF image to New and looks up the
// PCs its index covers: errors are fine, panics, runaway chains and
// unstable answers are not.
func FuzzIndex(f *testing.F) {
	for _, n := range []string{"tiny", "tiny-clang"} {
		p := testutil.Gunzip(f, filepath.Join(binDir, n+".gz"), filepath.Join(f.TempDir(), n))
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := elfimage.New(bytes.NewReader(b), int64(len(b)), "fuzz", elfimage.Options{MaxSection: 64 << 20})
		if err != nil {
			return
		}
		defer img.Close()
		d, err := New(img, Options{})
		if err != nil {
			return
		}
		defer d.Close()
		var pcs []uint64
		for i, r := range d.Ranges() {
			if i >= 64 {
				break
			}
			pcs = append(pcs, r.Lo, r.Lo+(r.Hi-r.Lo)/2)
		}
		pcs = append(pcs, 0, 1, 0x1000, ^uint64(0))
		for _, pc := range pcs {
			a, _ := d.Lookup(nil, pc, identity, false, false)
			if len(a) > 300 {
				t.Fatalf("Lookup(%#x): %d frames", pc, len(a))
			}
			b, _ := d.Lookup(nil, pc, identity, false, false)
			if len(a) != len(b) {
				t.Fatalf("Lookup(%#x) not stable", pc)
			}
		}
	})
}
