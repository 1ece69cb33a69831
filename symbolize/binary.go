package symbolize

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/crashsig/crashsig/symbolize/internal/dwarfindex"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// Errors returned by OpenBinary, NewBinary and (*Binary).Lookup. Test with
// errors.Is; a *BuildIDMismatchError also matches ErrBuildIDMismatch.
var (
	// ErrNotELF means the input is not an ELF file.
	ErrNotELF = elfimage.ErrNotELF
	// ErrCompressed means the input is a gzip, zstd, xz or bzip2 stream:
	// a binary or debug file is read in place (random access) and must be
	// decompressed first. Such an error matches ErrNotELF too. (Cores and
	// logs are decompressed by package pipeline.)
	ErrCompressed = elfimage.ErrCompressed
	// ErrNoDebugInfo means neither the binary nor any debug file found for it
	// has DWARF. Lookups still work from the symbol table; OpenBinary only
	// returns it wrapped in a *DebugInfoError when BinaryOptions.RequireDebugInfo is set.
	ErrNoDebugInfo = elfimage.ErrNoDebugInfo
	// ErrBuildIDMismatch means a debug file was found but its build-id differs
	// from the binary's.
	ErrBuildIDMismatch = errors.New("symbolize: debug file build-id does not match binary")
	// ErrDebuglinkCRC means a .gnu_debuglink file was found but its CRC32
	// does not match the one recorded in the binary.
	ErrDebuglinkCRC = elfimage.ErrDebuglinkCRC
	// ErrBadDWARF means the debug info is malformed. Lookups that hit the
	// malformed part return it; the rest of the binary stays usable.
	ErrBadDWARF = elfimage.ErrBadDWARF
	// ErrClosed is returned by Lookup after Close (and by Core.Crash and
	// Core.ReadMemory after Core.Close).
	ErrClosed = elfimage.ErrClosed
	// ErrTooLarge means a section (after decompression) exceeds BinaryOptions.MaxSectionSize.
	ErrTooLarge = elfimage.ErrTooLarge
)

// BuildIDMismatchError reports a debug file whose build-id is not the
// binary's. It matches ErrBuildIDMismatch with errors.Is.
type BuildIDMismatchError struct {
	Binary    string // path of the binary ("" for a reader)
	DebugFile string // path of the rejected debug file
	BinaryID  string // hex build-id of the binary
	DebugID   string // hex build-id of the debug file ("" if it has none)
}

// Error says which debug file was refused for which binary, with both
// build-ids.
func (e *BuildIDMismatchError) Error() string {
	return fmt.Sprintf("symbolize: debug file %s has build-id %q, binary %s has %q", e.DebugFile, e.DebugID, e.Binary, e.BinaryID)
}

// Is makes errors.Is(err, ErrBuildIDMismatch) true.
func (e *BuildIDMismatchError) Is(target error) bool { return target == ErrBuildIDMismatch }

// DebugInfoError wraps why no usable debug file was found: each candidate
// tried and why it was rejected (build-id mismatch, CRC mismatch, unreadable).
type DebugInfoError struct {
	Binary string
	Tried  []error // one per rejected candidate, in the order tried
}

// Error names the binary and what was searched for its debug information.
func (e *DebugInfoError) Error() string {
	s := "symbolize: no DWARF debug info for " + e.Binary
	for _, t := range e.Tried {
		s += "; " + t.Error()
	}
	return s
}

// Unwrap returns ErrNoDebugInfo and the per-candidate errors.
func (e *DebugInfoError) Unwrap() []error { return append([]error{ErrNoDebugInfo}, e.Tried...) }

// BinaryOptions says where to look for debug information.
type BinaryOptions struct {
	// DebugFile is an explicit separate debug file (objcopy --only-keep-debug
	// output). Its build-id must match the binary's when both have one.
	DebugFile string
	// DebugDirs are roots searched as <dir>/.build-id/xx/rest.debug and
	// <dir>/<binary's dir>/<debuglink> (like /usr/lib/debug).
	DebugDirs []string
	// RequireDebugInfo makes OpenBinary fail with a *DebugInfoError when no
	// DWARF is found; by default the binary opens with symbols only.
	RequireDebugInfo bool
	// MaxSectionSize bounds the size of one (decompressed) debug section;
	// 0 means 8 GiB. Larger sections are refused with ErrTooLarge.
	MaxSectionSize int64
	// Demangler demangles names; nil uses a private cache per Binary.
	Demangler *Demangler
}

// Binary is an opened ELF executable or shared object with its debug
// information. Its methods are safe for concurrent use. Tables are parsed
// lazily, one compile unit at a time, and stay resident until Close.
type Binary struct {
	path    string
	main    *elfimage.Image // the binary itself
	debug   *elfimage.Image // where DWARF lives (main, or a separate debug file)
	typ     elf.Type
	buildID string
	dbgPath string
	warns   []error

	syms elfimage.Symbols
	dw   *dwarfindex.Data // nil when no DWARF
	dem  *Demangler
	// demangle is dem's uncached demangling, made once (a method value
	// made per lookup would allocate).
	demangle func(string) string
	closed   atomic.Bool
	life     sync.RWMutex // lookups hold it shared; Close takes it exclusively before unmapping
	// loadBase is the lowest PT_LOAD p_vaddr rounded down to a page.
	loadBase uint64
}

// OpenBinary opens the ELF file at path, memory-maps it read-only and
// finds its debug information (see BinaryOptions). The Binary must be
// closed with Close.
func OpenBinary(path string, opts BinaryOptions) (b *Binary, err error) {
	img, err := elfimage.Open(path, imageOptions(opts))
	if err != nil {
		return nil, publicErr(err)
	}
	defer func() {
		if err != nil {
			img.Close()
		}
	}()
	return newBinary(path, img, opts)
}

// NewBinary reads an ELF image from r (size bytes). Sections that are
// needed are read into memory on first use; r must stay readable until
// Close. Separate debug files are looked up on disk only when
// opts.DebugFile or opts.DebugDirs name them (a reader has no directory).
func NewBinary(r io.ReaderAt, size int64, opts BinaryOptions) (*Binary, error) {
	img, err := elfimage.New(r, size, "", imageOptions(opts))
	if err != nil {
		return nil, publicErr(err)
	}
	b, err := newBinary("", img, opts)
	if err != nil {
		img.Close()
		return nil, err
	}
	return b, nil
}

func newBinary(path string, img *elfimage.Image, opts BinaryOptions) (b *Binary, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%w: %v", ErrBadDWARF, r)
		}
	}()
	b = &Binary{path: path, main: img, typ: img.File.Type, dem: opts.Demangler}
	if b.dem == nil {
		b.dem = NewDemangler(0)
	}
	b.demangle = b.dem.Once
	b.buildID = img.BuildID()
	b.loadBase = img.LoadBase()
	b.debug = img
	if b.typ == elf.ET_REL {
		// A compiler's object file: nothing runs at its addresses, and
		// its DWARF (offsets into .debug_str, .debug_line, …) is only
		// right after the relocations the linker applies, which are not.
		b.warns = append(b.warns, fmt.Errorf("symbolize: %s is a relocatable object (ET_REL), not a linked binary: its addresses are section offsets and its DWARF is not relocated, so lines and inline frames are missing; symbolize the executable or shared object it was linked into", displayName(path)))
	}
	if !img.HasDWARF() {
		dbg, dpath, tried := elfimage.LocateDebugFile(path, img, imageOptions(opts))
		if dbg != nil {
			b.debug, b.dbgPath = dbg, dpath
		}
		tried = publicErrs(tried)
		b.warns = tried
		if dbg == nil && opts.RequireDebugInfo {
			return nil, &DebugInfoError{Binary: path, Tried: tried}
		}
	} else if opts.DebugFile != "" {
		// An explicit debug file overrides DWARF in the binary only if the binary has none.
		b.warns = append(b.warns, fmt.Errorf("symbolize: %s has DWARF, ignoring debug file %s", path, opts.DebugFile))
	}
	// Symbols: the binary's .symtab, else the debug file's, else .dynsym.
	// They are sorted on a second core while the DWARF index is built
	// (together about two thirds of the time to the first answer).
	// The deferred receive also runs on a panic, so the images are never
	// closed under the goroutine's feet.
	symsc := make(chan elfimage.Symbols, 1)
	go func() { symsc <- elfimage.LoadSymbols(img, b.debug) }()
	waitSyms := sync.OnceValue(func() elfimage.Symbols { return <-symsc })
	defer func() {
		if st := waitSyms(); b != nil {
			b.syms = st
		}
	}()
	if b.debug.HasDWARF() {
		// .dwo files of split DWARF are also looked for beside the
		// binary and its debug file (internal/dwarfindex/split.go).
		dwOpts := dwarfindex.Options{MaxSection: opts.MaxSectionSize, FollowDWO: path != ""}
		for _, p := range []string{path, b.dbgPath} {
			if p != "" && !slices.Contains(dwOpts.DWODirs, filepath.Dir(p)) {
				dwOpts.DWODirs = append(dwOpts.DWODirs, filepath.Dir(p))
			}
		}
		dw, err := dwarfindex.New(b.debug, dwOpts)
		err = publicErr(err)
		if err != nil {
			if opts.RequireDebugInfo {
				waitSyms()
				if b.debug != img {
					b.debug.Close()
				}
				return nil, err
			}
			b.warns = append(b.warns, err)
		} else {
			b.dw = dw
		}
	}
	return b, nil
}

// displayName is path, or a word for a Binary read from a reader.
func displayName(path string) string {
	if path == "" {
		return "the image"
	}
	return path
}

// Path returns the path the Binary was opened from ("" for NewBinary).
func (b *Binary) Path() string { return b.path }

// DebugPath returns the separate debug file in use, or "" when the DWARF
// is in the binary itself (or absent).
func (b *Binary) DebugPath() string { return b.dbgPath }

// BuildID returns the GNU build-id as lowercase hex, or "" if the binary has none.
func (b *Binary) BuildID() string { return b.buildID }

// Type returns the ELF file type: elf.ET_EXEC for a fixed-address
// executable, elf.ET_DYN for a PIE executable or shared object.
func (b *Binary) Type() elf.Type { return b.typ }

// IsPIE reports whether the binary is position independent (ET_DYN), so
// that absolute PCs must have the load bias subtracted before Lookup.
func (b *Binary) IsPIE() bool { return b.typ == elf.ET_DYN }

// LoadBase returns the link-time address of the first loadable segment
// (page aligned): 0 for PIE and shared objects, 0x400000 for a classic
// non-PIE x86-64 executable. Note that module+offset frames (ASAN,
// glibc backtrace_symbols) are relative to the load bias, which is 0 for
// a non-PIE executable, so their offset is already a file address.
func (b *Binary) LoadBase() uint64 { return b.loadBase }

// HasDWARF reports whether DWARF debug info is available.
func (b *Binary) HasDWARF() bool { return b.dw != nil }

// Warnings returns the non-fatal problems met while opening: rejected
// debug file candidates (with their typed errors), unreadable sections.
// It is cheap; the .dwo files of split DWARF are checked by MissingDWO.
func (b *Binary) Warnings() []error { return append([]error(nil), b.warns...) }

// MissingDWO reports the skeleton units of split DWARF (-gsplit-dwarf)
// that lookups have met so far and whose .dwo file was not found (not
// present, another build's, or not looked for because the Binary came
// from NewBinary): their functions have no inline frames and no DWARF
// names. It returns nil when there are none. Call it after a batch of
// lookups; it is cheap, and the same lookups give the same text.
func (b *Binary) MissingDWO() error {
	if b.closed.Load() {
		return ErrClosed
	}
	b.life.RLock()
	defer b.life.RUnlock()
	if b.dw == nil || b.closed.Load() {
		return nil
	}
	return b.dw.SplitWarning()
}

// Close unmaps the files. Strings returned by earlier lookups stay valid.
// Lookups after Close return ErrClosed.
func (b *Binary) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.life.Lock()
	defer b.life.Unlock()
	var err error
	if b.dw != nil {
		b.dw.Close()
	}
	if b.debug != nil && b.debug != b.main {
		err = b.debug.Close()
	}
	if e := b.main.Close(); e != nil && err == nil {
		err = e
	}
	return err
}

// openFileSize returns the size of an open file.
func openFileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
