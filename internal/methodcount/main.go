// Command methodcount counts the methods of named types and the files they
// are declared in, from the package's non-test Go files (go/ast only):
//
//	go run ./internal/methodcount ./etcdrelocate run Relocator
//
// Each line reads "TYPE METHODS methods in FILES files: file (n), ...".
// With no type named it lists every type with methods, most first.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: methodcount DIR [TYPE...]")
		os.Exit(2)
	}
	counts, err := count(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "methodcount:", err)
		os.Exit(1)
	}
	types := os.Args[2:]
	if len(types) == 0 {
		for t := range counts {
			types = append(types, t)
		}
		sort.Slice(types, func(i, j int) bool { return total(counts[types[i]]) > total(counts[types[j]]) })
	}
	for _, t := range types {
		fmt.Println(line(t, counts[t]))
	}
}

// count maps each receiver type to its methods per file.
func count(dir string) (map[string]map[string]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]int{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			t := recvName(fn.Recv.List[0].Type)
			if out[t] == nil {
				out[t] = map[string]int{}
			}
			out[t][filepath.Base(path)]++
		}
	}
	return out, nil
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

func total(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

func line(t string, m map[string]int) string {
	names := make([]string, 0, len(m))
	for f := range m {
		names = append(names, f)
	}
	sort.Slice(names, func(i, j int) bool {
		return m[names[i]] > m[names[j]] || m[names[i]] == m[names[j]] && names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, f := range names {
		parts[i] = fmt.Sprintf("%s (%d)", f, m[f])
	}
	return fmt.Sprintf("%s %d methods in %d files: %s", t, total(m), len(m), strings.Join(parts, ", "))
}
