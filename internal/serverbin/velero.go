package serverbin

var (
	// Velero is the velero command v1.18.3 (server, CLI and built-in
	// plugins), run out of cluster by the local environment (see
	// internal/servers/velero).
	Velero = Server{Name: "velero", Module: "velero", Package: "./cmd/velero",
		Upstream: "github.com/vmware-tanzu/velero", Version: "v1.18.3", Slow: true,
		LDFlags: []string{
			"-X github.com/vmware-tanzu/velero/pkg/buildinfo.Version=v1.18.3",
			"-X github.com/vmware-tanzu/velero/pkg/buildinfo.GitTreeState=clean",
		}}
	// VeleroPluginAWS is velero-plugin-for-aws v1.14.3, Velero's S3
	// object-store plugin, built from the upstream module with its own
	// dependency pins (see internal/servers/velero-plugin-aws).
	VeleroPluginAWS = Server{Name: "velero-plugin-for-aws", Module: "velero-plugin-aws",
		Package:  "github.com/vmware-tanzu/velero-plugin-for-aws/velero-plugin-for-aws",
		Upstream: "github.com/vmware-tanzu/velero-plugin-for-aws", Version: "v1.14.3", Slow: true}
)
