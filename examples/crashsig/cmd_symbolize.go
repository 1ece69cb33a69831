package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

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
	opts := symOutOpts{exact: *exact, json: *asJSON, llvm: *style == "llvm", raw: *raw, bias: bias}
	var src lineSource
	if fs.NArg() > 0 {
		src = &argLines{args: fs.Args()}
	} else {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		src = sc
	}
	failed, err := symbolizeStream(ctx, b, src, opts, out)
	if werr := b.MissingDWO(); werr != nil {
		fmt.Fprintln(stderr, "crashsig symbolize: warning:", werr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "crashsig symbolize:", err)
		return 1
	}
	if failed {
		return 1
	}
	return 0
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
	lines  []string
	buf    bytes.Buffer
	failed bool
	done   chan struct{}
}

// symbolizeStream symbolizes the PCs of src, one a line, with GOMAXPROCS
// workers (Lookup is safe for concurrent use; demangling and the first
// parse of a compile unit dominate and run in parallel) and writes the
// results to out in input order. Lines travel in chunks of 256, at most
// 4 per worker in flight, so memory stays bounded on any input size and
// no worker waits for a slow neighbour's whole batch.
func symbolizeStream(ctx context.Context, b *symbolize.Binary, src lineSource, opts symOutOpts, out io.Writer) (failed bool, err error) {
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
				c.failed = symbolizeLines(b, c.lines, opts, &c.buf)
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
			failed = failed || c.failed
			c.lines = c.lines[:0]
			free <- c
		}
		writeErr <- werr
	}()
	c := <-free
	for src.Scan() {
		c.lines = append(c.lines, src.Text())
		if len(c.lines) == chunkLines {
			if err = ctx.Err(); err != nil {
				break
			}
			order <- c
			work <- c
			c = <-free
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
	return failed, err
}

type symOutOpts struct {
	exact, json, llvm, raw bool
	bias                   uint64
}

// symbolizeLines looks up one PC per input line and renders the results
// into buf. It reports whether any line failed.
func symbolizeLines(b *symbolize.Binary, lines []string, o symOutOpts, buf *bytes.Buffer) bool {
	w := bufio.NewWriter(buf)
	defer w.Flush()
	var locs []symbolize.Location
	failed := false
	for _, in := range lines {
		in = strings.TrimSpace(in)
		if in == "" {
			continue
		}
		pc, err := parsePCInput(in, o.bias)
		locs = locs[:0]
		if err == nil {
			locs, err = b.AppendLookup(locs, pc, symbolize.LookupOptions{Exact: o.exact, NoDemangle: o.raw})
		}
		if err != nil {
			failed = true
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
			if err != nil {
				rec.Error = err.Error()
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
	return failed
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
