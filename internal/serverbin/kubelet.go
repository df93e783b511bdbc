package serverbin

// ownVersion is the Version of the programs that tenantkit writes itself
// and that have no upstream release: a version string all the same, since
// the cache names a binary name-version-key and prunes name-v*.
const ownVersion = "v0.0.0-tenantkit"

// ownUpstream is the Upstream of pause: its nested module.
const ownUpstream = "github.com/cozystack/tenantkit/internal/servers/kubelet"

// imageToolUpstream is the Upstream of tenantkit-image: its nested module.
const imageToolUpstream = "github.com/cozystack/tenantkit/internal/servers/image"

var (
	// Kubelet is the kubelet v1.37.2, the real node agent, built from the
	// nested module internal/servers/kubelet (which pins k8s.io/kubernetes
	// like internal/servers/kube, plus the kubelet's own dependencies) so
	// that the control plane's module and cache key stay as they are. Every
	// module the two share is at kube's version, so that a cold build
	// compiles the Kubernetes packages they share once, not once each.
	Kubelet = Server{Name: "kubelet", Module: "kubelet", Package: "./cmd/kubelet",
		Upstream: "k8s.io/kubernetes", Version: "v1.37.2", LDFlags: kubeLDFlags, Slow: true,
		VersionArgs: kubeVersionArgs, MinVersion: kubeMinVersion}
	// Pause is the pod sandbox's program, tenantkit's Go rewrite of
	// Kubernetes' pause.c: a static binary that sleeps, reaps its children
	// and exits 0 on SIGTERM or SIGINT. The local environment packs it
	// into the sandbox image with ImageTool. It has no version command.
	Pause = Server{Name: "pause", Module: "kubelet", Package: "./cmd/pause",
		Upstream: ownUpstream, Version: ownVersion}
	// ImageTool is tenantkit-image, which writes a one-layer container
	// image tarball offline (go-containerregistry) that `ctr images
	// import` loads: how the local environment gives a container runtime
	// its images without a registry. It has no version command. Its
	// nested module is internal/servers/image, apart from the kubelet's:
	// go-containerregistry would raise modules the kubelet shares with the
	// control plane (golang.org/x/net and others) above kube's versions.
	ImageTool = Server{Name: "tenantkit-image", Module: "image", Package: "./cmd/tenantkit-image",
		Upstream: imageToolUpstream, Version: ownVersion}
)
