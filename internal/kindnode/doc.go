// Package kindnode builds tenantkit's kind node image offline: the image
// kind's nodes boot from, with Kubernetes v1.37.2 and every image a
// cluster needs already inside, made from Debian's packages and the
// programs internal/serverbin builds from the pinned modules. Nothing is
// pulled, at build time or when a cluster starts.
//
//	b := &kindnode.Builder{Progress: os.Stderr}
//	image, err := b.Ensure(ctx) // tenantkit/kind-node:v1.37.2-<key>
//
// # What the image holds
//
// A Debian bookworm root filesystem made by debootstrap (systemd,
// containerd and runc from Debian, iptables, nftables, iproute2, ...);
// kind's base-image contents written by tenantkit (files/: the entrypoint,
// the systemd units, containerd's configuration, the kubelet's drop-ins);
// kubelet, kubeadm, kubectl and kube-proxy; the CNI plugins in
// /opt/cni/bin; /kind/version; kind's manifests for the pod network
// (tenantkit-net, kindnetd's job done with the node's own tools) and for
// the default StorageClass (local-path-provisioner); and under
// /kind/images the image archives that tenantkit-images.service loads into
// containerd at boot, before the kubelet starts: kube-apiserver,
// kube-controller-manager, kube-scheduler, kube-proxy, etcd, pause,
// CoreDNS, local-path-provisioner and tenantkit.local/node-tools (the node's
// own root filesystem, which runs kube-proxy, the pod network and the
// volume helper pods).
//
// # Host protection
//
// The entrypoint makes /proc/sys read-only but for /proc/sys/net and shows
// the kubelet the kernel tunables it wants as read-only files, so that a
// node never changes the host's kernel.panic, vm.overcommit_memory and the
// other tunables that are not namespaced, even on an engine that gives the
// node a writable /proc/sys (--privileged, or systempaths=unconfined).
// systemd-sysctl is masked for the same reason.
//
// # Cache key
//
// The image's tag ends in a hash of what decides it: this package's own
// assembly code, the package list, suite and debootstrap variant of the
// root filesystem, the files under files/, and the cache key of every
// program (serverbin's Key: name, version, module files, Go version). The root filesystem is
// cached as a tar under the cache folder, keyed by its own inputs. Debian's
// mirror is not pinned by date: two cold builds a month apart may hold
// different Debian patch releases under one key; delete the cached tar to
// refresh it.
package kindnode
