package serverbin

// The programs of tenantkit's kind node image (internal/kindnode), besides
// the control plane, etcd, the kubelet and pause. None is in All(): `make
// tools` does not build them; `make kind-node-image` does (KindNode).
var (
	// Kubeadm is kubeadm v1.37.2, kind's cluster bootstrapper inside the
	// node, built from k8s.io/kubernetes/cmd/kubeadm in the nested module
	// internal/servers/kubeadm, whose shared modules are at kube's
	// versions so that it reuses the control plane's compiled packages.
	Kubeadm = Server{Name: "kubeadm", Module: "kubeadm", Package: "k8s.io/kubernetes/cmd/kubeadm",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: []string{"version", "-o", "short"}, MinVersion: kubeMinVersion}
	// Kubectl is kubectl v1.37.2: kind runs it inside the node, and the
	// tests of examples/oidc-credential run it with tenantkit's credential
	// plugin (so `make tools` builds it).
	Kubectl = Server{Name: "kubectl", Module: "kubeadm", Package: "k8s.io/kubernetes/cmd/kubectl",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: []string{"version", "--client"}, MinVersion: kubeMinVersion}
	// KubeProxy is kube-proxy v1.37.2, the Service proxy kubeadm deploys.
	KubeProxy = Server{Name: "kube-proxy", Module: "kubeadm", Package: "k8s.io/kubernetes/cmd/kube-proxy",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: kubeVersionArgs, MinVersion: kubeMinVersion}
	// CoreDNS is CoreDNS v1.14.6, the cluster DNS kubeadm v1.37.2 deploys,
	// with the plugins its Corefile names (internal/servers/coredns).
	CoreDNS = Server{Name: "coredns", Module: "coredns", Package: "./cmd/coredns",
		Upstream: "github.com/coredns/coredns", Version: "v1.14.6", VersionArgs: []string{"-version"}}
	// LocalPathProvisioner is rancher/local-path-provisioner v0.0.30, the
	// cluster's default StorageClass, as in kind's node images.
	LocalPathProvisioner = Server{Name: "local-path-provisioner", Module: "localpath",
		Package: "github.com/rancher/local-path-provisioner", Upstream: "github.com/rancher/local-path-provisioner",
		Version: "v0.0.30", VersionArgs: []string{"--version"}}
)

// CNIPlugins are the CNI plugins of containernetworking/plugins v1.10.0
// that kind's base image ships in /opt/cni/bin: ptp, host-local,
// loopback and portmap (internal/servers/cni). They have no version
// command that runs outside a CNI call.
var CNIPlugins = []Server{cniPlugin("ptp", "main"), cniPlugin("host-local", "ipam"),
	cniPlugin("loopback", "main"), cniPlugin("portmap", "meta")}

func cniPlugin(name, kind string) Server {
	return Server{Name: name, Module: "cni",
		Package:  "github.com/containernetworking/plugins/plugins/" + kind + "/" + name,
		Upstream: "github.com/containernetworking/plugins", Version: "v1.10.0"}
}

// KindNode lists every program tenantkit's kind node image holds, slow
// builds first.
func KindNode() []Server {
	s := []Server{KubeAPIServer, KubeControllerManager, KubeScheduler, Kubelet, Kubeadm, Kubectl, KubeProxy,
		Etcd, Pause, ImageTool, CoreDNS, LocalPathProvisioner}
	return append(s, CNIPlugins...)
}
