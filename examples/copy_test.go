// Package examples_test checks that the programs under examples/ are what
// they claim to be: tutorials a user can copy into a module of their own.
package examples_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyIntoOwnModule copies each example's non-test .go files into a
// scratch module (module example.com/x, tenantkit required and replaced by
// this checkout, the checkout's go.sum) and builds them there, offline from
// the module cache: an example that imports an internal package, or
// anything else a user's module cannot reach, fails here.
//
// It links every example (about a minute of CPU), so -short skips it.
func TestCopyIntoOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("links every example (about a minute of CPU; skipped with -short)")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "main.go"))
	require.NoError(t, err)
	require.NotEmpty(t, examples)

	mod := t.TempDir()
	for _, m := range examples {
		copyExample(t, filepath.Dir(m), filepath.Join(mod, filepath.Base(filepath.Dir(m))))
	}
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte(
		"module example.com/x\n\ngo 1.26.0\n\n"+
			"require github.com/cozystack/tenantkit v0.0.0\n\n"+
			"replace github.com/cozystack/tenantkit => "+root+"\n"), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644))

	// One go build for all: each example is a main package of its own
	// folder. The parent's GOCACHE and GOMODCACHE stay (from the
	// environment); nothing is downloaded.
	cmd := exec.CommandContext(t.Context(), goBin(), "build", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the examples copied into a module of their own do not build:\n%s", out)
}

// copyExample copies the non-test .go files of dir to dst and checks that
// none imports an internal package.
func copyExample(t *testing.T, dir, dst string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dst, 0o755))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range parsed.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			require.NotContains(t, "/"+path+"/", "/internal/",
				"%s imports %s: a copy in a user's module cannot", f, path)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dst, filepath.Base(f)), src, 0o644))
	}
}

// goBin is the go command of the running toolchain.
func goBin() string {
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}
