package serverbin_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// TestPause_exitsZeroOnSignal: the sandbox's pause sleeps until SIGTERM or
// SIGINT, then exits 0.
func TestPause_exitsZeroOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	pause, err := serverbin.Path(t.Context(), serverbin.Pause)
	require.NoError(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(pause)
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				t.Fatalf("pause exited on its own: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			require.NoError(t, cmd.Process.Signal(sig))
			require.NoError(t, <-done)
		})
	}
}

// TestImageTool_writesDockerArchive: tenantkit-image writes `docker save`'s
// format (what `ctr images import` reads): every tag, one layer with the
// added files and their parent folders, the entrypoint and environment.
func TestImageTool_writesDockerArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	tool, err := serverbin.Path(t.Context(), serverbin.ImageTool)
	require.NoError(t, err)
	dir := t.TempDir()
	src := filepath.Join(dir, "hello")
	require.NoError(t, os.WriteFile(src, []byte("#!/bin/sh\n"), 0o600))
	out := filepath.Join(dir, "image.tar")
	cmd := exec.Command(tool, "-o", out, "-tag", "registry.k8s.io/pause:3.10", "-tag", "example.com/a/b:c",
		"-add", src+"=/usr/bin/hello", "-add", src+"=/hello", "-env", "A=1", "-entrypoint", "/hello")
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, string(output))

	files := tarFiles(t, out)
	var manifest []struct{ Config, RepoTags, Layers any }
	require.NoError(t, json.Unmarshal(files["manifest.json"], &manifest))
	require.Len(t, manifest, 1)
	require.ElementsMatch(t, []any{"registry.k8s.io/pause:3.10", "example.com/a/b:c"}, manifest[0].RepoTags)
	layers := manifest[0].Layers.([]any)
	require.Len(t, layers, 1)

	var config struct {
		OS, Architecture string
		Config           struct{ Entrypoint, Env []string }
	}
	require.NoError(t, json.Unmarshal(files[manifest[0].Config.(string)], &config))
	require.Equal(t, "linux", config.OS)
	require.Equal(t, []string{"/hello"}, config.Config.Entrypoint)
	require.Equal(t, []string{"A=1"}, config.Config.Env)

	zr, err := gzip.NewReader(strings.NewReader(string(files[layers[0].(string)])))
	require.NoError(t, err)
	var entries []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		entries = append(entries, h.FileInfo().Mode().String()+" "+h.Name)
	}
	require.Equal(t, []string{"drwxr-xr-x usr/", "drwxr-xr-x usr/bin/", "-rwxr-xr-x usr/bin/hello", "-rwxr-xr-x hello"}, entries)
}

// tarFiles reads an uncompressed tar: name → content.
func tarFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = data
	}
}
