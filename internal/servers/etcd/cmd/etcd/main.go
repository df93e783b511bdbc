// Command etcd is the upstream etcd server (go.etcd.io/etcd/server/v3 etcdmain)
// at the version pinned in this module, with one addition for tenantkit's local
// environment: when TENANTKIT_DNS_SERVER is set to host:port, every name the
// server resolves (peer and client URLs such as etcd-0.etcd-headless.ns.svc) is
// looked up through that DNS server instead of the system resolver. The local
// environment uses this to give simulated pods cluster DNS without touching the
// machine's resolver configuration.
package main

import (
	"context"
	"net"
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
	etcdmain.Main(os.Args)
}
