package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/crashsig/crashsig/pipeline"
)

// errOwnOutput is matched (errors.Is) by the error for an input that is
// crashsig's own JSON Lines output (classify --json, buckets --json,
// explain --json): reading it as a crash log would invent incidents.
var errOwnOutput = errors.New("this is crashsig --json output, not a crash log")

// ownOutputError names the input that is crashsig's own output.
type ownOutputError struct{ name string }

func (e *ownOutputError) Error() string { return e.name + ": " + errOwnOutputHint.Error() }

func (e *ownOutputError) Unwrap() error { return errOwnOutput }

// looksLikeOwnJSON reports whether head, the start of a decompressed
// input, is crashsig's JSON Lines output: its first line a JSON object
// whose first key is "schema_version", as every crashsig --json record
// starts. Only the bytes at hand are looked at (a live pipe may not have
// given a whole line yet).
func looksLikeOwnJSON(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !bytes.HasPrefix(head, []byte("{")) {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(head, []byte(`"schema_version"`))
}

// peekHead returns what r holds at hand, up to n bytes, waiting only for
// the first read: on a pipe, what has arrived; on a file, a full buffer.
func peekHead(r *bufio.Reader, n int) []byte {
	if _, err := r.Peek(1); err != nil {
		return nil
	}
	head, _ := r.Peek(min(r.Buffered(), n))
	return head
}

// peekInput opens the input path ("-": stdin) as the pipeline does (a
// gzip, zstd, xz or bzip2 stream is decompressed) and returns it, a reader
// of its decompressed content that still holds what was peeked, and those
// bytes at hand (up to 4 KiB). in is nil, with no error, for a path that
// is not a regular file (the pipeline names the error or walks the
// directory); err is the pipeline's *InputError or *SkipError.
func peekInput(path string, stdin io.Reader) (in *pipeline.Input, r *bufio.Reader, head []byte, err error) {
	if path == "-" {
		in, err = pipeline.NewInput("-", stdin)
	} else {
		if fi, serr := os.Stat(path); serr != nil || !fi.Mode().IsRegular() {
			return nil, nil, nil, nil
		}
		in, err = pipeline.OpenFile(context.Background(), path)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	br := bufio.NewReaderSize(in.Reader(), 64<<10) // the Input's own reader when it is one
	if in.Kind != pipeline.ContentText {
		return in, br, nil, nil
	}
	return in, br, peekHead(br, 4096), nil
}

// screenedStdin is standard input as classify, explain and buckets give
// it to the pipeline: on the first Read it looks at what has arrived
// (waiting for one read only, so that a live pipe is not held up) and,
// for a gzip, zstd, xz or bzip2 stream, decompresses it as the pipeline
// would; crashsig's own JSON Lines output then fails the read with
// errOwnOutput. The pipeline sees the decompressed bytes.
type screenedStdin struct {
	raw io.Reader
	r   io.Reader // set by the first Read
	in  *pipeline.Input
	err error
}

func (s *screenedStdin) Read(p []byte) (int, error) {
	if s.r == nil && s.err == nil {
		s.open()
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.r.Read(p)
}

func (s *screenedStdin) open() {
	br := bufio.NewReaderSize(s.raw, 64<<10)
	head := peekHead(br, 4096)
	s.r = br
	if compressionOf(head) != "" {
		in, err := pipeline.NewInput("-", br)
		if err != nil {
			s.err = err // the pipeline passes its *InputError or *SkipError on
			return
		}
		s.in = in
		dbr := bufio.NewReaderSize(in.Reader(), 64<<10) // the Input's own reader
		s.r, head = dbr, nil
		if in.Kind == pipeline.ContentText {
			head = peekHead(dbr, 4096)
		}
	}
	if looksLikeOwnJSON(head) {
		s.err = errOwnOutputHint
	}
}

// errOwnOutputHint is errOwnOutput with what to do instead, for a reader
// whose errors the pipeline names.
var errOwnOutputHint = fmt.Errorf("%w (give the logs it was made from; crashsig report also reads buckets --json output)", errOwnOutput)

// Close releases the decompressor.
func (s *screenedStdin) Close() {
	if s.in != nil {
		s.in.Close()
	}
}

// screened is what screenInputs leaves for the pipeline.
type screened struct {
	paths []string       // the inputs to read
	stdin io.Reader      // standard input, screened
	std   *screenedStdin // nil when stdin is not read
}

// Close releases standard input's decompressor.
func (s *screened) Close() {
	if s.std != nil {
		s.std.Close()
	}
}

// screenInputs looks at the inputs named on the command line before the
// pipeline reads them, and refuses crashsig's own JSON Lines output
// (errOwnOutput) in a file (reported on st, and not read) or on standard
// input (the read fails; see screenedStdin). A directory's files are left
// to the pipeline, which skips *.json and *.jsonl by name.
func screenInputs(paths []string, stdin io.Reader, st *runStatus) *screened {
	s := &screened{stdin: stdin}
	for _, p := range paths {
		if p == "-" {
			if s.std == nil && stdin != nil {
				s.std = &screenedStdin{raw: stdin}
				s.stdin = s.std
			}
			s.paths = append(s.paths, p)
			continue
		}
		in, _, head, err := peekInput(p, nil)
		if err != nil || in == nil {
			s.paths = append(s.paths, p) // the pipeline says why, or walks the directory
			continue
		}
		in.Close()
		if looksLikeOwnJSON(head) {
			st.report(context.Background(), &ownOutputError{name: p})
			continue
		}
		s.paths = append(s.paths, p)
	}
	return s
}
