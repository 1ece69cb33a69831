package symbolize_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

const beOut = `start time: Tue Nov 12 14:20:31 CST 2024
3.3.19 RELEASE (build 5e6f7a8 distro ubuntu arch x86_64)
query_id:2f6c1e44-a1b2-11ef-9c3d-00163e0a1b2c, fragment_instance:2f6c1e44-a1b2-11ef-9c3d-00163e0a1b3f
*** Aborted at 1731400000 (unix time) try "date -d @1731400000" if you are using GNU date ***
PC: @          0x5a1b2c3 starrocks::ParsedPageV1::read()
*** SIGSEGV (@0x28) received by PID 12001 (TID 0x7f0e2d7fe700) from PID 40; stack trace: ***
    @          0x7e8d9c2 google::(anonymous namespace)::FailureSignalHandler()
    @     0x7f0f3a1c4630 (unknown)
    @          0x5a1b2c3 starrocks::ParsedPageV1::read()
    @          0x5a1c004 starrocks::ColumnReader::read_page()
    @          0x3c9e2a1 starrocks::ThreadPool::dispatch_thread()
start time: Tue Nov 12 14:25:02 CST 2024
`

// A Scanner yields the incidents of a log one at a time.
func ExampleNewScanner() {
	sc := symbolize.NewScanner(strings.NewReader(beOut), symbolize.ScanOptions{Source: "be.out"})
	for sc.Next() {
		c := sc.Crash()
		fmt.Printf("%s:%d-%d %s %s %s fault %s query %s\n", c.Source, c.StartLine, c.EndLine, c.Product, c.Version, c.Signal, c.FaultAddress, c.QueryID)
		for _, f := range c.CrashingThread().Frames {
			fmt.Println(strings.TrimSpace(fmt.Sprintf("  #%d %s %s", f.Index, f.PC, f.Name())))
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// be.out:2-11 starrocks 3.3.19 SIGSEGV fault 0x28 query 2f6c1e44-a1b2-11ef-9c3d-00163e0a1b2c
	// #0 0x7e8d9c2 google::(anonymous namespace)::FailureSignalHandler()
	// #1 0x7f0f3a1c4630
	// #2 0x5a1b2c3 starrocks::ParsedPageV1::read()
	// #3 0x5a1c004 starrocks::ColumnReader::read_page()
	// #4 0x3c9e2a1 starrocks::ThreadPool::dispatch_thread()
}

// ParseAll reads a whole input; mangled names printed by glog are
// demangled beside the printed form.
func ExampleParseAll() {
	paste := "*** SIGSEGV (@0x0) received by PID 7 (TID 0x7f0e2d7fe700) from PID 0; stack trace: ***\n" +
		"    @          0x4b0c7d1 _ZZN9starrocks12EvHttpServer5startEvENKUlvE_clEv\n"
	crashes, err := symbolize.ParseAll(context.Background(), strings.NewReader(paste), symbolize.ScanOptions{})
	if err != nil {
		panic(err)
	}
	f := crashes[0].Threads[0].Frames[0]
	fmt.Println(f.Function)
	fmt.Println(f.Demangled)
	fmt.Println(crashes[0].Corrupted, crashes[0].CorruptedReason)
	// Output:
	// _ZZN9starrocks12EvHttpServer5startEvENKUlvE_clEv
	// starrocks::EvHttpServer::start()::{lambda()#1}::operator()() const
	// true dump cut by the end of the input: no thread root frame and no end marker; fewer than 3 frames: the dump was cut short
}
