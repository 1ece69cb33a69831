package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/crashsig/crashsig/symbolize/debuginfod"
)

// Config is what every worker needs to classify like the CLI. It travels
// to the workers inside the DoFns (JSON-encoded by Beam), so it holds
// names, not open files.
type Config struct {
	// Threshold lists similar buckets (crashsig buckets --threshold).
	Threshold float64
	// All keeps thread dumps, terminations and leak reports in the
	// buckets (crashsig buckets --all); incidents always have them.
	All bool
	// AssumeVersion is pipeline.Options.AssumeVersion.
	AssumeVersion string
	// Binaries are backend executables for raw PCs and cores
	// (pipeline.Options.Binaries): local paths, or paths on any Beam
	// filesystem (copied to a local temporary file on each worker).
	Binaries []string
	// DebugDirs are directories of separate debug files on the workers.
	DebugDirs []string
	// DebuginfodURLs are debuginfod servers (space-separated, as
	// DEBUGINFOD_URLS); empty: no network.
	DebuginfodURLs string
}

// Check refuses, before the job starts, the flag values the CLI refuses
// as usage errors: a threshold outside [0, 1] (NaN included) and a
// version that does not parse. (Binaries are not checked here: a local
// path names a file on the workers, which the launcher may not see.)
func (c Config) Check() error {
	if !(c.Threshold >= 0 && c.Threshold <= 1) {
		return fmt.Errorf("--threshold %v: want a similarity from 0 to 1 (0 disables)", c.Threshold)
	}
	if c.AssumeVersion != "" {
		if _, err := catalog.ParseVersion(c.AssumeVersion); err != nil {
			return fmt.Errorf("--assume_version %q: %w", c.AssumeVersion, err)
		}
	}
	return nil
}

// classifyFn reads one file (text, compressed text or core; local or on a
// Beam filesystem) with the library's pipeline. It emits every incident
// as the JSON line `crashsig classify --json` prints (keyed for sorting),
// and the file's buckets, made by pipeline.Bucketer, as Partials keyed by
// (path, signature key, defect) for the combiner.
type classifyFn struct {
	Config Config

	p       *pipeline.Pipeline
	tmpDirs []string
}

// Setup opens the library pipeline once per worker.
func (f *classifyFn) Setup(ctx context.Context) error {
	p, tmps, err := openPipeline(ctx, f.Config)
	f.tmpDirs = tmps
	if err != nil {
		return err
	}
	f.p = p
	return nil
}

// Teardown closes the pipeline and removes temporary copies.
func (f *classifyFn) Teardown() error {
	var err error
	if f.p != nil {
		err = f.p.Close()
	}
	for _, d := range f.tmpDirs {
		os.RemoveAll(d)
	}
	return err
}

// openPipeline builds the library pipeline from c: binaries on remote
// filesystems are copied to a local temporary directory, and debuginfod
// servers become pipeline.Options.Fetcher.
func openPipeline(ctx context.Context, c Config) (*pipeline.Pipeline, []string, error) {
	var tmps []string
	opts := pipeline.Options{AssumeVersion: c.AssumeVersion, DebugDirs: c.DebugDirs}
	for _, b := range c.Binaries {
		if isLocal(b) {
			opts.Binaries = append(opts.Binaries, localPath(b))
			continue
		}
		dir, err := os.MkdirTemp("", "crashsig-beam-bin-*")
		if err != nil {
			return nil, tmps, err
		}
		tmps = append(tmps, dir)
		local := filepath.Join(dir, filepath.Base(b))
		if err := copyToLocal(ctx, b, local); err != nil {
			return nil, tmps, err
		}
		opts.Binaries = append(opts.Binaries, local)
	}
	if urls := strings.Fields(c.DebuginfodURLs); len(urls) > 0 {
		// Cores' modules and debug files, and the debug files of binaries
		// without DWARF (raw PCs), are fetched by build-id.
		opts.Fetcher = &debuginfod.Client{URLs: urls, CacheDir: os.Getenv("DEBUGINFOD_CACHE_PATH")}
	}
	p, err := pipeline.New(ctx, opts)
	if err == nil {
		for _, w := range p.Warnings() {
			log.Warnf(ctx, "%s", w)
		}
	}
	return p, tmps, err
}

// copyToLocal copies a file of a Beam filesystem to local.
func copyToLocal(ctx context.Context, name, local string) error {
	fsys, err := filesystem.New(ctx, name)
	if err != nil {
		return err
	}
	defer fsys.Close()
	r, err := fsys.OpenRead(ctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(local)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return fmt.Errorf("copying %s: %w", name, err)
	}
	return w.Close()
}

// ProcessElement classifies the file name.
func (f *classifyFn) ProcessElement(ctx context.Context, name string, emitIncident func(string, string), emitBucket func(string, Partial)) error {
	var results iter.Seq2[*pipeline.Result, error]
	if isLocal(name) {
		results = f.p.File(ctx, localPath(name))
	} else {
		fsys, err := filesystem.New(ctx, name)
		if err != nil {
			return err
		}
		defer fsys.Close()
		r, err := fsys.OpenRead(ctx, name)
		if err != nil {
			beam.NewCounter("crashsig", "unreadable_inputs").Inc(ctx, 1)
			log.Warnf(ctx, "%s: %v", name, err)
			return nil
		}
		defer r.Close()
		// Reader identifies compression and cores by their bytes; a core
		// is copied to a local temporary file for random access.
		results = f.p.Reader(ctx, name, r)
	}
	b := pipeline.NewBucketer()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for res, err := range results {
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			if errors.Is(err, pipeline.ErrSkipped) {
				beam.NewCounter("crashsig", "skipped_inputs").Inc(ctx, 1)
			} else {
				beam.NewCounter("crashsig", "unreadable_inputs").Inc(ctx, 1)
			}
			log.Warnf(ctx, "%v", err)
			continue
		}
		buf.Reset()
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("%s: encoding result: %w", name, err)
		}
		beam.NewCounter("crashsig", "incidents").Inc(ctx, 1)
		emitIncident(incidentKey(res.Source, res.StartLine), strings.TrimSuffix(buf.String(), "\n"))
		if !f.Config.All && !isCrash(res.Kind) {
			continue
		}
		b.Add(res)
	}
	for _, bk := range b.Buckets(0) {
		p := partialOf(bk)
		emitBucket(p.key(), p)
	}
	return nil
}

// isCrash reports whether an incident of kind k is bucketed by
// `crashsig buckets` without --all.
func isCrash(k symbolize.Kind) bool {
	switch k {
	case symbolize.KindThreadDump, symbolize.KindTermination, symbolize.KindLeak:
		return false
	}
	return true
}

// incidentKey sorts incidents in input order: by source, then line.
func incidentKey(source string, line int) string {
	return fmt.Sprintf("%s\x00%012d", source, line)
}
