package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// buildPhases are the servers of the embedded story in the order it needs
// them: the control plane first (every step), dex for the tenant step,
// then the S3 server and Velero for backup, and the controllers last, for
// the simulated cluster of the etcd step. Servers of one phase build in one
// go build.
var buildPhases = [][]serverbin.Server{
	{serverbin.Etcd},
	{serverbin.KubeAPIServer},
	{serverbin.Dex},
	{serverbin.VersityGW},
	{serverbin.Velero, serverbin.VeleroPluginAWS},
	{serverbin.KubeControllerManager, serverbin.KubeScheduler},
}

// buildAhead builds, one go build at a time in the background, the servers
// of buildPhases that neither the cache nor an override (TENANTKIT_<NAME>_BIN,
// KUBEBUILDER_ASSETS, ...) provides, so that each step finds its servers
// ready, or waits only for the build under way: on a first run the tenant
// step plays while Velero and the controllers still build. Each build
// reports on progress. stop cancels what is left and waits.
func buildAhead(ctx context.Context, progress io.Writer) (stop func()) {
	b := &serverbin.Builder{Progress: progress, Jobs: 1}
	var phases [][]serverbin.Server
	var names []string
	for _, phase := range buildPhases {
		var need []serverbin.Server
		for _, s := range phase {
			// Simulated pods need tenantkit's etcd whatever envtest offers.
			if _, _, ok := serverbin.Override(s, s.Name != serverbin.Etcd.Name); !ok {
				need = append(need, s)
			}
		}
		missing, err := b.Missing(ctx, need...)
		if err != nil || len(missing) == 0 {
			continue // Missing fails only without sources: the steps will say so
		}
		phases = append(phases, missing)
		for _, s := range missing {
			names = append(names, s.Name)
		}
	}
	if len(phases) == 0 {
		return func() {}
	}
	fmt.Fprintf(progress, "First run: building %s in the background, in the order the story needs them (cached for later runs).\n",
		strings.Join(names, ", "))
	ctx, cancel := context.WithCancel(ctx)
	var flat []serverbin.Server
	for _, p := range phases {
		flat = append(flat, p...)
	}
	stopDownloads := b.DownloadModules(ctx, flat...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer stopDownloads()
		for _, p := range phases {
			if _, err := b.Build(ctx, p...); err != nil {
				if ctx.Err() != nil {
					return
				}
				// The step that needs it builds it again and fails with this.
				fmt.Fprintf(progress, "background build: %v\n", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}
