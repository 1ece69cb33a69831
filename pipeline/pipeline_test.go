package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashsig/crashsig/catalog"
	"github.com/crashsig/crashsig/internal/testutil"
	"github.com/crashsig/crashsig/symbolize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newPipeline(t *testing.T, opts Options) *Pipeline {
	t.Helper()
	opts.NoSystemDebugDirs = true
	p, err := New(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func collect(t *testing.T, seq func(func(*Result, error) bool)) ([]*Result, []error) {
	t.Helper()
	var rs []*Result
	var errs []error
	for r, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rs = append(rs, r)
	}
	return rs, errs
}

// TestVersions: a version the crash prints wins; the startup banner of the
// same input comes next and says so in the evidence; then VersionOf (file,
// then the longest directory) and AssumeVersion.
func TestVersions(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, Options{
		VersionOf: map[string]string{
			"../testdata/formats":                        "2.1.1",
			"../testdata/formats/f1-boost-jvm-chain.txt": "2.1.7",
		},
		AssumeVersion: "3.3.9",
	})

	rs, errs := collect(t, p.File(ctx, "../testdata/formats/f1-boost-jvm-chain.txt"))
	require.Empty(t, errs)
	require.NotEmpty(t, rs)
	assert.Equal(t, "2.1.7", rs[0].Version)
	assert.Equal(t, VersionFromOptions, rs[0].VersionSource)
	assert.Contains(t, rs[0].Classification.Evidence[0], "given by the caller for ../testdata/formats/f1-boost-jvm-chain.txt")

	rs, _ = collect(t, p.File(ctx, "../testdata/formats/f6-lsan.txt"))
	require.NotEmpty(t, rs)
	assert.Equal(t, "2.1.1", rs[0].Version, "directory entry")

	rs, _ = collect(t, p.File(ctx, "../testdata/formats/be-info-banner-then-fatal.txt"))
	require.NotEmpty(t, rs)
	assert.Equal(t, "doris-2.1.6-rc04(AVX2)", rs[0].Version)
	assert.Equal(t, VersionFromBanner, rs[0].VersionSource)
	ev := rs[0].Classification.Evidence[0]
	assert.Contains(t, ev, "startup banner")
	assert.Contains(t, ev, "wins over 2.1.1", "the disagreeing option is mentioned")

	rs, _ = collect(t, p.File(ctx, "../testdata/formats/f2-glog04-preamble.txt"))
	require.NotEmpty(t, rs)
	assert.Equal(t, VersionFromCrash, rs[0].VersionSource)
	assert.NotEqual(t, "2.1.1", rs[0].Version)

	q := newPipeline(t, Options{AssumeVersion: "3.3.9"})
	rs, _ = collect(t, q.Reader(ctx, "-", strings.NewReader(mustRead(t, "../testdata/formats/f1-boost-jvm-chain.txt"))))
	require.NotEmpty(t, rs)
	assert.Equal(t, "3.3.9", rs[0].Version)
	assert.Contains(t, rs[0].Classification.Evidence[0], "every input")

	// A known defect whose dump prints no version: the status is placed
	// with the version given.
	known := "../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt"
	rs, _ = collect(t, newPipeline(t, Options{}).File(ctx, known))
	require.NotEmpty(t, rs)
	require.NotNil(t, rs[0].Classification.Defect)
	assert.Equal(t, catalog.StatusVersionUnknown, rs[0].Classification.Status)
	rs, _ = collect(t, newPipeline(t, Options{VersionOf: map[string]string{known: "2.1.5"}}).File(ctx, known))
	require.NotEmpty(t, rs)
	assert.NotEqual(t, catalog.StatusVersionUnknown, rs[0].Classification.Status)
	assert.Equal(t, "2.1.5", rs[0].Classification.Version)
	assert.Equal(t, catalog.StatusAffected, rs[0].Classification.Status)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestRunDirectory runs over a directory holding a log, a gzip-compressed
// core, an executable and junk: one result per incident, the core
// unwound, the others skipped with their reasons, input order kept.
func TestRunDirectory(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "../testdata/core/cores/kern_fp.core.gz", filepath.Join(dir, "b-core.41237.gz"))
	bin := gunzip(t, "../testdata/core/bin/sim_fp.gz", filepath.Join(dir, "c-sim_fp"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d-junk.bin"), []byte(strings.Repeat("\x00\x01\x02", 100)), 0o644))
	copyFile(t, "../testdata/formats/f2-glog04-preamble.txt", filepath.Join(dir, "a-be.out"))

	prog := &Progress{}
	p := newPipeline(t, Options{Binaries: []string{bin}, Progress: prog})
	rs, errs := collect(t, p.Run(context.Background(), nil, dir))
	require.Len(t, rs, 2)
	assert.Equal(t, filepath.Join(dir, "a-be.out"), rs[0].Source)
	assert.Equal(t, ContentText, rs[0].Input)
	core := rs[1]
	assert.Equal(t, ContentCore, core.Input)
	assert.Equal(t, "SIGSEGV", core.Signal)
	assert.Equal(t, catalog.PathScan, core.Classification.Path)
	assert.Contains(t, core.Signature.Key, "starrocks::ParsedPageV1::read")
	require.Len(t, errs, 2)
	for i, reason := range []SkipReason{SkipELF, SkipBinary} {
		var se *SkipError
		require.ErrorAs(t, errs[i], &se)
		assert.Equal(t, reason, se.Reason)
	}
	assert.EqualValues(t, 4, prog.Inputs(), "skipped inputs count as opened")
	assert.EqualValues(t, 2, prog.Incidents())
	assert.Positive(t, prog.Bytes())
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.WriteFile(dst, []byte(mustRead(t, src)), 0o644))
}

func gunzip(t *testing.T, src, dst string) string { return testutil.Gunzip(t, src, dst) }

// TestTextIdleFlush follows a live stream: the crash is written, then the
// writer stays silent without closing. With IdleFlush the result arrives
// within the idle time plus a margin, not at the end of the stream.
func TestTextIdleFlush(t *testing.T) {
	p := newPipeline(t, Options{IdleFlush: 300 * time.Millisecond})
	pr, pw := io.Pipe()
	defer pw.Close()
	crash := mustRead(t, "../testdata/formats/f2-glog04-preamble.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go pw.Write([]byte(crash))
	start := time.Now()
	for r, err := range p.Text(ctx, "live", pr) {
		require.NoError(t, err)
		assert.Equal(t, "SIGSEGV", r.Signal)
		assert.Less(t, time.Since(start), 3*time.Second)
		return
	}
	t.Fatal("no result")
}

// TestBuckets groups the corpus: buckets carry path, defect, status,
// versions, sources and a representative with one thread; counts add up.
func TestBuckets(t *testing.T) {
	p := newPipeline(t, Options{})
	b := NewBucketer()
	n := 0
	for r, err := range p.Run(context.Background(), nil, "../testdata/corpus") {
		require.NoError(t, err)
		b.Add(r)
		n++
	}
	// crashsig-sig/9 gives most near-duplicates of the corpus one key; at
	// 0.6 the corpus still holds keys that are one defect under two
	// kinds (SR-10822's NLJoin permute as an ABORT and as a memcpy FAULT),
	// and buckets of one key with different defects (SR-10822, SR-75343),
	// which must name a similar bucket once.
	bs := b.Buckets(0.6)
	require.NotEmpty(t, bs)
	total, withDefect, similar := 0, 0, 0
	order := map[catalog.Path]int{}
	for i, p := range catalog.Paths() {
		order[p] = i
	}
	for i, bk := range bs {
		total += bk.Count
		assert.Equal(t, SchemaVersion, bk.SchemaVersion)
		assert.NotEmpty(t, bk.Sources)
		assert.LessOrEqual(t, len(bk.Representative.Threads), 1)
		assert.Equal(t, bk.Key, bk.Representative.Signature.Key)
		sum := 0
		for _, c := range bk.Statuses {
			sum += c
		}
		assert.Equal(t, bk.Count, sum)
		if bk.Defect != nil {
			withDefect++
			assert.Equal(t, bk.Defect.ID, bk.Representative.Classification.Defect.ID)
		}
		similar += len(bk.Similar)
		ids := map[string]bool{}
		for _, s := range bk.Similar {
			assert.False(t, ids[s.ID], "bucket %s names similar bucket %s twice", bk.ID, s.ID)
			ids[s.ID] = true
			assert.NotEqual(t, bk.ID, s.ID)
		}
		if i > 0 {
			assert.LessOrEqual(t, order[bs[i-1].Path], order[bk.Path], "sorted by path")
		}
	}
	assert.Equal(t, n, total)
	assert.Positive(t, withDefect)
	assert.Positive(t, similar)
}

// TestConcurrentFiles runs File from several goroutines on one Pipeline
// (the batch example does) and wants the sequential answers.
func TestConcurrentFiles(t *testing.T) {
	p := newPipeline(t, Options{})
	files, _ := filepath.Glob("../testdata/formats/*.txt")
	want := map[string]string{}
	for _, f := range files {
		for r, err := range p.File(context.Background(), f) {
			require.NoError(t, err)
			want[r.Location().String()] = r.Signature.Key
		}
	}
	got := make(chan [2]string, 1000)
	done := make(chan bool)
	for range 4 {
		go func() {
			for _, f := range files {
				for r, err := range p.File(context.Background(), f) {
					if err == nil {
						got <- [2]string{r.Location().String(), r.Signature.Key}
					}
				}
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
	close(got)
	for g := range got {
		assert.Equal(t, want[g[0]], g[1], g[0])
	}
}

// TestComplete: crashes parsed elsewhere get the same Result as through
// File, and Complete fills the given version into the crash itself.
func TestComplete(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, Options{AssumeVersion: "2.1.5"})
	f := "../testdata/corpus/starrocks/019-trash-sweep-tabletupdates-to-updates-pb.txt"
	want, errs := collect(t, p.File(ctx, f))
	require.Empty(t, errs)
	fh, err := os.Open(f)
	require.NoError(t, err)
	defer fh.Close()
	crashes, err := symbolize.ParseAll(ctx, fh, symbolize.ScanOptions{Source: f})
	require.NoError(t, err)
	require.Len(t, crashes, len(want))
	for i, c := range crashes {
		got, err := p.Complete(ctx, c)
		require.NoError(t, err)
		assert.Same(t, c, got.Crash)
		assert.Equal(t, "2.1.5", c.Version, "filled in place")
		assert.Equal(t, want[i].Signature.Key, got.Signature.Key)
		assert.Equal(t, want[i].Classification.Status, got.Classification.Status)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = p.Complete(cctx, crashes[0])
	assert.ErrorIs(t, err, context.Canceled)
}

// SourceCount counts every distinct source, also past the sources a
// bucket lists (review: it over-counted once the list was full).
func TestBucketSourceCountPastList(t *testing.T) {
	p := newPipeline(t, Options{})
	var proto *Result
	for r, err := range p.File(context.Background(), "../testdata/formats/f2-glog07-lwp.txt") {
		require.NoError(t, err)
		proto = r
		break
	}
	require.NotNil(t, proto)
	b := NewBucketer()
	const sources = 3 * maxBucketSources
	for range 2 {
		for i := range sources {
			r := *proto
			c := *proto.Crash
			c.Source = fmt.Sprintf("host-%03d/be.out", i)
			r.Crash = &c
			b.Add(&r)
		}
	}
	bs := b.Buckets(0.8)
	require.Len(t, bs, 1)
	assert.Equal(t, 2*sources, bs[0].Count)
	assert.Equal(t, sources, bs[0].SourceCount)
	assert.LessOrEqual(t, len(bs[0].Sources), maxBucketSources)
}

// Keys of VersionOf that name one directory differently decide by key,
// never by map order.
func TestVersionForTie(t *testing.T) {
	for range 20 {
		p := newPipeline(t, Options{VersionOf: map[string]string{"logs": "3.3.1", "logs/": "3.3.2", "./logs": "3.3.3"}})
		v, k := p.versionFor("logs/be.out")
		assert.Equal(t, "3.3.3", v)
		assert.Equal(t, "./logs", k)
	}
}

// A quiet pipe does not hold Reader past the context's deadline (review:
// content detection waited for the first byte whatever the context).
func TestReaderHonoursContextBeforeFirstByte(t *testing.T) {
	p := newPipeline(t, Options{})
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	var got error
	for _, err := range p.Reader(ctx, "pipe", pr) {
		got = err
	}
	assert.ErrorIs(t, got, context.DeadlineExceeded)
	// Nothing is ever written, so without the context the read blocks
	// forever; the margin over the 200 ms deadline is wide because a loaded
	// machine (2 shared cores) took 342 ms.
	assert.Less(t, time.Since(start), 2*time.Second)
}

// A compressed core larger than MaxCoreBytes is refused with a typed error
// and leaves no temporary file.
func TestCoreSizeLimit(t *testing.T) {
	dir := t.TempDir()
	p := newPipeline(t, Options{MaxCoreBytes: 1 << 10, TempDir: dir})
	var got error
	for _, err := range p.Run(context.Background(), nil, "../testdata/core/cores/kern_fp.core.gz") {
		if err != nil {
			got = err
		}
	}
	require.ErrorIs(t, got, ErrCoreTooLarge)
	left, _ := os.ReadDir(dir)
	assert.Empty(t, left, "the partial copy is removed")
}

// TestCoreCompressed: Core reads a compressed core as Run does (the same
// signature), and refuses a file that is no core with symbolize.ErrNotCore.
func TestCoreCompressed(t *testing.T) {
	dir := t.TempDir()
	p := newPipeline(t, Options{TempDir: dir})
	const core = "../testdata/core/cores/kern_fp.core.gz"
	rs, errs := collect(t, p.Run(context.Background(), nil, core))
	require.Empty(t, errs)
	require.Len(t, rs, 1)
	r, err := p.Core(context.Background(), core)
	require.NoError(t, err)
	assert.Equal(t, rs[0].Signature.Key, r.Signature.Key)
	assert.Equal(t, core, r.Source)
	left, _ := os.ReadDir(dir)
	assert.Empty(t, left, "the decompressed copy is removed")

	_, err = p.Core(context.Background(), crashFile)
	require.Error(t, err)
	assert.ErrorIs(t, err, symbolize.ErrNotCore)
	var ie *InputError
	assert.ErrorAs(t, err, &ie)
	_, err = p.Core(context.Background(), filepath.Join(dir, "missing.core"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// TestRunNilStdin: "-" with no standard input is an *InputError matching
// ErrNoStdin, not a panic, and the other inputs are still read (review:
// Run(ctx, nil, "-") dereferenced the nil reader).
func TestRunNilStdin(t *testing.T) {
	ctx := context.Background()
	for _, jobs := range []int{1, 2} {
		p := newPipeline(t, Options{Jobs: jobs})
		rs, errs := collect(t, p.Run(ctx, nil, "-", crashFile))
		require.Len(t, errs, 1)
		var ie *InputError
		require.ErrorAs(t, errs[0], &ie)
		assert.Equal(t, "-", ie.Name)
		assert.ErrorIs(t, errs[0], ErrNoStdin)
		assert.Equal(t, "-: no standard input given", errs[0].Error())
		require.Len(t, rs, 1)
		assert.Equal(t, crashFile, rs[0].Source)
	}
	p := newPipeline(t, Options{})
	for name, seq := range map[string]func(func(*Result, error) bool){
		"Reader": p.Reader(ctx, "x", nil),
		"Text":   p.Text(ctx, "x", nil),
	} {
		rs, errs := collect(t, seq)
		assert.Empty(t, rs, name)
		require.Len(t, errs, 1, name)
		assert.ErrorIs(t, errs[0], ErrNoStdin, name)
	}
}

// TestUseAfterClose: every entry point of a closed Pipeline (and of a zero
// one) fails with ErrClosed instead of classifying without its binaries
// (review: Run after Close left raw PCs unsymbolized, silently).
func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	p, err := New(ctx, Options{NoSystemDebugDirs: true})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "a second Close does nothing")
	crashes, err := symbolize.ParseAll(ctx, strings.NewReader(mustRead(t, crashFile)), symbolize.ScanOptions{Source: "x"})
	require.NoError(t, err)
	require.NotEmpty(t, crashes)
	for _, q := range []*Pipeline{p, {}} {
		for name, seq := range map[string]func(func(*Result, error) bool){
			"Run":    q.Run(ctx, nil, crashFile),
			"File":   q.File(ctx, crashFile),
			"Reader": q.Reader(ctx, "x", strings.NewReader("x")),
			"Text":   q.Text(ctx, "x", strings.NewReader("x")),
		} {
			rs, errs := collect(t, seq)
			assert.Empty(t, rs, name)
			require.Len(t, errs, 1, name)
			assert.ErrorIs(t, errs[0], ErrClosed, name)
		}
		_, err = q.Core(ctx, "../testdata/core/cores/kern_fp.core.gz")
		assert.ErrorIs(t, err, ErrClosed)
		_, err = q.Complete(ctx, crashes[0])
		assert.ErrorIs(t, err, ErrClosed)
	}
}

// TestCancelOpenIncident: a stream holding half a crash when ctx is done
// yields the open incident (noted as stopped by the caller) and then ctx's
// error once, through Text, Reader and Run("-") (review: ctx's error came
// twice and the incident was dropped).
func TestCancelOpenIncident(t *testing.T) {
	crash := mustRead(t, "../testdata/formats/f2-glog07-lwp.txt")
	half := crash[:len(crash)*2/3]
	for _, mode := range []string{"Text", "Text+IdleFlush", "Reader", "Run", "Run/Jobs2"} {
		t.Run(mode, func(t *testing.T) {
			opts := Options{}
			switch mode {
			case "Text+IdleFlush":
				opts.IdleFlush = time.Minute
			case "Run/Jobs2":
				opts.Jobs = 2
			}
			p := newPipeline(t, opts)
			pr, pw := io.Pipe()
			defer pw.Close()
			go pw.Write([]byte(half))
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			var seq func(func(*Result, error) bool)
			switch mode {
			case "Reader":
				seq = p.Reader(ctx, "-", pr)
			case "Run", "Run/Jobs2":
				seq = p.Run(ctx, pr, "-")
			default:
				seq = p.Text(ctx, "-", pr)
			}
			rs, errs := collect(t, seq)
			require.Len(t, errs, 1, "%v", errs)
			assert.Equal(t, context.DeadlineExceeded, errs[0])
			require.Len(t, rs, 1)
			assert.Equal(t, 1, rs[0].StartLine)
			assert.Equal(t, "FAULT | starrocks::Chunk::append_selective", rs[0].Signature.Key)
			assert.Contains(t, rs[0].Notes, "scan stopped by the caller while the incident was open")
		})
	}
}

// TestCoreErrorNamesInputOnce: a damaged core, plain or compressed, is an
// *InputError that names the input once and never the temporary copy
// (review: `x.core: x.core: corrupt core file: EOF`, and the .gz named
// the deleted /tmp/crashsig-core-NNN).
func TestCoreErrorNamesInputOnce(t *testing.T) {
	dir := t.TempDir()
	zr, err := os.Open("../testdata/core/cores/kern_fp.core.gz")
	require.NoError(t, err)
	defer zr.Close()
	in, err := NewInput("core.gz", zr)
	require.NoError(t, err)
	head := make([]byte, 1000)
	_, err = io.ReadFull(in.Reader(), head)
	require.NoError(t, err)
	in.Close()
	plain := filepath.Join(dir, "trunc.core")
	require.NoError(t, os.WriteFile(plain, head, 0o600))
	gz := filepath.Join(dir, "trunc.core.gz")
	require.NoError(t, os.WriteFile(gz, compress(t, "gzip", head), 0o600))
	tmp := t.TempDir()
	p := newPipeline(t, Options{TempDir: tmp})
	for _, name := range []string{plain, gz} {
		_, errs := collect(t, p.Run(context.Background(), nil, name))
		_, cerr := p.Core(context.Background(), name)
		for _, err := range append(errs, cerr) {
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, name, ie.Name)
			assert.ErrorIs(t, err, symbolize.ErrCorruptCore)
			assert.Equal(t, name+": corrupt core file: EOF", err.Error())
			assert.NotContains(t, ie.Err.Error(), name)
		}
	}
	left, _ := os.ReadDir(tmp)
	assert.Empty(t, left)
}

// TestNewRefusesBadVersions: a version catalog.ParseVersion does not read,
// in AssumeVersion or VersionOf, and an empty VersionOf key are refused by
// New with an *OptionError (review: "banana" became Result.Version).
func TestNewRefusesBadVersions(t *testing.T) {
	for _, tc := range []struct {
		opts        Options
		option, key string
		bad         bool // a bad version, not a bad key
	}{
		{Options{AssumeVersion: "banana"}, "AssumeVersion", "", true},
		{Options{VersionOf: map[string]string{"logs": "3.3.1", crashFile: "banana"}}, "VersionOf", crashFile, true},
		{Options{VersionOf: map[string]string{"logs": " "}}, "VersionOf", "logs", true},
		{Options{VersionOf: map[string]string{"": "3.3.1"}}, "VersionOf", "", false},
	} {
		p, err := New(context.Background(), tc.opts)
		assert.Nil(t, p)
		var oe *OptionError
		require.ErrorAs(t, err, &oe, "%+v", tc.opts)
		assert.Equal(t, tc.option, oe.Option)
		assert.Equal(t, tc.key, oe.Key)
		assert.Equal(t, tc.bad, errors.Is(err, catalog.ErrVersion), err.Error())
	}
	_, err := New(context.Background(), Options{AssumeVersion: "banana"})
	assert.EqualError(t, err, `pipeline: Options.AssumeVersion: catalog: bad version: "banana" is not X.Y.Z`)
	for _, ok := range []string{"3.3", "3.3.9", "main", "3.3.5-6d81f75"} {
		p, err := New(context.Background(), Options{AssumeVersion: ok, VersionOf: map[string]string{"x": ok}})
		require.NoError(t, err, ok)
		p.Close()
	}
}

// TestVersionOfAbsolutePaths: a VersionOf key matches a source spelled
// otherwise when both are the same cleaned absolute path, or the source
// lies under the key; standard input only as spelled (review: a relative
// key did not match an absolute input and the other way round).
func TestVersionOfAbsolutePaths(t *testing.T) {
	const rel = "../testdata/corpus/starrocks/002-trash-sweep-rowsetmetapb-mergefrom.txt"
	abs, err := filepath.Abs(rel)
	require.NoError(t, err)
	version := func(key, input string) (string, VersionSource) {
		t.Helper()
		p := newPipeline(t, Options{VersionOf: map[string]string{key: "2.2.1"}})
		rs, errs := collect(t, p.Run(context.Background(), nil, input))
		require.Empty(t, errs)
		for _, r := range rs {
			if a, _ := filepath.Abs(r.Source); a == abs {
				return r.Version, r.VersionSource
			}
		}
		t.Fatalf("no result of %s", abs)
		return "", ""
	}
	for _, tc := range [][2]string{
		{filepath.Dir(rel), abs},
		{filepath.Dir(abs), rel},
		{abs, rel},
		{rel, abs},
		{"./" + filepath.Dir(rel) + "/", rel},
		{filepath.Dir(abs) + "/../starrocks", rel},
		{abs, filepath.Dir(rel)}, // a file under the input directory
	} {
		v, src := version(tc[0], tc[1])
		assert.Equal(t, "2.2.1", v, "key %s, input %s", tc[0], tc[1])
		assert.Equal(t, VersionFromOptions, src)
	}
	v, _ := version(filepath.Dir(abs)+"x", rel)
	assert.Empty(t, v, "a sibling whose name extends the key's is not under it")

	// The most specific key wins, whatever the spelling.
	p := newPipeline(t, Options{VersionOf: map[string]string{filepath.Dir(rel): "2.1.1", abs: "2.1.8"}})
	v, k := p.versionFor(rel)
	assert.Equal(t, "2.1.8", v)
	assert.Equal(t, abs, k)

	p = newPipeline(t, Options{VersionOf: map[string]string{"-": "3.3.1", "x": "3.3.2"}})
	v, _ = p.versionFor("-")
	assert.Equal(t, "3.3.1", v)
	assert.Equal(t, []string{"x"}, p.UnmatchedVersionOf("-", rel))
	p = newPipeline(t, Options{VersionOf: map[string]string{abs: "3.3.1", "/no/such/dir": "3.3.2", filepath.Dir(filepath.Dir(rel)): "3.3.3"}})
	assert.Equal(t, []string{"/no/such/dir"}, p.UnmatchedVersionOf(filepath.Dir(rel)))
}

// rawPCDump is a glog dump whose frames are raw PCs of sim_fp (module
// offsets), printing no version.
const rawPCDump = `*** Aborted at 1751000000 (unix time) try "date -d @1751000000" if you are using GNU date ***
PC: @     0x5555555593d0 (unknown)
*** SIGSEGV (@0x40) received by PID 3021 (TID 0x7f6b1c3ff640) LWP(3577) from PID 0; stack trace: ***
    @     0x7f6c2d842520 (/usr/lib/x86_64-linux-gnu/libc.so.6+0x4251f)
    @     0x5555555593d0 (/opt/starrocks/be/lib/sim_fp+0x53d0)
    @     0x55555555952f (/opt/starrocks/be/lib/sim_fp+0x552f)
    @     0x55555555958c (/opt/starrocks/be/lib/sim_fp+0x558c)
    @     0x5555555595a9 (/opt/starrocks/be/lib/sim_fp+0x55a9)
    @     0x7f6c2d894ac3 (/usr/lib/x86_64-linux-gnu/libc.so.6+0x94ac2)
`

// TestCompleteTwice: a second Complete of the same crash gives the same
// Result but for its Symbolization report (no new frame: they were
// symbolized once), the version still "option" (review: the second call
// reported the version it had written as printed by the crash).
func TestCompleteTwice(t *testing.T) {
	ctx := context.Background()
	bin := gunzip(t, "../testdata/core/bin/sim_fp.gz", filepath.Join(t.TempDir(), "sim_fp"))
	p := newPipeline(t, Options{Binaries: []string{bin}, AssumeVersion: "3.3.9"})
	for _, tc := range []struct {
		text string
		src  VersionSource
	}{{rawPCDump, VersionFromOptions}, {mustRead(t, crashFile), VersionFromCrash}, {mustRead(t, "../testdata/formats/f7-jstack.txt"), VersionFromOptions}} {
		text := tc.text
		crashes, err := symbolize.ParseAll(ctx, strings.NewReader(text), symbolize.ScanOptions{Source: "x"})
		require.NoError(t, err)
		require.Len(t, crashes, 1)
		first, err := p.Complete(ctx, crashes[0])
		require.NoError(t, err)
		var a bytes.Buffer
		require.NoError(t, NewEncoder(&a).Encode(first))
		second, err := p.Complete(ctx, crashes[0])
		require.NoError(t, err)
		// The second call finds the frames symbolized already: its report
		// says so, and everything else is the first Result's.
		if first.Symbolization != nil {
			require.NotNil(t, second.Symbolization)
			assert.Zero(t, second.Symbolization.Symbolized)
			assert.Zero(t, second.Symbolization.Inlined)
			s := *first.Symbolization
			second.Symbolization = &s
		}
		var b bytes.Buffer
		require.NoError(t, NewEncoder(&b).Encode(second))
		assert.Equal(t, a.String(), b.String())
		assert.Equal(t, tc.src, first.VersionSource)
		assert.Equal(t, tc.src, second.VersionSource)
		assert.Equal(t, first.Classification, second.Classification)
	}
	// The raw PCs were symbolized (the first text).
	crashes, err := symbolize.ParseAll(ctx, strings.NewReader(rawPCDump), symbolize.ScanOptions{Source: "x"})
	require.NoError(t, err)
	r, err := p.Complete(ctx, crashes[0])
	require.NoError(t, err)
	require.NotNil(t, r.Symbolization)
	assert.Contains(t, r.Signature.Key, "starrocks::")

	// A version the crash prints stays the crash's on every call.
	crashes, err = symbolize.ParseAll(ctx, strings.NewReader("3.3.5 RELEASE (build 1a2b3c4 distro centos arch x86_64)\n"+rawPCDump), symbolize.ScanOptions{Source: "x"})
	require.NoError(t, err)
	for range 2 {
		r, err := p.Complete(ctx, crashes[0])
		require.NoError(t, err)
		assert.Equal(t, "3.3.5", r.Version)
		assert.Equal(t, VersionFromCrash, r.VersionSource)
	}
}
