// Command buildservers builds and caches every server binary the local
// environment runs (see package serverbin). `make tools` runs it so that the
// slow cold builds happen before any test starts.
//
//	go run ./internal/serverbin/buildservers            # all servers
//	go run ./internal/serverbin/buildservers etcd dex   # some of them
//	go run ./internal/serverbin/buildservers weed       # an opt-in one
//	go run ./internal/serverbin/buildservers -j 1       # one go build at a time
//
// Without arguments it builds serverbin.All(); opt-in servers
// (serverbin.Optional(), such as SeaweedFS's weed) are built only when named.
// The slow builds start first and two run at once (-j), the modules of all
// of them downloading in the background meanwhile (see serverbin.Builder.Build).
//
// A server whose binary an environment variable names (TENANTKIT_<NAME>_BIN,
// TEST_ASSET_<NAME>, or <name> in $KUBEBUILDER_ASSETS) is not built: its
// version is checked and printed instead. etcd is built anyway unless
// TENANTKIT_ETCD_BIN names it: the simulated pods of the local environment
// need tenantkit's etcd, upstream etcd only serves the control plane.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	jobs := flag.Int("j", 2, "go build invocations to run at once")
	flag.Parse()
	if err := run(ctx, os.Stdout, *jobs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, jobs int, args []string) error {
	start := time.Now()
	servers, err := selectServers(args)
	if err != nil {
		return err
	}
	var build []serverbin.Server
	for _, s := range servers {
		path, source, ok := serverbin.Override(s, s.Name != serverbin.Etcd.Name)
		if !ok {
			build = append(build, s)
			continue
		}
		v, err := serverbin.CheckBinary(ctx, s, path)
		if err != nil {
			return fmt.Errorf("%s (from %s): %w", path, source, err)
		}
		fmt.Fprintf(out, "%-26s %-9s %s (from %s%s)\n", s.Name, v, path, source, versionNote(s, v))
	}
	// Slowest first: the long builds overlap the short ones.
	slices.SortStableFunc(build, func(a, b serverbin.Server) int {
		switch {
		case a.Slow == b.Slow:
			return 0
		case a.Slow:
			return -1
		}
		return 1
	})
	b := &serverbin.Builder{Jobs: jobs}
	paths, err := b.Build(ctx, build...)
	if err != nil {
		return err
	}
	for i, s := range build {
		fmt.Fprintf(out, "%-26s %-9s %s\n", s.Name, s.Version, paths[i])
	}
	fmt.Fprintf(out, "servers ready in %s\n", time.Since(start).Round(time.Second))
	return nil
}

// selectServers returns All(), or the servers args name (opt-in ones
// included), refusing a name that names no server.
func selectServers(args []string) ([]serverbin.Server, error) {
	if len(args) == 0 {
		return serverbin.All(), nil
	}
	known := append(serverbin.All(), serverbin.Optional()...)
	var out []serverbin.Server
	for _, name := range args {
		i := slices.IndexFunc(known, func(s serverbin.Server) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("buildservers: unknown server %q", name)
		}
		out = append(out, known[i])
	}
	return out, nil
}

func versionNote(s serverbin.Server, v string) string {
	switch v {
	case "":
		return "; version not checked"
	case s.Version:
		return ""
	}
	return "; pinned " + s.Version
}
