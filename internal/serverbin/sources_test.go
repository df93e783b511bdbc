package serverbin

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite sources.txtar from internal/servers")

// TestEmbeddedSources: the embedded copy of internal/servers is the tree,
// file for file (run with -update after changing a nested module).
func TestEmbeddedSources(t *testing.T) {
	tree := map[string]string{}
	root := filepath.Join("..", "servers")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		tree[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile("sources.txtar", []byte(formatArchive(tree)), 0o644))
		return
	}
	require.Equal(t, formatArchive(tree), sourcesArchive, "run: go test ./internal/serverbin -run TestEmbeddedSources -update")
	require.Equal(t, tree, archiveFiles(sourcesArchive))
}

// TestEmbeddedModule_sameKey: outside the repository a server builds from
// the embedded copy, under the same cache key as in the repository.
func TestEmbeddedModule_sameKey(t *testing.T) {
	cache := t.TempDir()
	inRepo := &Builder{CacheDir: cache}
	elsewhere := &Builder{CacheDir: cache}
	for _, s := range append(All(), Optional()...) {
		want, err := inRepo.Key(t.Context(), s)
		require.NoError(t, err)
		dir, err := elsewhere.embeddedModule(s.Module)
		require.NoError(t, err)
		again, err := elsewhere.embeddedModule(s.Module)
		require.NoError(t, err)
		require.Equal(t, dir, again, "written once")
		got, err := elsewhere.key(t.Context(), s, dir)
		require.NoError(t, err)
		require.Equal(t, want, got, s.Name)
	}
}
