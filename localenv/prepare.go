package localenv

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// BuildAhead prepares the servers of a program that starts several
// environments, each needing more servers than the last, so that a first
// run does not wait for every build before its first step. Each phase lists
// server names as [Binaries] documents them ("etcd", "kube-apiserver",
// "kube-controller-manager", "kube-scheduler", "dex", "versitygw", "weed",
// "velero", "velero-plugin-for-aws"); the servers of one phase build in one
// go build.
//
// In the background, one go build at a time and in phase order, BuildAhead
// builds the servers that neither an override (TENANTKIT_<NAME>_BIN,
// envtest's TEST_ASSET_<NAME> or KUBEBUILDER_ASSETS; see Binaries) nor the
// cache provides, so that [Start] and the Env.Start… methods find them ready
// or wait only for the build under way. A first line on progress names what
// it builds; each build then reports on a line of its own (cli.Lines keeps
// them above a step line). Nothing missing: no line, no goroutine.
//
// A build that fails is reported on progress; the Start that needs the
// server builds it again and returns the error. stop cancels what is left
// and waits for it. An unknown name is an error wrapping ErrInvalidConfig,
// returned before anything starts.
func BuildAhead(ctx context.Context, progress io.Writer, phases ...[]string) (stop func(), err error) {
	servers, err := serversOf(phases)
	if err != nil {
		return nil, err
	}
	b := &serverbin.Builder{Progress: progress, Jobs: 1}
	missing, names := missingPhases(ctx, b, servers)
	if len(missing) == 0 {
		return func() {}, nil
	}
	fmt.Fprintf(progress, "First run: building %s in the background, in the order they are needed (cached for later runs).\n",
		strings.Join(names, ", "))
	ctx, cancel := context.WithCancel(ctx)
	var flat []serverbin.Server
	for _, p := range missing {
		flat = append(flat, p...)
	}
	stopDownloads := b.DownloadModules(ctx, flat...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stopDownloads()
		for _, p := range missing {
			if _, err := b.Build(ctx, p...); err != nil {
				if ctx.Err() != nil {
					return
				}
				fmt.Fprintf(progress, "background build: %v\n", err)
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// serversOf resolves the names of phases.
func serversOf(phases [][]string) ([][]serverbin.Server, error) {
	known := map[string]serverbin.Server{}
	for _, s := range append(serverbin.All(), serverbin.Optional()...) {
		known[s.Name] = s
	}
	out := make([][]serverbin.Server, len(phases))
	for i, phase := range phases {
		for _, name := range phase {
			s, ok := known[name]
			if !ok {
				return nil, fmt.Errorf("%w: BuildAhead: unknown server %q", ErrInvalidConfig, name)
			}
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

// missingPhases keeps, phase by phase, the servers neither an override nor
// the cache provides, and returns their names in order.
func missingPhases(ctx context.Context, b *serverbin.Builder, phases [][]serverbin.Server) (missing [][]serverbin.Server, names []string) {
	for _, phase := range phases {
		var need []serverbin.Server
		for _, s := range phase {
			// Simulated pods need tenantkit's etcd whatever envtest offers.
			if _, _, ok := serverbin.Override(s, s.Name != serverbin.Etcd.Name); !ok {
				need = append(need, s)
			}
		}
		m, err := b.Missing(ctx, need...)
		if err != nil || len(m) == 0 {
			continue // Missing fails only without sources: Start will say so
		}
		missing = append(missing, m)
		for _, s := range m {
			names = append(names, s.Name)
		}
	}
	return missing, names
}
