package serverbin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// keepUnused is how long the cache keeps a build of another key than the
// current one after its last use, so that switching between branches (or
// between worktrees sharing the cache) does not rebuild.
const keepUnused = 7 * 24 * time.Hour

// buildingHere holds the cache paths this process is building, so that a
// second builder of the process waiting for one stays quiet.
var buildingHere sync.Map

// group is servers built by one go build invocation: the same nested
// module and linker flags.
type group struct {
	servers []Server
	bins    []string // cache paths, as servers
}

// sameBuild reports whether s can join a go build of t.
func sameBuild(s, t Server) bool {
	return s.Module == t.Module && slices.Equal(s.LDFlags, t.LDFlags)
}

// build builds the servers of g that the cache still lacks, holding each
// server's lock (in name order, so concurrent builders cannot deadlock).
func (b *Builder) build(ctx context.Context, g *group) error {
	cache, err := b.cacheDir()
	if err != nil {
		return err
	}
	order := make([]int, len(g.servers))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return strings.Compare(g.servers[i].Name, g.servers[j].Name) })
	waited := false
	for _, i := range order {
		s := g.servers[i]
		unlock, err := lockFile(ctx, filepath.Join(cache, s.Name+".lock"), func() {
			// A build of this process reports itself; another's does not.
			if _, here := buildingHere.Load(g.bins[i]); !here && !fileExists(g.bins[i]) {
				waited = true
				fmt.Fprintf(b.progress(), "tenantkit: waiting for %s: another process is building it ...\n", s)
			}
		})
		if err != nil {
			return err
		}
		defer unlock()
	}
	missing := &group{}
	for i, s := range g.servers {
		if !fileExists(g.bins[i]) { // or built by whoever held the lock
			missing.servers = append(missing.servers, s)
			missing.bins = append(missing.bins, g.bins[i])
		}
	}
	if len(missing.servers) == 0 {
		if waited {
			fmt.Fprintf(b.progress(), "tenantkit: %s built by the other process\n", names(g.servers))
		}
		return nil
	}
	if b.noBuild() {
		return fmt.Errorf("%w: %s not in the cache %s (%s is set)", ErrBuildDisabled, names(missing.servers), cache, NoBuildEnv)
	}
	return b.goBuild(ctx, missing, cache)
}

// goBuild runs one go build for every server of g into a scratch folder of
// the cache, then moves each binary to its cache path.
func (b *Builder) goBuild(ctx context.Context, g *group, cache string) error {
	modDir, err := b.moduleDir(g.servers[0])
	if err != nil {
		return err
	}
	out := b.progress()
	s := g.servers[0]
	how := "once, a few seconds to a minute"
	if s.Slow {
		how = "once, several minutes"
	}
	fmt.Fprintf(out, "tenantkit: building %s from %s: %s (%s) ...\n", names(g.servers), s.Upstream, buildReason(g.bins[0], s), how)
	start := time.Now()
	stopTicker := ticker(out, names(g.servers), start)
	defer stopTicker()
	for _, bin := range g.bins {
		buildingHere.Store(bin, true)
		defer buildingHere.Delete(bin)
	}

	tmp, err := os.MkdirTemp(cache, ".build-"+s.Name+"-")
	if err != nil {
		return fmt.Errorf("serverbin: %w", err)
	}
	defer os.RemoveAll(tmp)
	// -s -w drop the symbol table and DWARF: smaller binaries, faster links.
	ldflags := append([]string{"-s", "-w"}, s.LDFlags...)
	args := []string{"build", "-trimpath", "-ldflags", strings.Join(ldflags, " "), "-o", tmp + string(filepath.Separator)}
	for _, s := range g.servers {
		args = append(args, s.Package)
	}
	cmd := exec.CommandContext(ctx, b.goBin(), args...)
	cmd.Dir = modDir
	cmd.Env = buildEnv()
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("serverbin: build %s: %w", names(g.servers), ctx.Err())
		}
		return &BuildError{Servers: g.servers, Err: err, Output: tailString(output.String(), 40)}
	}
	for i, s := range g.servers {
		built := filepath.Join(tmp, filepath.Base(s.Package))
		if err := os.Rename(built, g.bins[i]); err != nil {
			return fmt.Errorf("serverbin: build %s: %w", s, err)
		}
		pruneOld(g.bins[i], s.Name)
	}
	fmt.Fprintf(out, "tenantkit: built %s in %s\n", names(g.servers), time.Since(start).Round(time.Second))
	return nil
}

// buildEnv is the environment of go build and go mod download: no
// workspace, no cgo, the pinned go.sum only, and no VCS stamping (the
// binaries do not depend on the repository's commit).
func buildEnv() []string {
	return append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly -buildvcs=false")
}

// pruneOld removes builds of the same server with other keys that have not
// been used for keepUnused. A process still running one keeps it until it
// exits.
func pruneOld(bin, name string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(bin), name+"-v*"))
	for _, f := range old {
		st, err := os.Stat(f)
		if f != bin && err == nil && time.Since(st.ModTime()) > keepUnused {
			os.Remove(f)
		}
	}
}

func ticker(out io.Writer, what string, start time.Time) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(out, "tenantkit: still building %s (%s)\n", what, time.Since(start).Round(time.Second))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// names says "etcd v3.7.3" for one server and "kube-apiserver,
// kube-controller-manager v1.37.2" for servers of one version.
func names(servers []Server) string {
	if len(servers) == 1 {
		return servers[0].String()
	}
	var parts []string
	for i, s := range servers {
		if i+1 < len(servers) && servers[i+1].Version == s.Version {
			parts = append(parts, s.Name)
		} else {
			parts = append(parts, s.String())
		}
	}
	return strings.Join(parts, ", ")
}

func tailString(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
