package serverbin

import (
	"context"
	"errors"
	"os/exec"
	"sync"
)

// Build returns the cache paths of servers, in order, building those the
// cache lacks:
//
//   - servers of one nested module with the same linker flags (the three
//     Kubernetes components; velero and its AWS plugin) are built by one
//     go build, which compiles the packages they share once;
//   - up to Jobs go builds run at once, started in the order the servers
//     are given (give the ones needed first, or the slowest first);
//   - the modules of every build still to come are downloaded in the
//     background from the start, so downloads overlap compilation.
//
// It waits on a file lock for a server another process is building. All
// builds run to the end; the error joins every failure.
func (b *Builder) Build(ctx context.Context, servers ...Server) ([]string, error) {
	paths := make([]string, len(servers))
	var groups []*group
	for i, s := range servers {
		bin, ok, err := b.cached(ctx, s)
		if err != nil {
			return nil, err
		}
		paths[i] = bin
		if ok {
			continue
		}
		gi := -1
		for j, g := range groups {
			if sameBuild(g.servers[0], s) {
				gi = j
			}
		}
		if gi < 0 {
			groups = append(groups, &group{})
			gi = len(groups) - 1
		}
		groups[gi].servers = append(groups[gi].servers, s)
		groups[gi].bins = append(groups[gi].bins, bin)
	}
	if len(groups) == 0 {
		return paths, nil
	}
	if len(groups) > 1 && !b.noBuild() {
		var first []Server
		for _, g := range groups {
			first = append(first, g.servers[0])
		}
		stop := b.DownloadModules(ctx, first...)
		defer stop()
	}
	errs := make([]error, len(groups))
	sem := make(chan struct{}, b.jobs())
	var wg sync.WaitGroup
	for i, g := range groups {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = b.build(ctx, g)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return paths, nil
}

// DownloadModules runs `go mod download` for the nested modules of
// servers, all at once (the network, not the CPU, bounds them), so that
// each go build to come finds its dependencies downloaded, or being
// downloaded, when its turn comes. It returns at once; a failed download is
// left for go build to report. stop ends the downloads still running.
func (b *Builder) DownloadModules(ctx context.Context, servers ...Server) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	seen := map[string]bool{}
	for _, s := range servers {
		if seen[s.Module] {
			continue
		}
		seen[s.Module] = true
		modDir, err := b.moduleDir(s)
		if err != nil {
			continue
		}
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, b.goBin(), "mod", "download")
			cmd.Dir, cmd.Env = modDir, buildEnv()
			_ = cmd.Run()
		})
	}
	return func() { cancel(); wg.Wait() }
}

// Missing returns the servers the cache lacks, in order.
func (b *Builder) Missing(ctx context.Context, servers ...Server) ([]Server, error) {
	var out []Server
	for _, s := range servers {
		_, ok, err := b.cached(ctx, s)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, s)
		}
	}
	return out, nil
}
