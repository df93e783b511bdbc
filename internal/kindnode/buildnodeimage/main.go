// Command buildnodeimage builds tenantkit's kind node image offline when
// docker's image store lacks it (`make kind-node-image`) and prints its
// name. See internal/kindnode.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cozystack/tenantkit/internal/kindnode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &kindnode.Builder{Progress: os.Stderr}
	img, err := b.Ensure(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(img)
}
