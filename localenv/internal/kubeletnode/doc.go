// Package kubeletnode runs real kubelets (v1.37.2) as the nodes of
// tenantkit's local environment, so that what the node agent only imitates
// (pod termination, volume mounts, restart back-off, probes, status) is
// done by the real thing.
//
// # A node
//
// Each node is one process tree in its own mount and UTS namespaces
// (unshare), in its own cgroup tenantkit/<pool>/<node> of every hierarchy:
//
//   - its own containerd (the machine's, Debian's 1.6) with every folder
//     and socket under the node's folder, CRI with runc and overlayfs;
//   - its images, built offline with tenantkit-image and imported with ctr:
//     the pause image (tenantkit's pause program) and tenantkit's etcd
//     under the names pods use (Config.EtcdImages), its environment telling
//     etcd the node's address (TENANTKIT_LISTEN_HOST: listening on 0.0.0.0
//     means listening there) and the cluster DNS (TENANTKIT_DNS_SERVER);
//   - its kubelet, connected to the apiserver, with its root folder, node
//     name, loopback address (its ports listen there) and cgroup root, so
//     that all of a node's containers live below the node's cgroup.
//
// One containerd per node rather than one shared: the etcd image differs
// per node (its address), and Down can then kill a node like a power loss,
// containers and runtime alike, by killing its cgroup.
//
// # What the machine sees
//
// Nothing on the machine's network changes: pods use the host network on
// the node's address 127.X.Y.1 (no CNI: containerd gets a network
// configuration that no host-network pod ever uses), the kubelet makes no
// iptables chains (makeIPTablesUtilChains false), and nothing is added to
// any interface. The kubelet refuses a loopback --node-ip, so it runs with
// --cloud-provider=external and the pool plays the cloud controller: it
// sets the Node's InternalIP to the node's address and removes the
// uninitialized taint.
//
// The fixed paths the kubelet and containerd write (/run/containerd,
// /var/lib/kubelet, /var/log/containers) are inside tmpfs mounts that only
// the node's namespace sees. The kernel tunables the kubelet sets when they
// differ from its wishes (vm.overcommit_memory, kernel.panic, ...) are
// shown to it, in its namespace, as read-only files holding exactly those
// wishes, so it changes nothing.
//
// Stop kills every process in the pool's cgroups and removes them; the
// mounts vanish with the namespaces. A pool records itself (owner PID and
// start time, cgroup, folder) in a registry under os.TempDir; Start first
// cleans up the records of owners that died without stopping.
//
// # Errors
//
// Start returns ErrInvalidConfig for a configuration that cannot work and
// the kubelet's log tail when a node does not register. Node operations
// return ErrUnknownNode; KillContainer returns ErrNotRunning.
//
// # Testing
//
// The pool is exercised by package localenv's kubelet tests and, with
// TENANTKIT_NODE_KIND=kubelet, by the etcdlayout and etcdrelocate suites.
// It needs root, containerd and runc.
package kubeletnode
