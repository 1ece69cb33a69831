package symbolize

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/corefile"
	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// elfHeaderInfo is what the module map needs from an ELF image's headers.
type elfHeaderInfo struct {
	firstLoadVaddr uint64      // page-aligned vaddr - offset of the first PT_LOAD
	notes          [][2]uint64 // vaddr, size of each PT_NOTE
	isDyn          bool
}

// readELFHeaders parses an ELF64 header and program headers from process
// memory at addr (the core keeps the first page of every mapped ELF file).
func (c *Core) readELFHeaders(addr uint64) (elfHeaderInfo, bool) {
	var eh [64]byte
	if _, err := c.ReadMemory(eh[:], addr); err != nil || string(eh[:4]) != elf.ELFMAG || eh[elf.EI_CLASS] != byte(elf.ELFCLASS64) {
		return elfHeaderInfo{}, false
	}
	le := binary.LittleEndian
	typ := elf.Type(le.Uint16(eh[16:]))
	phoff, phentsize, phnum := le.Uint64(eh[32:]), uint64(le.Uint16(eh[54:])), uint64(le.Uint16(eh[56:]))
	if phentsize < 56 || phnum == 0 || phnum > 512 || phoff > 1<<20 {
		return elfHeaderInfo{}, false
	}
	ph := make([]byte, phentsize*phnum)
	if _, err := c.ReadMemory(ph, addr+phoff); err != nil {
		return elfHeaderInfo{}, false
	}
	info := elfHeaderInfo{isDyn: typ == elf.ET_DYN}
	found := false
	for i := uint64(0); i < phnum; i++ {
		p := ph[i*phentsize:]
		pt := elf.ProgType(le.Uint32(p))
		off, vaddr, filesz := le.Uint64(p[8:]), le.Uint64(p[16:]), le.Uint64(p[32:])
		switch pt {
		case elf.PT_LOAD:
			if !found {
				info.firstLoadVaddr = (vaddr - off) &^ 0xfff
				found = true
			}
		case elf.PT_NOTE:
			if filesz > 0 && filesz <= 1<<16 && len(info.notes) < 8 {
				info.notes = append(info.notes, [2]uint64{vaddr, filesz})
			}
		}
	}
	return info, found
}

// coreBuildID reads the build-id note from the core's copy of the module
// (never from a file on disk).
func (c *Core) coreBuildID(bias uint64, h elfHeaderInfo) string {
	for _, n := range h.notes {
		if c.fileBacked(bias + n[0]) {
			continue
		}
		nb := make([]byte, n[1])
		if _, err := c.ReadMemory(nb, bias+n[0]); err == nil {
			if id := corefile.BuildIDFromNotes(nb); id != "" {
				return id
			}
		}
	}
	return ""
}

// fileBacked reports whether addr is not in the core's own data (reading
// it would go to a file).
func (c *Core) fileBacked(addr uint64) bool {
	s := c.segFor(addr)
	return s == nil || addr-s.vaddr >= s.filesz
}

// buildModules derives the module map from NT_FILE and the auxiliary
// vector, reads build-ids from the core and opens the matching files.
func (c *Core) buildModules(ctx context.Context) {
	type group struct {
		path       string
		start, end uint64
		base       uint64 // start of the mapping at file offset 0
		hasBase    bool
	}
	groups := map[string]*group{}
	var order []string
	for _, f := range c.files {
		g := groups[f.Path]
		if g == nil {
			g = &group{path: f.Path, start: f.Start, end: f.End}
			groups[f.Path] = g
			order = append(order, f.Path)
		}
		g.start, g.end = min(g.start, f.Start), max(g.end, f.End)
		if f.Offset == 0 && !g.hasBase {
			g.base, g.hasBase = f.Start, true
		}
	}
	entry, hasEntry := c.auxv[corefile.AtEntry]
	for _, p := range order {
		if ctx.Err() != nil {
			return
		}
		g := groups[p]
		if !g.hasBase {
			continue
		}
		h, ok := c.readELFHeaders(g.base)
		if !ok {
			continue // not an ELF file (data files, fonts, ...)
		}
		m := &CoreModule{Path: p, Start: Addr(g.start), End: Addr(g.end), Bias: Addr(g.base - h.firstLoadVaddr)}
		if !h.isDyn {
			m.Bias = 0
		}
		m.BuildID = c.coreBuildID(uint64(m.Bias), h)
		if hasEntry && entry >= g.start && entry < g.end {
			m.IsMain = true
		}
		c.Modules = append(c.Modules, m)
	}
	if v, ok := c.auxv[corefile.AtSysinfoEHdr]; ok && v != 0 {
		// a real vDSO is two pages; anything large is damage
		if s := c.segFor(v); s != nil && s.filesz > 0 && s.filesz <= 1<<20 && v == s.vaddr {
			m := &CoreModule{Path: "[vdso]", Start: Addr(s.vaddr), End: Addr(s.vaddr + s.memsz), IsVDSO: true}
			if h, ok := c.readELFHeaders(v); ok {
				m.Bias = Addr(v - h.firstLoadVaddr)
				m.BuildID = c.coreBuildID(uint64(m.Bias), h)
				mem := io.NewSectionReader(memReader{c, s.vaddr}, 0, int64(s.filesz))
				if ef, err := elfimage.NewFile(mem); err == nil {
					m.elf, m.mem = ef, mem
					m.File = "[vdso]"
				}
			}
			c.Modules = append(c.Modules, m)
		}
	}
	sort.SliceStable(c.Modules, func(i, j int) bool { return c.Modules[i].Start < c.Modules[j].Start })
	c.attachFiles(ctx)
}

// fileBuildID reads the build-id of an ELF file on disk.
func fileBuildID(ef *elf.File) string {
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE && p.Filesz > 0 && p.Filesz <= 1<<16 {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				if id := corefile.BuildIDFromNotes(b); id != "" {
					return id
				}
			}
		}
	}
	if s := ef.Section(".note.gnu.build-id"); s != nil && s.Size <= 1<<16 {
		if b, err := s.Data(); err == nil {
			return corefile.BuildIDFromNotes(b)
		}
	}
	return ""
}

type openedELF struct {
	path    string
	f       *os.File
	ef      *elf.File
	buildID string
}

func openELF(path string) (*openedELF, error) {
	// only regular files: a path from a hostile core may name a FIFO or device
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ef, err := elfimage.NewFile(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &openedELF{path: path, f: f, ef: ef, buildID: fileBuildID(ef)}, nil
}

// attachFiles gives each module a file: a caller-given binary (by build-id,
// then base name, then "the executable"), else the recorded path (under
// Sysroot) when its build-id matches.
func (c *Core) attachFiles(ctx context.Context) {
	var given, debugOnly []*openedELF
	for _, p := range c.opts.Binaries {
		o, err := openELF(p)
		if err != nil {
			c.note("binary %s: %v", p, err)
			continue
		}
		if !elfimage.HasCode(o.ef) && o.buildID != "" {
			// A debug file (objcopy --only-keep-debug) given as a binary:
			// it has its executable's build-id but no code and no
			// .eh_frame, so it is the module's debug file, not its file.
			debugOnly = append(debugOnly, o)
			continue
		}
		given = append(given, o)
	}
	used := make([]bool, len(given))
	assign := func(m *CoreModule, o *openedELF, byCaller bool) {
		m.elf, m.closer, m.File = o.ef, o.f, o.path
		if m.BuildID == "" && o.buildID != "" {
			m.BuildID, m.BuildIDFromFile = o.buildID, true
		} else if m.BuildID != "" && o.buildID != m.BuildID {
			mm := &BuildIDMismatch{Module: m.Path, File: o.path, CoreBuildID: m.BuildID, FileBuildID: o.buildID, Used: byCaller}
			c.Mismatches = append(c.Mismatches, mm)
			c.note("WARNING: %v", mm)
		}
		// file-backed pages the core omitted are read from this file
		if _, ok := c.fileFDs[m.Path]; !ok {
			if f, err := os.Open(o.path); err == nil {
				c.fileFDs[m.Path] = f
			}
		}
	}
	// match: the first unused given file and the first module without a
	// file that satisfy ok get paired
	match := func(ok func(m *CoreModule, o *openedELF) bool) {
		for i, o := range given {
			if used[i] {
				continue
			}
			for _, m := range c.Modules {
				if m.elf == nil && !m.IsVDSO && ok(m, o) {
					used[i] = true
					assign(m, o, true)
					break
				}
			}
		}
	}
	match(func(m *CoreModule, o *openedELF) bool { return m.BuildID != "" && o.buildID == m.BuildID })
	match(func(m *CoreModule, o *openedELF) bool { return filepath.Base(m.Path) == filepath.Base(o.path) })
	match(func(m *CoreModule, o *openedELF) bool { return m.IsMain })
	for i, o := range given {
		if !used[i] {
			c.note("binary %s matches no module of the core (build-id %s)", o.path, o.buildID)
			o.f.Close()
		}
	}
	// Debug files given as binaries, by build-id only: kept as the module's
	// file of last resort (symbols, no unwinding) when no file is found.
	lastResort := map[*CoreModule]*openedELF{}
	for _, o := range debugOnly {
		var mod *CoreModule
		for _, m := range c.Modules {
			if !m.IsVDSO && m.BuildID == o.buildID && m.fetchedDebug == "" {
				mod = m
				break
			}
		}
		if mod == nil {
			c.note("binary %s has no code (a debug file) and matches no module of the core by build-id (%s)", o.path, o.buildID)
			o.f.Close()
			continue
		}
		c.note("binary %s has no code (a debug file): used as the debug file of %s", o.path, mod.Path)
		mod.fetchedDebug = o.path
		if mod.elf == nil {
			lastResort[mod] = o
		} else {
			o.f.Close()
		}
	}
	// 4. recorded paths
	if !c.opts.NoDiskLookup {
		for _, m := range c.Modules {
			if m.elf != nil || m.IsVDSO {
				continue
			}
			p := m.Path
			if c.opts.Sysroot != "" {
				p = filepath.Join(c.opts.Sysroot, strings.TrimPrefix(p, "/"))
			}
			o, err := openELF(p)
			if err != nil {
				continue
			}
			if m.BuildID != "" && o.buildID != m.BuildID {
				mm := &BuildIDMismatch{Module: m.Path, File: p, CoreBuildID: m.BuildID, FileBuildID: o.buildID}
				c.Mismatches = append(c.Mismatches, mm)
				c.note("%v", mm)
				o.f.Close()
				continue
			}
			assign(m, o, false)
		}
	}
	// 5. the symbol server, by build-id
	if c.opts.Fetcher != nil {
		for _, m := range c.Modules {
			if m.elf != nil || m.IsVDSO || m.BuildID == "" {
				continue
			}
			p, err := c.opts.Fetcher.FetchExecutable(ctx, m.BuildID)
			if err != nil {
				c.note("fetching %s (build-id %s): %v", m.Path, m.BuildID, err)
				continue
			}
			o, err := openELF(p)
			if err != nil {
				c.note("fetched %s for %s: %v", p, m.Path, err)
				continue
			}
			if o.buildID != m.BuildID {
				c.note("fetched %s for %s has build-id %s, want %s: not used", p, m.Path, o.buildID, m.BuildID)
				o.f.Close()
				continue
			}
			assign(m, o, false)
		}
	}
	// the debug file given for a module that still has no file
	for m, o := range lastResort {
		if m.elf == nil {
			assign(m, o, true)
		} else {
			o.f.Close()
		}
	}
	// 6. debug files of modules without DWARF, from the symbol server
	if c.opts.Fetcher != nil {
		for _, m := range c.Modules {
			if m.elf == nil || m.IsVDSO || m.BuildID == "" || m.fetchedDebug != "" || m.elf.Section(".debug_info") != nil || c.debugDirsHave(m.BuildID) {
				continue
			}
			p, err := c.opts.Fetcher.FetchDebugInfo(ctx, m.BuildID)
			if err != nil {
				c.note("fetching the debug file of %s (build-id %s): %v", m.Path, m.BuildID, err)
				continue
			}
			m.fetchedDebug = p
		}
	}
	for _, m := range c.Modules {
		if m.elf == nil {
			id := m.BuildID
			if id == "" {
				id = "unknown"
			}
			c.note("no file for module %s (build-id %s): its frames unwind by frame pointer only", m.Path, id)
		}
	}
}

// debugDirsHave reports whether a DebugDirs root has the build-id's debug file.
func (c *Core) debugDirsHave(id string) bool {
	if len(id) < 3 {
		return false
	}
	for _, d := range c.opts.DebugDirs {
		if _, err := os.Stat(filepath.Join(d, ".build-id", id[:2], id[2:]+".debug")); err == nil {
			return true
		}
	}
	return false
}
