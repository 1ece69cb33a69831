package symbolize

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
	"github.com/crashsig/crashsig/symbolize/internal/unwind"
)

// Errors of the core reader. They are wrapped with detail; test with errors.Is.
var (
	// ErrNotCore means the input is not an ELF core file (ET_CORE).
	ErrNotCore = errors.New("not an ELF core file")
	// ErrUnsupportedCore means a core of an architecture or layout the
	// reader does not handle (only x86-64 little-endian cores are unwound).
	ErrUnsupportedCore = errors.New("unsupported core file")
	// ErrCorruptCore means the core's structure is damaged beyond use
	// (no thread could be read).
	ErrCorruptCore = errors.New("corrupt core file")
)

// CoreOptions configures OpenCore.
type CoreOptions struct {
	// Binaries are executables and shared libraries to use for the modules
	// of the core, like the files given to gdb. Each is matched to a module
	// by build-id, else by base name; a file left unmatched is taken for
	// the main executable. A file whose build-id differs from the one the
	// core recorded is still used (the caller asked for it), with a
	// BuildIDMismatch warning in Core.Mismatches and in the Crash notes.
	// A debug file among them (objcopy --only-keep-debug output: no code)
	// is matched by build-id only and used as its module's debug file; it
	// stands for the module's file only when no other file is found.
	Binaries []string
	// DebugDirs are directories of separate debug files, searched as
	// <dir>/.build-id/xx/yyyy.debug and <dir>/<debuglink name>.
	DebugDirs []string
	// Sysroot is prepended to the paths recorded in the core when looking
	// for module files on disk (as gdb's `set sysroot`). Files found there
	// or at the recorded paths are used only when their build-id matches.
	Sysroot string
	// NoDiskLookup disables opening the paths recorded in the core: only
	// Binaries are used (useful when the core comes from another machine).
	NoDiskLookup bool
	// Fetcher, when set, fetches by build-id what is not found on disk:
	// the file of a module (after Binaries and the recorded paths) and the
	// debug file of a module without DWARF (after DebugDirs). Nil: nothing
	// is fetched (see package symbolize/debuginfod for a client).
	Fetcher DebugFetcher
	// MaxThreads caps the threads read from the core (default 100000).
	MaxThreads int
	// MaxFrames caps the frames unwound per thread (default 512); a longer
	// stack is marked Truncated.
	MaxFrames int
	// MaxTotalFrames caps the frames of all threads together (default
	// 2,000,000, about 200 MB once symbolized), so that a damaged or hostile
	// core cannot make every thread walk a deep stack.
	MaxTotalFrames int
}

func (o *CoreOptions) maxThreads() int {
	if o.MaxThreads > 0 {
		return o.MaxThreads
	}
	return 100000
}

func (o *CoreOptions) maxTotalFrames() int {
	if o.MaxTotalFrames > 0 {
		return o.MaxTotalFrames
	}
	return 2000000
}

func (o *CoreOptions) maxFrames() int {
	if o.MaxFrames > 0 {
		return o.MaxFrames
	}
	return 512
}

// BuildIDMismatch reports a module file whose build-id differs from the
// one recorded in the core: symbols and unwinding from it are unreliable.
type BuildIDMismatch struct {
	Module      string // path recorded in the core
	File        string // file that was offered for it
	CoreBuildID string
	FileBuildID string
	// Used is true when the file was used anyway (given by the caller).
	Used bool
}

// Error implements error.
func (m *BuildIDMismatch) Error() string {
	use := "not used"
	if m.Used {
		use = "used anyway, symbols may be wrong"
	}
	fb := m.FileBuildID
	if fb == "" {
		fb = "none"
	}
	return fmt.Sprintf("build-id mismatch for %s: core has %s, %s has %s (%s)", m.Module, m.CoreBuildID, m.File, fb, use)
}

// CoreModule is one ELF object mapped in the process.
type CoreModule struct {
	// Path is the path recorded in the core (NT_FILE), or "[vdso]".
	Path string `json:"path"`
	// Start and End bound the module's file mappings.
	Start Addr `json:"start"`
	End   Addr `json:"end"`
	// Bias is the load bias: runtime address = link-time address + Bias.
	Bias Addr `json:"bias"`
	// BuildID is the GNU build-id read from the core's copy of the
	// module's first page (empty when the core did not keep it); when the
	// core lacks it, the file's build-id is used and BuildIDFromFile is set.
	BuildID         string `json:"build_id,omitempty"`
	BuildIDFromFile bool   `json:"build_id_from_file,omitempty"`
	// File is the file used for the module's CFI and symbols ("" if none).
	File string `json:"file,omitempty"`
	// DebugFile is the separate debug file found for it, if any.
	DebugFile string `json:"debug_file,omitempty"`
	// HasSymbols says whether a function symbol table or DWARF was found.
	HasSymbols bool `json:"has_symbols"`
	// HasDebugInfo says whether DWARF line information was available.
	HasDebugInfo bool `json:"has_debug_info"`
	IsMain       bool `json:"is_main,omitempty"`
	IsVDSO       bool `json:"is_vdso,omitempty"`

	elf       *elf.File         // file used for CFI (or the in-memory vDSO)
	mem       *io.SectionReader // the vDSO's bytes in the core
	closer    io.Closer
	cfi       *unwind.CFI
	cfiLoaded bool
	res       pcResolver
	resLoaded bool
	// fetchedDebug is the debug file CoreOptions.Fetcher returned for the module.
	fetchedDebug string
}

// Name returns the module's base name ("libc.so.6").
func (m *CoreModule) Name() string { return filepath.Base(m.Path) }

// segment is one PT_LOAD of the core.
type segment struct {
	vaddr, memsz, filesz uint64
	off                  int64
	exec                 bool
}

// CoreThread is one thread of the core, in the order of its NT_PRSTATUS.
type CoreThread struct {
	// TID is the kernel thread id (LWP).
	TID int64 `json:"tid"`
	// Index is the position of the thread's NT_PRSTATUS in the core
	// (0 = the thread that dumped).
	Index int `json:"index"`
	// CurSig is pr_cursig (in kernel cores the dumping signal, for every thread).
	CurSig int `json:"cursig"`
	// SigInfo is the NT_SIGINFO recorded for the thread (gdb writes one per
	// thread, the kernel only one, for the dumping thread).
	SigInfo *SigInfo `json:"siginfo,omitempty"`
	// PC, SP and FP are the thread's rip, rsp and rbp.
	PC Addr `json:"pc"`
	SP Addr `json:"sp"`
	FP Addr `json:"fp"`
	// Frames is the unwound stack, innermost first.
	Frames []CoreFrame `json:"frames"`
	// Truncated is set when unwinding stopped before the outermost frame;
	// TruncatedReason says why.
	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncated_reason,omitempty"`
	// SignalFrames are the signal frames found on the stack, innermost first.
	SignalFrames []SignalFrame `json:"signal_frames,omitempty"`

	regs [corefile.NumRegs]uint64
}

// Core is an opened ELF core file. A Core is not safe for concurrent use.
type Core struct {
	// Path names the core ("" when opened from a reader).
	Path string
	// PsInfo is the process description (NT_PRPSINFO); HasPsInfo says
	// whether the core had one.
	PsInfo    PsInfo
	HasPsInfo bool
	// ExecFn is the executable path from the auxiliary vector, when readable.
	ExecFn string
	// Threads are the threads in core order.
	Threads []*CoreThread
	// Modules are the mapped ELF objects, sorted by address.
	Modules []*CoreModule
	// Mismatches lists module files whose build-id differs from the core's.
	Mismatches []*BuildIDMismatch
	// Notes records observations: missing files, skipped notes, limits hit.
	Notes []string

	r       io.ReaderAt
	size    int64
	closer  io.Closer
	opts    CoreOptions
	segs    []segment
	files   []corefile.FileMapping
	auxv    map[uint64]uint64
	fileFDs map[string]*os.File
	closed  bool
	crashed int // index into Threads of the crashing thread
	dem     *Demangler
}

// IsCore reports whether r starts with an ELF header of type ET_CORE.
func IsCore(r io.ReaderAt) bool {
	var h [18]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return false
	}
	if string(h[:4]) != elf.ELFMAG {
		return false
	}
	var t uint16
	if h[elf.EI_DATA] == byte(elf.ELFDATA2MSB) {
		t = binary.BigEndian.Uint16(h[16:])
	} else {
		t = binary.LittleEndian.Uint16(h[16:])
	}
	return elf.Type(t) == elf.ET_CORE
}

// OpenCore opens the core file at path, reads its notes, memory map and
// modules, and unwinds every thread. Call Crash for the symbolized result
// and Close when done.
func OpenCore(ctx context.Context, path string, opts CoreOptions) (*Core, error) {
	// Only a regular file is opened: opening a FIFO blocks until a writer
	// comes (a core is read at random, never from a pipe).
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file (%v)", path, ErrNotCore, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	c, err := NewCore(ctx, f, st.Size(), opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	c.closer = f
	return c, nil
}

// NewCore reads a core from r (size bytes). Module files named in the core
// or in opts are opened from disk. r must stay readable until Close.
func NewCore(ctx context.Context, r io.ReaderAt, size int64, opts CoreOptions) (c *Core, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("%w: internal error reading core: %v", ErrCorruptCore, p)
		}
	}()
	if !IsCore(r) {
		return nil, ErrNotCore
	}
	ef, err := elfimage.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptCore, err)
	}
	if ef.Class != elf.ELFCLASS64 || ef.Data != elf.ELFDATA2LSB || ef.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("%w: %v %v %v (only x86-64 is supported)", ErrUnsupportedCore, ef.Class, ef.Data, ef.Machine)
	}
	c = &Core{r: r, size: size, opts: opts, auxv: map[uint64]uint64{}, fileFDs: map[string]*os.File{}, dem: NewDemangler(0)}
	if err := c.readProgs(ctx, ef); err != nil {
		c.Close()
		return nil, err
	}
	if len(c.Threads) == 0 {
		c.Close()
		return nil, fmt.Errorf("%w: no NT_PRSTATUS note", ErrCorruptCore)
	}
	c.buildModules(ctx)
	if err := c.unwindAll(ctx); err != nil {
		c.Close()
		return nil, err
	}
	c.crashed = c.findCrashed()
	return c, nil
}

// Close releases the files the Core opened. Crash and ReadMemory fail with
// ErrClosed after it, and ThreadFrames returns nil: the modules' files are
// what symbolizes the frames.
func (c *Core) Close() error {
	c.closed = true
	for _, m := range c.Modules {
		if m.closer != nil {
			m.closer.Close()
			m.closer = nil
		}
		if m.res != nil {
			m.res.close()
			m.res = nil
		}
	}
	paths := make([]string, 0, len(c.fileFDs))
	for p := range c.fileFDs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if f := c.fileFDs[p]; f != nil {
			f.Close()
		}
	}
	c.fileFDs = map[string]*os.File{}
	if c.closer != nil {
		err := c.closer.Close()
		c.closer = nil
		return err
	}
	return nil
}

// coreClosedError is the error of a Core used after Close; it matches
// ErrClosed.
type coreClosedError struct{ path string }

func (e *coreClosedError) Error() string        { return "symbolize: core " + e.path + " is closed" }
func (e *coreClosedError) Is(target error) bool { return target == ErrClosed }

func (c *Core) errClosed() error {
	p := c.Path
	if p == "" {
		p = "(reader)"
	}
	return &coreClosedError{p}
}

func (c *Core) note(format string, args ...any) {
	if len(c.Notes) < 200 {
		c.Notes = append(c.Notes, fmt.Sprintf(format, args...))
	}
}

// readProgs reads PT_LOAD segments and the notes.
func (c *Core) readProgs(ctx context.Context, ef *elf.File) error {
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		fsz := p.Filesz
		if int64(p.Off) < 0 || int64(p.Off) > c.size {
			fsz = 0
		} else if rem := uint64(c.size) - p.Off; fsz > rem {
			fsz = rem // truncated core: the rest of the segment is gone
		}
		if fsz < p.Filesz && len(c.Notes) < 10 {
			c.note("core truncated: segment at %#x has %d of %d bytes", p.Vaddr, fsz, p.Filesz)
		}
		c.segs = append(c.segs, segment{vaddr: p.Vaddr, memsz: p.Memsz, filesz: fsz, off: int64(p.Off), exec: p.Flags&elf.PF_X != 0})
	}
	sort.SliceStable(c.segs, func(i, j int) bool { return c.segs[i].vaddr < c.segs[j].vaddr })
	var cur *CoreThread
	maxT := c.opts.maxThreads()
	skipped := 0
	for _, p := range ef.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		off, sz := int64(p.Off), int64(p.Filesz)
		if off < 0 || off > c.size {
			continue
		}
		if sz > c.size-off {
			sz = c.size - off
			c.note("core truncated inside the notes")
		}
		err := corefile.WalkNotes(c.r, off, sz, func(n corefile.Note) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if n.Name != "CORE" {
				return nil
			}
			switch n.Type {
			case corefile.NTPrstatus:
				if len(c.Threads) >= maxT {
					skipped++
					cur = nil
					return nil
				}
				b, err := corefile.ReadNoteDesc(c.r, n, 4096)
				if err != nil {
					return err
				}
				ps, ok := corefile.ParsePrstatus(b)
				if !ok {
					c.note("NT_PRSTATUS of %d bytes skipped", len(b))
					cur = nil
					return nil
				}
				cur = &CoreThread{TID: int64(ps.PID), Index: len(c.Threads), CurSig: int(ps.CurSig), regs: ps.Regs}
				cur.PC, cur.SP, cur.FP = Addr(ps.Regs[corefile.RIP]), Addr(ps.Regs[corefile.RSP]), Addr(ps.Regs[corefile.RBP])
				c.Threads = append(c.Threads, cur)
			case corefile.NTSiginfo:
				b, err := corefile.ReadNoteDesc(c.r, n, 4096)
				if err != nil {
					return err
				}
				si := parseSigInfo(b)
				if cur != nil && cur.SigInfo == nil {
					cur.SigInfo = &si
				}
			case corefile.NTPrpsinfo:
				b, err := corefile.ReadNoteDesc(c.r, n, 4096)
				if err != nil {
					return err
				}
				if ps, ok := corefile.ParsePrpsinfo(b); ok && !c.HasPsInfo {
					c.PsInfo, c.HasPsInfo = PsInfo(ps), true
				}
			case corefile.NTAuxv:
				b, err := corefile.ReadNoteDesc(c.r, n, corefile.MaxAuxvDesc)
				if err != nil {
					c.note("%v", err)
					return nil
				}
				for i := 0; i+16 <= len(b); i += 16 {
					k, v := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
					if k == 0 {
						break
					}
					c.auxv[k] = v
				}
			case corefile.NTFile:
				b, err := corefile.ReadNoteDesc(c.r, n, corefile.MaxNoteDesc)
				if err != nil {
					c.note("%v", err)
					return nil
				}
				fm, err := corefile.ParseNTFile(b)
				if err != nil {
					c.note("%v", err)
					return nil
				}
				if c.files == nil {
					c.files = fm
				}
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.note("notes damaged: %v", err)
		}
	}
	if skipped > 0 {
		c.note("%d threads beyond the limit of %d were not read", skipped, maxT)
	}
	if !c.HasPsInfo {
		c.note("core has no NT_PRPSINFO: process name and arguments unknown")
	}
	if len(c.files) == 0 {
		c.note("core has no NT_FILE note: module map unknown, frames are not attributed to modules")
	}
	sort.SliceStable(c.files, func(i, j int) bool { return c.files[i].Start < c.files[j].Start })
	if a, ok := c.auxv[corefile.AtExecFn]; ok {
		if s, err := c.readCString(a, corefile.MaxPathLen); err == nil {
			c.ExecFn = s
		}
	}
	return nil
}

// segFor returns the PT_LOAD segment containing addr.
func (c *Core) segFor(addr uint64) *segment {
	i := sort.Search(len(c.segs), func(i int) bool { return c.segs[i].vaddr+c.segs[i].memsz > addr })
	if i < len(c.segs) && c.segs[i].vaddr <= addr {
		return &c.segs[i]
	}
	return nil
}

// fileFor returns the NT_FILE mapping containing addr.
func (c *Core) fileFor(addr uint64) *corefile.FileMapping {
	i := sort.Search(len(c.files), func(i int) bool { return c.files[i].End > addr })
	if i < len(c.files) && c.files[i].Start <= addr {
		return &c.files[i]
	}
	return nil
}

// errNoMemory means the address is not in the core nor in a known file.
var errNoMemory = errors.New("address not in the core")

// ReadMemory reads process memory at addr into b, from the core's segments
// or, for file-backed pages the core omitted, from the module files that
// matched the core. It returns the bytes read and an error if fewer than
// len(b) were available.
func (c *Core) ReadMemory(b []byte, addr uint64) (int, error) {
	if c.closed {
		return 0, c.errClosed()
	}
	n := 0
	for n < len(b) {
		k, err := c.readSome(b[n:], addr+uint64(n))
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, fmt.Errorf("%w: %#x", errNoMemory, addr+uint64(n))
		}
	}
	return n, nil
}

func (c *Core) readSome(b []byte, addr uint64) (int, error) {
	if s := c.segFor(addr); s != nil && addr-s.vaddr < s.filesz {
		rel := addr - s.vaddr
		m := min(uint64(len(b)), s.filesz-rel)
		return c.r.ReadAt(b[:m], s.off+int64(rel))
	}
	fm := c.fileFor(addr)
	if fm == nil {
		return 0, fmt.Errorf("%w: %#x", errNoMemory, addr)
	}
	f := c.fileFDs[fm.Path]
	if f == nil {
		return 0, fmt.Errorf("%w: %#x (file %s not available)", errNoMemory, addr, fm.Path)
	}
	rel := addr - fm.Start
	m := min(uint64(len(b)), fm.End-addr)
	k, err := f.ReadAt(b[:m], int64(fm.Offset+rel))
	if err == io.EOF && k > 0 {
		err = nil
	}
	return k, err
}

func (c *Core) readU64(addr uint64) (uint64, bool) {
	var b [8]byte
	if _, err := c.ReadMemory(b[:], addr); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

func (c *Core) readCString(addr uint64, limit int) (string, error) {
	var out []byte
	var buf [64]byte
	for len(out) < limit {
		n, err := c.ReadMemory(buf[:], addr+uint64(len(out)))
		if i := strings.IndexByte(string(buf[:n]), 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:n]...)
		if err != nil {
			return "", err
		}
	}
	return "", errors.New("string too long")
}

// isExec reports whether addr lies in an executable mapping of the
// process: an executable PT_LOAD of the core, or (gdb leaves file-backed
// text out of its cores entirely) an executable PT_LOAD of the module file
// mapped there.
func (c *Core) isExec(addr uint64) bool {
	if s := c.segFor(addr); s != nil {
		return s.exec
	}
	if c.fileFor(addr) == nil {
		return false
	}
	m := c.moduleFor(addr)
	if m == nil || m.elf == nil {
		return false
	}
	link := addr - uint64(m.Bias)
	for _, p := range m.elf.Progs {
		if p.Type == elf.PT_LOAD && link >= p.Vaddr && link-p.Vaddr < p.Memsz {
			return p.Flags&elf.PF_X != 0
		}
	}
	return false
}

// moduleFor returns the module whose mappings contain addr.
func (c *Core) moduleFor(addr uint64) *CoreModule {
	if i := c.moduleIndex(addr); i >= 0 {
		return c.Modules[i]
	}
	return nil
}

// moduleIndex returns the index in Modules of the module whose mappings
// contain addr, or -1.
func (c *Core) moduleIndex(addr uint64) int {
	i := sort.Search(len(c.Modules), func(i int) bool { return uint64(c.Modules[i].End) > addr })
	if i < len(c.Modules) && uint64(c.Modules[i].Start) <= addr {
		return i
	}
	return -1
}

// memReader is an io.ReaderAt over process memory starting at base.
type memReader struct {
	c    *Core
	base uint64
}

// ReadAt implements io.ReaderAt; a short read returns io.EOF.
func (m memReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := m.c.ReadMemory(b, m.base+uint64(off))
	if err != nil && n < len(b) {
		return n, io.EOF
	}
	return n, nil
}
