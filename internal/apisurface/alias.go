package apisurface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// aliasIdents returns the members of the types that a file's exported
// aliases name in another of the module's packages (type NodeConfig =
// simnode.Config): their fields or interface methods, listed under the
// alias's name, as the package's documentation shows them to a reader.
// Aliases of types outside the module add only their own name.
func aliasIdents(root, module string, f *ast.File, pkg string) ([]Ident, error) {
	var out []Ident
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.TYPE {
			continue
		}
		for _, spec := range d.Specs {
			s := spec.(*ast.TypeSpec)
			if !s.Name.IsExported() || !s.Assign.IsValid() {
				continue
			}
			target, err := aliasTarget(root, module, f, s)
			if err != nil || target == nil {
				return out, err
			}
			named := *target
			named.Name = s.Name
			out = append(out, memberIdents(&named, pkg)...)
		}
	}
	return out, nil
}

// aliasTarget finds the declaration of the type alias s names, when it is
// declared in a package of the module; nil otherwise.
func aliasTarget(root, module string, f *ast.File, s *ast.TypeSpec) (*ast.TypeSpec, error) {
	sel, ok := s.Type.(*ast.SelectorExpr)
	if !ok {
		return nil, nil
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil, nil
	}
	rel, ok := strings.CutPrefix(importPath(f, x.Name), module+"/")
	if !ok {
		return nil, nil
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		tf, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range tf.Decls {
			if d, ok := decl.(*ast.GenDecl); ok && d.Tok == token.TYPE {
				for _, spec := range d.Specs {
					if ts := spec.(*ast.TypeSpec); ts.Name.Name == sel.Sel.Name {
						return ts, nil
					}
				}
			}
		}
	}
	return nil, nil
}

// importPath returns the path of the import a file refers to by name.
func importPath(f *ast.File, name string) string {
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		if (imp.Name != nil && imp.Name.Name == name) || (imp.Name == nil && filepath.Base(path) == name) {
			return path
		}
	}
	return ""
}

// modulePath reads the module path from root's go.mod.
func modulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", nil
}
