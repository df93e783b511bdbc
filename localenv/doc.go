// Package localenv runs a real Kubernetes control plane on loopback for
// integration tests: an etcd cluster of real etcd processes and one or more
// kube-apiservers, started with fresh certificates on free ports, and on
// request a controller manager, a scheduler and simulated nodes, the dex
// OpenID Connect provider, an S3 server and Velero. tenantkit's own tests
// and examples run on it, and so can yours.
//
// It is envtest (sigs.k8s.io/controller-runtime/pkg/envtest) with more real
// parts: the etcd cluster can have several members (Config.EtcdMembers)
// that a test can kill, restart, add and remove; several apiservers can run side by side (one per
// simulated tenant cluster), each with its own etcd key prefix; any flag can
// be passed to an apiserver; and the servers that tenantkit's packages talk
// to run too.
//
// # Testing your code against it
//
// The zero Config starts one etcd member and kube-apiserver, as envtest
// does; Config.EtcdMembers: 3 starts a cluster whose members a test can
// fail (Env.Etcd). StartT starts an
// environment for a test, skips the test under -short and stops everything
// in t.Cleanup:
//
//	func TestMyController(t *testing.T) {
//		env := localenv.StartT(t, localenv.Config{})
//		cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
//		// ... create objects with cs, run your code against
//		// env.RESTConfig() or env.KubeconfigPath(), check the results
//	}
//
// Start and Stop do the same without a testing.TB, for a TestMain or a
// program:
//
//	env, err := localenv.Start(ctx, localenv.Config{})
//	if err != nil { ... }
//	defer env.Stop()
//
// Starting takes a few seconds once the binaries are at hand.
//
// Env.AddUser returns a rest.Config for another user (a client certificate
// with the groups you name, no RBAC granted), for tests of your RBAC rules.
// As with envtest, no controller manager runs unless Config.Cluster asks for
// one, so the aggregated ClusterRoles (view, edit, admin) have no rules:
// bind your own Roles, or start the cluster. RBAC changes reach the
// authorizer shortly after they are written; poll (require.Eventually).
//
// # Binaries
//
// The servers are the upstream programs at pinned versions (etcd v3.7.3,
// Kubernetes v1.37.2, dex v2.45.1, versitygw v1.8.0, Velero v1.18.3).
// Each binary comes from the first of:
//
//   - the field of Config.Binaries;
//   - $TENANTKIT_<NAME>_BIN, for example TENANTKIT_KUBE_APISERVER_BIN;
//   - envtest's own: $TEST_ASSET_<NAME>, then the folder $KUBEBUILDER_ASSETS,
//     so that binaries installed by setup-envtest (etcd, kube-apiserver)
//     serve as they are:
//     KUBEBUILDER_ASSETS=$(setup-envtest use -p path) go test ./...
//   - tenantkit's build from the pinned Go modules, cached in
//     $TENANTKIT_CACHE_DIR (default ~/.cache/tenantkit/servers). The first
//     build of a server takes from seconds (dex) to several minutes of CPU
//     (kube-apiserver) and prints progress lines (Config.BuildProgress);
//     later starts take none.
//
// A binary of another version than the pinned one is used with a warning
// in the log; one of another major version, or older than what the
// environment's flags need, is refused with ErrIncompatibleBinary. See
// Binaries for the details, such as why simulated pods need tenantkit's
// etcd.
//
// # What is real
//
// etcd and kube-apiserver are the upstream servers, unmodified, talking TLS
// with client-certificate authentication. The admin identity is a client
// certificate in system:masters (RESTConfig, KubeconfigPath). Authorization
// is RBAC. Without controllers (the default), the ServiceAccount admission
// plugin is off, as in envtest, because no controller creates the default
// service accounts. Env.AddUser returns a rest.Config of another user, a
// client certificate signed by the environment's CA, for tests of what
// your RBAC rules let a user or a group do; it is Forbidden until a
// binding names it:
//
//	rc, err := env.AddUser(localenv.User{Name: "alice", Groups: []string{"team-a"}})
//
// Env.CA (package localenv/pki) issues any other certificate.
//
// # Simulated cluster
//
// With Config.Cluster set (or Env.StartCluster later), the environment is
// also a small cluster with nodes (see ClusterConfig, Env.Cluster):
//
//	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{}})
//	c := env.Cluster()                  // nodes node-a, node-b, node-c
//	err := c.Cordon(ctx, "node-b")      // or Uncordon, Down, Up, KillContainer
//
// Real, unmodified upstream servers:
//
//   - kube-apiserver (with the ServiceAccount admission plugin on) and its
//     etcd cluster;
//   - kube-controller-manager with its own client certificate and the
//     service account signing key, each controller under its own service
//     account: StatefulSet, persistent volume binding and protection,
//     garbage collector, node lifecycle (marks nodes and pods not ready,
//     taints), disruption (PDBs), endpoints and endpoint slices;
//   - kube-scheduler, including volume binding and topology spread;
//   - etcd for every pod whose image is etcd, with the pod's command line,
//     environment, mounted Secrets and volume;
//   - a small authoritative cluster DNS server that answers <svc>.<ns>.svc
//     and <pod>.<svc>.<ns>.svc (short or with the cluster domain) from
//     Services and EndpointSlices; the etcd processes resolve through it.
//
// Simulated:
//
//   - the kubelet and the container runtime: Node objects, Lease
//     heartbeats, pod status and probes are real API traffic, but
//     containers are plain processes on this machine; pods of images other
//     than etcd run nothing and carry a condition saying so;
//   - the network: every pod listens on its own loopback address 127.X.Y.Z;
//     the apiserver refuses loopback endpoint addresses, so pod and node IPs
//     in the API are twins 10.X.Y.Z, and Cluster.HostAddr maps them back;
//     there are no service IPs (DNS answers a service's ready endpoints
//     instead), no network policy, and connections come from 127.0.0.1;
//   - storage: directories under the node's folder as local
//     PersistentVolumes of a WaitForFirstConsumer StorageClass, wiped and
//     put back when released.
//
// The test process reaches pods directly: Cluster.DialContext resolves
// cluster names and maps pod IPs, Cluster.Resolver resolves names. Package
// etcdlayout creates tenant etcd clusters in Cozystack's layouts on it.
//
// # Real kubelet nodes
//
// ClusterConfig.NodeKind NodeKubelet (or TENANTKIT_NODE_KIND=kubelet for
// clusters that leave it empty) makes every node a real kubelet v1.37.2
// instead, built from the pinned module like the control plane, each with
// its own containerd (the machine's, Debian's package) running pods with
// runc: pod termination, volume mounts (local volumes, Secrets, emptyDir),
// probes, restart back-off and status are then the kubelet's own.
//
//	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{NodeKind: localenv.NodeKubelet}})
//
// It needs root, containerd and runc (KubeletAvailable says why not;
// StartT then skips). Each node is a kubelet process with its own root
// folder, node name, loopback address (its ports and its pods listen
// there) and mount namespace; nothing on the machine's network changes
// (no CNI, no iptables rules), and what the nodes mount, their cgroups,
// containerd state and the kernel tunables the kubelet wants are theirs
// alone, removed on Stop or, after a crash, by the next environment that
// starts kubelet nodes. The cost, measured on two cores: an environment
// with three kubelet nodes is up in about 16 s, against about 11 s with
// the node agent; each node holds about 130 MiB (kubelet 80, containerd
// 50) plus 15 MiB per pod (shim, pause), where the node agent runs every
// node inside the test process. A relocation takes a few seconds longer
// (pods become Ready on their probes' own periods). The node agent stays
// the default; make test runs the tenant etcd layouts and the relocation's
// end-to-end tests on kubelet nodes too, make test-kubelet the whole
// relocation suite.
//
// What is still simulated on kubelet nodes: the network (pods run on the
// host network, put there by the MutatingAdmissionPolicy HostNetworkPolicy,
// with their container ports as host ports; pod IPs are the node's
// loopback address, which the endpoint controllers cannot publish, so the
// cluster DNS answers such pods from the Pods themselves), images (only
// the pause image and tenantkit's etcd under the names of EtcdImages
// exist; nothing is pulled), the cloud controller (tenantkit sets the
// nodes' addresses), and node capacity (the machine's, shared by all
// nodes; ClusterConfig's per-node Capacity is refused). Cluster.Processes
// is empty on kubelet nodes; Cluster.Pod gives the containers' PIDs.
//
// # More servers
//
// On a running environment, StartAPIServer starts another apiserver on the
// same etcd (a tenant cluster's control plane), StartDex an OpenID Connect
// provider with static users, StartS3 an S3 server (versitygw, or
// SeaweedFS), StartVelero a Velero server with the AWS plugin. Each is
// stopped by Stop with the rest.
//
// # Providers
//
// With TENANTKIT_CLUSTER=kind (or Config.Provider "kind"), Start creates a
// kind cluster instead (kind's Go API, sigs.k8s.io/kind/pkg/cluster) and
// hands back its rest.Config; the etcd handle and extra apiservers are then
// unavailable. StartVelero runs Velero on the host, serving the kind
// cluster through its admin kubeconfig. The cluster has one control plane
// node and KindCluster.Workers workers, its own docker network
// (tenantkit-kind-<cluster>), and is Ready when Start returns. Start never
// pulls an image: the node image is KindCluster.NodeImage or
// $TENANTKIT_KIND_NODE_IMAGE (on your own machine, kind's published
// kindest/node image, pulled by you), else tenantkit's own node image,
// which Start builds offline when docker lacks it (`make kind-node-image`:
// Debian's packages and the pinned modules, several minutes once; see
// internal/kindnode). Where no engine answers, the image cannot be had,
// or the cluster would not fit in the inotify instances root has left
// (*InotifyShortageError: every root process on the host shares
// fs.inotify.max_user_instances, often 128, and a node holds about 14),
// Start returns ErrKindUnavailable and StartT skips the test with that
// reason.
//
// Start probes the engine once with a throwaway container of the node
// image. An engine that refuses --privileged (its own capability set lacks
// CAP_SYS_RESOURCE, as on tenantkit's CI machines) gets kind's nodes with
// every other capability instead: during Create, and only for kind's own
// docker calls, a `docker` wrapper in a temporary folder comes first on
// the process's PATH (which Start changes and restores, holding a lock) and
// rewrites kind's privileged run and exec; an engine refusal it does not
// cover is an *EngineRefusalError quoting the engine. On cgroup v1 hosts
// the kubelet gets failCgroupV1: false. The host's kernel tunables
// (kernel.panic, vm.overcommit_memory, ...) stay as they are: nodes see
// /proc/sys read-only apart from /proc/sys/net, and the tunables the
// kubelet wants as read-only files holding its values. tenantkit's node
// image does this in its entrypoint; on an engine that refuses
// --privileged the wrapper does it for any image, before its entrypoint.
// (kind's published images on an engine that allows --privileged run as
// shipped, and may change them, as upstream kind does.)
//
// A kind cluster's apiserver authenticates OIDC users as a tenant
// cluster's does: KindCluster.AuthenticationConfig starts it with
// --authentication-config, a file in a folder of the environment mounted
// into the control-plane node. Its issuers must be reachable from the
// node, whose 127.0.0.1 is its own: StartDex on a kind environment listens
// on KindHostAddress, this host's address on the cluster's own docker
// network (never 0.0.0.0), and SetKindAuthenticationConfig writes the
// configuration naming it and waits until the apiserver has reloaded it
// (see ExampleEnv_SetKindAuthenticationConfig).
//
// Package etcdlayout's tenant etcds run on kind too (the node image holds
// tenantkit's etcd under DefaultEtcdImages), on the pod network with pod
// IPs, any number of tenants' members on one node; the host has no route
// to pod IPs, so clients reach members through the API's port-forward.
// KindCluster.ControlPlaneWorkloads lets the control plane run them too,
// so one control plane and three workers give a three-member etcd a
// fourth node to move to.
//
// Stop deletes the cluster: its node containers with their volumes, and its
// network. A cluster's name carries its owner process (pid and start
// time); the next Start deletes the clusters of owners that died without
// stopping.
//
// Cost, on two cores: the node image builds once in about 10 minutes on
// top of `make tools` (nothing when nothing changed); a cluster of one
// control plane and three workers is Ready about a minute after Start on a
// quiet machine (two to three when the machine is busy), and its nodes use
// a few hundred MiB of memory each. The local provider stays the default:
// it starts in seconds.
//
// # Shutdown
//
// Stop stops every process the environment started, newest first (SIGTERM,
// then SIGKILL after a grace period), and removes the environment's
// directory. Processes are also started with a parent-death signal, so a
// crashed test binary does not leave servers behind.
package localenv
