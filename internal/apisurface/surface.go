// Package apisurface lists tenantkit's exported API and keeps it honest
// against CHANGELOG.md: every public package's exported identifiers, read
// from its non-test source files (go/parser, no type checking), in one
// sorted list that docs/api/surface.txt records.
//
// What counts as one identifier of the surface:
//   - a top-level exported const, var, func or type;
//   - an exported method declared on an exported type (its receiver's
//     type named in the source: methods promoted by embedding are not
//     listed again);
//   - an exported method of an exported interface type;
//   - an exported field of an exported struct type (an embedded exported
//     type counts as a field of that name).
//
// Public packages are those of the module outside internal/ and
// examples/, package main excepted. A name declared in several files of a
// package (build constraints) is listed once.
//
// The surface file marks what changed since the last release (see
// Golden), and TestSurface requires each marked name to be named in the
// CHANGELOG's Unreleased section (see Named).
package apisurface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kinds of identifiers, as the surface file spells them.
const (
	KindConst  = "const"
	KindVar    = "var"
	KindFunc   = "func"
	KindType   = "type"
	KindMethod = "method"
	KindField  = "field"
)

// RootPkg is how the surface names the module's root package.
const RootPkg = "tenantkit"

// Ident is one exported identifier of a public package.
type Ident struct {
	// Pkg is the package's directory relative to the module root, with
	// slashes ("backup", "gpushare/live"); the root package is RootPkg.
	Pkg string
	// Name is the identifier, Type.Member for methods and fields.
	Name string
	// Kind is one of the Kind constants.
	Kind string
}

// TopLevel reports whether the identifier is declared at package level
// (not a method or a field).
func (id Ident) TopLevel() bool { return id.Kind != KindMethod && id.Kind != KindField }

// Scan returns the exported identifiers of every public package under
// root (a module root), sorted by package, then name.
func Scan(root string) ([]Ident, error) {
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	var out []Ident
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." && skipDir(root, rel, d.Name()) {
			return filepath.SkipDir
		}
		pkg := rel
		if rel == "." {
			pkg = RootPkg
		}
		ids, err := scanDir(root, module, path, pkg)
		out = append(out, ids...)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, compare)
	return slices.CompactFunc(out, func(a, b Ident) bool { return compare(a, b) == 0 }), nil
}

// skipDir reports whether the directory rel holds no public package and
// none below it: internal, examples, testdata, hidden directories and
// nested modules.
func skipDir(root, rel, name string) bool {
	switch {
	case name == "internal" || name == "testdata" || rel == "examples":
		return true
	case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"):
		return true
	}
	_, err := os.Stat(filepath.Join(root, rel, "go.mod"))
	return err == nil
}

// scanDir returns the exported identifiers declared in the non-test Go
// files of one directory (none for package main), the members of aliased
// module types included (aliasIdents).
func scanDir(root, module, dir, pkg string) ([]Ident, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Ident
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == "main" || ignored(f) {
			continue
		}
		out = append(out, fileIdents(f, pkg)...)
		ids, err := aliasIdents(root, module, f, pkg)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

// ignored reports whether a file is excluded from every build
// ("//go:build ignore").
func ignored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// compare orders identifiers by package, then name, then kind.
func compare(a, b Ident) int {
	if c := strings.Compare(a.Pkg, b.Pkg); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Kind, b.Kind)
}
