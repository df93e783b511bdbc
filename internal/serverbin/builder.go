package serverbin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// ErrSourceNotFound is returned for a server whose nested module is
// neither in the repository nor in the sources embedded in this package.
var ErrSourceNotFound = errors.New("serverbin: tenantkit source tree not found")

// ErrBuildDisabled is returned when a server would have to be built but
// TENANTKIT_NO_BUILD is set (or Builder.NoBuild): the binary must come from
// the cache or an override.
var ErrBuildDisabled = errors.New("serverbin: building is disabled")

// NoBuildEnv is the environment variable that, set to any non-empty value,
// forbids builds (see ErrBuildDisabled).
const NoBuildEnv = "TENANTKIT_NO_BUILD"

// BuildError is returned when go build fails; Output holds the end of what
// the compiler printed.
type BuildError struct {
	// Servers are the servers of the failed go build.
	Servers []Server
	// Err is go build's error.
	Err error
	// Output is the end of what go build printed.
	Output string
}

// Error says which servers failed and what the compiler printed.
func (e *BuildError) Error() string {
	return fmt.Sprintf("serverbin: build %s: %v\n%s", names(e.Servers), e.Err, e.Output)
}

// Unwrap returns the go build error.
func (e *BuildError) Unwrap() error { return e.Err }

// Builder builds servers into a cache directory. The zero value uses the
// defaults described on each field.
type Builder struct {
	// CacheDir holds the built binaries. Default: $TENANTKIT_CACHE_DIR, else
	// tenantkit/servers under os.UserCacheDir.
	CacheDir string
	// SourceDir is the tenantkit repository root. Default:
	// $TENANTKIT_SOURCE_DIR, else found from this package's source location
	// or the working directory.
	SourceDir string
	// Progress receives a line when a build starts, every 30 seconds while
	// it runs, and when it ends. Default: os.Stderr. Use io.Discard to
	// silence it.
	Progress io.Writer
	// GoBin is the go command. Default: "go" from PATH.
	GoBin string
	// Jobs is how many go build invocations Build runs at once. Default 2:
	// one build's link and module downloads leave a core idle that the
	// other fills.
	Jobs int
	// NoBuild makes Path and Build return ErrBuildDisabled instead of
	// building. Default: whether $TENANTKIT_NO_BUILD is set.
	NoBuild bool
}

var defaultBuilder Builder

// Path returns the path of the binary for s, building it first if the cache
// does not hold the current version. It is safe for concurrent use, also
// across processes. It does not look at overrides (see Locate).
func Path(ctx context.Context, s Server) (string, error) {
	return defaultBuilder.Path(ctx, s)
}

// Path returns the path of the binary for s, building it first if needed.
func (b *Builder) Path(ctx context.Context, s Server) (string, error) {
	paths, err := b.Build(ctx, s)
	if err != nil {
		return "", err
	}
	return paths[0], nil
}

// cached returns the cache path of s and whether it is there. A hit
// refreshes the file's modification time, which pruning reads as its last
// use.
func (b *Builder) cached(ctx context.Context, s Server) (bin string, ok bool, err error) {
	key, err := b.Key(ctx, s)
	if err != nil {
		return "", false, err
	}
	cache, err := b.cacheDir()
	if err != nil {
		return "", false, err
	}
	bin = filepath.Join(cache, fmt.Sprintf("%s-%s-%s", s.Name, s.Version, key))
	st, err := os.Stat(bin)
	if err != nil {
		return bin, false, nil
	}
	if time.Since(st.ModTime()) > time.Hour {
		now := time.Now()
		_ = os.Chtimes(bin, now, now) // best effort: the cache may be read-only
	}
	return bin, true, nil
}

func (b *Builder) goBin() string {
	if b.GoBin != "" {
		return b.GoBin
	}
	return "go"
}

func (b *Builder) progress() io.Writer {
	if b.Progress != nil {
		return b.Progress
	}
	return os.Stderr
}

func (b *Builder) jobs() int {
	if b.Jobs > 0 {
		return b.Jobs
	}
	return 2
}

func (b *Builder) noBuild() bool { return b.NoBuild || os.Getenv(NoBuildEnv) != "" }

func (b *Builder) cacheDir() (string, error) {
	dir := b.CacheDir
	if dir == "" {
		dir = os.Getenv("TENANTKIT_CACHE_DIR")
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("serverbin: no cache directory: %w", err)
		}
		dir = filepath.Join(base, "tenantkit", "servers")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("serverbin: %w", err)
	}
	return dir, nil
}

func (b *Builder) sourceDir() (string, error) {
	for _, dir := range []string{b.SourceDir, os.Getenv("TENANTKIT_SOURCE_DIR"), thisSourceRoot(), cwdRoot()} {
		if dir != "" && fileExists(filepath.Join(dir, "internal", "servers")) {
			return dir, nil
		}
	}
	return "", ErrSourceNotFound
}

// moduleDir is the nested module of s: in the tenantkit repository when
// this is one (edits there count), else written out of the copy embedded
// in this package (a program importing tenantkit from the module cache,
// which holds no nested modules).
func (b *Builder) moduleDir(s Server) (string, error) {
	src, err := b.sourceDir()
	if errors.Is(err, ErrSourceNotFound) {
		return b.embeddedModule(s.Module)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(src, "internal", "servers", s.Module), nil
}

// thisSourceRoot is the repository root as recorded in this file's path at
// compile time (absent under -trimpath).
func thisSourceRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// cwdRoot walks up from the working directory to the tenantkit module root.
func cwdRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/cozystack/tenantkit\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// lockFile takes an exclusive flock on path, polling so that ctx can cancel
// the wait; waiting is called once if the lock is held by someone else.
func lockFile(ctx context.Context, path string, waiting func()) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("serverbin: lock: %w", err)
	}
	for first := true; ; first = false {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("serverbin: lock: %w", err)
		}
		if first && waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("serverbin: wait for another build: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
