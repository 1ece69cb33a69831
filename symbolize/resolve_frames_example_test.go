package symbolize_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// Parse a StarRocks-style glog dump (a release build prints "(unknown)"
// for some frames) and symbolize it in place with the backend binary.
// starrocks_be is not PIE, so the absolute PCs are file addresses.
func ExampleSymbolizeInPlace() {
	path, cleanup := extractExample() // the test program, built non-PIE like starrocks_be
	defer cleanup()
	const dump = `*** Aborted at 1651201942 (unix time) try "date -d @1651201942" if you are using GNU date ***
PC: @           0x402e20 (unknown)
*** SIGSEGV (@0x0) received by PID 15670 (TID 0x7fca98ad0700) from PID 0; stack trace: ***
    @           0x402e20 (unknown)
    @           0x405f01 starrocks::ChunkSource::buffer_next_batch_chunks_blocking()
    @     0x7fcb32440ea5 start_thread
`
	crashes, err := symbolize.ParseAll(context.Background(), strings.NewReader(dump), symbolize.ScanOptions{Source: "be.out"})
	if err != nil || len(crashes) != 1 {
		fmt.Println(len(crashes), err)
		return
	}
	b, err := symbolize.OpenBinary(path, symbolize.BinaryOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	rep, err := symbolize.SymbolizeInPlace(context.Background(), crashes[0], symbolize.Module{Binary: b, Name: "starrocks_be"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range crashes[0].CrashingThread().Frames {
		loc := ""
		if f.File != "" {
			loc = fmt.Sprintf(" %s:%d", filepath.Base(f.File), f.Line)
		}
		fmt.Printf("#%d inlined=%-5v %s%s\n", f.Index, f.Inlined, f.Name(), loc)
	}
	for _, u := range rep.Unresolved {
		fmt.Printf("unresolved #%d: %s\n", u.Frame, u.Reason)
	}
	// Output:
	// #0 inlined=true  starrocks::(anonymous namespace)::mix3 backend.cpp:33
	// #0 inlined=true  starrocks::(anonymous namespace)::mix2 backend.cpp:34
	// #0 inlined=true  starrocks::(anonymous namespace)::mix1 backend.cpp:35
	// #0 inlined=false starrocks::(anonymous namespace)::anon_worker(int) backend.cpp:36
	// #1 inlined=true  std::__new_allocator<long>::allocate(unsigned long, void const*) new_allocator.h:137
	// #1 inlined=true  std::allocator_traits<std::allocator<long> >::allocate(std::allocator<long>&, unsigned long) alloc_traits.h:464
	// #1 inlined=true  std::_Vector_base<long, std::allocator<long> >::_M_allocate(unsigned long) stl_vector.h:378
	// #1 inlined=true  std::_Vector_base<long, std::allocator<long> >::_M_create_storage(unsigned long) stl_vector.h:395
	// #1 inlined=true  std::_Vector_base<long, std::allocator<long> >::_Vector_base(unsigned long, std::allocator<long> const&) stl_vector.h:332
	// #1 inlined=true  std::vector<long, std::allocator<long> >::vector(unsigned long, std::allocator<long> const&) stl_vector.h:552
	// #1 inlined=true  starrocks::ColumnVector<long>::ColumnVector(unsigned long) backend.cpp:47
	// #1 inlined=false starrocks::ChunkSource::buffer_next_batch_chunks_blocking() backend.cpp:72
	// #2 inlined=false start_thread
	// unresolved #2: no symbol or debug info at file address 0x7fcb32440ea5
}
