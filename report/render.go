package report

import (
	"bufio"
	"context"
	_ "embed"
	"html/template"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Options configure a page. The zero value renders every bucket with the
// title "Crash report" and no generation time.
type Options struct {
	// Title is the page title.
	Title string
	// Generated, when set, is shown as the time the page was made. Left
	// zero, the page holds no wall-clock time and the same buckets give
	// the same bytes.
	Generated time.Time
	// MaxSections, when positive, bounds the per-bucket sections to the
	// top MaxSections buckets; the table still lists every bucket and the
	// page says how many sections were left out.
	MaxSections int
}

var (
	//go:embed page.html.tmpl
	pageSrc string
	//go:embed style.css
	styleSrc string
	//go:embed script.js
	scriptSrc string
)

// pageTmpl is parsed once; html/template escapes every value by context.
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	// css and js return the embedded style sheet and script: constants of
	// this package, never input.
	"css":    func() template.CSS { return template.CSS(styleSrc) },
	"js":     func() template.JS { return template.JS(scriptSrc) },
	"join":   strings.Join,
	"plural": plural,
}).Parse(pageSrc))

// ctxWriter stops the page once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// utf8Writer passes valid UTF-8 on and writes U+FFFD for every byte that
// is not part of a valid sequence: html/template escapes markup but not
// bytes, and the page declares UTF-8. A sequence cut between two writes
// is held until the next one; Close ends a held one.
type utf8Writer struct {
	w    io.Writer
	held []byte
	out  []byte
}

func (u *utf8Writer) Write(p []byte) (int, error) {
	if len(u.held) == 0 && utf8.Valid(p) {
		_, err := u.w.Write(p)
		return len(p), err
	}
	data := append(u.held, p...)
	u.held = nil
	out := u.out[:0]
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		if !utf8.FullRune(data[i:]) {
			u.held = append(u.held[:0:0], data[i:]...)
			break
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, data[i:i+n]...)
		}
		i += n
	}
	u.out = out
	_, err := u.w.Write(out)
	return len(p), err
}

// Close writes U+FFFD for a sequence the input ended inside.
func (u *utf8Writer) Close() error {
	if len(u.held) == 0 {
		return nil
	}
	u.held = nil
	_, err := io.WriteString(u.w, "\uFFFD")
	return err
}

// Render writes the page for buckets to w. Buckets come from
// Collector.Buckets or ReadBuckets (Merge them when they may overlap); the
// page ranks them itself. It returns ctx's error when ctx ends first, or
// the writer's error.
func Render(ctx context.Context, w io.Writer, buckets []Bucket, opts Options) error {
	p, err := build(ctx, buckets, opts)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(ctxWriter{ctx: ctx, w: w}, 64<<10)
	uw := &utf8Writer{w: bw}
	if err := pageTmpl.Execute(uw, p); err != nil {
		return err
	}
	if err := uw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}
