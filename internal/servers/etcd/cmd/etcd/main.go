// Command etcd is the upstream etcd server (go.etcd.io/etcd/server/v3 etcdmain)
// at the version pinned in this module, with two additions for tenantkit's
// local environment, both off unless their variable is set:
//
//   - TENANTKIT_DNS_SERVER=host:port: every name the server resolves (peer
//     and client URLs such as etcd-0.etcd-headless.ns.svc) is looked up
//     through that DNS server instead of the system resolver. The local
//     environment uses this to give simulated pods cluster DNS without
//     touching the machine's resolver configuration.
//   - TENANTKIT_LISTEN_HOST=<IP address>: every listen URL (the flags
//     --listen-client-urls, --listen-client-http-urls, --listen-peer-urls and
//     --listen-metrics-urls, as "--flag=value" or "--flag value", and the
//     ETCD_LISTEN_* variables of the same names) whose host is 0.0.0.0,
//     [::], empty or localhost listens on that address instead, keeping its
//     scheme, port and path. Pods of several nodes share the machine's
//     network namespace, each node with its own loopback address, so a pod's
//     "listen on every address" must mean its node's address or the nodes'
//     etcd members would take each other's ports. A value that is not an IP
//     address makes the command exit with status 2.
package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	if addr := os.Getenv("TENANTKIT_DNS_SERVER"); addr != "" {
		net.DefaultResolver = &net.Resolver{
			PreferGo: true,
			Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
		}
	}
	args := os.Args
	if h := os.Getenv("TENANTKIT_LISTEN_HOST"); h != "" {
		a, err := netip.ParseAddr(h)
		if err != nil || a.Zone() != "" {
			fmt.Fprintf(os.Stderr, "etcd: TENANTKIT_LISTEN_HOST=%q is not an IP address\n", h)
			os.Exit(2)
		}
		args = listenArgs(args, a.String())
		for _, env := range listenEnv {
			if v, ok := os.LookupEnv(env); ok {
				if err := os.Setenv(env, listenURLs(v, a.String())); err != nil {
					fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
					os.Exit(2)
				}
			}
		}
	}
	etcdmain.Main(args)
}
