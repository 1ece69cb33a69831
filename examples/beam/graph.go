package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf((*Partial)(nil)).Elem(), encodePartial, decodePartial)
	register.DoFn3x1[context.Context, string, func(string), error](&matchFn{})
	register.Emitter1[string]()
	register.DoFn4x1[context.Context, string, func(string, string), func(string, Partial), error](&classifyFn{})
	register.Emitter2[string, string]()
	register.Emitter2[string, Partial]()
	register.Combiner1[Partial](&mergeBucketsFn{})
	register.DoFn3x1[context.Context, []byte, func(*string) bool, error](&writeIncidentsFn{})
	register.DoFn3x1[context.Context, []byte, func(*Partial) bool, error](&writeBucketsFn{})
	register.Iter1[string]()
	register.Iter1[Partial]()
	register.Function2x1(joinIncident)
	register.Function2x1(dropKey)
}

// Output file names under --output.
const (
	IncidentsFile = "incidents.jsonl"
	BucketsFile   = "buckets.jsonl"
)

// Build adds the crashsig pipeline to s: match the globs, classify every
// file, write OUTPUT/incidents.jsonl (one Result per incident, as
// `crashsig classify --json`, in input order) and OUTPUT/buckets.jsonl
// (as `crashsig buckets --json`).
func Build(s beam.Scope, globs []string, output string, c Config) {
	s = s.Scope("crashsig")
	files := beam.ParDo(s, &matchFn{}, beam.Create(s, slicesAny(globs)...))
	// Spread the files over the workers (a glob is matched on one).
	files = beam.Reshuffle(s, files)
	incidents, partials := beam.ParDo2(s, &classifyFn{Config: c}, files)

	lines := beam.ParDo(s, joinIncident, incidents)
	// One writer each, fed by a side input, so that an empty result
	// still writes its (empty) file.
	beam.ParDo0(s, &writeIncidentsFn{Path: joinPath(output, IncidentsFile)}, beam.Impulse(s), beam.SideInput{Input: lines})

	merged := beam.CombinePerKey(s, &mergeBucketsFn{}, partials)
	buckets := beam.ParDo(s, dropKey, merged)
	beam.ParDo0(s, &writeBucketsFn{Path: joinPath(output, BucketsFile), Threshold: c.Threshold}, beam.Impulse(s), beam.SideInput{Input: buckets})
}

func slicesAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// joinIncident makes the sortable line KEY "\n" JSON (JSON has no raw
// newline).
func joinIncident(key, line string) string { return key + "\n" + line }

func dropKey(_ string, p Partial) Partial { return p }

// joinPath joins an output prefix (local directory or gs://bucket/dir)
// and a file name.
func joinPath(dir, name string) string {
	if isLocal(dir) {
		return filepath.Join(localPath(dir), name)
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// writeLines writes lines to name on its Beam filesystem.
func writeLines(ctx context.Context, name string, lines func(func(string) error) error) error {
	if isLocal(name) {
		if err := os.MkdirAll(filepath.Dir(localPath(name)), 0o755); err != nil {
			return err
		}
	}
	fsys, err := filesystem.New(ctx, name)
	if err != nil {
		return err
	}
	defer fsys.Close()
	w, err := fsys.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err = lines(func(s string) error {
		if _, err := bw.WriteString(s); err != nil {
			return err
		}
		return bw.WriteByte('\n')
	})
	if err == nil {
		err = bw.Flush()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// writeIncidentsFn sorts every incident by input position and writes the
// JSON lines. All incidents meet on one worker: fine for a day of a
// fleet's crashes (a Result is a few KiB), not for unbounded input.
type writeIncidentsFn struct {
	Path string
}

// ProcessElement writes the file.
func (f *writeIncidentsFn) ProcessElement(ctx context.Context, _ []byte, iter func(*string) bool) error {
	var all []string
	var s string
	for iter(&s) {
		all = append(all, s)
	}
	slices.Sort(all)
	return writeLines(ctx, f.Path, func(write func(string) error) error {
		for _, s := range all {
			_, line, _ := strings.Cut(s, "\n")
			if err := write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeBucketsFn orders the merged buckets as `crashsig buckets` and
// writes them as JSON lines.
type writeBucketsFn struct {
	Path      string
	Threshold float64
}

// ProcessElement writes the file.
func (f *writeBucketsFn) ProcessElement(ctx context.Context, _ []byte, iter func(*Partial) bool) error {
	var all []Partial
	var p Partial
	for iter(&p) {
		all = append(all, p)
		p = Partial{}
	}
	bs := finalBuckets(all, f.Threshold)
	return writeLines(ctx, f.Path, func(write func(string) error) error {
		var sb strings.Builder
		enc := json.NewEncoder(&sb)
		enc.SetEscapeHTML(false)
		for _, b := range bs {
			sb.Reset()
			if err := enc.Encode(b); err != nil {
				return err
			}
			if err := write(strings.TrimSuffix(sb.String(), "\n")); err != nil {
				return err
			}
		}
		return nil
	})
}
