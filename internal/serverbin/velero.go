package serverbin

// veleroLDFlags make velero report the pinned version. The plugin, built in
// the same go build, gets them too: it links Velero's plugin framework at
// that same version.
var veleroLDFlags = []string{
	"-X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=v1.18.3",
	"-X github.com/vmware-tanzu/velero/pkg/buildinfo.GitTreeState=clean",
}

var (
	// Velero is the velero command v1.18.3 (server, CLI and built-in
	// plugins), run out of cluster by the local environment (see
	// internal/servers/velero).
	Velero = Server{Name: "velero", Module: "velero", Package: "./cmd/velero",
		Upstream: "github.com/vmware-tanzu/velero", Version: "v1.18.3", Slow: true,
		LDFlags: veleroLDFlags, VersionArgs: []string{"version", "--client-only"}}
	// VeleroPluginAWS is velero-plugin-for-aws v1.14.3, Velero's S3
	// object-store plugin. Its main package comes from the upstream module,
	// which the velero module requires next to Velero (see
	// internal/servers/velero/plugins.go): the plugin keeps its own
	// aws-sdk-go-v2 pins and shares the rest (Velero's plugin framework,
	// client-go, gRPC) with the server it talks to, so the two build as one
	// go build. A plugin binary has no version command.
	VeleroPluginAWS = Server{Name: "velero-plugin-for-aws", Module: "velero",
		Package:  "github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws",
		Upstream: "github.com/vmware-tanzu/velero-plugin-for-aws", Version: "v1.14.3", Slow: true,
		LDFlags: veleroLDFlags}
)
