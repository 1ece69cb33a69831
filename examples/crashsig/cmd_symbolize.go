package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/crashsig/crashsig/symbolize"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// cmdSymbolize implements `crashsig symbolize`: addr2line for C++ backends,
// in process. PCs come from the arguments or, when there are none, from
// stdin, one a line: hex with or without 0x, or module+0xoffset.
func cmdSymbolize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("symbolize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var debugDirs stringList
	bin := fs.String("binary", "", "ELF executable or shared object (required)")
	fs.Var(&debugDirs, "debug-dir", "debug root with .build-id/ or debuglink files (repeatable)")
	debugFile := fs.String("debug-file", "", "separate debug file (objcopy --only-keep-debug)")
	biasHex := fs.String("bias", "", "load bias (hex) subtracted from absolute PCs of a PIE")
	exact := fs.Bool("exact", false, "PCs are exact instruction addresses (default: return addresses, pc-1 is looked up)")
	asJSON := fs.Bool("json", false, "print one JSON object per PC")
	style := fs.String("style", "addr2line", "text style: addr2line (function, file:line) or llvm (function, file:line:col, blank line; raw names with -raw)")
	raw := fs.Bool("raw", false, "print raw (mangled) names instead of demangled ones")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig symbolize --binary FILE [--debug-dir DIR]... [--debug-file F] [--bias HEX] [--exact] [--json] [PC...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *bin == "" || (*style != "addr2line" && *style != "llvm") {
		fs.Usage()
		return 2
	}
	var bias uint64
	if *biasHex != "" {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(*biasHex, "0x"), "0X"), 16, 64)
		if err != nil {
			fmt.Fprintf(stderr, "crashsig symbolize: bad --bias %q\n", *biasHex)
			return 2
		}
		bias = v
	}
	b, err := symbolize.OpenBinary(*bin, symbolize.BinaryOptions{DebugFile: *debugFile, DebugDirs: debugDirs})
	if err != nil {
		fmt.Fprintln(stderr, "crashsig symbolize:", err)
		return 1
	}
	defer b.Close()
	for _, w := range b.Warnings() {
		fmt.Fprintln(stderr, "crashsig symbolize: warning:", w)
	}
	if !b.HasDWARF() {
		fmt.Fprintln(stderr, "crashsig symbolize: warning: no DWARF; names from the symbol table only")
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	defer out.Flush()
	var locs []symbolize.Location
	enc := json.NewEncoder(out)
	status := 0
	one := func(in string) {
		in = strings.TrimSpace(in)
		if in == "" {
			return
		}
		pc, perr := parsePCInput(in, bias)
		if perr == nil {
			locs, perr = b.AppendLookup(locs[:0], pc, symbolize.LookupOptions{Exact: *exact})
		} else {
			locs = locs[:0]
		}
		if perr != nil {
			status = 1
		}
		switch {
		case *asJSON:
			rec := struct {
				Input  string               `json:"input"`
				PC     symbolize.Addr       `json:"pc"`
				Frames []symbolize.Location `json:"frames"`
				Error  string               `json:"error,omitempty"`
			}{Input: in, PC: symbolize.Addr(pc), Frames: locs}
			if rec.Frames == nil {
				rec.Frames = []symbolize.Location{}
			}
			if perr != nil {
				rec.Error = perr.Error()
			}
			enc.Encode(rec)
		case *style == "llvm":
			writeFrames(out, locs, *raw, true)
			out.WriteByte('\n')
		default:
			writeFrames(out, locs, *raw, false)
		}
	}
	if fs.NArg() > 0 {
		for _, a := range fs.Args() {
			one(a)
		}
		return status
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 0; sc.Scan(); n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			fmt.Fprintln(stderr, "crashsig symbolize:", ctx.Err())
			return 1
		}
		one(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "crashsig symbolize:", err)
		return 1
	}
	return status
}

// writeFrames prints an inline chain addr2line-style (function, then
// file:line; ?? and ??:0 when unknown), or llvm-symbolizer style with columns.
func writeFrames(w *bufio.Writer, locs []symbolize.Location, raw, cols bool) {
	if len(locs) == 0 {
		locs = []symbolize.Location{{}}
	}
	var nb [24]byte
	for _, l := range locs {
		fn := l.Function
		if raw {
			fn = l.Linkage
		}
		if fn == "" {
			fn = "??"
		}
		w.WriteString(fn)
		w.WriteByte('\n')
		if l.File == "" {
			w.WriteString("??")
		} else {
			w.WriteString(l.File)
		}
		w.WriteByte(':')
		w.Write(strconv.AppendInt(nb[:0], int64(l.Line), 10))
		if cols {
			w.WriteByte(':')
			w.Write(strconv.AppendInt(nb[:0], int64(l.Column), 10))
		}
		w.WriteByte('\n')
	}
}

// parsePCInput parses "0x4005d6", "4005d6" or "module+0xoff" (the offset
// is relative to the module's load bias, as ASAN and glibc print it, so
// it is the file address). Absolute PCs have bias subtracted.
func parsePCInput(s string, bias uint64) (uint64, error) {
	if i := strings.LastIndexByte(s, '+'); i >= 0 {
		off, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s[i+1:], "0x"), "0X"), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("bad offset in %q", s)
		}
		return off, nil
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bad address %q", s)
	}
	if v < bias {
		return 0, fmt.Errorf("address %#x below load bias %#x", v, bias)
	}
	return v - bias, nil
}
