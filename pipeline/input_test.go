package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

const crashFile = "../testdata/formats/f2-glog04-preamble.txt"

func compress(t *testing.T, kind string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zstd":
		w, err = zstd.NewWriter(&b)
	case "xz":
		w, err = xz.NewWriter(&b)
	case "bzip2":
		// No bzip2 writer in the standard library: a committed fixture
		// made with bzip2(1) from the same file.
		z, err := os.ReadFile("testdata/f2-glog04-preamble.txt.bz2")
		require.NoError(t, err)
		return z
	}
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// TestNewInputCompression reads the same crash plain and through every
// supported compression and wants the same text.
func TestNewInputCompression(t *testing.T) {
	plain, err := os.ReadFile(crashFile)
	require.NoError(t, err)
	for _, kind := range []string{"", "gzip", "zstd", "xz", "bzip2"} {
		t.Run(kind, func(t *testing.T) {
			data := plain
			if kind != "" {
				data = compress(t, kind, plain)
			}
			in, err := NewInput("x", bytes.NewReader(data))
			require.NoError(t, err)
			defer in.Close()
			assert.Equal(t, kind, in.Compression)
			assert.Equal(t, ContentText, in.Kind)
			got, err := io.ReadAll(in.Reader())
			require.NoError(t, err)
			assert.Equal(t, string(plain), string(got))
		})
	}
}

// TestNewInputSkips checks that content that is not crash text is refused
// with a typed reason, and that a core is recognized by its ELF type.
func TestNewInputSkips(t *testing.T) {
	elf := func(typ byte) []byte {
		h := make([]byte, 64)
		copy(h, "\x7fELF\x02\x01\x01")
		h[16] = typ
		return h
	}
	junk := bytes.Repeat([]byte{0, 1, 2, 3, 0xff, 0, 0, 7}, 512)
	cases := []struct {
		name   string
		data   []byte
		reason SkipReason
	}{
		{"executable", elf(2), SkipELF},
		{"shared object", elf(3), SkipELF},
		{"junk", junk, SkipBinary},
		{"gzip junk", compress(t, "gzip", junk), SkipBinary},
		{"zip", []byte("PK\x03\x04rest of a zip file"), SkipArchive},
	}
	for i, c := range cases {
		name := fmt.Sprintf("input%d.bin", i)
		_, err := NewInput(name, bytes.NewReader(c.data))
		require.ErrorIs(t, err, ErrSkipped, c.name)
		var se *SkipError
		require.ErrorAs(t, err, &se, c.name)
		assert.Equal(t, c.reason, se.Reason, c.name)
		assert.Equal(t, 1, strings.Count(err.Error(), name), "the name once: %q", err.Error())
		// A library message names no program's flag (it said "give it
		// with --binary", a flag of the CLI alone).
		assert.NotContains(t, se.Detail, "--", c.name)
		if c.reason == SkipELF {
			assert.Equal(t, "an ELF file that is not a core (an executable or library: pass it as a binary to symbolize with)", se.Detail)
		}
	}
	in, err := NewInput("core", bytes.NewReader(elf(4)))
	require.NoError(t, err)
	assert.Equal(t, ContentCore, in.Kind)
	in.Close()
	// Text with a few control bytes (a NUL-padded tail, colors) is text.
	in, err = NewInput("log", strings.NewReader("\x1b[31mF0303 error\x1b[0m\n\x00\x00line\n"))
	require.NoError(t, err)
	assert.Equal(t, ContentText, in.Kind)
}

// TestNewInputHole reads a log that starts with a hole (a NUL run, the
// preallocated tail a crash leaves in a log file) before the next
// process's crash: it is text, not binary data, and the pipeline finds the
// crash after the hole as it finds it without the hole.
func TestNewInputHole(t *testing.T) {
	plain, err := os.ReadFile("../testdata/formats/f9-kernel-segfault.txt")
	require.NoError(t, err)
	p, err := New(context.Background(), Options{})
	require.NoError(t, err)
	keys := func(data []byte) []string {
		var out []string
		for r, err := range p.Reader(context.Background(), "x.log", bytes.NewReader(data)) {
			require.NoError(t, err)
			out = append(out, r.Signature.Key)
		}
		return out
	}
	want := keys(plain)
	require.NotEmpty(t, want)
	for _, n := range []int{8, 8 << 10, 100 << 10} {
		data := append(bytes.Repeat([]byte{0}, n), plain...)
		in, err := NewInput("x.log", bytes.NewReader(data))
		require.NoError(t, err, "%d NULs", n)
		assert.Equal(t, ContentText, in.Kind)
		in.Close()
		assert.Equal(t, want, keys(data), "%d NULs", n)
	}
	// Short NUL runs among other control bytes are still binary data.
	_, err = NewInput("x.bin", bytes.NewReader(bytes.Repeat([]byte{0, 0, 0, 1, 2, 'a', 0, 7}, 1024)))
	require.ErrorIs(t, err, ErrSkipped)
}

// TestOpenFileErrors wants a missing file as *InputError naming it once
// and wrapping fs.ErrNotExist, and a damaged gzip stream as an error of
// the input, not a panic or a silent empty result.
func TestOpenFileErrors(t *testing.T) {
	_, err := OpenFile(context.Background(), "no/such/file.log")
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, 1, strings.Count(err.Error(), "no/such/file.log"), err.Error())

	plain, _ := os.ReadFile(crashFile)
	z := compress(t, "gzip", plain)
	p, err := New(context.Background(), Options{NoSystemDebugDirs: true})
	require.NoError(t, err)
	var errs []error
	for _, err := range p.Reader(context.Background(), "cut.gz", bytes.NewReader(z[:len(z)/2])) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	require.Len(t, errs, 1)
	require.ErrorAs(t, errs[0], &ie)
	assert.Equal(t, "cut.gz", ie.Name)
	assert.Contains(t, errs[0].Error(), "gzip")
}

// TestFiles walks a tree: stable lexical order, hidden entries and
// non-log extensions skipped, explicit files kept whatever their name,
// missing paths reported and the walk continued.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b/be.out", "a/be.INFO.gz", "a/.hidden", ".git/x", "labels.jsonl", "c.log.zst", "notes.md"} {
		p := filepath.Join(dir, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
	}
	var got []string
	var errs []error
	for f, err := range Files(context.Background(), dir, filepath.Join(dir, "notes.md"), "missing", "-") {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, strings.TrimPrefix(f, dir+"/"))
	}
	assert.Equal(t, []string{"a/be.INFO.gz", "b/be.out", "c.log.zst", "notes.md", "-"}, got)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], fs.ErrNotExist)
	assert.True(t, slices.IsSorted(got[:3]))
}

// FuzzNewInput feeds arbitrary bytes to content identification and the
// decompressors: no panic, and either an error or a readable input.
func FuzzNewInput(f *testing.F) {
	plain, _ := os.ReadFile(crashFile)
	f.Add(plain)
	f.Add([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0})
	f.Add([]byte("BZh91AY&SY"))
	f.Add([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := NewInput("fuzz", bytes.NewReader(data))
		if err != nil {
			var ie *InputError
			if !errors.Is(err, ErrSkipped) && !errors.As(err, &ie) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		defer in.Close()
		io.Copy(io.Discard, io.LimitReader(in.Reader(), 1<<20))
	})
}

// TestFilesSymlinks: in a walk, a link to a file is read under the link's
// name (the /var/log/containers layout), a link to a directory and a
// dangling link are skipped with a reason, and a directory given as a
// link is walked under the name given.
func TestFilesSymlinks(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods", "be-0")
	require.NoError(t, os.MkdirAll(pods, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pods, "0.log"), []byte("x\n"), 0o644))
	containers := filepath.Join(dir, "containers")
	require.NoError(t, os.MkdirAll(containers, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(pods, "0.log"), filepath.Join(containers, "be-0.log")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone.log"), filepath.Join(containers, "be-1.log")))
	require.NoError(t, os.Symlink(pods, filepath.Join(containers, "pods-link")))
	link := filepath.Join(dir, "containers-link")
	require.NoError(t, os.Symlink(containers, link))

	for _, root := range []string{containers, link} {
		var got []string
		var skips []*SkipError
		for f, err := range Files(context.Background(), root) {
			if err != nil {
				var se *SkipError
				require.ErrorAs(t, err, &se)
				require.ErrorIs(t, err, ErrSkipped)
				skips = append(skips, se)
				continue
			}
			got = append(got, f)
		}
		assert.Equal(t, []string{filepath.Join(root, "be-0.log")}, got, root)
		require.Len(t, skips, 2, root)
		assert.Equal(t, filepath.Join(root, "be-1.log"), skips[0].Name)
		assert.Equal(t, SkipSymlink, skips[0].Reason)
		assert.Contains(t, skips[0].Detail, "target cannot be read")
		// The link is named once: its own path is not repeated by the
		// stat error behind the detail.
		assert.Equal(t, 1, strings.Count(skips[0].Error(), "be-1.log"), skips[0].Error())
		assert.ErrorIs(t, skips[0], ErrSkipped)
		assert.Equal(t, filepath.Join(root, "pods-link"), skips[1].Name)
		assert.Contains(t, skips[1].Detail, "link to a directory")
	}
}

// TestFilesOnlyNotLogNames: a directory that holds only files left out by
// their extension says so instead of yielding nothing; one that holds a
// log too yields the log alone.
func TestFilesOnlyNotLogNames(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ticket.md", "notes.md", "dump.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644))
	}
	var errs []error
	n := 0
	for _, err := range Files(context.Background(), dir) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	assert.Zero(t, n)
	require.Len(t, errs, 1)
	var se *SkipError
	require.ErrorAs(t, errs[0], &se)
	assert.Equal(t, SkipNotLogName, se.Reason)
	assert.Equal(t, dir, se.Name)
	assert.Contains(t, se.Detail, "3 file(s) not read by their extension (.json 1, .md 2)")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "be.out"), []byte("x\n"), 0o644))
	var got []string
	for f, err := range Files(context.Background(), dir) {
		require.NoError(t, err)
		got = append(got, f)
	}
	assert.Equal(t, []string{filepath.Join(dir, "be.out")}, got)
}

// TestOwnOutputSkipped: crashsig's own JSON Lines output given as a crash
// log, in a file, compressed or on stdin, is identified (ContentOwnJSON)
// and Run skips it with SkipOwnOutput instead of reading its frame names
// as a crash; a JSON log line that only holds the key later is text.
func TestOwnOutputSkipped(t *testing.T) {
	p := newPipeline(t, Options{})
	rs, errs := collect(t, p.Run(context.Background(), nil, crashFile))
	require.Empty(t, errs)
	require.NotEmpty(t, rs)
	js, err := json.Marshal(rs[0])
	require.NoError(t, err)
	js = append(js, '\n')

	in, err := NewInput("x", bytes.NewReader(js))
	require.NoError(t, err)
	assert.Equal(t, ContentOwnJSON, in.Kind)
	in.Close()
	in, err = NewInput("y", strings.NewReader(`{"level":"fatal","schema_version":1}`+"\n"))
	require.NoError(t, err)
	assert.Equal(t, ContentText, in.Kind)
	in.Close()

	dir := t.TempDir()
	plain := filepath.Join(dir, "one.jsonl")
	require.NoError(t, os.WriteFile(plain, js, 0o644))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(js)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	packed := filepath.Join(dir, "one.log.gz") // a log name: read by a walk too
	require.NoError(t, os.WriteFile(packed, gz.Bytes(), 0o644))

	for _, args := range [][]string{{plain}, {packed}, {dir}, {"-"}} {
		var stdin io.Reader
		if args[0] == "-" {
			stdin = bytes.NewReader(gz.Bytes())
		}
		rs, errs := collect(t, p.Run(context.Background(), stdin, args...))
		assert.Empty(t, rs, "%v", args)
		require.NotEmpty(t, errs, "%v", args)
		for _, err := range errs {
			var se *SkipError
			require.ErrorAs(t, err, &se, "%v", args)
			assert.Equal(t, SkipOwnOutput, se.Reason)
			assert.Contains(t, se.Error(), "this is crashsig --json output, not a crash log")
		}
	}
}

// utf16Encode encodes s as UTF-16 with its byte order mark.
func utf16Encode(s string, big bool) []byte {
	out := []byte{0xff, 0xfe}
	if big {
		out = []byte{0xfe, 0xff}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if big {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// TestUTF16Input: a corpus text saved as UTF-16 with a byte order mark
// (PowerShell's `>`), little- or big-endian, plain or compressed, gives
// the incidents of the UTF-8 file, line numbers included (review: it was
// skipped as binary).
func TestUTF16Input(t *testing.T) {
	const f = "../testdata/corpus/starrocks/002-trash-sweep-rowsetmetapb-mergefrom.txt"
	text := mustRead(t, f)
	ctx := context.Background()
	p := newPipeline(t, Options{})
	want, errs := collect(t, p.Text(ctx, f, strings.NewReader(text)))
	require.Empty(t, errs)
	require.NotEmpty(t, want)
	dir := t.TempDir()
	for _, big := range []bool{false, true} {
		for _, z := range []string{"", "gzip"} {
			data := utf16Encode(text, big)
			if z != "" {
				data = compress(t, z, data)
			}
			path := filepath.Join(dir, fmt.Sprintf("be-%v-%s.out", big, z))
			require.NoError(t, os.WriteFile(path, data, 0o600))
			in, err := OpenFile(ctx, path)
			require.NoError(t, err)
			assert.Equal(t, map[bool]string{false: "utf-16le", true: "utf-16be"}[big], in.Encoding)
			assert.Equal(t, ContentText, in.Kind)
			in.Close()
			got, errs := collect(t, p.File(ctx, path))
			require.Empty(t, errs, path)
			require.Len(t, got, len(want), path)
			for i := range want {
				assert.Equal(t, want[i].StartLine, got[i].StartLine)
				assert.Equal(t, want[i].EndLine, got[i].EndLine)
				assert.Equal(t, want[i].Threads, got[i].Threads)
				assert.Equal(t, want[i].Signature.Key, got[i].Signature.Key)
				assert.Equal(t, want[i].Classification.Path, got[i].Classification.Path)
			}
		}
	}
}

// TestUTF16Reader: the transcoder keeps surrogate pairs split between
// reads, and turns unpaired surrogates and an odd last byte into U+FFFD.
func TestUTF16Reader(t *testing.T) {
	s := "a😀b\r\nstd::vector<int> é 中\n"
	for _, big := range []bool{false, true} {
		data := utf16Encode(s, big)[2:]
		for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data)), iotest.HalfReader(bytes.NewReader(data))} {
			got, err := io.ReadAll(&utf16Reader{r: r, big: big})
			require.NoError(t, err)
			assert.Equal(t, s, string(got))
		}
	}
	// A lone low surrogate, a high surrogate before a letter, a high
	// surrogate at the end and an odd byte.
	le := []byte{0x00, 0xdc, 0x00, 0xd8, 'x', 0, 'y', 0, 0x00, 0xd8, 'z'}
	got, err := io.ReadAll(&utf16Reader{r: iotest.OneByteReader(bytes.NewReader(le))})
	require.NoError(t, err)
	assert.Equal(t, "\ufffd\ufffdxy\ufffd\ufffd", string(got))
}

// TestDamagedCompressionNamedOnce: a compressed input damaged in its
// header, its middle or cut short is an *InputError that names the
// decompressor once (review: "gzip: gzip: invalid checksum", "xz: xz:
// invalid checksum for file header", "bzip2: bzip2 data invalid").
func TestDamagedCompressionNamedOnce(t *testing.T) {
	plain, err := os.ReadFile(crashFile)
	require.NoError(t, err)
	p := newPipeline(t, Options{})
	for _, kind := range []string{"gzip", "zstd", "xz", "bzip2"} {
		z := compress(t, kind, plain)
		damaged := map[string][]byte{"cut": z[:len(z)*2/3]}
		for _, at := range []int{4, 6, 8, 12, len(z) / 2, len(z) - 6} {
			d := bytes.Clone(z)
			d[at] ^= 0xff
			d[at+1] ^= 0xff
			damaged[fmt.Sprintf("byte %d", at)] = d
		}
		for how, d := range damaged {
			var errs []error
			for _, err := range p.Reader(context.Background(), "in", bytes.NewReader(d)) {
				if err != nil {
					errs = append(errs, err)
				}
			}
			for _, err := range errs {
				if errors.Is(err, ErrSkipped) {
					continue // a header damaged past recognition
				}
				var ie *InputError
				require.ErrorAs(t, err, &ie, "%s %s", kind, how)
				assert.Equal(t, 1, strings.Count(err.Error(), kind), "%s %s: %q", kind, how, err.Error())
			}
		}
	}
}
