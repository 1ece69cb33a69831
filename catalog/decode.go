package catalog

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// SchemaVersion is the catalog format version this package reads.
const SchemaVersion = 1

// MaxFileSize bounds one catalog file.
const MaxFileSize = 16 << 20

// maxListLen bounds every list in a catalog file.
const maxListLen = 100000

// maxStructure bounds the YAML structure bytes of one file (',', '\n',
// '[', '{', ':', '-'), counted before the node tree is built: every node
// but the first follows one, and a node costs about 200 bytes, so a file
// of tiny nodes (`[a,a,a,…]`) within MaxFileSize would otherwise build a
// tree a hundred times its size. The default catalog's largest file has
// about 21,000.
const maxStructure = 1 << 19

var (
	idRE      = regexp.MustCompile(`^(DORIS|SR)-[0-9]+-[a-z0-9][a-z0-9-]*$`)
	ruleIDRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	areaRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	revisionR = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._+-]*$`)
)

// decoder walks a yaml.Node tree strictly, collecting *Error values.
type decoder struct {
	file string
	errs Errors
}

func (d *decoder) errf(n *yaml.Node, field string, sentinel error, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Err: sentinel})
}

// Parse decodes one catalog file strictly: unknown keys, wrong types, bad
// globs, regular expressions, ids and version ranges are errors naming
// the file, line and field. The error, if any, is an Errors value.
func Parse(name string, data []byte) (f *File, err error) {
	d := &decoder{file: name}
	if len(data) > MaxFileSize {
		d.errf(nil, "", ErrTooLarge, "%d bytes, more than %d", len(data), MaxFileSize)
		return nil, d.errs
	}
	if line := structureLine(data); line > 0 {
		d.errs = append(d.errs, &Error{File: name, Line: line, Msg: fmt.Sprintf("more than %d YAML separators (',', newlines, '[', '{', ':', '-'): too many nodes for a catalog file", maxStructure), Err: ErrTooLarge})
		return nil, d.errs
	}
	defer func() { // the YAML parser must never take the caller down
		if r := recover(); r != nil {
			f = nil
			err = Errors{{File: name, Msg: fmt.Sprintf("YAML parser failed: %v", r), Err: ErrSyntax}}
		}
	}()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		line := 0
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
		} else {
			// The reader's own errors (invalid UTF-8, control
			// characters) carry no position: find the byte.
			line = unreadableLine(data)
		}
		if msg == "EOF" {
			msg = "empty file"
		}
		d.errs = append(d.errs, &Error{File: name, Line: line, Msg: msg, Err: ErrSyntax})
		return nil, d.errs
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		d.errf(&extra, "", ErrSyntax, "more than one YAML document")
	}
	f = &File{Name: name}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	sawSchema := false
	d.mapping(root, "", func(key string, k, v *yaml.Node) {
		switch key {
		case "schema":
			sawSchema = true
			f.Schema = d.int(v, "schema")
			if f.Schema != SchemaVersion {
				d.errf(v, "schema", ErrSchema, "schema %s; this version of crashsig reads schema %d", v.Value, SchemaVersion)
			}
		case "revision":
			f.Revision = d.str(v, "revision")
			if !revisionR.MatchString(f.Revision) {
				d.errf(v, "revision", ErrInvalid, "revision %q: want letters, digits, '.', '_', '+', '-'", f.Revision)
			}
		case "paths":
			d.seq(v, "paths", func(i int, n *yaml.Node) {
				f.Rules = append(f.Rules, d.rule(n, fmt.Sprintf("paths[%d]", i)))
			})
		case "defects":
			d.seq(v, "defects", func(i int, n *yaml.Node) {
				f.Defects = append(f.Defects, d.defect(n, fmt.Sprintf("defects[%d]", i)))
			})
		case "stack":
			f.Stack = d.stack(v, "stack")
		default:
			d.errf(k, key, ErrUnknownField, "unknown field %q (want schema, revision, stack, paths, defects)", key)
		}
	})
	if root.Kind == yaml.MappingNode {
		if !sawSchema {
			d.errf(root, "schema", ErrMissing, "missing schema (want schema: %d)", SchemaVersion)
		}
		if f.Revision == "" {
			d.errf(root, "revision", ErrMissing, "missing revision")
		}
	}
	d.uniqueIDs(f)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	return f, nil
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// structureLine returns the 1-based line at which data passes
// maxStructure structure bytes, 0 when it does not.
func structureLine(data []byte) int {
	n, line := 0, 1
	for _, c := range data {
		switch c {
		case '\n':
			line++
			n++
		case ',', '[', '{', ':', '-':
			n++
		default:
			continue
		}
		if n > maxStructure {
			return line
		}
	}
	return 0
}

// unreadableLine returns the 1-based line of the first byte the YAML
// reader refuses (invalid UTF-8, or a character outside YAML's printable
// set: C0 and C1 controls but tab, LF, CR and NEL; DEL; surrogates;
// U+FFFE, U+FFFF), 0 when there is none.
func unreadableLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		ok := !(r == utf8.RuneError && size <= 1) &&
			(r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85 ||
				r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff)
		if !ok {
			return line
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return 0
}

func (d *decoder) uniqueIDs(f *File) {
	seen := map[string]int{}
	for i, r := range f.Rules {
		if r.ID == "" {
			continue
		}
		if l, ok := seen["p:"+r.ID]; ok {
			d.errs = append(d.errs, &Error{File: d.file, Line: r.Line, Field: fmt.Sprintf("paths[%d].id", i), Msg: fmt.Sprintf("path rule id %q already used at line %d", r.ID, l), Err: ErrDuplicate})
		}
		seen["p:"+r.ID] = r.Line
	}
	for i, df := range f.Defects {
		if df.ID == "" {
			continue
		}
		if l, ok := seen["d:"+df.ID]; ok {
			d.errs = append(d.errs, &Error{File: d.file, Line: df.Line, Field: fmt.Sprintf("defects[%d].id", i), Msg: fmt.Sprintf("defect id %q already used at line %d", df.ID, l), Err: ErrDuplicate})
		}
		seen["d:"+df.ID] = df.Line
	}
}

// mapping calls fn for each key of a mapping node, in order; duplicate keys
// and non-mapping nodes are errors.
func (d *decoder) mapping(n *yaml.Node, field string, fn func(key string, k, v *yaml.Node)) {
	if n.Kind == yaml.AliasNode {
		d.errf(n, field, ErrInvalid, "YAML aliases are not supported")
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errf(n, field, ErrInvalid, "want a mapping, got %s", nodeKind(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errf(k, field, ErrInvalid, "mapping key must be a plain string")
			continue
		}
		sub := k.Value
		if field != "" {
			sub = field + "." + k.Value
		}
		if seen[k.Value] {
			d.errf(k, sub, ErrDuplicate, "key %q given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			d.errf(v, sub, ErrInvalid, "YAML aliases are not supported")
			continue
		}
		fn(k.Value, k, v)
	}
}

func (d *decoder) seq(n *yaml.Node, field string, fn func(i int, n *yaml.Node)) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errf(n, field, ErrInvalid, "want a list, got %s", nodeKind(n))
		return
	}
	if len(n.Content) > maxListLen {
		d.errf(n, field, ErrInvalid, "list of %d items, more than %d", len(n.Content), maxListLen)
		return
	}
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			d.errf(c, fmt.Sprintf("%s[%d]", field, i), ErrInvalid, "YAML aliases are not supported")
			continue
		}
		fn(i, c)
	}
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing (null)"
		}
		return fmt.Sprintf("the %s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	case yaml.DocumentNode:
		return "a document"
	}
	return "an alias"
}

func (d *decoder) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errf(n, field, ErrInvalid, "want a string, got %s", nodeKind(n))
		return ""
	}
	return n.Value
}

func (d *decoder) int(n *yaml.Node, field string) int {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.errf(n, field, ErrInvalid, "want an integer, got %s", nodeKind(n))
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil {
		d.errf(n, field, ErrInvalid, "integer %q out of range", n.Value)
		return 0
	}
	return int(v)
}

func (d *decoder) strs(n *yaml.Node, field string) []string {
	var out []string
	d.seq(n, field, func(i int, c *yaml.Node) {
		out = append(out, d.str(c, fmt.Sprintf("%s[%d]", field, i)))
	})
	return out
}

// globs decodes a list of frame globs and checks that each compiles.
func (d *decoder) globs(n *yaml.Node, field string) []string {
	var out []string
	d.seq(n, field, func(i int, c *yaml.Node) {
		f := fmt.Sprintf("%s[%d]", field, i)
		s := d.str(c, f)
		if _, err := compileGlob(s); err != nil {
			d.errf(c, f, ErrInvalid, "%v", err)
		}
		out = append(out, s)
	})
	return out
}

func (d *decoder) path(n *yaml.Node, field string) Path {
	p := Path(d.str(n, field))
	if !validPaths[p] {
		d.errf(n, field, ErrInvalid, "path %q: want scan, query, load, background, lifecycle or unknown", p)
	}
	return p
}

func (d *decoder) area(n *yaml.Node, field string) string {
	a := d.str(n, field)
	if !areaRE.MatchString(a) {
		d.errf(n, field, ErrInvalid, "area %q: want lower-case words joined by '-'", a)
	}
	return a
}

func (d *decoder) bool(n *yaml.Node, field string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errf(n, field, ErrInvalid, "want true or false, got %s", nodeKind(n))
		return false
	}
	v, err := strconv.ParseBool(n.Value)
	if err != nil {
		d.errf(n, field, ErrInvalid, "boolean %q: want true or false", n.Value)
	}
	return v
}

func (d *decoder) float(n *yaml.Node, field string) float64 {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!float" && n.Tag != "!!int") {
		d.errf(n, field, ErrInvalid, "want a number, got %s", nodeKind(n))
		return 0
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		d.errf(n, field, ErrInvalid, "number %q: %v", n.Value, err)
		return 0
	}
	return v
}

// re2 compiles an RE2 expression, reporting a bad one.
func (d *decoder) re2(n *yaml.Node, field, expr string) *regexp.Regexp {
	re, err := regexp.Compile(expr)
	if err != nil {
		d.errf(n, field, ErrInvalid, "%s is not an RE2 expression: %v", field[strings.LastIndexByte(field, '.')+1:], err)
	}
	return re
}

// testPaths decodes a list of repo-relative log paths (tests, taught_by).
func (d *decoder) testPaths(n *yaml.Node, field string) []string {
	out := d.strs(n, field)
	for i, s := range out {
		if s == "" || strings.HasPrefix(s, "/") || strings.Contains(s, "..") || strings.Contains(s, `\`) {
			d.errf(n.Content[i], fmt.Sprintf("%s[%d]", field, i), ErrInvalid, "log %q: want a repo-relative path with '/' separators", s)
		}
	}
	return out
}
