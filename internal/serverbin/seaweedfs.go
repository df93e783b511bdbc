package serverbin

// SeaweedFS is SeaweedFS weed 4.53 (module pseudo-version
// v0.0.0-20261109003541-7506e5f91cd6), the S3 server Cozystack runs, built
// from the upstream module with its own dependency pins (see
// internal/servers/seaweedfs). The local environment runs it as `weed mini`
// when an S3 server asks for the SeaweedFS backend.
//
// It is an opt-in parity backend: it is not in All(), so `make tools` and CI
// never build it (a cold build takes several minutes and gives a 230 MB
// binary). Path builds it on first use, like any other server;
// `make test-seaweedfs` builds it up front with
// `go run ./internal/serverbin/buildservers weed`.
var SeaweedFS = Server{Name: "weed", Module: "seaweedfs",
	Package:  "github.com/seaweedfs/seaweedfs/weed",
	Upstream: "github.com/seaweedfs/seaweedfs", Version: "v4.53", Slow: true,
	VersionArgs: []string{"version"},
	LDFlags:     []string{"-X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT=7506e5f91cd6"}}

// Optional lists the servers that only opt-in tests and the kind node
// image (KindNode) need; All does not include them.
func Optional() []Server {
	return append([]Server{SeaweedFS, Kubeadm, KubeProxy, CoreDNS, LocalPathProvisioner}, CNIPlugins...)
}
