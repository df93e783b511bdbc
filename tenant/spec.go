package tenant

// KubernetesSpec holds the values of Cozystack's Kubernetes application
// (chart packages/apps/kubernetes): the spec of an apps.cozystack.io/v1alpha1
// Kubernetes object.
//
// A zero field means "not set": the chart's default applies. WithDefaults
// returns the spec with every default filled in, as the chart sees it. The
// four keys every node group must carry are the exception: see NodeGroup.
//
// Fields a document sets that the model does not know are kept with the
// spec (UnknownFields lists them, Check warns of them) and written back by
// YAML and JSON encoding.
//
// The chart struct tags record what the chart's schema says of a field
// that only a document can show, checked by ParseSpec and ParseKubernetes:
// "required" (an explicit null is refused: Helm deletes the key and the
// schema requires it), "missing=<rule>" (the key must be present: nothing
// supplies a default), "null=<rule>" (an explicit null fails that rule) and
// "empty=<rule>" (a present "" fails that rule; only an absent key means
// the default); "opaque" marks a value the schema does not look into
// (x-kubernetes-preserve-unknown-fields).
type KubernetesSpec struct {
	// Version is the Kubernetes minor version. Default DefaultVersion.
	Version Version `json:"version,omitempty" chart:"null=T-version-map,empty=S-version-enum"`
	// Host is the external hostname of the apiserver. Default
	// "kubernetes-<name>.<tenant host>"; see ref.Cluster.DefaultHost.
	Host string `json:"host,omitempty"`
	// StorageClass is the default StorageClass inside the tenant cluster
	// (immutable). Default "replicated".
	StorageClass string `json:"storageClass,omitempty"`
	// ControlPlane configures the Kamaji control plane.
	ControlPlane ControlPlane `json:"controlPlane,omitzero"`
	// NodeGroups are the worker groups by name. When empty, the chart
	// emits one default group, md0 (see DefaultNodeGroup).
	NodeGroups map[string]NodeGroup `json:"nodeGroups,omitempty"`
	// Addons configures the addons installed into the tenant cluster.
	Addons Addons `json:"addons,omitzero"`
	// OIDC selects how kubectl users authenticate to the tenant cluster.
	OIDC OIDC `json:"oidc,omitzero"`
	// Talos configures the worker OS image.
	Talos Talos `json:"talos,omitzero"`
	// NodeHealthCheck tunes the MachineHealthCheck of the worker groups.
	NodeHealthCheck NodeHealthCheck `json:"nodeHealthCheck,omitzero"`
	// MaxNodeProvisionTime bounds how long the autoscaler waits for a node
	// (a duration such as "30m", see ErrDuration). Default "30m".
	MaxNodeProvisionTime string `json:"maxNodeProvisionTime,omitempty" chart:"empty=T-duration-positive"`
	// Images overrides images of chart-internal helpers.
	Images Images `json:"images,omitzero"`
	// SchedulingClass names a cluster-scoped SchedulingClass applied to the
	// application's workloads; empty inherits the tenant's.
	SchedulingClass string `json:"schedulingClass,omitempty"`

	// unknown holds the fields of the document under spec that the model
	// does not know; they are written back on encode.
	unknown *unknownFields
}

// Talos configures the Talos worker image.
type Talos struct {
	// Version is the Talos release of the worker image. Default
	// DefaultTalosVersion.
	Version string `json:"version,omitempty" chart:"required"`
	// SchematicID is the Talos image-factory schematic.
	SchematicID string `json:"schematicID,omitempty" chart:"required"`
	// ImageFactoryURL is the base URL of the image factory. Default
	// "https://factory.talos.dev".
	ImageFactoryURL string `json:"imageFactoryURL,omitempty" chart:"required"`
	// InstallerRepository is the installer image repository prefix. Default
	// "factory.talos.dev/installer".
	InstallerRepository string `json:"installerRepository,omitempty" chart:"required"`
	// RegistryMirrors is passed to the workers' Talos machine config as
	// machine.registries.mirrors: upstream registry host (such as
	// "docker.io") to its mirrors. The chart stores it verbatim.
	RegistryMirrors map[string]RegistryMirror `json:"registryMirrors,omitempty" chart:"required,opaque"`
}

// RegistryMirror is one entry of Talos's machine.registries.mirrors.
type RegistryMirror struct {
	// Endpoints are the mirror URLs, tried in order.
	Endpoints []string `json:"endpoints,omitempty"`
	// OverridePath uses the endpoint's path as is, without Talos's /v2
	// suffix.
	OverridePath bool `json:"overridePath,omitempty"`
	// SkipFallback stops Talos falling back to the upstream registry when
	// every mirror fails.
	SkipFallback bool `json:"skipFallback,omitempty"`
}

// DefaultTalosVersion is the chart's default Talos release.
const DefaultTalosVersion = "v1.13.6"

// NodeHealthCheck tunes the MachineHealthCheck of each worker group.
type NodeHealthCheck struct {
	// MaxUnhealthy is the number ("1") or percentage ("50%") of unhealthy
	// nodes tolerated before remediation pauses. Default "50%".
	MaxUnhealthy string `json:"maxUnhealthy,omitempty" chart:"required,empty=T-maxunhealthy-format"`
	// NodeStartupTimeout bounds how long a machine may take to become
	// Ready. Default "20m". The chart passes it to Cluster API unchecked.
	NodeStartupTimeout string `json:"nodeStartupTimeout,omitempty" chart:"required"`
	// ReadyUnknownTimeout is how long Ready may be Unknown. Default "5m".
	ReadyUnknownTimeout string `json:"readyUnknownTimeout,omitempty" chart:"empty=T-duration-positive"`
	// ReadyFalseTimeout is how long Ready may be False. Default "10m".
	ReadyFalseTimeout string `json:"readyFalseTimeout,omitempty" chart:"empty=T-duration-positive"`
}

// Images overrides images of chart-internal helpers (for air-gapped
// registries). Empty fields use the chart's pinned images.
type Images struct {
	// WaitForKubeconfig is the wait-for-kubeconfig init container image.
	WaitForKubeconfig string `json:"waitForKubeconfig,omitempty"`
	// Kubectl is the image of the chart's kubectl Jobs.
	Kubectl string `json:"kubectl,omitempty"`
	// TalosCSRSigner is the talos-csr-signer sidecar image.
	TalosCSRSigner string `json:"talosCsrSigner,omitempty"`
}
