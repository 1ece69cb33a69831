package main

import (
	"bufio"
	"context"
	"io"
	"os"

	"github.com/crashsig/crashsig/pipeline"
)

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
// bytes at hand (up to 4 KiB) when it is text or crashsig's own JSON
// output. in is nil, with no error, for a path that is not a regular file
// (the pipeline names the error or walks the directory); err is the
// pipeline's *InputError or *SkipError.
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
	if in.Kind != pipeline.ContentText && in.Kind != pipeline.ContentOwnJSON {
		return in, br, nil, nil
	}
	return in, br, peekHead(br, 4096), nil
}
