package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/crashsig/crashsig/pipeline"
	"github.com/crashsig/crashsig/symbolize"
)

// cmdSymbolize implements `crashsig symbolize`: addr2line for C++ backends,
// in process. PCs come from the arguments or, when there are none, from
// stdin, one a line: hex with or without 0x, or module+0xoffset. Like
// addr2line and llvm-symbolizer, an address is looked up as given; with
// --return-addresses (addresses taken from a stack, which point after the
// call) pc-1 is looked up. An address that resolves to nothing prints
// ?? (??:0), and stderr says why.
func cmdSymbolize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("symbolize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var debugDirs stringList
	var bias hexFlag
	bin := fs.String("binary", "", "ELF executable or shared object (required)")
	fs.Var(&debugDirs, "debug-dir", "debug root with .build-id/ or debuglink files, searched before /usr/lib/debug (repeatable)")
	noSystemDebug := fs.Bool("no-system-debug-dir", false, "do not search /usr/lib/debug")
	debugFile := fs.String("debug-file", "", "separate debug file (objcopy --only-keep-debug)")
	fs.Var(&bias, "bias", "load bias (hex) subtracted from absolute PCs of a PIE")
	retAddrs := fs.Bool("return-addresses", false, "addresses are return addresses from a stack: look up pc-1 (the call)")
	exact := fs.Bool("exact", true, "addresses are exact instruction addresses (the default); --exact=false is --return-addresses")
	asJSON := fs.Bool("json", false, "print one JSON object per PC")
	style := fs.String("style", "addr2line", "text style: addr2line (function, file:line) or llvm (function, file:line:col, blank line; raw names with -raw)")
	raw := fs.Bool("raw", false, "print raw (mangled) names instead of demangled ones")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crashsig symbolize --binary FILE [--debug-dir DIR]... [--debug-file F] [--bias HEX] [--return-addresses] [--json] [PC...]")
		fmt.Fprintln(stderr, "FILE is read in place: a compressed binary must be decompressed first.")
		fmt.Fprintln(stderr, "Exit status: 0 every line read (?? lines are explained on stderr), 1 an unreadable (or compressed) binary or a line that is not an address, 2 usage.")
		fs.PrintDefaults()
	}
	pcs, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if *bin == "" || (*style != "addr2line" && *style != "llvm") {
		fs.Usage()
		return exitUsage
	}
	exactSet := false
	fs.Visit(func(f *flag.Flag) { exactSet = exactSet || f.Name == "exact" })
	if exactSet && *exact && *retAddrs {
		fmt.Fprintln(stderr, "crashsig: --exact and --return-addresses contradict each other: give one")
		return exitUsage
	}
	lookupExact := *exact && !*retAddrs
	dirs := []string(debugDirs)
	if !*noSystemDebug {
		dirs = append(dirs, pipeline.SystemDebugDirs()...)
	}
	b, err := symbolize.OpenBinaryContext(ctx, *bin, symbolize.BinaryOptions{DebugFile: *debugFile, DebugDirs: dirs})
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		return exitInput
	}
	defer b.Close()
	for _, w := range b.Warnings() {
		fmt.Fprintf(stderr, "crashsig: %s: warning: %v\n", *bin, w)
	}
	if !b.HasDWARF() {
		fmt.Fprintf(stderr, "crashsig: %s: warning: no DWARF; names from the symbol table only, no file:line\n", *bin)
	}
	out := newOutput(stdout)
	opts := symOutOpts{exact: lookupExact, json: *asJSON, llvm: *style == "llvm", raw: *raw, bias: bias.v, bin: b}
	var src lineSource
	if len(pcs) > 0 {
		src = &argLines{args: pcs}
	} else {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		src = sc
	}
	res, err := symbolizeStream(ctx, b, src, opts, out)
	if werr := b.MissingDWO(); werr != nil {
		fmt.Fprintf(stderr, "crashsig: %s: warning: %v\n", *bin, werr)
	}
	for _, why := range res.unresolved {
		fmt.Fprintf(stderr, "crashsig: %s\n", why)
	}
	if res.more > 0 {
		fmt.Fprintf(stderr, "crashsig: … and %d more addresses printed as ??\n", res.more)
	}
	code = exitOK
	if err != nil {
		fmt.Fprintf(stderr, "crashsig: %v\n", err)
		code = exitInput
	}
	if res.bad {
		code = exitInput
	}
	return out.close(stderr, code)
}

// lineSource is a bufio.Scanner or the command-line PCs.
type lineSource interface {
	Scan() bool
	Text() string
	Err() error
}

type argLines struct {
	args []string
	cur  string
}

func (a *argLines) Scan() bool {
	if len(a.args) == 0 {
		return false
	}
	a.cur, a.args = a.args[0], a.args[1:]
	return true
}
func (a *argLines) Text() string { return a.cur }
func (a *argLines) Err() error   { return nil }

// symChunk is a run of input lines and, once a worker is done, their output.
type symChunk struct {
	lines []string
	first int // input line number of lines[0]
	buf   bytes.Buffer
	res   symResult
	done  chan struct{}
}

// symResult is what a run of lines left unresolved, and why.
type symResult struct {
	bad        bool     // a line is not an address
	unresolved []string // why, for the first maxWhy ?? lines
	more       int      // ?? lines beyond those
}

const maxWhy = 20

func (r *symResult) add(o symResult) {
	r.bad = r.bad || o.bad
	for _, w := range o.unresolved {
		if len(r.unresolved) < maxWhy {
			r.unresolved = append(r.unresolved, w)
		} else {
			r.more++
		}
	}
	r.more += o.more
}

// symbolizeStream symbolizes the PCs of src, one a line, with GOMAXPROCS
// workers (Lookup is safe for concurrent use; demangling and the first
// parse of a compile unit dominate and run in parallel) and writes the
// results to out in input order. Lines travel in chunks of 256, at most
// 4 per worker in flight, so memory stays bounded on any input size and
// no worker waits for a slow neighbour's whole batch.
func symbolizeStream(ctx context.Context, b *symbolize.Binary, src lineSource, opts symOutOpts, out io.Writer) (res symResult, err error) {
	const chunkLines = 256
	workers := runtime.GOMAXPROCS(0)
	free := make(chan *symChunk, 4*workers)
	for range 4 * workers {
		free <- &symChunk{lines: make([]string, 0, chunkLines), done: make(chan struct{}, 1)}
	}
	work := make(chan *symChunk, 4*workers)
	order := make(chan *symChunk, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				c.buf.Reset()
				c.res = symbolizeLines(b, c.lines, c.first, opts, &c.buf)
				c.done <- struct{}{}
			}
		}()
	}
	// The writer drains finished chunks in input order.
	writeErr := make(chan error, 1)
	go func() {
		var werr error
		for c := range order {
			<-c.done
			if werr == nil {
				_, werr = out.Write(c.buf.Bytes())
			}
			res.add(c.res)
			c.lines = c.lines[:0]
			free <- c
		}
		writeErr <- werr
	}()
	lineNo := 0
	c := <-free
	c.first = 1
	for src.Scan() {
		lineNo++
		c.lines = append(c.lines, src.Text())
		if len(c.lines) == chunkLines {
			if err = ctx.Err(); err != nil {
				break
			}
			order <- c
			work <- c
			c = <-free
			c.first = lineNo + 1
		}
	}
	if len(c.lines) > 0 && err == nil {
		order <- c
		work <- c
	}
	close(work)
	close(order)
	wg.Wait()
	werr := <-writeErr
	if err == nil {
		err = src.Err()
	}
	if err == nil {
		err = werr
	}
	return res, err
}

type symOutOpts struct {
	exact, json, llvm, raw bool
	bias                   uint64
	bin                    *symbolize.Binary
}

// symbolizeLines looks up one PC per input line and renders the results
// into buf. It returns what was left unresolved, and why.
func symbolizeLines(b *symbolize.Binary, lines []string, first int, o symOutOpts, buf *bytes.Buffer) symResult {
	w := bufio.NewWriter(buf)
	defer w.Flush()
	var locs []symbolize.Location
	var res symResult
	for i, in := range lines {
		in = strings.TrimSpace(in)
		if in == "" {
			continue
		}
		pc, err := parsePCInput(in, o.bias)
		locs = locs[:0]
		why := ""
		if err != nil {
			res.bad = true
			why = fmt.Sprintf("line %d: %v", first+i, err)
		} else {
			locs, err = b.AppendLookup(locs, pc, symbolize.LookupOptions{Exact: o.exact, NoDemangle: o.raw})
			switch {
			case err != nil:
				why = fmt.Sprintf("%s: ?? because %v", in, err)
			case len(locs) == 0:
				why = in + ": ?? because " + whyUnresolved(b, pc, o)
			}
		}
		if why != "" {
			res.add(symResult{unresolved: []string{why}})
		}
		switch {
		case o.json:
			rec := struct {
				Input  string               `json:"input"`
				PC     symbolize.Addr       `json:"pc"`
				Frames []symbolize.Location `json:"frames"`
				Error  string               `json:"error,omitempty"`
			}{Input: in, PC: symbolize.Addr(pc), Frames: locs}
			if rec.Frames == nil {
				rec.Frames = []symbolize.Location{}
			}
			if why != "" {
				rec.Error = why
			}
			js, _ := json.Marshal(rec)
			w.Write(js)
			w.WriteByte('\n')
		case o.llvm:
			writeFrames(w, locs, o.raw, true)
			w.WriteByte('\n')
		default:
			writeFrames(w, locs, o.raw, false)
		}
	}
	return res
}

// whyUnresolved says why no symbol or line covers pc.
func whyUnresolved(b *symbolize.Binary, pc uint64, o symOutOpts) string {
	switch {
	case b.IsPIE() && o.bias == 0 && pc >= 1<<40:
		return "it looks like a run-time address of a position-independent binary: give --bias (load address minus link address) or module+0xoffset"
	case !b.HasDWARF():
		return "no symbol of the binary covers it and the binary has no DWARF (give --debug-dir or --debug-file)"
	}
	return "no symbol and no DWARF compile unit of the binary covers it (an address of another module, or data?)"
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
