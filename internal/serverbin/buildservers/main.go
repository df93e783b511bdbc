// Command buildservers builds and caches every server binary the local
// environment runs (see package serverbin). `make tools` runs it so that the
// slow cold builds happen before any test starts.
//
//	go run ./internal/serverbin/buildservers            # all servers
//	go run ./internal/serverbin/buildservers etcd dex   # some of them
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
	for _, s := range serverbin.All() {
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
