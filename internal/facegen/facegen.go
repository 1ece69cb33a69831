// Package facegen writes the public face of an internal package: a Go file,
// in the public package, that declares a type alias for each exported type,
// a constant or variable for each exported constant or variable (constant
// groups kept as groups), and a wrapper for each exported function, each
// with the documentation of the declaration it forwards to.
//
// symbolize uses it for the scanner (internal/scan) and the demangler
// (internal/demangler): their exported names are symbolize's API, and the
// face files are generated, never edited (symbolize's TestFaceGenerated
// fails when a face file differs from what Generate returns;
// `go test ./symbolize -run TestFaceGenerated -update` rewrites them).
//
// Generate reads source only (go/parser); it imports nothing of the
// module and does not type-check, so the face of a package that does not
// compile can still be produced.
package facegen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Options say what to generate.
type Options struct {
	Dir     string            // directory of the internal package
	Name    string            // its package name (scan)
	Path    string            // its import path
	OutPkg  string            // the package the face belongs to (symbolize)
	Skip    []string          // exported names of Dir that are not part of the face
	Rename  map[string]string // exported name in Dir -> name in the face (New -> NewDemangler)
	AddNote string            // a paragraph appended to each type alias's doc comment ("" for none)
}

type item struct{ name, text string }

// Generate returns the gofmt'ed face file.
func Generate(o Options) ([]byte, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, o.Dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	p, ok := pkgs[o.Name]
	if !ok {
		return nil, fmt.Errorf("facegen: no package %s in %s", o.Name, o.Dir)
	}
	skip := func(n string) bool { return !ast.IsExported(n) || slices.Contains(o.Skip, n) }
	rename := func(n string) string {
		if r, ok := o.Rename[n]; ok {
			return r
		}
		return n
	}
	src := func(n ast.Node) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return b.String()
	}
	doc := func(g *ast.CommentGroup, indent string) string {
		if g == nil {
			return ""
		}
		var b strings.Builder
		for _, c := range g.List {
			t := c.Text
			for n, r := range o.Rename {
				t = replaceWord(t, n, r)
			}
			b.WriteString(indent + t + "\n")
		}
		return b.String()
	}
	imports := map[string]bool{o.Path: true}
	var items []item
	names := make([]string, 0, len(p.Files))
	for n := range p.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, fn := range names {
		f := p.Files[fn]
		fileImports := map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			fileImports[name] = path
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil || skip(d.Name.Name) {
					continue
				}
				var args []string
				for _, fld := range d.Type.Params.List {
					for _, n := range fld.Names {
						a := n.Name
						if _, ok := fld.Type.(*ast.Ellipsis); ok {
							a += "..."
						}
						args = append(args, a)
					}
				}
				ast.Inspect(d.Type, func(x ast.Node) bool {
					if se, ok := x.(*ast.SelectorExpr); ok {
						if id, ok := se.X.(*ast.Ident); ok {
							if path, ok := fileImports[id.Name]; ok {
								imports[path] = true
							}
						}
					}
					return true
				})
				sig := strings.TrimPrefix(src(d.Type), "func")
				call := fmt.Sprintf("%s.%s(%s)", o.Name, d.Name.Name, strings.Join(args, ", "))
				body := "return " + call
				if d.Type.Results == nil {
					body = call
				}
				items = append(items, item{rename(d.Name.Name), doc(d.Doc, "") + fmt.Sprintf("func %s%s {\n\t%s\n}\n", rename(d.Name.Name), sig, body)})
			case *ast.GenDecl:
				if (d.Tok == token.CONST || d.Tok == token.VAR) && len(d.Specs) > 1 {
					kw := d.Tok.String()
					var b strings.Builder
					first := ""
					b.WriteString(doc(d.Doc, "") + kw + " (\n")
					for _, s := range d.Specs {
						vs := s.(*ast.ValueSpec)
						for _, n := range vs.Names {
							if skip(n.Name) {
								continue
							}
							if first == "" {
								first = rename(n.Name)
							}
							b.WriteString(doc(vs.Doc, "\t"))
							line := fmt.Sprintf("\t%s = %s.%s", rename(n.Name), o.Name, n.Name)
							if vs.Comment != nil {
								line += " " + vs.Comment.List[0].Text
							}
							b.WriteString(line + "\n")
						}
					}
					b.WriteString(")\n")
					if first != "" {
						items = append(items, item{first, b.String()})
					}
					continue
				}
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if skip(s.Name.Name) {
							continue
						}
						dc := s.Doc
						if dc == nil {
							dc = d.Doc
						}
						text := doc(dc, "")
						if o.AddNote != "" {
							text += "//\n// " + strings.ReplaceAll(o.AddNote, "%s", s.Name.Name) + "\n"
						}
						items = append(items, item{rename(s.Name.Name), text + fmt.Sprintf("type %s = %s.%s\n", rename(s.Name.Name), o.Name, s.Name.Name)})
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if skip(n.Name) {
								continue
							}
							dc := s.Doc
							if dc == nil {
								dc = d.Doc
							}
							if dc == nil {
								dc = s.Comment
							}
							items = append(items, item{rename(n.Name), doc(dc, "") + fmt.Sprintf("%s %s = %s.%s\n", d.Tok, rename(n.Name), o.Name, n.Name)})
						}
					}
				}
			}
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by internal/facegen from %s; DO NOT EDIT.\n\npackage %s\n\nimport (\n", o.Path, o.OutPkg)
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n\n")
	for _, it := range items {
		b.WriteString(it.text + "\n")
	}
	return format.Source([]byte(b.String()))
}

// replaceWord replaces whole-word occurrences of old in s by new.
func replaceWord(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		before := i == 0 || !isIdent(s[i-1])
		after := end == len(s) || !isIdent(s[end])
		b.WriteString(s[:i])
		if before && after {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
