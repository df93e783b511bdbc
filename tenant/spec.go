package tenant

import (
	"slices"
)

// KubernetesSpec holds the values of Cozystack's Kubernetes application
// (chart packages/apps/kubernetes): the spec of an apps.cozystack.io/v1alpha1
// Kubernetes object.
//
// A zero field means "not set": the chart's default applies. WithDefaults
// returns the spec with every default filled in, as the chart sees it.
type KubernetesSpec struct {
	// Version is the Kubernetes minor version. Default DefaultVersion.
	Version Version `json:"version,omitempty"`
	// Host is the external hostname of the apiserver. Default
	// "kubernetes-<name>.<tenant host>"; see ClusterRef.DefaultHost.
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
	// (a duration such as "30m"). Default "30m".
	MaxNodeProvisionTime string `json:"maxNodeProvisionTime,omitempty"`
	// Images overrides images of chart-internal helpers.
	Images Images `json:"images,omitzero"`
	// SchedulingClass names a cluster-scoped SchedulingClass applied to the
	// application's workloads; empty inherits the tenant's.
	SchedulingClass string `json:"schedulingClass,omitempty"`
}

// Version is a Kubernetes minor version the chart offers, such as "v1.35".
type Version string

// DefaultVersion is the chart's default Kubernetes version.
const DefaultVersion Version = "v1.35"

// Versions returns the versions the chart offers, newest first.
func Versions() []Version {
	return []Version{"v1.35", "v1.34", "v1.33", "v1.32", "v1.31"}
}

// Valid reports whether the chart offers v.
func (v Version) Valid() bool { return slices.Contains(Versions(), v) }

// Talos configures the Talos worker image.
type Talos struct {
	// Version is the Talos release of the worker image. Default
	// DefaultTalosVersion.
	Version string `json:"version,omitempty"`
	// SchematicID is the Talos image-factory schematic.
	SchematicID string `json:"schematicID,omitempty"`
	// ImageFactoryURL is the base URL of the image factory. Default
	// "https://factory.talos.dev".
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	// InstallerRepository is the installer image repository prefix. Default
	// "factory.talos.dev/installer".
	InstallerRepository string `json:"installerRepository,omitempty"`
}

// DefaultTalosVersion is the chart's default Talos release.
const DefaultTalosVersion = "v1.13.6"

// NodeHealthCheck tunes the MachineHealthCheck of each worker group.
type NodeHealthCheck struct {
	// MaxUnhealthy is the number ("1") or percentage ("50%") of unhealthy
	// nodes tolerated before remediation pauses. Default "50%".
	MaxUnhealthy string `json:"maxUnhealthy,omitempty"`
	// NodeStartupTimeout bounds how long a machine may take to become
	// Ready. Default "20m".
	NodeStartupTimeout string `json:"nodeStartupTimeout,omitempty"`
	// ReadyUnknownTimeout is how long Ready may be Unknown. Default "5m".
	ReadyUnknownTimeout string `json:"readyUnknownTimeout,omitempty"`
	// ReadyFalseTimeout is how long Ready may be False. Default "10m".
	ReadyFalseTimeout string `json:"readyFalseTimeout,omitempty"`
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
