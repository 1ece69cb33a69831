package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/crashsig/crashsig/pipeline"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bundled inputs, relative to this module.
var (
	corpusDir = filepath.Join("..", "..", "testdata", "corpus")
	formats   = filepath.Join("..", "..", "testdata", "formats")
	coresDir  = filepath.Join("..", "..", "testdata", "core", "cores")
)

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(m.Run())
}

// runBeam runs the pipeline on Prism and returns the two output files.
func runBeam(t *testing.T, globs []string, c Config) (incidents, buckets string) {
	t.Helper()
	out := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	Build(s, globs, out, c)
	_, err := prism.Execute(context.Background(), p)
	require.NoError(t, err)
	inc, err := os.ReadFile(filepath.Join(out, IncidentsFile))
	require.NoError(t, err)
	bk, err := os.ReadFile(filepath.Join(out, BucketsFile))
	require.NoError(t, err)
	return string(inc), string(bk)
}

// reference is what `crashsig classify --json` and `crashsig buckets
// --json` print for the same inputs: the library's pipeline over the
// results in input order, one pipeline.Bucketer, the kinds
// `crashsig buckets` leaves out without --all, threshold 0.8.
func reference(t *testing.T, results iter.Seq2[*pipeline.Result, error]) (incidents, buckets string) {
	t.Helper()
	var inc, bk bytes.Buffer
	enc := json.NewEncoder(&inc)
	enc.SetEscapeHTML(false)
	b := pipeline.NewBucketer()
	for r, err := range results {
		if err != nil {
			continue // skipped or unreadable: no incident, as in the CLI
		}
		require.NoError(t, enc.Encode(r))
		if isCrash(r.Kind) {
			b.Add(r)
		}
	}
	benc := json.NewEncoder(&bk)
	benc.SetEscapeHTML(false)
	for _, x := range b.Buckets(0.8) {
		require.NoError(t, benc.Encode(x))
	}
	return inc.String(), bk.String()
}

func newPipeline(t *testing.T) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.New(context.Background(), pipeline.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// equalLines compares JSON Lines line by line, for a readable failure.
func equalLines(t *testing.T, want, got, what string) {
	t.Helper()
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	require.Equal(t, len(w), len(g), "%s: number of lines", what)
	for i := range w {
		require.Equal(t, w[i], g[i], "%s: line %d", what, i+1)
	}
}

// TestPipelineEqualsCLI runs the pipeline on Prism over every bundled
// crash text and core and compares its outputs with the CLI's: incidents
// byte for byte with `crashsig classify --json`, buckets with
// `crashsig buckets --json` on the same inputs (given in sorted order, the
// pipeline's input order).
func TestPipelineEqualsCLI(t *testing.T) {
	inc, bk := runBeam(t, []string{corpusDir + "/**", formats + "/**", coresDir + "/**"}, Config{Threshold: 0.8})
	dirs := []string{corpusDir, formats, coresDir}
	slices.Sort(dirs)
	wantInc, wantBk := reference(t, newPipeline(t).Run(context.Background(), nil, dirs...))

	require.Greater(t, strings.Count(wantInc, "\n"), 150, "the bundled inputs hold many incidents")
	require.Contains(t, wantInc, `"input":"core"`, "cores were read")
	require.Contains(t, wantBk, `"similar":`, "some buckets list similar ones")
	equalLines(t, wantInc, inc, IncidentsFile)
	equalLines(t, wantBk, bk, BucketsFile)

	// Buckets that merged several files are there (the combiner did work).
	multi := 0
	for line := range strings.Lines(bk) {
		var b pipeline.Bucket
		require.NoError(t, json.Unmarshal([]byte(line), &b))
		if b.SourceCount > 1 {
			multi++
		}
	}
	assert.Greater(t, multi, 3)
}

// TestRemoteFilesystem reads inputs through a Beam filesystem that is not
// local (memfs, as gs:// or s3:// would be): text, gzip text and an
// uncompressed core, which is copied to a local temporary file.
func TestRemoteFilesystem(t *testing.T) {
	files := map[string][]byte{}
	add := func(name, src string, gunzip, gzipIt bool) {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		if gzipIt {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, err := zw.Write(data)
			require.NoError(t, err)
			require.NoError(t, zw.Close())
			data = z.Bytes()
		}
		if gunzip {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			data, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		files["memfs://fleet/"+name] = data
		memfs.Write("memfs://fleet/"+name, data)
	}
	txt, err := filepath.Glob(filepath.Join(corpusDir, "starrocks", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, txt)
	add("be1.out", txt[0], false, false)
	add("be2.out", txt[len(txt)-1], false, false)
	add("be3.out.gz", filepath.Join(formats, "f2-glog07-lwp.txt"), false, true)
	add("node7.core", filepath.Join(coresDir, "kern_fp.core.gz"), true, false)
	add("notes.md", txt[0], false, false) // not crash text by its extension: skipped

	inc, bk := runBeam(t, []string{"memfs://fleet/*"}, Config{Threshold: 0.8})

	p := newPipeline(t)
	names := []string{"memfs://fleet/be1.out", "memfs://fleet/be2.out", "memfs://fleet/be3.out.gz", "memfs://fleet/node7.core"}
	slices.Sort(names)
	wantInc, wantBk := reference(t, func(yield func(*pipeline.Result, error) bool) {
		for _, n := range names {
			for r, err := range p.Reader(context.Background(), n, bytes.NewReader(files[n])) {
				if !yield(r, err) {
					return
				}
			}
		}
	})
	require.Contains(t, wantInc, `"source":"memfs://fleet/node7.core"`)
	require.Contains(t, wantInc, `"source":"memfs://fleet/be3.out.gz"`)
	assert.NotContains(t, inc, "notes.md")
	equalLines(t, wantInc, inc, IncidentsFile)
	equalLines(t, wantBk, bk, BucketsFile)
}

// TestMergeAnyOrder merges the per-file partial buckets of the corpus in
// random orders and groupings (as a runner may) and checks that the result
// is always the one of a single in-order pass (pipeline.Bucketer over all
// files).
func TestMergeAnyOrder(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t)
	byKey := map[string][]Partial{}
	var files []string
	for f, err := range pipeline.Files(ctx, corpusDir) {
		require.NoError(t, err)
		files = append(files, f)
		b := pipeline.NewBucketer()
		for r, err := range p.File(ctx, f) {
			if err == nil && isCrash(r.Kind) {
				b.Add(r)
			}
		}
		for _, bk := range b.Buckets(0) {
			pt := partialOf(bk)
			byKey[pt.key()] = append(byKey[pt.key()], pt)
		}
	}
	_, want := reference(t, p.Run(ctx, nil, corpusDir))

	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 5 {
		var merged []Partial
		for _, k := range slices.Sorted(maps.Keys(byKey)) {
			ps := slices.Clone(byKey[k])
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			// Random binary tree of merges.
			for len(ps) > 1 {
				i := rng.IntN(len(ps) - 1)
				m := merge(ps[i], ps[i+1])
				if round%2 == 1 {
					m = merge(ps[i+1], ps[i])
				}
				ps = slices.Replace(ps, i, i+2, m)
			}
			merged = append(merged, ps[0])
		}
		var got bytes.Buffer
		enc := json.NewEncoder(&got)
		enc.SetEscapeHTML(false)
		for _, b := range finalBuckets(merged, 0.8) {
			require.NoError(t, enc.Encode(b))
		}
		equalLines(t, want, got.String(), "round "+string(rune('0'+round)))
	}
}

// TestExpand checks the globs against pipeline.Files, which the CLI uses.
func TestExpand(t *testing.T) {
	ctx := context.Background()
	var want []string
	for f, err := range pipeline.Files(ctx, formats) {
		require.NoError(t, err)
		want = append(want, f)
	}
	require.NotEmpty(t, want)
	for _, g := range []string{formats, formats + "/**", formats + "/"} {
		got, _, err := expand(ctx, g)
		require.NoError(t, err)
		assert.Equal(t, want, got, g)
	}
	f7, _, err := expand(ctx, formats+"/**/f7-*")
	require.NoError(t, err)
	require.NotEmpty(t, f7)
	for _, f := range want {
		assert.Equal(t, strings.HasPrefix(filepath.Base(f), "f7-"), slices.Contains(f7, f), f)
	}
	// A non-recursive wildcard applies the same filter to what it matches.
	dir := t.TempDir()
	for _, n := range []string{"be.out", "be.out.gz", "notes.md", ".hidden", "labels.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	got, _, err := expand(ctx, dir+"/*")
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "be.out"), filepath.Join(dir, "be.out.gz")}, got)
	_, _, err = expand(ctx, dir+"/**/x/*")
	assert.Error(t, err)
}
