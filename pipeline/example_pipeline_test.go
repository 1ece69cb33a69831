package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

// The one call from input to answer: every incident of the inputs
// (files, directories, "-" for stdin, compressed files, cores) as a
// Result, the object `crashsig classify --json` prints.
func ExamplePipeline_Run() {
	ctx := context.Background()
	p, err := pipeline.New(ctx, pipeline.Options{
		// Cores and Doris dumps do not print their version; say it.
		AssumeVersion: "2.1.5",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	for res, err := range p.Run(ctx, os.Stdin, "../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt") {
		if err != nil {
			fmt.Println(err) // *pipeline.InputError or *pipeline.SkipError; the run goes on
			continue
		}
		v := res.Classification
		fmt.Println(res.Source, res.StartLine)
		fmt.Println("path:   ", v.Path, v.Area)
		fmt.Println("defect: ", v.Defect.ID, v.Status)
		fmt.Println("version:", res.Version, "from", res.VersionSource)
		fmt.Println("key:    ", res.Signature.Key)
	}
	// Output:
	// ../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt 1
	// path:    background trash-sweep
	// defect:  SR-6046-pk-updates-pb-non-monotonic-versions affected
	// version: 2.1.5 from option
	// key:     FAULT | starrocks::TabletUpdates::_to_updates_pb_unlocked
}

// A reason to skip an input is a value, not a message.
func ExampleNewInput() {
	_, err := pipeline.NewInput("starrocks_be", strings.NewReader("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00"))
	var skip *pipeline.SkipError
	if errors.As(err, &skip) {
		fmt.Println(errors.Is(err, pipeline.ErrSkipped), skip.Reason)
	}
	in, err := pipeline.NewInput("be.out", strings.NewReader("I0303 10:15:02.118230 1 a.cpp:1] started\n"))
	if err == nil {
		fmt.Println(in.Kind, in.Compression == "")
		in.Close()
	}
	// Output:
	// true elf-not-core
	// text true
}

// Buckets with meaning: a top-crashers table without maps of one's own.
func ExampleBucketer() {
	ctx := context.Background()
	p, err := pipeline.New(ctx, pipeline.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	b := pipeline.NewBucketer()
	for res, err := range p.Run(ctx, nil, "../testdata/formats/f1-boost-jvm-chain.txt", "../testdata/formats/damage-crlf.txt", "../testdata/formats/f6-lsan.txt") {
		if err == nil {
			b.Add(res)
		}
	}
	for _, bk := range b.Buckets(0) {
		fmt.Printf("%d× %s %s, %d sources, first %s\n", bk.Count, bk.Path, bk.Kind, bk.SourceCount, bk.First)
	}
	js, _ := json.Marshal(b.Buckets(0)[0])
	fmt.Println(strings.Contains(string(js), `"representative":{"schema_version":1`))
	// Output:
	// 2× query SIGSEGV, 2 sources, first ../testdata/formats/f1-boost-jvm-chain.txt:4
	// 1× lifecycle LEAK, 1 sources, first ../testdata/formats/f6-lsan.txt:3
	// true
}

// Crashes parsed elsewhere (here by symbolize.ParseAll) are completed in
// place and answered with the same Result.
func ExamplePipeline_Complete() {
	ctx := context.Background()
	p, err := pipeline.New(ctx, pipeline.Options{AssumeVersion: "3.3.9"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	dump := `*** Aborted at 1700000000 (unix time) try "date -d @1700000000" if you are using GNU date ***
*** SIGSEGV (@0x8) received by PID 1 (TID 0x7f0000000700) from PID 8; stack trace: ***
    @     0x7f0f3a1c4630 (unknown)
    @          0x3f2a1b0 starrocks::TabletMeta::to_meta_pb()
    @          0x3f2b2c0 starrocks::TabletMeta::save_meta()
`
	crashes, _ := symbolize.ParseAll(ctx, strings.NewReader(dump), symbolize.ScanOptions{Source: "ticket-1234"})
	for _, c := range crashes {
		res, err := p.Complete(ctx, c)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(res.Signature.Key)
		fmt.Println(c.Version, res.VersionSource)
	}
	// Output:
	// FAULT | starrocks::TabletMeta::to_meta_pb
	// 3.3.9 option
}
