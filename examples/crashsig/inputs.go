package main

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// errSkipped marks an input that is read but holds nothing to classify
// (an executable next to the logs); it is reported, not counted as failed.
var errSkipped = errors.New("skipped")

// errInputs says that at least one input could not be read; the others
// were processed.
var errInputs = errors.New("some inputs could not be read")

// inputs says what to do with each kind of input: text (logs, pastes,
// dumps) and, when core is set, ELF core files.
type inputs struct {
	text func(name string, r io.Reader) error
	core func(name, path string) error // name as given, path of the (decompressed) file
}

// openInputs calls fn for every input named by paths: files, directories
// (recursively, in lexical order, skipping hidden entries), "-" for stdin.
// Gzip files (by magic number) are decompressed transparently. Errors of
// single inputs are reported on stderr and make the result errInputs.
func openInputs(paths []string, stdin io.Reader, stderr io.Writer, fn func(name string, r io.Reader) error) error {
	return inputs{text: fn}.open(paths, stdin, stderr)
}

// open walks the inputs; see openInputs.
func (in inputs) open(paths []string, stdin io.Reader, stderr io.Writer) error {
	failed := false
	report := func(name string, err error) {
		if errors.Is(err, errSkipped) {
			fmt.Fprintf(stderr, "crashsig: %s: %v\n", name, err)
			return
		}
		fmt.Fprintf(stderr, "crashsig: %s: %v\n", name, err)
		failed = true
	}
	for _, p := range paths {
		if p == "-" {
			if err := in.feed("-", stdin); err != nil {
				report("-", err)
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(stderr, "crashsig: %v\n", err)
			failed = true
			continue
		}
		if !st.IsDir() {
			if err := in.file(p); err != nil {
				report(p, err)
			}
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(stderr, "crashsig: %v\n", err)
				failed = true
				return nil
			}
			name := d.Name()
			if path != p && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && isLogName(name) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.Sort(files)
		for _, f := range files {
			if err := in.file(f); err != nil {
				report(f, err)
			}
		}
	}
	if failed {
		return errInputs
	}
	return nil
}

// isLogName skips files in directories that are not crash text: labels,
// notes, golden outputs and scripts sit beside the logs in testdata.
func isLogName(name string) bool {
	switch filepath.Ext(strings.TrimSuffix(name, ".gz")) {
	case ".jsonl", ".json", ".md", ".go", ".sh", ".py", ".yaml", ".yml", ".tsv", ".golden", ".source", ".cpp", ".cc", ".h":
		return false
	}
	return true
}

// file feeds one file: an ELF core to the core handler (when there is
// one), anything else as text.
func (in inputs) file(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if in.core != nil && symbolize.IsCore(f) {
		f.Close()
		return in.core(path, path)
	}
	return in.feed(path, f)
}

// feed reads one stream: gzip is decompressed (a gzip-compressed core is
// written to a temporary file for the core reader, which needs random
// access), other ELF files are skipped, the rest is text.
func (in inputs) feed(name string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	head, _ := br.Peek(18)
	if len(head) == 18 && string(head[:4]) == "\x7fELF" {
		if head[16] == 4 && head[17] == 0 && in.core != nil { // ET_CORE, little-endian
			return in.gzipCore(name, br)
		}
		return fmt.Errorf("%w: an ELF file that is not a core", errSkipped)
	}
	return in.text(name, br)
}

// gzipCore copies a decompressed core to a temporary file and hands it to
// the core handler.
func (in inputs) gzipCore(name string, r io.Reader) error {
	tmp, err := os.CreateTemp("", "crashsig-core-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, r); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return in.core(name, tmp.Name())
}
