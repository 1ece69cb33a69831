package scan

import (
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/symbolize/internal/demangler"
)

// Frame-line parsers shared by the format families. Each takes one
// normalized line and returns the frame it describes; none allocates more
// than the strings it keeps.

// parseHex parses lowercase or uppercase hex with an optional 0x prefix.
func parseHex(s string) (uint64, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" || len(s) > 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 64)
	return v, err == nil
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// setFunction stores a printed function name, demangling it when it is a
// mangled name (glog prints lambdas and clones mangled).
func (p *parser) setFunction(f *Frame, name string) {
	name = strings.TrimSpace(name)
	f.Function = name
	if demangler.IsMangled(name) {
		if d, ok := p.dem.Demangle(name); ok {
			f.Demangled = d
		}
	}
}

// isUnknownSymbol reports the placeholders printers use for "no symbol".
func isUnknownSymbol(s string) bool {
	switch s {
	case "", "(unknown)", "??", "<null>", "?":
		return true
	}
	return false
}

// parseModuleOffset parses `(module+0xoff)` or `module+0xoff` or
// `[module+0xoff]`.
func parseModuleOffset(s string) (module string, off uint64, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '(' && s[len(s)-1] == ')' || s[0] == '[' && s[len(s)-1] == ']') {
		s = s[1 : len(s)-1]
	}
	i := strings.LastIndex(s, "+0x")
	if i <= 0 {
		return "", 0, false
	}
	off, ok = parseHex(s[i+1:])
	if !ok {
		return "", 0, false
	}
	return s[:i], off, true
}

// parseBoostFrame parses a Doris boost::stacktrace frame (F1.3) and the
// in-process format (c) that adds a tab: ` 4# name at file:line`,
// ` 3# 0x00007F3A4C442520 in /lib64/libc.so.6`, `\t0#  name at f:0`.
func (p *parser) parseBoostFrame(s string) (Frame, bool) {
	t := trimBlanks(s)
	i := 0
	for i < len(t) && i < 5 && isDigit(t[i]) {
		i++
	}
	if i == 0 || i >= len(t) || t[i] != '#' || i+1 >= len(t) || t[i+1] != ' ' {
		return Frame{}, false
	}
	f := Frame{Index: atoi(t[:i]), Raw: s}
	rest := strings.TrimLeft(t[i+1:], " ")
	if rest == "" {
		return Frame{}, false // `12# ` and nothing: no frame, only its number
	}
	// Location: the last " at <file>:<digits>" at the end of the line, else the last " in ".
	if j := strings.LastIndex(rest, " at "); j >= 0 {
		loc := rest[j+4:]
		if c := strings.LastIndexByte(loc, ':'); c > 0 && c+1 < len(loc) && allDigits(loc[c+1:]) {
			f.File, f.Line = loc[:c], atoi(loc[c+1:])
			rest = rest[:j]
		}
	}
	if f.File == "" {
		if j := strings.LastIndex(rest, " in "); j >= 0 && !strings.ContainsAny(rest[j+4:], "()<> ") {
			f.Module = rest[j+4:]
			rest = rest[:j]
		}
	}
	if f.File == "" && f.Module == "" {
		// ` in` or ` at` last with nothing after: the location was
		// wrapped onto the next line (boostContinuation joins it).
		rest = strings.TrimRight(rest, " ")
		if k, ok := strings.CutSuffix(rest, " in"); ok {
			rest = k
		} else if k, ok := strings.CutSuffix(rest, " at"); ok {
			rest = k
		}
	}
	if pc, ok := boostAddress(rest); ok {
		f.PC = Addr(pc)
	} else {
		p.setFunction(&f, rest)
	}
	return f, true
}

// boostAddress recognizes the `0x` + 16 uppercase hex digits boost prints
// for frames without a symbol.
func boostAddress(s string) (uint64, bool) {
	if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || len(s) > 18 {
		return 0, false
	}
	return parseHex(s)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseAtFrame parses glog frames: `    @          0x5a1b2c3 symbol` (F2,
// one space before the symbol) and `    @     0x55f0a1b2c3d4  symbol` (F3
// and the StarRocks exception log, two spaces). It returns the number of
// spaces between the address and the symbol.
func (p *parser) parseAtFrame(s string) (Frame, int, bool) {
	t := strings.TrimLeft(s, " \t")
	if len(t) < 3 || t[0] != '@' || t[1] != ' ' {
		return Frame{}, 0, false
	}
	t = strings.TrimLeft(t[1:], " ")
	end := strings.IndexByte(t, ' ')
	addr := t
	if end >= 0 {
		addr = t[:end]
	}
	f := Frame{Raw: s}
	switch {
	case addr == "(nil)":
	case strings.HasPrefix(addr, "0x"):
		v, ok := parseHex(addr)
		if !ok {
			return Frame{}, 0, false
		}
		f.PC = Addr(v)
	default:
		// Abbreviated pastes: `@ starrocks::Foo::bar()` without addresses.
		if strings.Contains(t, "::") || strings.HasSuffix(t, ")") {
			p.setFunction(&f, strings.TrimSpace(t))
			return f, 1, true
		}
		return Frame{}, 0, false
	}
	spaces := 0
	sym := ""
	if end >= 0 {
		rest := t[end:]
		for spaces < len(rest) && rest[spaces] == ' ' {
			spaces++
		}
		sym = strings.TrimRight(rest[spaces:], " ")
	}
	p.setSymbol(&f, sym)
	return f, spaces, true
}

// setSymbol interprets the symbol field of glog-style frames: a name,
// `(unknown)`, or `(module+0xoff)`.
func (p *parser) setSymbol(f *Frame, sym string) {
	if isUnknownSymbol(sym) {
		return
	}
	if sym[0] == '(' {
		if m, off, ok := parseModuleOffset(sym); ok {
			f.Module, f.Offset, f.HasOffset = m, Addr(off), true
			return
		}
	}
	p.setFunction(f, sym)
}

// parseSanitizerFrame parses ASAN/UBSAN/LSAN/MSAN and TSAN frames (F6):
//
//	#0 0x55d1c2b3a4f4 in ns::f(int) /path/file.cpp:192:31
//	#0 0x55d1b0a2c0ad in operator delete(void*) (/opt/doris/be/lib/doris_be+0x2a2c0ad)
//	#2 0x7f3a4c494ac2  (/lib/x86_64-linux-gnu/libc.so.6+0x94ac2) (BuildId: 6938…)
//	#0 doris::Foo::set(long) /root/doris/be/src/foo.h:42:9 (doris_be+0x1a2b3c4)     (TSAN)
func (p *parser) parseSanitizerFrame(s string) (Frame, bool) {
	idx, rest, ok := hashIndex(s)
	if !ok {
		return Frame{}, false
	}
	f := Frame{Index: idx, Raw: s}
	if strings.HasPrefix(rest, "0x") {
		sp := strings.IndexByte(rest, ' ')
		a := rest
		if sp > 0 {
			a = rest[:sp]
		}
		v, ok := parseHex(a)
		if !ok {
			return Frame{}, false
		}
		f.PC = Addr(v)
		if sp < 0 {
			return f, true
		}
		rest = strings.TrimLeft(rest[sp:], " ")
	}
	if j := strings.LastIndex(rest, " (BuildId: "); j >= 0 && strings.HasSuffix(rest, ")") {
		rest = rest[:j]
	}
	rest = strings.TrimPrefix(rest, "in ")
	// Trailing (module+0xoff).
	if strings.HasSuffix(rest, ")") {
		if j := strings.LastIndex(rest, " ("); j >= 0 || strings.HasPrefix(rest, "(") {
			cand := rest
			if j >= 0 {
				cand = rest[j+1:]
			}
			if m, off, ok := parseModuleOffset(cand); ok {
				f.Module, f.Offset, f.HasOffset = m, Addr(off), true
				if j >= 0 {
					rest = rest[:j]
				} else {
					rest = ""
				}
			} else if cand == "(<unknown module>)" {
				if j >= 0 {
					rest = rest[:j]
				} else {
					rest = ""
				}
			}
		}
	}
	// Trailing file:line[:col].
	if j := strings.LastIndexByte(rest, ' '); j >= 0 {
		if file, line, col, ok := splitFileLine(rest[j+1:]); ok {
			f.File, f.Line, f.Column = file, line, col
			rest = rest[:j]
		} else if unknownLocation(rest[j+1:]) {
			rest = rest[:j]
		} else if sourceFileOnly(rest[j+1:]) {
			// The symbolizer found the file but no line (compiler-rt
			// RenderSourceLocation prints `:line` only when line > 0):
			// `in __asan::CheckUnwind() crtstuff.c`.
			f.File = rest[j+1:]
			rest = rest[:j]
		}
	}
	// `func+0xoff` when there is no debug info.
	if k := strings.LastIndex(rest, "+0x"); k > 0 && !strings.ContainsAny(rest[k:], " ()") {
		rest = rest[:k]
	}
	if !isUnknownSymbol(rest) {
		p.setFunction(&f, rest)
	}
	return f, true
}

// sourceFileOnly reports whether s is a source file's path with no line:
// no blanks, parentheses or brackets, and a C or C++ source or header
// extension.
func sourceFileOnly(s string) bool {
	if s == "" || strings.ContainsAny(s, " ()<>[]:") {
		return false
	}
	for _, ext := range []string{".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".inc", ".S"} {
		if strings.HasSuffix(s, ext) && len(s) > len(ext) {
			return true
		}
	}
	return false
}

// unknownLocation says whether the last word of a sanitizer frame is the
// symbolizer's placeholder for a location it does not know: `<null>`,
// llvm-symbolizer's `??:?`, `??:0`, `??:0:0` (addr2line's style), `??`.
func unknownLocation(s string) bool {
	switch s {
	case "<null>", "??:?", "??:0", "??:0:0", "??":
		return true
	}
	return false
}

// splitFileLine splits `file:line` or `file:line:col`.
func splitFileLine(s string) (file string, line, col int, ok bool) {
	c := strings.LastIndexByte(s, ':')
	if c <= 0 || !allDigits(s[c+1:]) {
		return "", 0, 0, false
	}
	n := atoi(s[c+1:])
	if c2 := strings.LastIndexByte(s[:c], ':'); c2 > 0 && allDigits(s[c2+1:c]) {
		return s[:c2], atoi(s[c2+1 : c]), n, true
	}
	return s[:c], n, 0, true
}

// parseGDBFrame parses gdb/pstack frames (F7.2):
//
//	#1  0x0000557b0adaa7a2 in doris::OlapScanNode::transfer_thread (this=0x7f3a…) at /root/…/olap_scan_node.cpp:1342
//	#2  doris::Foo::inlined_bar (x=<optimized out>) at /root/doris/be/src/foo.h:12
//	#4  0x00007f88aa0b0387 in raise () from /lib64/libc.so.6
//	#3  <signal handler called>
//
// The signal boundary becomes a frame whose Function is "<signal handler
// called>". Which frames are inlined is decided by the assembler from the
// frames around (see incident.gdbFrame): gdb prints an address on the
// innermost frame of each inline group only.
func (p *parser) parseGDBFrame(s string) (Frame, bool) {
	idx, rest, ok := hashIndex(s)
	if !ok {
		return Frame{}, false
	}
	f := Frame{Index: idx, Raw: s}
	if strings.HasPrefix(rest, "0x") {
		if j := strings.Index(rest, " in "); j > 0 {
			if v, ok := parseHex(rest[:j]); ok {
				f.PC = Addr(v)
				rest = rest[j+4:]
			}
		} else if v, ok := parseHex(strings.TrimSpace(rest)); ok {
			f.PC = Addr(v)
			return f, true
		}
	}
	if strings.HasPrefix(rest, "<signal handler called>") {
		f.Function = "<signal handler called>"
		return f, true
	}
	rest = coreTextModule(rest, &f)
	if j := strings.LastIndex(rest, " from "); j > 0 && !strings.ContainsAny(rest[j+6:], " ()") {
		f.Module = rest[j+6:]
		rest = rest[:j]
	} else if j := strings.LastIndex(rest, " at "); j > 0 {
		if file, line, _, ok := splitFileLine(rest[j+4:]); ok && !strings.Contains(file, " ") {
			f.File, f.Line = file, line
			rest = rest[:j]
		}
	}
	if r, ok := strings.CutSuffix(rest, " (inlined)"); ok {
		// crashsig's core text marks an inline frame so; gdb prints an
		// argument list there, never the bare word.
		rest, f.Inlined = r, true
	}
	rest = stripGDBArgs(rest)
	if rest != "??" {
		p.setFunction(&f, rest)
	}
	return f, true
}

// coreTextModule takes the ` (module+0xoffset)` that crashsig's core text
// (symbolize.WriteCoreText) ends a frame with off rest into f, and returns
// the rest. gdb ends a frame with ` at file:line`, ` from library` or an
// argument list, never with a parenthesized `name+0xhex`.
func coreTextModule(rest string, f *Frame) string {
	if !strings.HasSuffix(rest, ")") {
		return rest
	}
	open := strings.LastIndex(rest, " (")
	if open < 0 {
		return rest
	}
	mod, v, ok := parseModuleOffset(rest[open+1:])
	if !ok || strings.ContainsAny(mod, " ()+=,") {
		return rest
	}
	f.Module, f.Offset, f.HasOffset = mod, Addr(v), true
	return rest[:open]
}

// stripGDBArgs removes the argument list gdb prints after a function name:
// `f (this=0x1, x=2)` → `f`, `__GI_abort ()` → `__GI_abort`,
// `__sanitizer::Abort() ()` → `__sanitizer::Abort()`.
func stripGDBArgs(s string) string {
	s = strings.TrimRight(s, " ")
	if !strings.HasSuffix(s, ")") {
		return s
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if i > 0 && s[i-1] == ' ' {
					return strings.TrimRight(s[:i-1], " ")
				}
				return s
			}
		}
	}
	return s
}

// parseJavaFrame parses `\tat pkg.Class.method(File.java:42)` (jstack) and
// `at pkg.Class.method(Native Method)`.
func parseJavaFrame(s string) (Frame, bool) {
	t := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(t, "at ") || !strings.HasSuffix(t, ")") {
		return Frame{}, false
	}
	t = t[3:]
	open := strings.IndexByte(t, '(')
	if open <= 0 || strings.ContainsAny(t[:open], " <") && !strings.Contains(t[:open], "<init>") && !strings.Contains(t[:open], "<clinit>") && !strings.Contains(t[:open], "lambda$") {
		return Frame{}, false
	}
	f := Frame{Function: t[:open], Java: true, Raw: s}
	loc := t[open+1 : len(t)-1]
	if k := strings.LastIndexByte(loc, '/'); k >= 0 { // java.base@17.0.9/Thread.java:833
		loc = loc[k+1:]
	}
	if c := strings.LastIndexByte(loc, ':'); c > 0 && allDigits(loc[c+1:]) {
		f.File, f.Line = loc[:c], atoi(loc[c+1:])
	} else if loc != "Native Method" && loc != "Unknown Source" {
		f.File = loc
	}
	return f, true
}

// hashIndex splits the `#<n> ` frame number that sanitizer and gdb frames
// start with from the rest of the line (leading blanks removed).
func hashIndex(s string) (idx int, rest string, ok bool) {
	t := strings.TrimLeft(s, " \t")
	if len(t) < 3 || t[0] != '#' || !isDigit(t[1]) {
		return 0, "", false
	}
	i := 1
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	if i >= len(t) || t[i] != ' ' {
		return 0, "", false
	}
	return atoi(t[1:i]), strings.TrimLeft(t[i:], " "), true
}
