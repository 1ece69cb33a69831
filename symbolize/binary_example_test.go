package symbolize_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crashsig/crashsig/symbolize"
)

// extractExample writes the committed test binary to a temporary file.
func extractExample() (string, func()) {
	dir, _ := os.MkdirTemp("", "symbolize-example")
	f, _ := os.Open(filepath.Join("testdata", "cxx", "bin", "o2-nofp-dw4.gz"))
	defer f.Close()
	zr, _ := gzip.NewReader(f)
	p := filepath.Join(dir, "starrocks_be")
	out, _ := os.Create(p)
	io.Copy(out, zr)
	out.Close()
	return p, func() { os.RemoveAll(dir) }
}

// Symbolize a fault PC of a non-PIE backend: absolute PCs are file
// addresses, and the inline chain comes innermost first.
func ExampleBinary_Lookup() {
	path, cleanup := extractExample()
	defer cleanup()
	b, err := symbolize.OpenBinary(path, symbolize.BinaryOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	fmt.Println("PIE:", b.IsPIE())
	locs, err := b.Lookup(0x402e20, symbolize.LookupOptions{Exact: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range locs {
		fmt.Printf("%s inlined=%v %s:%d\n", l.Function, l.Inlined, filepath.Base(l.File), l.Line)
	}
	// Output:
	// PIE: false
	// starrocks::(anonymous namespace)::mix3 inlined=true backend.cpp:33
	// starrocks::(anonymous namespace)::mix2 inlined=true backend.cpp:34
	// starrocks::(anonymous namespace)::mix1 inlined=true backend.cpp:35
	// starrocks::(anonymous namespace)::anon_worker(int) inlined=false backend.cpp:36
}
