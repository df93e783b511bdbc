// Package localenv runs a real Kubernetes control plane on loopback for
// tenantkit's tests and examples: an etcd cluster of real etcd processes and
// one or more kube-apiservers, built from pinned upstream modules (see
// package serverbin) and started with fresh certificates on free ports.
//
// It is envtest with more real parts: the etcd cluster has several members
// that a test can kill, restart, add and remove; several apiservers can run
// side by side (one per simulated tenant cluster), each with its own etcd key
// prefix; and any flag can be passed to an apiserver.
//
//	env, err := localenv.Start(ctx, localenv.Config{})
//	if err != nil { ... }
//	defer env.Stop()
//	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
//
// In tests, StartT starts the environment, skips under -short and stops it in
// t.Cleanup:
//
//	env := localenv.StartT(t, localenv.Config{})
//
// # What is real
//
// etcd and kube-apiserver are the upstream servers, unmodified, talking TLS
// with client-certificate authentication. The admin identity is a client
// certificate in system:masters. Authorization is RBAC. Without controllers
// (the default), the ServiceAccount admission plugin is off, as in envtest,
// because no controller creates the default service accounts.
//
// # Simulated cluster
//
// With Config.Cluster set, the environment is also a small cluster with
// nodes (see ClusterConfig, Env.Cluster):
//
//	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{}})
//	c := env.Cluster()                  // nodes node-a, node-b, node-c
//	err := c.Cordon(ctx, "node-b")      // or Uncordon, Down, Up, KillContainer
//
// Real, unmodified upstream servers:
//
//   - kube-apiserver (with the ServiceAccount admission plugin on) and its
//     etcd cluster;
//   - kube-controller-manager v1.37.2 with its own client certificate and
//     the service account signing key, each controller under its own
//     service account: StatefulSet, persistent volume binding and
//     protection, garbage collector, node lifecycle (marks nodes and pods
//     not ready, taints), disruption (PDBs), endpoints and endpoint slices;
//   - kube-scheduler v1.37.2, including volume binding and topology spread;
//   - etcd v3.7.3 for every pod whose image is etcd, with the pod's command
//     line, environment, mounted Secrets and volume;
//   - the cluster DNS (package clusterdns), a small authoritative server of
//     ours that answers <svc>.<ns>.svc and <pod>.<svc>.<ns>.svc (short or
//     with the cluster domain) from Services and EndpointSlices; the etcd
//     processes resolve through it.
//
// Simulated:
//
//   - the kubelet and the container runtime (package nodeagent): Node
//     objects, Lease heartbeats, pod status and probes are real API traffic,
//     but containers are plain processes on this machine; pods of images
//     other than etcd run nothing and carry a condition saying so;
//   - the network (package loopnet): every pod listens on its own loopback
//     address 127.X.Y.Z; the apiserver refuses loopback endpoint addresses,
//     so pod and node IPs in the API are twins 10.X.Y.Z, and
//     Cluster.HostAddr maps them back; there are no service IPs (DNS
//     answers a service's ready endpoints instead), no network policy, and
//     connections come from 127.0.0.1;
//   - storage (package localvolume): directories under the node's folder as
//     local PersistentVolumes of a WaitForFirstConsumer StorageClass, wiped
//     and put back when released.
//
// The test process reaches pods directly: Cluster.DialContext resolves
// cluster names and maps pod IPs, Cluster.Resolver resolves names. Tenant
// etcd clusters in Cozystack's layouts come from package etcdlayout.
//
// # Providers
//
// With TENANTKIT_CLUSTER=kind (or Config.Provider "kind"), Start creates a
// kind cluster instead and hands back its rest.Config; the etcd handle and
// extra apiservers are then unavailable. Where Docker cannot run kind, Start
// returns ErrKindUnavailable and StartT skips the test with that reason.
//
// # Shutdown
//
// Stop stops every process the environment started, newest first (SIGTERM,
// then SIGKILL after a grace period), and removes the environment's
// directory. Processes are also started with a parent-death signal, so a
// crashed test binary does not leave servers behind.
package localenv
