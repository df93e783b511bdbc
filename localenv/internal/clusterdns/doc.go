// Package clusterdns is the cluster DNS of tenantkit's simulated cluster: a
// small authoritative DNS server (UDP and TCP, built on the standard library
// and golang.org/x/net/dns/dnsmessage) that answers Kubernetes service names
// from the apiserver's Services and EndpointSlices, the way CoreDNS's
// kubernetes plugin does for the names tenantkit's layouts use:
//
//	etcd-0.etcd-headless.tenant-demo.svc                A  pod address
//	etcd-0.etcd-headless.tenant-demo.svc.cluster.local  A  the same
//	etcd-headless.tenant-demo.svc                       A  every ready endpoint
//	etcd.tenant-demo.svc                                A  every ready endpoint (see below)
//	<pod address>.in-addr.arpa                          PTR etcd-0.etcd-headless.tenant-demo.svc.cluster.local.
//
// Both the short form ending in ".svc" and the fully qualified form with
// the cluster domain resolve. There are no service IPs in the simulated
// network (no kube-proxy), so a service with a cluster IP resolves to the
// addresses of its ready endpoints, which is where a connection to the
// cluster IP would end up. Every other name gets NXDOMAIN: the server does
// not forward.
//
// The local environment starts one Server per simulated cluster and hands
// its address to the etcd processes it runs for pods (TENANTKIT_DNS_SERVER,
// see internal/servers/etcd). Test code reaches pods by name through
// Server.Resolver or Server.DialContext:
//
//	cli, err := clientv3.New(clientv3.Config{
//		Endpoints:   []string{"https://etcd-0.etcd-headless.tenant-demo.svc:2379"},
//		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
//			return dns.DialContext(ctx, "tcp", addr)
//		})},
//		...
//	})
//
// # Errors
//
// Start returns ErrInvalidConfig for a missing client or address. Messages
// that are not DNS queries are dropped; answer reports them as
// ErrMalformedQuery.
//
// # Testing
//
// The message handling is a pure function of a records snapshot and is unit
// tested and fuzzed (FuzzAnswer) without servers; the package's integration
// test resolves names of a real apiserver's EndpointSlices.
package clusterdns
