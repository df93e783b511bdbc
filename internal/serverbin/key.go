package serverbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// Key returns the cache key of s: a hash of everything that decides the
// binary's content and nothing else, so that a server whose inputs did not
// change is never rebuilt, whatever else changed in the repository:
//
//   - the server's name, version, main package and linker flags;
//   - the Go version (`go env GOVERSION`);
//   - its nested module's go.mod and go.sum, which pin every dependency
//     (the upstream sources are immutable module versions);
//   - the non-test .go files under its main package directory, when that
//     package is local to the nested module.
//
// The repository's location, file times, other servers of the same module
// and everything outside internal/servers/<module> do not enter the key. A
// local main package must import no other package of its nested module:
// their files would not be hashed (TestLocalMainsImportNoSiblings checks it).
func (b *Builder) Key(ctx context.Context, s Server) (string, error) {
	modDir, err := b.moduleDir(s)
	if err != nil {
		return "", err
	}
	return b.key(ctx, s, modDir)
}

func (b *Builder) key(ctx context.Context, s Server, modDir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n-s -w %s\n", s.Name, s.Version, s.Package, strings.Join(s.LDFlags, " "))
	fmt.Fprintf(h, "%s\n", goVersion(ctx, b.goBin()))
	files, err := keyFiles(s, modDir)
	if err != nil {
		return "", fmt.Errorf("serverbin: hash %s sources: %w", s.Name, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", fmt.Errorf("serverbin: hash %s sources: %w", s.Name, err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// keyFiles lists the files Key hashes, relative to the module directory:
// go.mod, go.sum, then the main package's sources in lexical order.
func keyFiles(s Server, modDir string) ([]string, error) {
	files := []string{"go.mod", "go.sum"}
	if !strings.HasPrefix(s.Package, ".") {
		// A main package of a required module (go.mod/go.sum pin it):
		// nothing local to hash.
		return files, nil
	}
	pkgDir := filepath.Join(modDir, filepath.FromSlash(s.Package))
	var srcs []string
	err := filepath.WalkDir(pkgDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(modDir, p)
			srcs = append(srcs, rel)
		}
		return nil
	})
	sort.Strings(srcs)
	return append(files, srcs...), err
}

var (
	goVersionMu  sync.Mutex
	goVersionStr = map[string]string{}
)

// goVersion is `go env GOVERSION` of goBin, asked once per process.
func goVersion(ctx context.Context, goBin string) string {
	goVersionMu.Lock()
	defer goVersionMu.Unlock()
	if v, ok := goVersionStr[goBin]; ok {
		return v
	}
	v := runtime.Version()
	if out, err := exec.CommandContext(ctx, goBin, "env", "GOVERSION").Output(); err == nil {
		v = strings.TrimSpace(string(out))
	}
	goVersionStr[goBin] = v
	return v
}
