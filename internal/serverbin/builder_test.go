package serverbin_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// fakeSource lays out a source tree with one nested module whose main
// package is body.
func fakeSource(t *testing.T, body string) string {
	t.Helper()
	src := t.TempDir()
	mod := filepath.Join(src, "internal", "servers", "hello")
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "cmd", "hello"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/hello\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.sum"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "cmd", "hello", "main.go"), []byte(body), 0o644))
	return src
}

var hello = serverbin.Server{Name: "hello", Module: "hello", Package: "./cmd/hello", Upstream: "example.com/hello", Version: "v1.0.0"}

func TestBuilder_buildsOnceAndCaches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	var progress bytes.Buffer
	var mu sync.Mutex
	b := &serverbin.Builder{
		CacheDir:  t.TempDir(),
		SourceDir: fakeSource(t, "package main\n\nfunc main() { println(\"hello\") }\n"),
		Progress:  lockedWriter{&mu, &progress},
	}
	// Concurrent callers build once and agree on the path.
	// Each caller records its result; the test goroutine asserts on them.
	paths, errs := make([]string, 3), make([]error, 3)
	var wg sync.WaitGroup
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = b.Path(t.Context(), hello) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "caller %d", i)
	}
	require.Equal(t, paths[0], paths[1])
	require.Equal(t, paths[0], paths[2])
	require.FileExists(t, paths[0])
	require.Equal(t, 1, bytes.Count(progress.Bytes(), []byte("building hello v1.0.0")), progress.String())

	// A source change gives a new key; the other build stays while it was
	// used lately (a branch switch back finds it), and goes once it was not.
	main := filepath.Join(b.SourceDir, "internal", "servers", "hello", "cmd", "hello", "main.go")
	require.NoError(t, os.WriteFile(main, []byte("package main\n\nfunc main() { println(\"hello, again\") }\n"), 0o644))
	p2, err := b.Path(t.Context(), hello)
	require.NoError(t, err)
	require.NotEqual(t, paths[0], p2)
	require.FileExists(t, paths[0])

	stale := time.Now().Add(-8 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(p2, stale, stale))
	require.NoError(t, os.WriteFile(main, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644))
	p3, err := b.Path(t.Context(), hello)
	require.NoError(t, err)
	require.Equal(t, paths[0], p3, "the first build is found again, not rebuilt")
	require.Equal(t, 2, bytes.Count(progress.Bytes(), []byte("building hello v1.0.0")), progress.String())
	p4, err := b.Path(t.Context(), serverbin.Server{Name: "hello", Module: "hello", Package: "./cmd/hello", Upstream: "example.com/hello", Version: "v1.0.1"})
	require.NoError(t, err)
	require.FileExists(t, p4)
	require.NoFileExists(t, p2, "a build unused for a week is pruned by the next build")
	require.FileExists(t, paths[0])
}

func TestBuilder_buildErrorCarriesCompilerOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	b := &serverbin.Builder{
		CacheDir:  t.TempDir(),
		SourceDir: fakeSource(t, "package main\n\nfunc main() { undefinedThing() }\n"),
		Progress:  &bytes.Buffer{},
	}
	_, err := b.Path(t.Context(), hello)
	var be *serverbin.BuildError
	require.ErrorAs(t, err, &be)
	require.Contains(t, be.Output, "undefinedThing")
}

func TestBuilder_missingSource(t *testing.T) {
	b := &serverbin.Builder{CacheDir: t.TempDir(), SourceDir: t.TempDir(), Progress: &bytes.Buffer{}}
	_, err := b.Path(t.Context(), serverbin.Server{Name: "x", Module: "does-not-exist", Package: "./cmd/x"})
	require.Error(t, err)
}

func TestBuilder_cancelledWhileWaitingForLock(t *testing.T) {
	cache := t.TempDir()
	var progress bytes.Buffer
	b := &serverbin.Builder{CacheDir: cache, SourceDir: fakeSource(t, "package main\n\nfunc main() {}\n"), Progress: &progress}
	// Another builder (here: the test) holds the lock.
	f, err := os.Create(filepath.Join(cache, "hello.lock"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = b.Path(ctx, hello)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, "tenantkit: waiting for hello v1.0.0: another process is building it ...\n", progress.String())
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestBuilder_buildsAModuleInOneInvocation: servers of one nested module
// with the same flags are built by one go build, and each binary is the
// right program.
func TestBuilder_buildsAModuleInOneInvocation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := fakeSource(t, "package main\n\nfunc main() { println(\"hello\") }\n")
	write(t, filepath.Join(src, "internal", "servers", "hello", "cmd", "bye", "main.go"), "package main\n\nfunc main() { println(\"bye\") }\n")
	bye := serverbin.Server{Name: "bye", Module: "hello", Package: "./cmd/bye", Upstream: "example.com/hello", Version: "v1.0.0"}
	var progress bytes.Buffer
	b := &serverbin.Builder{CacheDir: t.TempDir(), SourceDir: src, Progress: &progress}
	paths, err := b.Build(t.Context(), hello, bye)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(progress.Bytes(), []byte("tenantkit: building hello, bye v1.0.0 from example.com/hello")), progress.String())
	for i, want := range []string{"hello", "bye"} {
		out, err := exec.Command(paths[i]).CombinedOutput()
		require.NoError(t, err)
		require.Equal(t, want+"\n", string(out))
	}
	missing, err := b.Missing(t.Context(), hello, bye)
	require.NoError(t, err)
	require.Empty(t, missing)
	entries, err := os.ReadDir(b.CacheDir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, e.IsDir(), "scratch folder %s left behind", e.Name())
	}
}

// TestBuilder_noBuild: with building disabled a missing server is an
// error, not a build.
func TestBuilder_noBuild(t *testing.T) {
	cache := t.TempDir()
	b := &serverbin.Builder{CacheDir: cache, SourceDir: fakeSource(t, "package main\n\nfunc main() {}\n"), Progress: &bytes.Buffer{}}
	t.Setenv(serverbin.NoBuildEnv, "1")
	_, err := b.Path(t.Context(), hello)
	require.ErrorIs(t, err, serverbin.ErrBuildDisabled)
	bins, err := filepath.Glob(filepath.Join(cache, "hello-*"))
	require.NoError(t, err)
	require.Empty(t, bins)
}
