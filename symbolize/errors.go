package symbolize

import (
	"errors"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// The internal packages (symbolize/internal/...) cannot import this
// package, so they have their own sentinel errors, with the same texts.
// publicErr attaches this package's sentinel to an error that comes out of
// them, so errors.Is works with the documented names and no message
// changes. internalErrs is the table of correspondences.
var internalErrs = [...]struct{ internal, public error }{
	{elfimage.ErrNotELF, ErrNotELF},
	{elfimage.ErrNoDebugInfo, ErrNoDebugInfo},
	{elfimage.ErrDebuglinkCRC, ErrDebuglinkCRC},
	{elfimage.ErrBadDWARF, ErrBadDWARF},
	{elfimage.ErrClosed, ErrClosed},
	{elfimage.ErrTooLarge, ErrTooLarge},
}

// publicError is an internal error with the public sentinel it matches.
type publicError struct{ err, public error }

func (e *publicError) Error() string   { return e.err.Error() }
func (e *publicError) Unwrap() []error { return []error{e.err, e.public} }

// publicErr returns err with the public sentinel of the internal one it
// wraps attached; a *elfimage.BuildIDMismatch becomes a
// *BuildIDMismatchError. Other errors, and nil, are returned as they are.
func publicErr(err error) error {
	if err == nil {
		return nil
	}
	if m, ok := err.(*elfimage.BuildIDMismatch); ok {
		return &BuildIDMismatchError{Binary: m.Binary, DebugFile: m.DebugFile, BinaryID: m.BinaryID, DebugID: m.DebugID}
	}
	for _, p := range internalErrs {
		if errors.Is(err, p.internal) {
			return &publicError{err, p.public}
		}
	}
	return err
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
