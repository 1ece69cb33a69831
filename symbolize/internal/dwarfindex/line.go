package dwarfindex

import (
	"fmt"
	"sort"

	"github.com/crashsig/crashsig/symbolize/internal/elfimage"
)

// lineRow is one row of a decoded line table.
type lineRow struct {
	addr uint64
	line uint32
	file uint16 // index into cuTables.files; 0xffff = unknown
	col  uint16 // saturated at 0xffff
}

// lineSeq is one sequence: rows[start:end] of cuTables.rows, covering [lo, hi).
type lineSeq struct {
	lo, hi     uint64
	start, end uint32
}

// lineTable is a decoded line program: its file names (full paths, as
// llvm-symbolizer composes them) and its rows grouped in sequences.
type lineTable struct {
	files []string // by DWARF file index (DWARF 4: index 0 is unused)
	rows  []lineRow
	seqs  []lineSeq // sorted by lo
}

// pathAppend joins path components like LLVM's sys::path::append: empty
// components are skipped, no cleaning, one separator between components.
func pathAppend(p string, comps ...string) string {
	for _, c := range comps {
		if c == "" {
			continue
		}
		if p != "" && p[len(p)-1] != '/' && c[0] != '/' {
			p += "/"
		}
		p += c
	}
	return p
}

// parseLineTable decodes the line program at off for unit u.
func (d *Data) parseLineTable(u *dwUnit, off uint64) (*lineTable, error) {
	if off >= uint64(len(d.line)) {
		return nil, fmt.Errorf("%w: stmt_list %#x out of range", elfimage.ErrBadDWARF, off)
	}
	r := dwReader{b: d.line, pos: int(off), order: d.order}
	l, d64 := r.unitLength()
	if r.bad || l > uint64(len(r.b)-r.pos) {
		return nil, fmt.Errorf("%w: line table at %#x: bad length", elfimage.ErrBadDWARF, off)
	}
	end := r.pos + int(l)
	r.b = r.b[:end]
	ver := r.u16()
	if ver < 2 || ver > 5 {
		return nil, fmt.Errorf("%w: line table at %#x: version %d", elfimage.ErrBadDWARF, off, ver)
	}
	addrSize := int(u.addrSize)
	if ver >= 5 {
		addrSize = int(r.u8())
		r.u8() // segment selector size
	}
	osz := 4
	if d64 {
		osz = 8
	}
	hlen := r.uN(osz)
	progStart := uint64(r.pos) + hlen
	minInst := uint64(r.u8())
	if ver >= 4 {
		r.u8() // max ops per instruction (VLIW only)
	}
	r.u8() // default_is_stmt
	lineBase := int64(int8(r.u8()))
	lineRange := uint64(r.u8())
	opBase := r.u8()
	if r.bad || lineRange == 0 || opBase == 0 || progStart > uint64(end) {
		return nil, fmt.Errorf("%w: line table at %#x: bad header", elfimage.ErrBadDWARF, off)
	}
	stdLen := make([]uint8, opBase)
	for i := 1; i < int(opBase); i++ {
		stdLen[i] = r.u8()
	}
	t := &lineTable{}
	var dirs []string
	type fent struct {
		name string
		dir  uint64
	}
	var fents []fent
	if ver >= 5 {
		readEntries := func(isFile bool) bool {
			nfmt := int(r.u8())
			type pf struct{ ct, form uint64 }
			fmts := make([]pf, 0, nfmt)
			for i := 0; i < nfmt; i++ {
				fmts = append(fmts, pf{r.uleb(), r.uleb()})
			}
			cnt := r.uleb()
			if r.bad || cnt > uint64(len(r.b)) {
				return false
			}
			lu := dwUnit{off: u.off, version: u.version, addrSize: u.addrSize, dwarf64: d64,
				strOffsBase: u.strOffsBase, addrBase: u.addrBase}
			for i := uint64(0); i < cnt && !r.bad; i++ {
				var name string
				var dir uint64
				for _, f := range fmts {
					if f.form > 0xffff {
						r.fail()
						break
					}
					k, v := readForm(&r, uint16(f.form), &lu, 0)
					switch f.ct {
					case 1: // DW_LNCT_path
						if k == vkStrInl {
							name = string(elfimage.CStringAt(d.line, v))
						} else {
							name = string(d.strValue(&lu, k, v))
						}
					case 2: // DW_LNCT_directory_index
						dir = v
					}
				}
				if isFile {
					fents = append(fents, fent{name, dir})
				} else {
					dirs = append(dirs, name)
				}
			}
			return !r.bad
		}
		if !readEntries(false) || !readEntries(true) {
			return nil, fmt.Errorf("%w: line table at %#x: bad v5 entry formats", elfimage.ErrBadDWARF, off)
		}
	} else {
		for !r.bad {
			s := r.cstr()
			if len(s) == 0 {
				break
			}
			dirs = append(dirs, string(s))
		}
		fents = append(fents, fent{}) // index 0 is not a file in DWARF < 5
		for !r.bad {
			s := r.cstr()
			if len(s) == 0 {
				break
			}
			dir := r.uleb()
			r.uleb()
			r.uleb()
			fents = append(fents, fent{string(s), dir})
		}
	}
	if r.bad {
		return nil, fmt.Errorf("%w: line table at %#x: truncated header", elfimage.ErrBadDWARF, off)
	}
	fileName := func(f fent) string {
		if f.name == "" {
			return ""
		}
		if f.name[0] == '/' {
			return f.name
		}
		var inc string
		if ver >= 5 {
			if f.dir < uint64(len(dirs)) {
				inc = dirs[f.dir]
			}
		} else if f.dir > 0 && f.dir <= uint64(len(dirs)) {
			inc = dirs[f.dir-1]
		}
		p := ""
		if u.compDir != "" && (inc == "" || inc[0] != '/') {
			p = u.compDir
		}
		return pathAppend(p, inc, f.name)
	}
	t.files = make([]string, len(fents))
	for i, f := range fents {
		t.files[i] = fileName(f)
	}
	if ver < 5 && len(t.files) > 0 {
		t.files[0] = ""
	}

	// The line program. Most rows take 1-3 bytes of program.
	t.rows = make([]lineRow, 0, (uint64(end)-progStart)/3+16)
	r.pos = int(progStart)
	var (
		addr     uint64
		file     uint64 = 1
		line     int64  = 1
		col      uint64
		seqStart = len(t.rows)
	)
	emit := func() {
		f := uint16(0xffff)
		if file < uint64(len(t.files)) && file < 0xffff {
			f = uint16(file)
		}
		c := col
		if c > 0xffff {
			c = 0xffff
		}
		ln := line
		if ln < 0 || ln > 0xffffffff {
			ln = 0
		}
		t.rows = append(t.rows, lineRow{addr: addr, line: uint32(ln), file: f, col: uint16(c)})
	}
	reset := func() {
		addr, file, line, col = 0, 1, 1, 0
		seqStart = len(t.rows)
	}
	for r.pos < end && !r.bad {
		op := r.u8()
		if op >= opBase {
			adj := uint64(op - opBase)
			addr += minInst * (adj / lineRange)
			line += lineBase + int64(adj%lineRange)
			emit()
			continue
		}
		switch op {
		case 0:
			n := r.uleb()
			if n == 0 || n > uint64(end-r.pos) {
				r.fail()
				break
			}
			next := r.pos + int(n)
			switch r.u8() {
			case 1: // end_sequence
				emit()
				rows := t.rows[seqStart:]
				if len(rows) > 1 && rows[0].addr != 0 && rows[0].addr < addr {
					t.seqs = append(t.seqs, lineSeq{lo: rows[0].addr, hi: addr, start: uint32(seqStart), end: uint32(len(t.rows))})
				} else {
					t.rows = t.rows[:seqStart]
				}
				reset()
			case 2: // set_address
				if int(n-1) == addrSize || n-1 == 8 || n-1 == 4 {
					addr = r.uN(int(n - 1))
				}
			}
			r.pos = next
		case 1: // copy
			emit()
		case 2: // advance_pc
			addr += minInst * r.uleb()
		case 3: // advance_line
			line += r.sleb()
		case 4: // set_file
			file = r.uleb()
		case 5: // set_column
			col = r.uleb()
		case 6, 7, 10, 11: // negate_stmt, basic_block, prologue_end, epilogue_begin
		case 8: // const_add_pc
			addr += minInst * (uint64(255-opBase) / lineRange)
		case 9: // fixed_advance_pc
			addr += uint64(r.u16())
		default:
			for i := 0; i < int(stdLen[op]); i++ {
				r.skipLEB()
			}
		}
	}
	// Rows of an unterminated sequence are dropped.
	t.rows = t.rows[:seqStart]
	sort.SliceStable(t.seqs, func(i, j int) bool { return t.seqs[i].lo < t.seqs[j].lo })
	return t, nil
}

// lookup returns the row for pc: the last row at or below pc in the
// sequence containing pc (llvm-symbolizer's choice).
func (t *lineTable) lookup(pc uint64) (lineRow, bool) {
	s := t.seqs
	lo, hi := 0, len(s)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if s[h].lo <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	i := lo - 1
	if i < 0 || pc >= s[i].hi {
		return lineRow{}, false
	}
	rows := t.rows[s[i].start : s[i].end-1] // the last row ends the sequence
	lo, hi = 0, len(rows)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if rows[h].addr <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo == 0 {
		return lineRow{}, false
	}
	return rows[lo-1], true
}

// fileName returns the path of file index i, or "" when unknown.
func (t *lineTable) fileName(i uint64) string {
	if t == nil || i >= uint64(len(t.files)) {
		return ""
	}
	return t.files[i]
}
