// Package clusterdns is the cluster DNS of tenantkit's simulated cluster: a
// small authoritative DNS server (UDP and TCP, built on the standard library
// and golang.org/x/net/dns/dnsmessage) that answers Kubernetes service names
// from the apiserver's Services and EndpointSlices (and Pods, see below), the
// way CoreDNS's kubernetes plugin does for the names tenantkit's layouts use:
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
// # Pods on loopback addresses
//
// The pods of real kubelets run with hostNetwork on their node's loopback
// address 127.X.Y.1, so that is their pod IP. The apiserver refuses
// loopback addresses in Endpoints and EndpointSlices, so the endpoint slice
// controller cannot publish these pods; the server therefore also watches
// Pods and derives the same names from the pods whose status.podIP is a
// loopback address: <hostname>.<subdomain>.<ns>.svc (and its PTR record)
// when a Service named subdomain exists in the pod's namespace, and
// <svc>.<ns>.svc for every Service there whose non-empty selector matches
// the pod's labels. A pod counts where the endpoint slice controller would
// have marked it ready: its Ready condition is true and it is not being
// deleted, or the service has publishNotReadyAddresses. Pods with any other
// address are answered from EndpointSlices only.
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
// tested and fuzzed (FuzzAnswer) without servers, the rules for pods on
// loopback addresses with table tests; the package's integration test
// resolves names of a real apiserver's EndpointSlices.
package clusterdns
