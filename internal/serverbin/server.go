package serverbin

import "strings"

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
	// VersionArgs make the binary print its version (for example
	// "--version"); nil when it has no such command. CheckVersion runs it
	// on binaries that override the build.
	VersionArgs []string
	// MinVersion is the oldest version the local environment can run (the
	// flags and APIs it uses); an override binary older than it, or of
	// another major version than Version, is refused. Empty: only the
	// major version is checked.
	MinVersion string
}

// String returns "name version".
func (s Server) String() string { return s.Name + " " + s.Version }

// EnvVar is the environment variable that overrides the binary, for
// example TENANTKIT_KUBE_APISERVER_BIN.
func (s Server) EnvVar() string { return "TENANTKIT_" + envName(s.Name) + "_BIN" }

// EnvtestVar is envtest's variable for the binary, for example
// TEST_ASSET_KUBE_APISERVER.
func (s Server) EnvtestVar() string { return "TEST_ASSET_" + envName(s.Name) }

func envName(name string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// kubeLDFlags make the Kubernetes components report the pinned version
// instead of v0.0.0-master.
var kubeLDFlags = []string{
	"-X k8s.io/component-base/version.gitVersion=v1.37.2",
	"-X k8s.io/component-base/version.gitMajor=1",
	"-X k8s.io/component-base/version.gitMinor=37",
	"-X k8s.io/component-base/version.gitTreeState=clean",
}

// kubeVersionArgs print "Kubernetes v1.37.2".
var kubeVersionArgs = []string{"--version"}

// kubeMinVersion is the oldest Kubernetes release that has every flag the
// local environment passes its control plane (service account issuer and
// signing key flags, --enable-priority-and-fairness, /readyz).
const kubeMinVersion = "v1.20.0"

// The servers the local environment knows how to build.
var (
	// Etcd is etcd v3.7.3 (etcdmain), with cluster-DNS support for simulated
	// pods (see internal/servers/etcd).
	Etcd = Server{Name: "etcd", Module: "etcd", Package: "./cmd/etcd",
		Upstream: "go.etcd.io/etcd/server/v3", Version: "v3.7.3",
		VersionArgs: []string{"--version"}, MinVersion: "v3.4.0"}
	// KubeAPIServer is kube-apiserver v1.37.2.
	KubeAPIServer = Server{Name: "kube-apiserver", Module: "kube", Package: "./cmd/kube-apiserver",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: kubeVersionArgs, MinVersion: kubeMinVersion}
	// KubeControllerManager is kube-controller-manager v1.37.2.
	KubeControllerManager = Server{Name: "kube-controller-manager", Module: "kube", Package: "./cmd/kube-controller-manager",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: kubeVersionArgs, MinVersion: kubeMinVersion}
	// KubeScheduler is kube-scheduler v1.37.2.
	KubeScheduler = Server{Name: "kube-scheduler", Module: "kube", Package: "./cmd/kube-scheduler",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: kubeVersionArgs, MinVersion: kubeMinVersion}
)

// All lists every server that `make tools` builds, in the order the local
// environment first needs them.
func All() []Server {
	return []Server{Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Dex, VersityGW, Velero, VeleroPluginAWS,
		Kubelet, Pause, ImageTool, Kubectl}
}
