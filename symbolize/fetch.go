package symbolize

import (
	"context"
	"fmt"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// DebugFetcher fetches files by GNU build-id from a symbol server. The
// debuginfod client of package symbolize/debuginfod implements it; the
// library never fetches anything unless the caller sets one (in
// CoreOptions.Fetcher, or by calling FetchDebugFile before OpenBinary).
// Implementations must return a local path of a file whose build-id was
// verified, and must be safe for concurrent use.
type DebugFetcher interface {
	// FetchDebugInfo returns the path of the debug file (or unstripped
	// binary) with that build-id.
	FetchDebugInfo(ctx context.Context, buildID string) (string, error)
	// FetchExecutable returns the path of the executable or shared object
	// with that build-id.
	FetchExecutable(ctx context.Context, buildID string) (string, error)
}

// FetchDebugFile returns the path of a debug file for the ELF binary at
// path from f, for BinaryOptions.DebugFile. It returns "" and no error when
// the binary has DWARF already, and an error when the binary has no
// build-id (a symbol server indexes by build-id only) or f has no file for it.
func FetchDebugFile(ctx context.Context, f DebugFetcher, path string) (string, error) {
	img, err := elfimage.Open(path, elfimage.Options{})
	if err != nil {
		return "", publicErr(err)
	}
	defer img.Close()
	if img.HasDWARF() {
		return "", nil
	}
	id := img.BuildID()
	if id == "" {
		return "", fmt.Errorf("symbolize: %s has no build-id to fetch its debug file by", path)
	}
	return f.FetchDebugInfo(ctx, id)
}
