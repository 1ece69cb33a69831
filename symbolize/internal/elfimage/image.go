package elfimage

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crashsig/crashsig/internal/magic"
)

const defaultMaxSection = 8 << 30

// Image is one opened ELF file: memory-mapped (data != nil) or read
// through an io.ReaderAt. Section contents are mmap slices when the section
// is stored uncompressed, else decompressed once into the heap.
type Image struct {
	path   string
	data   []byte // whole file when memory-mapped
	unmap  func() error
	ra     io.ReaderAt
	size   int64
	File   *elf.File
	Order  binary.ByteOrder
	is64   bool
	maxSec int64

	mu    sync.Mutex
	cache map[string]secData
}

type secData struct {
	b   []byte
	err error
}

// Open maps the ELF file at path read-only (or, where mmap fails, reads
// it through the file) and parses its headers.
func Open(path string, opts Options) (*Image, error) {
	// Only a regular file is opened: opening a FIFO blocks until a writer
	// comes, and a directory or a device is no ELF file either.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: not a regular file (%v)", ErrNotELF, path, st.Mode().Type())
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	size, err := FileSize(fh)
	if err != nil {
		return nil, err
	}
	data, unmap, err := mmapFile(fh, size)
	if err != nil {
		// Fall back to reading through the file handle.
		f2, err2 := os.Open(path)
		if err2 != nil {
			return nil, err
		}
		img, err := New(f2, size, path, opts)
		if err != nil {
			f2.Close()
			return nil, err
		}
		img.unmap = f2.Close
		return img, nil
	}
	img, err := newELFImage(bytes.NewReader(data), size, path, opts)
	if err != nil {
		unmap()
		return nil, err
	}
	img.data, img.unmap = data, unmap
	return img, nil
}

// New parses the ELF headers of r (size bytes); sections are read from r
// on first use. path only names the image in errors.
func New(r io.ReaderAt, size int64, path string, opts Options) (*Image, error) {
	return newELFImage(r, size, path, opts)
}

func newELFImage(r io.ReaderAt, size int64, path string, opts Options) (img *Image, err error) {
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, fmt.Errorf("%w: %s: %v", ErrNotELF, path, p)
		}
	}()
	var head [6]byte
	n, _ := r.ReadAt(head[:], 0)
	if n < 4 || string(head[:4]) != elf.ELFMAG {
		if c := magic.Compression(head[:n]); c != "" {
			return nil, fmt.Errorf("%w: %s: %s stream: %w", ErrNotELF, path, c, ErrCompressed)
		}
		return nil, fmt.Errorf("%w: %s", ErrNotELF, path)
	}
	f, err := NewFile(r)
	if err != nil {
		if end, ok := headersEnd(r); ok && size >= 0 && end > uint64(size) {
			return nil, fmt.Errorf("%w: %s: truncated: its headers end at byte %d, the file has %d (%v)", ErrNotELF, path, end, size, err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrNotELF, path, err)
	}
	max := opts.MaxSection
	if max <= 0 {
		max = defaultMaxSection
	}
	return &Image{path: path, ra: r, size: size, File: f, Order: f.ByteOrder,
		is64: f.Class == elf.ELFCLASS64, maxSec: max, cache: map[string]secData{}}, nil
}

// Close drops the section cache and unmaps the file.
func (m *Image) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cache = nil
	if m.unmap != nil {
		u := m.unmap
		m.unmap = nil
		m.data = nil
		return u()
	}
	return nil
}

// FindSection returns the section called name, or its .zdebug_ form.
func (m *Image) FindSection(name string) *elf.Section {
	if s := m.File.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
		return s
	}
	if strings.HasPrefix(name, ".debug_") {
		if s := m.File.Section(".zdebug_" + name[7:]); s != nil && s.Type != elf.SHT_NOBITS {
			return s
		}
	}
	return nil
}

// Section returns the (decompressed) contents of a section, nil if absent.
func (m *Image) Section(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache == nil {
		return nil, ErrClosed
	}
	if c, ok := m.cache[name]; ok {
		return c.b, c.err
	}
	b, err := m.readSection(name)
	m.cache[name] = secData{b, err}
	return b, err
}

// SectionParallel is section for concurrent warm-up: the decompression
// runs outside the lock, the result is stored unless another caller won.
func (m *Image) SectionParallel(name string) {
	m.mu.Lock()
	_, done := m.cache[name]
	closed := m.cache == nil
	m.mu.Unlock()
	if done || closed {
		return
	}
	b, err := m.readSection(name)
	m.mu.Lock()
	if m.cache != nil {
		if _, ok := m.cache[name]; !ok {
			m.cache[name] = secData{b, err}
		}
	}
	m.mu.Unlock()
}

func (m *Image) readSection(name string) (b []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("%w: section %s: %v", ErrBadDWARF, name, p)
		}
	}()
	s := m.FindSection(name)
	if s == nil {
		return nil, nil
	}
	if s.Offset > uint64(m.size) || s.FileSize > uint64(m.size)-s.Offset {
		return nil, fmt.Errorf("%w: section %s lies outside the file", ErrBadDWARF, name)
	}
	if strings.HasPrefix(s.Name, ".zdebug_") {
		return m.readZdebug(s)
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		if int64(s.Size) > m.maxSec || s.Size > 2048*s.FileSize+(1<<20) {
			return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, name, s.Size)
		}
		buf := make([]byte, s.Size)
		if _, err := io.ReadFull(s.Open(), buf); err != nil {
			return nil, fmt.Errorf("%w: decompressing %s: %v", ErrBadDWARF, name, err)
		}
		return buf, nil
	}
	if int64(s.FileSize) > m.maxSec {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, name, s.FileSize)
	}
	if m.data != nil {
		return m.data[s.Offset : s.Offset+s.FileSize : s.Offset+s.FileSize], nil
	}
	buf := make([]byte, s.FileSize)
	if _, err := m.ra.ReadAt(buf, int64(s.Offset)); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// Progressive is a compressed section inflated by a background goroutine
// into buf; readers wait for the prefix they need.
type Progressive struct {
	Buf     []byte
	filled  atomic.Int64 // bytes of buf ready; written only by the inflater
	mu      sync.Mutex
	cond    *sync.Cond
	done    bool
	err     error
	stopped atomic.Bool
	exited  chan struct{}
}

// StartProgressive starts inflating an SHF_COMPRESSED section in the
// background. It returns nil (and no error) for a section that is absent
// or stored uncompressed.
func (m *Image) StartProgressive(name string) (*Progressive, error) {
	s := m.File.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED == 0 {
		return nil, nil
	}
	if s.Offset > uint64(m.size) || s.FileSize > uint64(m.size)-s.Offset {
		return nil, fmt.Errorf("%w: section %s lies outside the file", ErrBadDWARF, name)
	}
	if int64(s.Size) > m.maxSec || s.Size > 2048*s.FileSize+(1<<20) {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, name, s.Size)
	}
	p := &Progressive{Buf: make([]byte, s.Size), exited: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	rd := s.Open()
	go func() {
		defer close(p.exited)
		var err error
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: inflating %s: %v", ErrBadDWARF, name, r)
			}
			p.mu.Lock()
			p.done, p.err = true, err
			p.cond.Broadcast()
			p.mu.Unlock()
		}()
		n, idle := 0, 0
		for n < len(p.Buf) && !p.stopped.Load() {
			k, rerr := rd.Read(p.Buf[n:min(n+1<<20, len(p.Buf))])
			n += k
			if k == 0 && rerr == nil {
				if idle++; idle > 100 {
					rerr = io.ErrNoProgress
				}
			} else {
				idle = 0
			}
			p.filled.Store(int64(n))
			p.mu.Lock()
			p.cond.Broadcast()
			p.mu.Unlock()
			if rerr != nil {
				if n < len(p.Buf) {
					err = fmt.Errorf("%w: inflating %s: %v", ErrBadDWARF, name, rerr)
				}
				return
			}
		}
	}()
	return p, nil
}

// Wait blocks until buf[:n] is ready; false if it never will be.
func (p *Progressive) Wait(n uint64) bool {
	if n > uint64(len(p.Buf)) {
		return false
	}
	if uint64(p.filled.Load()) >= n {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uint64(p.filled.Load()) < n && !p.done {
		p.cond.Wait()
	}
	return uint64(p.filled.Load()) >= n
}

// Stop ends the inflation (the file is about to be unmapped) and waits for it.
func (p *Progressive) Stop() {
	p.stopped.Store(true)
	<-p.exited
}

// readZdebug decodes the legacy GNU ".zdebug" format: "ZLIB", 8-byte
// big-endian size, zlib stream.
func (m *Image) readZdebug(s *elf.Section) ([]byte, error) {
	raw := make([]byte, s.FileSize)
	if _, err := m.ra.ReadAt(raw, int64(s.Offset)); err != nil && err != io.EOF {
		return nil, err
	}
	if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
		return raw, nil
	}
	n := binary.BigEndian.Uint64(raw[4:12])
	if int64(n) > m.maxSec || n > 2048*uint64(len(raw))+(1<<20) {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrTooLarge, s.Name, n)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[12:]))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadDWARF, s.Name, err)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(zr, buf); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadDWARF, s.Name, err)
	}
	return buf, nil
}
