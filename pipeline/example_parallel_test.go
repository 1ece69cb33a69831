package pipeline_test

import (
	"context"
	"fmt"

	"github.com/crashsig/crashsig/pipeline"
)

// Several inputs read at once: Jobs readers, and the same sequence as
// with one (each input's Results in input order), so output stays
// deterministic. A missing input is an error in its place.
func ExampleOptions_jobs() {
	ctx := context.Background()
	p, err := pipeline.New(ctx, pipeline.Options{Jobs: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	for res, err := range p.Run(ctx, nil,
		"../testdata/formats/f6-tsan.txt",
		"../testdata/formats/missing.txt",
		"../testdata/formats/f3-check-eq-values.txt",
		"../testdata/formats/f4-terminate-bad-alloc.txt",
	) {
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(res.Source, res.StartLine, res.Kind)
	}
	// Output:
	// ../testdata/formats/f6-tsan.txt 2 sanitizer
	// error: ../testdata/formats/missing.txt: stat: no such file or directory
	// ../testdata/formats/f3-check-eq-values.txt 2 check
	// ../testdata/formats/f4-terminate-bad-alloc.txt 1 terminate
}
