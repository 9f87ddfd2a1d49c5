// Package apilist lists the exported API of Go packages as sorted lines of
// text, one declaration a line, in the manner of Go's own api/*.txt files:
//
//	pkg lang, func Parse(string) (Template, error)
//	pkg lang, method (ErrorList) Unwrap() []error
//	pkg lang, type Segment struct, Invalid bool
//
// It reads the packages' source (test files left out), so a listing can be
// made and checked without building them. Parameter names are left out of
// signatures: renaming one does not change the API.
package apilist

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Dir lists the exported API of the package in dir, naming it pkg.
func Dir(dir, pkg string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	l := lister{fset: fset, pkg: pkg}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apilist: %w", err)
		}
		if ignored(file) {
			continue
		}
		for _, d := range file.Decls {
			l.decl(d)
		}
	}
	slices.Sort(l.lines)
	return slices.Compact(l.lines), nil
}

// ignored reports whether a build constraint leaves file out of an
// ordinary build (a generator's //go:build ignore, say).
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if c.Text == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// Tree lists the exported API of every package under root whose path,
// relative to root and with slashes, keep accepts ("." for root itself).
// Each line names its package by that path.
func Tree(root string, keep func(rel string) bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if !keep(rel) {
			return nil
		}
		lines, err := Dir(path, rel)
		if err != nil {
			return err
		}
		out = append(out, lines...)
		return nil
	})
	slices.Sort(out)
	return out, err
}

type lister struct {
	fset  *token.FileSet
	pkg   string
	lines []string
}

func (l *lister) add(format string, args ...any) {
	l.lines = append(l.lines, "pkg "+l.pkg+", "+fmt.Sprintf(format, args...))
}

func (l *lister) decl(d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return
		}
		if d.Recv == nil {
			l.add("func %s%s", d.Name.Name, l.signature(d.Type))
			return
		}
		recv := l.expr(stripNames(d.Recv).List[0].Type)
		if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
			return
		}
		l.add("method (%s) %s%s", recv, d.Name.Name, l.signature(d.Type))
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				l.typeSpec(s)
			case *ast.ValueSpec:
				kind := "var"
				if d.Tok == token.CONST {
					kind = "const"
				}
				for _, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					if s.Type != nil {
						l.add("%s %s %s", kind, n.Name, l.expr(s.Type))
					} else {
						l.add("%s %s", kind, n.Name)
					}
				}
			}
		}
	}
}

func (l *lister) typeSpec(s *ast.TypeSpec) {
	if !s.Name.IsExported() {
		return
	}
	name := s.Name.Name
	if s.TypeParams != nil {
		name += l.typeParams(s.TypeParams)
	}
	if s.Assign.IsValid() {
		l.add("type %s = %s", name, l.expr(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		l.add("type %s struct", name)
		for _, f := range t.Fields.List {
			typ := l.expr(f.Type)
			if len(f.Names) == 0 { // embedded
				if ast.IsExported(strings.TrimLeft(strings.SplitN(typ[strings.LastIndex(typ, ".")+1:], "[", 2)[0], "*")) {
					l.add("type %s struct, embedded %s", name, typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					l.add("type %s struct, %s %s", name, n.Name, typ)
				}
			}
		}
	case *ast.InterfaceType:
		l.add("type %s interface", name)
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				l.add("type %s interface, embedded %s", name, l.expr(m.Type))
				continue
			}
			for _, n := range m.Names {
				if n.IsExported() {
					l.add("type %s interface, %s%s", name, n.Name, l.signature(m.Type.(*ast.FuncType)))
				} else {
					l.add("type %s interface, unexported methods", name)
				}
			}
		}
	default:
		l.add("type %s %s", name, l.expr(s.Type))
	}
}

// signature prints a function type without "func" and without parameter
// names.
func (l *lister) signature(t *ast.FuncType) string {
	c := *t
	c.Params = stripNames(t.Params)
	c.Results = stripNames(t.Results)
	c.TypeParams = nil
	s := strings.TrimPrefix(l.expr(&c), "func")
	if t.TypeParams != nil {
		s = l.typeParams(t.TypeParams) + s
	}
	return s
}

// stripNames returns fl with one unnamed field per name.
func stripNames(fl *ast.FieldList) *ast.FieldList {
	if fl == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range fl.List {
		n := max(len(f.Names), 1)
		for range n {
			out.List = append(out.List, &ast.Field{Type: f.Type})
		}
	}
	return out
}

// typeParams prints a type parameter list: "[K comparable, V any]".
func (l *lister) typeParams(fl *ast.FieldList) string {
	var ps []string
	for _, f := range fl.List {
		for _, n := range f.Names {
			ps = append(ps, n.Name+" "+l.expr(f.Type))
		}
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

func (l *lister) expr(e ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), e); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
