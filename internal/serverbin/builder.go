package serverbin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrSourceNotFound is returned when the nested server modules cannot be
// located (set TENANTKIT_SOURCE_DIR to the repository root).
var ErrSourceNotFound = errors.New("serverbin: tenantkit source tree not found")

// BuildError is returned when go build fails; Output holds the end of what
// the compiler printed.
type BuildError struct {
	Server Server
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build %s: %v\n%s", e.Server, e.Err, e.Output)
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
}

var defaultBuilder Builder

// Path returns the path of the binary for s, building it first if the cache
// does not hold the current version. It is safe for concurrent use, also
// across processes.
func Path(ctx context.Context, s Server) (string, error) {
	return defaultBuilder.Path(ctx, s)
}

// Path returns the path of the binary for s, building it first if needed.
func (b *Builder) Path(ctx context.Context, s Server) (string, error) {
	src, err := b.sourceDir()
	if err != nil {
		return "", err
	}
	modDir := filepath.Join(src, "internal", "servers", s.Module)
	key, err := b.key(ctx, s, modDir)
	if err != nil {
		return "", err
	}
	cache, err := b.cacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, fmt.Sprintf("%s-%s-%s", s.Name, s.Version, key))
	if fileExists(bin) {
		return bin, nil
	}
	unlock, err := lockFile(ctx, filepath.Join(cache, s.Name+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if fileExists(bin) { // built by whoever held the lock
		return bin, nil
	}
	if err := b.build(ctx, s, modDir, bin); err != nil {
		return "", err
	}
	return bin, nil
}

func (b *Builder) build(ctx context.Context, s Server, modDir, bin string) error {
	out := b.progress()
	how := "once, a few seconds to a minute"
	if s.Slow {
		how = "once, several minutes"
	}
	fmt.Fprintf(out, "tenantkit: building %s from %s: %s (%s) ...\n", s, s.Upstream, buildReason(bin, s), how)
	start := time.Now()
	stopTicker := ticker(out, s, start)
	defer stopTicker()

	tmp := bin + ".tmp"
	// -s -w drop the symbol table and DWARF: smaller binaries, faster links.
	ldflags := append([]string{"-s", "-w"}, s.LDFlags...)
	args := []string{"build", "-trimpath", "-ldflags", strings.Join(ldflags, " "), "-o", tmp, s.Package}
	cmd := exec.CommandContext(ctx, b.goBin(), args...)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("build %s: %w", s, ctx.Err())
		}
		return &BuildError{Server: s, Err: err, Output: tailString(output.String(), 40)}
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fmt.Errorf("build %s: %w", s, err)
	}
	fmt.Fprintf(out, "tenantkit: built %s in %s\n", s, time.Since(start).Round(time.Second))
	pruneOld(bin, s.Name)
	return nil
}

// pruneOld removes earlier builds of the same server from the cache. A
// process still running an old binary keeps it until it exits.
func pruneOld(bin, name string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(bin), name+"-v*"))
	for _, f := range old {
		if f != bin && !strings.HasSuffix(f, ".tmp") {
			os.Remove(f)
		}
	}
}

func ticker(out io.Writer, s Server, start time.Time) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(out, "tenantkit: still building %s (%s)\n", s.Name, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// key hashes everything that decides the binary's content.
func (b *Builder) key(ctx context.Context, s Server, modDir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n-s -w %s\n", s.Name, s.Version, s.Package, strings.Join(s.LDFlags, " "))
	fmt.Fprintf(h, "%s\n", goVersion(ctx, b.goBin()))
	files := []string{"go.mod", "go.sum"}
	pkgDir := filepath.Join(modDir, filepath.FromSlash(s.Package))
	if !strings.HasPrefix(s.Package, ".") {
		// A main package of a required module (go.mod/go.sum pin it):
		// nothing local to hash.
		pkgDir = ""
	}
	err := walkGoFiles(pkgDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(modDir, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash %s sources: %w", s.Name, err)
	}
	sort.Strings(files[2:])
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", fmt.Errorf("hash %s sources: %w", s.Name, err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

var (
	goVersionOnce sync.Once
	goVersionStr  string
)

func goVersion(ctx context.Context, goBin string) string {
	goVersionOnce.Do(func() {
		out, err := exec.CommandContext(ctx, goBin, "env", "GOVERSION").Output()
		if err != nil {
			goVersionStr = runtime.Version()
			return
		}
		goVersionStr = strings.TrimSpace(string(out))
	})
	return goVersionStr
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
// the wait.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("serverbin: lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("serverbin: lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("serverbin: wait for another build: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// walkGoFiles walks dir like filepath.WalkDir; an empty dir walks nothing.
func walkGoFiles(dir string, fn fs.WalkDirFunc) error {
	if dir == "" {
		return nil
	}
	return filepath.WalkDir(dir, fn)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
