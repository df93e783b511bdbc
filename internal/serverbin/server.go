package serverbin

// Server describes one binary built from a nested module under
// internal/servers.
type Server struct {
	// Name is the binary name, for example "kube-apiserver".
	Name string
	// Module is the nested module's directory under internal/servers.
	Module string
	// Package is the main package inside that module, for example
	// "./cmd/kube-apiserver", or the import path of a main package of a
	// module that the nested module's go.mod requires.
	Package string
	// Upstream is the module the server comes from, for progress messages.
	Upstream string
	// Version is the upstream version the binary reports.
	Version string
	// LDFlags are passed to go build -ldflags.
	LDFlags []string
	// Slow marks servers whose cold build takes minutes; the progress line
	// says so.
	Slow bool
}

// String returns "name version".
func (s Server) String() string { return s.Name + " " + s.Version }

// kubeLDFlags make the Kubernetes components report the pinned version
// instead of v0.0.0-master.
var kubeLDFlags = []string{
	"-X k8s.io/component-base/version.gitVersion=v1.37.2",
	"-X k8s.io/component-base/version.gitMajor=1",
	"-X k8s.io/component-base/version.gitMinor=37",
	"-X k8s.io/component-base/version.gitTreeState=clean",
}

// The servers the local environment knows how to build.
var (
	// Etcd is etcd v3.7.3 (etcdmain), with cluster-DNS support for simulated
	// pods (see internal/servers/etcd).
	Etcd = Server{Name: "etcd", Module: "etcd", Package: "./cmd/etcd",
		Upstream: "go.etcd.io/etcd/server/v3", Version: "v3.7.3"}
	// KubeAPIServer is kube-apiserver v1.37.2.
	KubeAPIServer = Server{Name: "kube-apiserver", Module: "kube", Package: "./cmd/kube-apiserver",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true}
	// KubeControllerManager is kube-controller-manager v1.37.2.
	KubeControllerManager = Server{Name: "kube-controller-manager", Module: "kube", Package: "./cmd/kube-controller-manager",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true}
	// KubeScheduler is kube-scheduler v1.37.2.
	KubeScheduler = Server{Name: "kube-scheduler", Module: "kube", Package: "./cmd/kube-scheduler",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true}
)

// All lists every server, in the order `make tools` builds them.
func All() []Server {
	return []Server{Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Dex, VersityGW, Velero, VeleroPluginAWS}
}
