package signature_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/crashsig/crashsig/signature"
	"github.com/crashsig/crashsig/symbolize"
)

func ExampleNormalize() {
	fmt.Println(signature.Normalize("starrocks::Status starrocks::ColumnReader<(starrocks::LogicalType)5>::read_page<true>(starrocks::PageHeader const*) [clone .isra.0]"))
	fmt.Println(signature.Normalize("_ZZN9starrocks12EvHttpServer5startEvENKUlvE_clEv"))
	fmt.Println(signature.Normalize("doris::OlapScanNode::transfer_thread (this=0x7f3a4c, state=0x7f3a00)"))
	// Output:
	// starrocks::ColumnReader::read_page
	// starrocks::EvHttpServer::start::{lambda}
	// doris::OlapScanNode::transfer_thread
}

const exampleLog = `*** Aborted at 1736203429 (unix time) try "date -d @1736203429" if you are using GNU date ***
*** Current BE git commitID: 5ee7e73313 ***
*** SIGSEGV address not mapped to object (@0x10) received by PID 4568 (TID 6464 OR 0x7fd390c11640) from PID 16; stack trace: ***
 0# doris::signal::(anonymous namespace)::FailureSignalHandler(int, siginfo_t*, void*) at /doris/be/src/common/signal_handler.h:421
 1# PosixSignals::chained_handler(int, siginfo*, void*) [clone .part.0] in /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
 2# JVM_handle_linux_signal in /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
 3# 0x00007FD7DC196520 in /lib/x86_64-linux-gnu/libc.so.6
 4# __memmove_avx_unaligned_erms at ../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:440
 5# doris::vectorized::ColumnString::insert_many_dict_data(int const*, unsigned long, doris::StringRef const*, unsigned long, unsigned int) at /doris/be/src/vec/columns/column_string.h:300
 6# doris::segment_v2::BinaryDictPageDecoder::read_by_rowids(unsigned int const*, unsigned long, unsigned long*, COW<doris::vectorized::IColumn>::mutable_ptr<doris::vectorized::IColumn>&) at /doris/be/src/olap/rowset/segment_v2/binary_dict_page.cpp:329
 7# start_thread at ./nptl/pthread_create.c:442

`

func ExampleGenerator_Generate() {
	crashes, err := symbolize.ParseAll(context.Background(), strings.NewReader(exampleLog), symbolize.ScanOptions{Source: "be.out"})
	if err != nil {
		panic(err)
	}
	s := signature.Default().Generate(crashes[0])
	fmt.Println(s.Key)
	fmt.Println(s.ID, s.Attributes, s.CrashFrame)
	for _, line := range s.Trace[6:] {
		fmt.Println(line)
	}
	// Output:
	// FAULT | memcpy | doris::segment_v2::BinaryDictPageDecoder::read_by_rowids
	// a06b0827bf23b140 [fault=null leaf=memcpy-family] __memmove_avx_unaligned_erms
	// skipped #3 (unknown) in libc.so.6: signal trampoline: first unsymbolized frame after handler 'jvm-signal-chain'
	// kept    #4 __memmove_avx_unaligned_erms as memcpy: prefix rule 'memcpy-family' (memory/string primitives are where a bad pointer or length faults, not where it came from): leads the key until the first significant frame
	// skipped #5 doris::vectorized::ColumnString::insert_many_dict_data: generic rule 'column-helpers' (column and container operations (append, insert, resize, filter of a column, a PODArray, a raw vector) run for every operator, reader and writer; a crash in them is a bad argument from the caller, which says which defect (keyed on their own they merge unrelated subsystems)); the key already names the crash site (1 generic frame)
	// kept    #6 doris::segment_v2::BinaryDictPageDecoder::read_by_rowids: significant frame 1 of 1
	// stopped after 1 significant frame(s); 1 frames below not examined
	// key kind FAULT (the class of SIGSEGV: the key leaves out what not every report of a crash prints)
}

func ExampleSimilarity() {
	a := []string{"doris::A::f", "doris::B::g", "doris::C::h"}
	b := []string{"doris::A::f", "doris::B::g", "doris::D::k"}
	fmt.Printf("%.2f\n", signature.Similarity(a, b))
	// Output:
	// 0.76
}

func ExampleAggregate() {
	parked := []symbolize.Frame{
		{Function: "jdk.internal.misc.Unsafe.park(Native Method)", Java: true},
		{Function: "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take(ScheduledThreadPoolExecutor.java:1182)", Java: true},
	}
	var threads []symbolize.Thread
	for i := 0; i < 1000; i++ {
		threads = append(threads, symbolize.Thread{Name: fmt.Sprintf("sdk-ScheduledExecutor-%d-%d", i/4, i%4), Frames: parked})
	}
	threads = append(threads, symbolize.Thread{Name: "main", Frames: []symbolize.Frame{{Function: "java.lang.Object.wait(Native Method)", Java: true}}})
	for _, g := range signature.Aggregate(threads) {
		fmt.Println(g.Count, g.Frames[len(g.Frames)-1], g.NamePatterns)
	}
	// Output:
	// 1000 java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take [sdk-ScheduledExecutor-<n>-<n>]
	// 1 java.lang.Object.wait [main]
}

func ExampleBucketer() {
	b := signature.NewBucketer(nil)
	for i, f := range []string{"starrocks::HashJoiner::_probe()", "starrocks::HashJoiner::_probe()", "starrocks::Chunk::append()"} {
		b.Add(&symbolize.Crash{Source: "be.out", StartLine: 10 * (i + 1), Kind: symbolize.KindSignal, Signal: "SIGSEGV",
			Product: symbolize.ProductStarRocks, Version: "3.3.5",
			Threads: []symbolize.Thread{{Crashed: true, Frames: []symbolize.Frame{{Function: f}}}}})
	}
	for _, bk := range b.Buckets() {
		fmt.Println(bk.Count, bk.Key, bk.First, bk.Last, bk.Versions)
	}
	// Output:
	// 2 FAULT | starrocks::HashJoiner::_probe be.out:10 be.out:20 [3.3.5]
	// 1 FAULT | starrocks::Chunk::append be.out:30 be.out:30 [3.3.5]
}
