// Command versitygw is the Versity S3 gateway v1.8.0 with its POSIX
// backend, run through upstream's embedding API (embedgw) so that
// tenantkit's local environment can start a real, SigV4-authenticating S3
// server on loopback.
//
// Usage:
//
//	ROOT_ACCESS_KEY=... ROOT_SECRET_KEY=... versitygw --addr 127.0.0.1:PORT \
//	    [--cert FILE --key FILE] [--health /healthz] DATADIR
//
// The credentials come from the environment so that they never appear in a
// process listing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/embedgw"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "versitygw:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:7070", "S3 listen address")
	cert := flag.String("cert", "", "TLS certificate file (enables HTTPS with --key)")
	key := flag.String("key", "", "TLS key file")
	health := flag.String("health", "/healthz", "unauthenticated health-check path")
	region := flag.String("region", "us-east-1", "region reported to clients")
	flag.Parse()
	if flag.NArg() != 1 {
		return errors.New("want exactly one argument: the data directory")
	}
	root := flag.Arg(0)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := (meta.XattrMeta{}).Test(root); err != nil {
		return fmt.Errorf("xattr check on %s: %w", root, err)
	}
	opts := posix.PosixOpts{}
	be, err := posix.New(root, meta.XattrMeta{}, opts)
	if err != nil {
		return fmt.Errorf("posix backend: %w", err)
	}
	defer be.Shutdown()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return embedgw.RunVersityGW(ctx, be, &embedgw.Config{
		RootUserAccess:    os.Getenv("ROOT_ACCESS_KEY"),
		RootUserSecret:    os.Getenv("ROOT_SECRET_KEY"),
		Region:            *region,
		Ports:             []string{*addr},
		MaxConnections:    1000,
		MaxRequests:       1000,
		MultipartMaxParts: 10000,
		CertFile:          *cert,
		KeyFile:           *key,
		HealthPath:        *health,
		Quiet:             true,
		KeepAlive:         true,
	})
}
