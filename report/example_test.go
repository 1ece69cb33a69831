package report_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/report"
)

// Collect the Results of a pipeline run and render the page.
func ExampleRender() {
	ctx := context.Background()
	p, err := pipeline.New(ctx, pipeline.Options{NoSystemDebugDirs: true})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	col := report.NewCollector()
	for res, err := range p.Run(ctx, nil, "../testdata/formats/f2-glog04-preamble.txt", "../testdata/formats/damage-syslog-prefix.txt") {
		if err != nil {
			panic(err)
		}
		col.Add(res)
	}
	buckets := col.Buckets(0.8)
	var page bytes.Buffer
	if err := report.Render(ctx, &page, buckets, report.Options{Title: "be.out of two backends"}); err != nil {
		panic(err)
	}
	fmt.Println(len(buckets), "bucket of", buckets[0].Count, "crashes, path", buckets[0].Path)
	fmt.Println(strings.HasPrefix(page.String(), "<!DOCTYPE html>"), strings.Contains(page.String(), buckets[0].ID))
	// Output:
	// 1 bucket of 2 crashes, path scan
	// true true
}
