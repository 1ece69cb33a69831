package signature

import (
	"path"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// This file is the frame view: what the walk needs of each frame before
// any rule applies (normalized name and rule through the cache, module,
// whether an unsymbolized address is stable for a build, source position),
// and which frames are physical (physical.go).

// frameView is what the walk needs of one frame.
type frameView struct {
	index  int
	name   string // normalized; "" when unsymbolized
	rule   *compiledRule
	module string // base name
	unsym  string // "module+0xoff" when unsymbolized and stable, else ""
	why    string // why an unsymbolized frame is not stable
	glibc  bool   // frame in libc/libpthread (module or glibc source path)
	raw    string
	file   string // source file and line, when printed
	line   int
	// inlined: the compiler inlined this frame into the next physical
	// frame (see physicalMask); keys use physical frames only.
	inlined bool
}

// unknownNames are printed in place of a missing symbol.
func isUnknownName(s string) bool {
	switch s {
	case "", "??", "(unknown)", "<unknown>", "(nil)", "<unknown module>", "(<unknown module>)":
		return true
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// mainBinary is the executable of a product, for frames without a module.
func mainBinary(p symbolize.Product) string {
	switch p {
	case symbolize.ProductStarRocks:
		return "starrocks_be"
	case symbolize.ProductDoris:
		return "doris_be"
	}
	return "be"
}

// nonPIELimit: a PC below it with no module is an address in a non-PIE
// executable (StarRocks, Doris 0.x are linked at 0x400000); PIE
// executables and shared objects load far above it.
const nonPIELimit = 1 << 32

func (g *Generator) view(f *symbolize.Frame, product symbolize.Product, maps []symbolize.KernelMapping) frameView {
	v := frameView{index: f.Index, raw: f.Name(), file: f.File, line: f.Line}
	mod := f.Module
	offset, hasOffset := f.Offset, f.HasOffset
	name := f.Name()
	// `(/lib/libc.so.6+0x4251f)` printed as the name by glog.
	if mod == "" && len(name) > 4 && name[0] == '(' && name[len(name)-1] == ')' {
		if i := strings.LastIndex(name, "+0x"); i > 0 {
			if off, err := strconv.ParseUint(name[i+3:len(name)-1], 16, 64); err == nil {
				mod, offset, hasOffset = name[1:i], symbolize.Addr(off), true
				name = ""
			}
		}
	}
	// `libc.so.6` printed alone in the name's place (an abbreviated dump, a
	// boost frame whose symbol and address the poster dropped): a module,
	// not a function, so the frame is an unnamed frame of that object.
	if mod == "" && isBareSharedObject(name) {
		mod, name = name, ""
	}
	mod = unMarkdownLink(mod)
	v.module = path.Base(mod)
	if mod == "" {
		v.module = ""
	}
	v.glibc = isGlibc(v.module) || strings.HasPrefix(f.File, "./") || strings.Contains(f.File, "/glibc")
	if !isUnknownName(name) {
		fc := g.classify(name, f.Java)
		if !isUnknownName(fc.name) && hasLetter(fc.name) && !isPath(fc.name) {
			v.name, v.rule = fc.name, fc.rule
			return v
		}
	}
	// Unsymbolized.
	if v.module == "" && f.PC == 0 && !hasOffset {
		v.why = "no address"
		return v
	}
	if v.module != "" && isSharedObject(v.module) {
		v.why = "in shared object " + v.module + " (offsets differ between builds of it)"
		if r := g.rules.match("", v.module); r != nil {
			v.rule = r
		}
		return v
	}
	m := printable(v.module) // a key is text
	if m == "" {
		m = mainBinary(product)
	}
	switch {
	case hasOffset:
		if glogFrame(f) {
			// glog prints the offset of PC-1; keys name the PC's offset,
			// as the absolute addresses of other sources do.
			offset++
		}
		v.unsym = m + "+" + offset.String()
	default:
		// Position independence is read from the addresses, never from the
		// module's name: the kernel line's mapping base when it names one
		// for this PC, else the PC itself (fixed-address executables are
		// linked far below 4 GiB, PIE executables load far above it).
		base, known := mappingBase(maps, v.module, f.PC)
		switch {
		case known && base >= nonPIELimit:
			v.why = "absolute address " + f.PC.String() + " of a position-independent binary (mapped at " + base.String() + " by the kernel line) differs per run"
		case f.PC < nonPIELimit:
			// Fixed-address executable: the absolute address is the file address.
			v.unsym = m + "+" + f.PC.String()
		default:
			v.why = "absolute address " + f.PC.String() + " of a position-independent binary differs per run"
		}
	}
	return v
}

// mappingBase returns the base of the kernel-line mapping that holds pc
// in module (any module when module is "").
func mappingBase(maps []symbolize.KernelMapping, module string, pc symbolize.Addr) (symbolize.Addr, bool) {
	for _, m := range maps {
		if (module == "" || m.Module == module) && pc >= m.Base && pc-m.Base < m.Size {
			return m.Base, true
		}
	}
	return 0, false
}

// glogFrame: a frame parsed from a glog `    @ 0x… sym` line.
func glogFrame(f *symbolize.Frame) bool {
	t := strings.TrimLeft(f.Raw, " \t")
	return len(t) > 1 && t[0] == '@' && t[1] == ' '
}

// unMarkdownLink turns a pasted `/lib/[libjvm.so](http://libjvm.so/)`
// back into `/lib/libjvm.so`.
func unMarkdownLink(m string) string {
	i := strings.IndexByte(m, '[')
	if i < 0 {
		return m
	}
	j := strings.Index(m[i:], "](")
	if j < 0 {
		return m
	}
	return m[:i] + m[i+1:i+j]
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80 {
			return true
		}
	}
	return false
}

// isPath: a file path printed where a name belongs (damaged frame line).
func isPath(s string) bool {
	return (s[0] == '/' || s[0] == '.') && strings.Contains(s, "/")
}

// isBareSharedObject: a name that is only a shared object's file name
// (`libc.so.6`, `/lib64/libpthread.so.0`, `libjvm.so`): no scope, no
// parameters, no blank.
func isBareSharedObject(s string) bool {
	if s == "" || !isSharedObject(s) || strings.ContainsAny(s, " ():<>") {
		return false
	}
	base := path.Base(s)
	return strings.HasPrefix(base, "lib") || strings.HasPrefix(base, "ld-")
}

// isSharedObject: a module named like a shared object (`libc.so.6`,
// `libjvm.so`); anything else is taken as the executable.
func isSharedObject(m string) bool {
	return strings.HasSuffix(m, ".so") || strings.Contains(m, ".so.")
}

func isGlibc(m string) bool {
	return strings.HasPrefix(m, "libc.") || strings.HasPrefix(m, "libc-") || strings.HasPrefix(m, "libpthread") ||
		strings.HasPrefix(m, "ld-linux") || strings.HasPrefix(m, "libdl")
}
