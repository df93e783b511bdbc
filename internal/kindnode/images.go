package kindnode

import "github.com/cozystack/tenantkit/internal/serverbin"

// KubernetesVersion is the Kubernetes release of the node image.
const KubernetesVersion = "v1.37.2"

// Repository is the node image's repository; its tag is
// KubernetesVersion-<cache key>.
const Repository = "tenantkit/kind-node"

// NodeToolsImage is the node's own root filesystem (without the kubelet and
// kubeadm) as a container image: kube-proxy's image, the pod network's and
// the volume helper's.
const NodeToolsImage = "tenantkit.local/node-tools:v1"

// imagePATH is the PATH of the one-binary images, whose pods name their
// command without a folder (kube-apiserver, etcd, ...).
const imagePATH = "PATH=/usr/local/bin:/usr/bin:/bin"

// image is one archive under /kind/images.
type image struct {
	file string
	tags []string
	// bin is the program the image holds at path; entrypoint makes it the
	// image's entrypoint (else pods name the command).
	bin        serverbin.Server
	path       string
	entrypoint bool
	// nodeTools: the image is the node's root filesystem instead.
	nodeTools bool
}

// images are the archives the node loads at boot: every image kubeadm
// v1.37.2 and the cluster's add-ons run. The etcd image holds etcd v3.7.3
// under kubeadm's default tag too (3.7.0-0), so that kind's own kubeadm
// configuration finds it, and under the tenant etcd images of
// localenv.DefaultEtcdImages, as kubelet nodes hold it, so that a tenant
// etcd's pods start on a kind node unchanged.
var images = []image{
	{file: "kube-apiserver.tar", tags: []string{"registry.k8s.io/kube-apiserver:" + KubernetesVersion},
		bin: serverbin.KubeAPIServer, path: "/usr/local/bin/kube-apiserver"},
	{file: "kube-controller-manager.tar", tags: []string{"registry.k8s.io/kube-controller-manager:" + KubernetesVersion},
		bin: serverbin.KubeControllerManager, path: "/usr/local/bin/kube-controller-manager"},
	{file: "kube-scheduler.tar", tags: []string{"registry.k8s.io/kube-scheduler:" + KubernetesVersion},
		bin: serverbin.KubeScheduler, path: "/usr/local/bin/kube-scheduler"},
	{file: "etcd.tar", tags: append([]string{"registry.k8s.io/etcd:3.7.3-0", "registry.k8s.io/etcd:3.7.0-0"}, TenantEtcdImages...),
		bin: serverbin.Etcd, path: "/usr/local/bin/etcd"},
	{file: "pause.tar", tags: []string{"registry.k8s.io/pause:3.10.2"},
		bin: serverbin.Pause, path: "/pause", entrypoint: true},
	{file: "coredns.tar", tags: []string{"registry.k8s.io/coredns/coredns:v1.14.6"},
		bin: serverbin.CoreDNS, path: "/coredns", entrypoint: true},
	{file: "local-path-provisioner.tar", tags: []string{"tenantkit.local/local-path-provisioner:v0.0.30"},
		bin: serverbin.LocalPathProvisioner, path: "/usr/local/bin/local-path-provisioner"},
	{file: "node-tools.tar", tags: []string{"registry.k8s.io/kube-proxy:" + KubernetesVersion, NodeToolsImage},
		nodeTools: true},
}

// TenantEtcdImages are the tenant etcd images the node holds (etcd
// v3.7.3 under their names): localenv.DefaultEtcdImages.
var TenantEtcdImages = []string{"quay.io/coreos/etcd:v3.5.12", "registry.k8s.io/etcd:3.5.15-0"}

// nodeBin is a program installed in the node's root filesystem.
type nodeBin struct {
	bin  serverbin.Server
	path string
}

// nodeBins are the programs in the node's own root filesystem (kind's
// layout: the kubelet and kubeadm in /usr/bin, the CNI plugins in
// /opt/cni/bin; kube-proxy where kubeadm's DaemonSet runs it).
func nodeBins() []nodeBin {
	bins := []nodeBin{
		{serverbin.Kubelet, "/usr/bin/kubelet"},
		{serverbin.Kubeadm, "/usr/bin/kubeadm"},
		{serverbin.Kubectl, "/usr/bin/kubectl"},
		{serverbin.KubeProxy, "/usr/local/bin/kube-proxy"},
	}
	for _, p := range serverbin.CNIPlugins {
		bins = append(bins, nodeBin{p, "/opt/cni/bin/" + p.Name})
	}
	return bins
}
