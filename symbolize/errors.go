package symbolize

import (
	"errors"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// The internal packages (symbolize/internal/...) cannot import this
// package. The sentinel errors this package documents (ErrNotELF,
// ErrNoDebugInfo, …) are therefore declared in internal/elfimage and are the
// same values here (binary.go), so errors.Is works on errors from either
// side without any wrapping. Only the build-id mismatch, a type, is
// converted at the boundary.

// publicErr returns err with a *elfimage.BuildIDMismatch anywhere in its
// chain turned into this package's *BuildIDMismatchError (which also
// matches ErrBuildIDMismatch). Other errors, and nil, are returned as they
// are.
func publicErr(err error) error {
	var m *elfimage.BuildIDMismatch
	if err == nil || !errors.As(err, &m) {
		return err
	}
	return &BuildIDMismatchError{Binary: m.Binary, DebugFile: m.DebugFile, BinaryID: m.BinaryID, DebugID: m.DebugID}
}

// publicErrs applies publicErr to each error of errs, in place.
func publicErrs(errs []error) []error {
	for i, e := range errs {
		errs[i] = publicErr(e)
	}
	return errs
}

// imageOptions are the elfimage options of opts.
func imageOptions(opts BinaryOptions) elfimage.Options {
	return elfimage.Options{MaxSection: opts.MaxSectionSize, DebugFile: opts.DebugFile, DebugDirs: opts.DebugDirs}
}
