package kindnode

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// files are kind's base-image contents, written by tenantkit.
//
//go:embed all:files
var files embed.FS

// assembly is this package's own code: how the image is assembled decides
// it too, so the key hashes it.
//
//go:embed build.go builder.go images.go rootfs.go
var assembly embed.FS

// formatVersion changes when something outside the hashed inputs changes
// what the image holds.
const formatVersion = 1

var (
	// ErrPrerequisite: the machine lacks something the build needs (root,
	// debootstrap, a container engine).
	ErrPrerequisite = errors.New("kindnode: prerequisite missing")
	// ErrCommand: a command of the build failed; the error quotes its
	// output's end.
	ErrCommand = errors.New("kindnode: command failed")
)

// Builder builds and caches the node image. The zero value is ready:
// programs come from serverbin's default cache, the image goes to the
// docker on PATH, progress is silent.
type Builder struct {
	// Progress receives one line per step (nil: none).
	Progress io.Writer
	// Servers builds the programs (nil: a Builder with default settings).
	Servers *serverbin.Builder
	// CacheDir holds the root filesystem tar and the lock (empty:
	// kindnode under the user cache folder's tenantkit).
	CacheDir string
	// Mirror is Debian's archive (empty: $TENANTKIT_DEBIAN_MIRROR, apt's
	// own, deb.debian.org).
	Mirror string
}

// Key returns the hash of everything that decides the image.
func (b *Builder) Key(ctx context.Context) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "kindnode %d %s rootfs %s\n", formatVersion, KubernetesVersion, rootfsKey())
	names, err := embeddedNames()
	if err != nil {
		return "", err
	}
	for _, n := range append(names, "build.go", "builder.go", "images.go", "rootfs.go") {
		data, err := files.ReadFile(n)
		if !strings.HasPrefix(n, "files/") {
			data, err = assembly.ReadFile(n)
		}
		if err != nil {
			return "", fmt.Errorf("kindnode: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", n, len(data))
		h.Write(data)
	}
	for _, im := range images {
		fmt.Fprintf(h, "image %s %v %s %s %v %v\n", im.file, im.tags, im.bin.Name, im.path, im.entrypoint, im.nodeTools)
	}
	for _, nb := range nodeBins() {
		fmt.Fprintf(h, "bin %s %s\n", nb.bin.Name, nb.path)
	}
	for _, s := range serverbin.KindNode() {
		k, err := b.servers().Key(ctx, s)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "server %s %s\n", s.Name, k)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Image returns the node image's name for the current inputs (built or
// not).
func (b *Builder) Image(ctx context.Context) (string, error) {
	key, err := b.Key(ctx)
	if err != nil {
		return "", err
	}
	return Repository + ":" + KubernetesVersion + "-" + key, nil
}

// Ensure returns the node image's name, building it first when docker's
// image store lacks it. Concurrent callers wait on a file lock.
func (b *Builder) Ensure(ctx context.Context) (string, error) {
	start := time.Now()
	img, err := b.Image(ctx)
	if err != nil {
		return "", err
	}
	if imageExists(ctx, img) {
		b.logf("%s is in docker's image store", img)
		return img, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%w: building %s needs root (debootstrap, file owners)", ErrPrerequisite, img)
	}
	cache, err := b.cacheDir()
	if err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(cache, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if imageExists(ctx, img) {
		return img, nil
	}
	b.logf("building %s (once per change of its inputs) ...", img)
	if err := b.build(ctx, cache, img); err != nil {
		return "", err
	}
	b.logf("built %s in %s", img, time.Since(start).Round(time.Second))
	b.pruneOld(ctx, img)
	return img, nil
}

// pruneOld removes the other tags of Repository (earlier inputs); docker
// refuses those that containers still use, and they stay.
func (b *Builder) pruneOld(ctx context.Context, keep string) {
	out, err := exec.CommandContext(ctx, "docker", "image", "ls", Repository, "--format", "{{.Repository}}:{{.Tag}}").Output()
	if err != nil {
		return
	}
	for _, old := range strings.Fields(string(out)) {
		if old != keep && exec.CommandContext(ctx, "docker", "image", "rm", old).Run() == nil {
			b.logf("removed the previous image %s", old)
		}
	}
}

func (b *Builder) servers() *serverbin.Builder {
	if b.Servers == nil {
		b.Servers = &serverbin.Builder{Progress: b.Progress}
	}
	return b.Servers
}

func (b *Builder) cacheDir() (string, error) {
	dir := b.CacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("kindnode: %w", err)
		}
		dir = filepath.Join(base, "tenantkit", "kindnode")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("kindnode: %w", err)
	}
	return dir, nil
}

func (b *Builder) logf(format string, args ...any) {
	if b.Progress != nil {
		fmt.Fprintf(b.Progress, "tenantkit: kind node image: "+format+"\n", args...)
	}
}

// ticker prints a line every 30 s until stopped.
func (b *Builder) ticker(what string) (stop func()) {
	done := make(chan struct{})
	start := time.Now()
	go func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				b.logf("still running %s (%s)", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// run runs a command in dir; a failure quotes the end of its output.
func (b *Builder) run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s %s: %w: %s", ErrCommand, name, strings.Join(args, " "), err, tail(string(out), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func imageExists(ctx context.Context, img string) bool {
	return exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", img).Run() == nil
}

var lookPath = exec.LookPath

// lock takes an exclusive flock on path.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("kindnode: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("kindnode: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// embeddedNames lists the files under files/, sorted.
func embeddedNames() ([]string, error) {
	var names []string
	err := fs.WalkDir(files, "files", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	sort.Strings(names)
	return names, err
}
