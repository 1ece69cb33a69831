// Command beam classifies and buckets crash texts and cores at fleet scale
// on Apache Beam: it matches files by glob on any Beam filesystem, reads
// each with the crashsig library's pipeline (one Result per incident,
// exactly the JSON of `crashsig classify --json`), merges buckets per
// (path, signature key, defect) in a combiner, and writes
// OUTPUT/incidents.jsonl and OUTPUT/buckets.jsonl (the JSON of
// `crashsig buckets --json`), both sorted. It runs on Beam's embedded
// Prism runner by default; see README.md for Flink, Spark and Dataflow.
//
//	cd examples/beam && go run . --input '../../testdata/corpus/**' --output /tmp/out
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
)

// globList is a repeatable --input flag.
type globList []string

func (g *globList) String() string     { return strings.Join(*g, ",") }
func (g *globList) Set(v string) error { *g = append(*g, v); return nil }

func main() {
	var (
		inputs   globList
		binaries globList
		dbgDirs  globList
	)
	flag.Var(&inputs, "input", "glob of input files on any Beam filesystem (DIR, 'DIR/**', 'DIR/**/*.gz', gs://b/logs/**); repeatable")
	output := flag.String("output", "", "output directory (local or on a Beam filesystem): incidents.jsonl and buckets.jsonl are written there")
	threshold := flag.Float64("threshold", 0.8, "list similar buckets whose frames score at least this similarity (0 disables), as crashsig buckets")
	all := flag.Bool("all", false, "bucket thread dumps, terminations and leak reports too, as crashsig buckets --all")
	assume := flag.String("assume_version", "", "version of inputs whose crashes do not print one")
	flag.Var(&binaries, "binary", "backend executable for raw PCs and cores (local or Beam filesystem path); repeatable")
	flag.Var(&dbgDirs, "debug_dir", "directory of separate debug files on the workers; repeatable")
	dbgURLs := flag.String("debuginfod_urls", os.Getenv("DEBUGINFOD_URLS"), "debuginfod servers (space-separated) for cores' modules and binaries' debug files; default $DEBUGINFOD_URLS")
	flag.Parse()
	beam.Init()
	if len(inputs) == 0 || *output == "" {
		fmt.Fprintln(os.Stderr, "usage: beam --input GLOB [--input GLOB]... --output DIR [--runner=prism|universal|dataflow|...]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	cfg := Config{
		Threshold: *threshold, All: *all, AssumeVersion: *assume,
		Binaries: binaries, DebugDirs: dbgDirs, DebuginfodURLs: *dbgURLs,
	}
	if err := cfg.Check(); err != nil {
		fmt.Fprintf(os.Stderr, "beam: %v\n", err)
		os.Exit(2)
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, inputs, *output, cfg)
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Fprintf(os.Stderr, "beam: %v\n", err)
		os.Exit(1)
	}
}
