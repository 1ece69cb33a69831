package dwarfindex

// Lookup appends the DWARF inline chain of pc, innermost first.
//
// noDem leaves names undemangled; noDemOuter does so for the outermost
// frame only (the caller names it from the symbol table).
func (d *Data) Lookup(dst []Frame, pc uint64, demangle func(string) string, noDem, noDemOuter bool) ([]Frame, error) {
	u, err := d.unitFor(pc)
	if u == nil {
		return dst, err
	}
	d, u = d.splitOf(u) // a skeleton's split unit in its .dwo (split.go)
	t, err := d.tables(u)
	if err != nil {
		return dst, err
	}
	var chainBuf [32]uint32
	chain := chainBuf[:0]
	tops := t.tops
	lo, hi := 0, len(tops)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if tops[h].lo <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	for i := lo - 1; i >= 0 && i >= lo-8; i-- {
		if pc < tops[i].hi && t.nodes[tops[i].node].contains(t, pc) {
			chain = append(chain, tops[i].node)
			break
		}
	}
	for len(chain) > 0 && len(chain) < 256 {
		n := chain[len(chain)-1]
		found := false
		for j := n + 1; j < t.nodes[n].end; j = t.nodes[j].end {
			if t.nodes[j].contains(t, pc) {
				if t.nodes[j].sub {
					// A nested subprogram (not inlined) starts its own chain.
					chain = chain[:0]
				}
				chain = append(chain, j)
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	var file string
	var line, col int
	row, okLine := lineRow{}, false
	if t.lines != nil {
		row, okLine = t.lines.lookup(pc)
	}
	// The unit's line table could not be read: the frames come without
	// file and line, and the caller is told why (ErrBadDWARF).
	var lerr error
	if okLine {
		file, line, col = t.lines.fileName(uint64(row.file)), int(row.line), int(row.col)
	} else {
		lerr = t.lerr
	}
	if len(chain) == 0 {
		if !okLine {
			return dst, lerr
		}
		return append(dst, Frame{File: file, Line: line, Column: col}), nil
	}
	for k := len(chain) - 1; k >= 0; k-- {
		ni := chain[k]
		fn := d.nodeName(t, ni)
		pretty := fn.undemangled()
		if !noDem && !(noDemOuter && k == 0) {
			pretty = fn.demangled(demangle)
		}
		dst = append(dst, Frame{Function: pretty, Linkage: fn.raw, File: file, Line: line, Column: col})
		n := &t.nodes[ni]
		file, line, col = t.lines.fileName(uint64(n.callFile)), int(n.callLine), int(n.callCol)
	}
	return dst, lerr
}
