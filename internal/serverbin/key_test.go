package serverbin_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// TestKey_stable: the cache key of a server changes with what decides its
// binary and with nothing else, so an unchanged server is never rebuilt.
func TestKey_stable(t *testing.T) {
	const body = "package main\n\nfunc main() { println(\"hello\") }\n"
	bye := serverbin.Server{Name: "bye", Module: "hello", Package: "./cmd/bye", Upstream: "example.com/hello", Version: "v1.0.0"}
	for _, tt := range []struct {
		name    string
		change  func(t *testing.T, src string) serverbin.Server
		changes bool
	}{
		{"nothing", func(*testing.T, string) serverbin.Server { return hello }, false},
		{"a file elsewhere in the repository", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "README.md"), "changed")
			write(t, filepath.Join(src, "internal", "servers", "other", "go.mod"), "module other\n")
			return hello
		}, false},
		{"another server of the same module", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "internal", "servers", "hello", "cmd", "bye", "main.go"), "package main\n\nfunc main() { println(\"bye!\") }\n")
			return hello
		}, false},
		{"a test file of the main package", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "internal", "servers", "hello", "cmd", "hello", "main_test.go"), "package main\n")
			return hello
		}, false},
		{"file times", func(t *testing.T, src string) serverbin.Server {
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(filepath.Join(src, "internal", "servers", "hello", "go.mod"), old, old))
			return hello
		}, false},
		{"the main package", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "internal", "servers", "hello", "cmd", "hello", "main.go"), strings.Replace(body, "hello", "hi", 1))
			return hello
		}, true},
		{"a file added to the main package", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "internal", "servers", "hello", "cmd", "hello", "extra.go"), "package main\n")
			return hello
		}, true},
		{"go.mod", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "internal", "servers", "hello", "go.mod"), "module example.com/hello\n\ngo 1.27\n")
			return hello
		}, true},
		{"go.sum", func(t *testing.T, src string) serverbin.Server {
			write(t, filepath.Join(src, "internal", "servers", "hello", "go.sum"), "example.com/x v1.0.0 h1:abc=\n")
			return hello
		}, true},
		{"linker flags", func(*testing.T, string) serverbin.Server {
			s := hello
			s.LDFlags = []string{"-X main.v=1"}
			return s
		}, true},
		{"the version", func(*testing.T, string) serverbin.Server {
			s := hello
			s.Version = "v1.0.1"
			return s
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := fakeSource(t, body)
			write(t, filepath.Join(src, "internal", "servers", "hello", "cmd", "bye", "main.go"), body)
			b := &serverbin.Builder{SourceDir: src, CacheDir: t.TempDir()}
			before, err := b.Key(t.Context(), hello)
			require.NoError(t, err)
			byeBefore, err := b.Key(t.Context(), bye)
			require.NoError(t, err)
			require.NotEqual(t, before, byeBefore)

			// A fresh clone elsewhere has the same key.
			elsewhere := &serverbin.Builder{SourceDir: fakeSource(t, body), CacheDir: t.TempDir()}
			again, err := elsewhere.Key(t.Context(), hello)
			require.NoError(t, err)
			require.Equal(t, before, again)

			after, err := b.Key(t.Context(), tt.change(t, src))
			require.NoError(t, err)
			if tt.changes {
				require.NotEqual(t, before, after)
			} else {
				require.Equal(t, before, after)
			}
		})
	}
}

// TestLocalMainsImportNoSiblings: Key hashes a local main package's own
// files only, so no server's main package may import another package of
// its nested module.
func TestLocalMainsImportNoSiblings(t *testing.T) {
	for _, s := range append(serverbin.All(), serverbin.Optional()...) {
		if !strings.HasPrefix(s.Package, ".") {
			continue
		}
		modDir := filepath.Join("..", "servers", s.Module)
		gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
		require.NoError(t, err)
		modPath := strings.Fields(strings.SplitN(string(gomod), "\n", 2)[0])[1]
		files, err := filepath.Glob(filepath.Join(modDir, s.Package, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, s.Name)
		for _, f := range files {
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				require.False(t, path == modPath || strings.HasPrefix(path, modPath+"/"), "%s imports %s of its own module", f, path)
			}
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}
