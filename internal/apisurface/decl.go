package apisurface

import (
	"go/ast"
	"go/token"
)

// fileIdents returns the exported identifiers that one file declares.
func fileIdents(f *ast.File, pkg string) []Ident {
	var out []Ident
	add := func(name, kind string) { out = append(out, Ident{Pkg: pkg, Name: name, Kind: kind}) }
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				add(d.Name.Name, KindFunc)
			} else if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
				add(recv+"."+d.Name.Name, KindMethod)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				out = append(out, specIdents(spec, d.Tok, pkg)...)
			}
		}
	}
	return out
}

// specIdents returns the exported identifiers of one const, var or type
// spec: a type's exported fields or interface methods included.
func specIdents(spec ast.Spec, tok token.Token, pkg string) []Ident {
	var out []Ident
	switch s := spec.(type) {
	case *ast.ValueSpec:
		kind := KindVar
		if tok == token.CONST {
			kind = KindConst
		}
		for _, n := range s.Names {
			if n.IsExported() {
				out = append(out, Ident{Pkg: pkg, Name: n.Name, Kind: kind})
			}
		}
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return nil
		}
		out = append(out, Ident{Pkg: pkg, Name: s.Name.Name, Kind: KindType})
		out = append(out, memberIdents(s, pkg)...)
	}
	return out
}

// memberIdents returns the exported fields of a struct type or the
// exported methods of an interface type (none for other types).
func memberIdents(s *ast.TypeSpec, pkg string) []Ident {
	var list *ast.FieldList
	kind := KindField
	switch t := s.Type.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list, kind = t.Methods, KindMethod
	default:
		return nil
	}
	var out []Ident
	for _, field := range list.List {
		names := field.Names
		if len(names) == 0 && kind == KindField { // embedded: the type's name is the field's
			names = []*ast.Ident{ast.NewIdent(receiverType(field.Type))}
		}
		for _, n := range names {
			if n.IsExported() {
				out = append(out, Ident{Pkg: pkg, Name: s.Name.Name + "." + n.Name, Kind: kind})
			}
		}
	}
	return out
}

// receiverType returns the name of the type in a method receiver or an
// embedded field: T, *T, T[P], pkg.T.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
