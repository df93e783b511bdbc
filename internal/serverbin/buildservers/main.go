// Command buildservers builds and caches every server binary the local
// environment runs (see package serverbin). `make tools` runs it so that the
// slow cold builds happen before any test starts.
//
//	go run ./internal/serverbin/buildservers            # all servers
//	go run ./internal/serverbin/buildservers etcd dex   # some of them
//	go run ./internal/serverbin/buildservers weed       # an opt-in one
//
// Without arguments it builds serverbin.All(); opt-in servers
// (serverbin.Optional(), such as SeaweedFS's weed) are built only when named.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	want := map[string]bool{}
	for _, a := range os.Args[1:] {
		want[a] = true
	}
	start := time.Now()
	servers := serverbin.All()
	if len(want) > 0 {
		servers = append(servers, serverbin.Optional()...)
	}
	if err := checkNames(want, servers); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, s := range servers {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		path, err := serverbin.Path(ctx, s)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%-26s %-9s %s\n", s.Name, s.Version, path)
	}
	fmt.Printf("servers ready in %s\n", time.Since(start).Round(time.Second))
}

// checkNames refuses a requested name that names no server.
func checkNames(want map[string]bool, servers []serverbin.Server) error {
	known := map[string]bool{}
	for _, s := range servers {
		known[s.Name] = true
	}
	for name := range want {
		if !known[name] {
			return fmt.Errorf("buildservers: unknown server %q", name)
		}
	}
	return nil
}
