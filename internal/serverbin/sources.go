package serverbin

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// sourcesArchive holds every file under internal/servers, in txtar form
// ("-- <module>/<path> --" before each file), because Go leaves nested
// modules out of a module's download: a program that imports tenantkit
// finds no internal/servers in its module cache, and builds the servers
// from this copy instead. TestEmbeddedSources keeps it equal to the tree
// (`go test ./internal/serverbin -run TestEmbeddedSources -update`
// rewrites it).
//
//go:embed sources.txtar
var sourcesArchive string

// embeddedModule writes module's files from sourcesArchive into a folder
// of the cache named after their hash (once; later calls find it) and
// returns that folder. The cache key of a server built there equals the
// key of the same files in the repository.
func (b *Builder) embeddedModule(module string) (string, error) {
	files := embeddedFiles()
	var names []string
	h := sha256.New()
	for name := range files {
		if strings.HasPrefix(name, module+"/") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("%w: no module %s in the embedded sources", ErrSourceNotFound, module)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n%s", n, len(files[n]), files[n])
	}
	cache, err := b.cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "src", module+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	if fileExists(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("serverbin: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-"+module+"-")
	if err != nil {
		return "", fmt.Errorf("serverbin: %w", err)
	}
	defer os.RemoveAll(tmp) // left only when another process renamed its copy first
	for _, n := range names {
		p := filepath.Join(tmp, filepath.FromSlash(strings.TrimPrefix(n, module+"/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("serverbin: %w", err)
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			return "", fmt.Errorf("serverbin: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil && !fileExists(dir) {
		return "", fmt.Errorf("serverbin: %w", err)
	}
	return dir, nil
}

var embeddedFiles = sync.OnceValue(func() map[string]string { return archiveFiles(sourcesArchive) })

// archiveFiles parses a txtar archive: name → content.
func archiveFiles(a string) map[string]string {
	files := map[string]string{}
	var name string
	var body strings.Builder
	flush := func() {
		if name != "" {
			files[name] = body.String()
		}
		body.Reset()
	}
	for line := range strings.SplitAfterSeq(a, "\n") {
		if n, ok := archiveHeader(line); ok {
			flush()
			name = n
			continue
		}
		body.WriteString(line)
	}
	flush()
	return files
}

func archiveHeader(line string) (string, bool) {
	l := strings.TrimSuffix(line, "\n")
	if !strings.HasPrefix(l, "-- ") || !strings.HasSuffix(l, " --") || len(l) < 7 {
		return "", false
	}
	return l[3 : len(l)-3], true
}

// formatArchive is the inverse of archiveFiles, names in lexical order.
func formatArchive(files map[string]string) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "-- %s --\n%s", n, files[n])
	}
	return b.String()
}
