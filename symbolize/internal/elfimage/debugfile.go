package elfimage

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// HasDWARF reports whether the image has a .debug_info section.
func (m *Image) HasDWARF() bool {
	s := m.FindSection(".debug_info")
	return s != nil && s.Size > 0
}

// BuildID returns the NT_GNU_BUILD_ID note as hex.
func (m *Image) BuildID() string {
	for _, s := range m.File.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<16 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		if id := noteBuildID(b, m.Order); id != "" {
			return id
		}
	}
	for _, p := range m.File.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<16 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			continue
		}
		if id := noteBuildID(b, m.Order); id != "" {
			return id
		}
	}
	return ""
}

// noteBuildID scans ELF notes for NT_GNU_BUILD_ID (type 3, name "GNU").
func noteBuildID(b []byte, order binary.ByteOrder) string {
	for len(b) >= 12 {
		nsz, dsz, typ := order.Uint32(b), order.Uint32(b[4:]), order.Uint32(b[8:])
		b = b[12:]
		na := (uint64(nsz) + 3) &^ 3
		da := (uint64(dsz) + 3) &^ 3
		if na > uint64(len(b)) || uint64(nsz) > uint64(len(b)) {
			return ""
		}
		name := b[:nsz]
		b = b[na:]
		if uint64(dsz) > uint64(len(b)) {
			return ""
		}
		desc := b[:dsz]
		if da > uint64(len(b)) {
			b = nil
		} else {
			b = b[da:]
		}
		if typ == 3 && string(bytes.TrimRight(name, "\x00")) == "GNU" && len(desc) > 0 {
			return hex.EncodeToString(desc)
		}
	}
	return ""
}

// LoadBase is the page-aligned lowest PT_LOAD vaddr.
func (m *Image) LoadBase() uint64 {
	base := ^uint64(0)
	for _, p := range m.File.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr < base {
			base = p.Vaddr
		}
	}
	if base == ^uint64(0) {
		return 0
	}
	return base &^ 0xfff
}

// Debuglink returns the .gnu_debuglink file name and CRC32.
func (m *Image) Debuglink() (string, uint32, bool) {
	s := m.File.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return "", 0, false
	}
	b, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", 0, false
	}
	name := string(b[:i])
	off := (i + 4) &^ 3
	if off+4 > len(b) {
		return name, 0, false
	}
	return name, m.Order.Uint32(b[off:]), true
}

// CRC32 computes the CRC32 (IEEE) of the whole file, as GNU debuglink does.
func (m *Image) CRC32() (uint32, error) {
	if m.data != nil {
		return crc32.ChecksumIEEE(m.data), nil
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(m.ra, 0, m.size)); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// LocateDebugFile looks for a separate debug file for img. It returns the
// accepted image and its path, and the errors of rejected candidates.
func LocateDebugFile(path string, img *Image, opts Options) (*Image, string, []error) {
	id := img.BuildID()
	link, crc, hasCRC := img.Debuglink()
	type cand struct {
		path   string
		viaCRC bool // found through .gnu_debuglink: check the CRC when there is no build-id
	}
	var cands []cand
	if opts.DebugFile != "" {
		cands = append(cands, cand{opts.DebugFile, false})
	}
	if len(id) > 2 {
		for _, d := range opts.DebugDirs {
			cands = append(cands, cand{filepath.Join(d, ".build-id", id[:2], id[2:]+".debug"), false})
		}
	}
	if link != "" && path != "" {
		dir := filepath.Dir(path)
		cands = append(cands, cand{filepath.Join(dir, link), hasCRC}, cand{filepath.Join(dir, ".debug", link), hasCRC})
		if abs, err := filepath.Abs(dir); err == nil {
			for _, d := range opts.DebugDirs {
				cands = append(cands, cand{filepath.Join(d, abs, link), hasCRC})
			}
		}
	}
	if link != "" {
		for _, d := range opts.DebugDirs {
			cands = append(cands, cand{filepath.Join(d, link), hasCRC})
		}
	}
	var tried []error
	seen := map[string]bool{}
	self, _ := filepath.Abs(path)
	for _, c := range cands {
		abs, _ := filepath.Abs(c.path)
		if seen[abs] || (path != "" && abs == self) {
			continue
		}
		seen[abs] = true
		if _, err := os.Stat(c.path); err != nil {
			if c.path == opts.DebugFile {
				tried = append(tried, err)
			}
			continue
		}
		dbg, err := Open(c.path, opts)
		if err != nil {
			tried = append(tried, fmt.Errorf("%s: %w", c.path, err))
			continue
		}
		did := dbg.BuildID()
		switch {
		case id != "" && did != id:
			tried = append(tried, &BuildIDMismatch{Binary: path, DebugFile: c.path, BinaryID: id, DebugID: did})
			dbg.Close()
			continue
		case id == "" && c.viaCRC:
			got, err := dbg.CRC32()
			if err != nil || got != crc {
				tried = append(tried, fmt.Errorf("%w: %s: crc %08x, want %08x", ErrDebuglinkCRC, c.path, got, crc))
				dbg.Close()
				continue
			}
		}
		if !dbg.HasDWARF() {
			tried = append(tried, fmt.Errorf("%w: %s", ErrNoDebugInfo, c.path))
			dbg.Close()
			continue
		}
		return dbg, c.path, tried
	}
	return nil, "", tried
}
