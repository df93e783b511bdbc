package tenant

import (
	"bytes"
	"encoding/json"
)

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
// (x-kubernetes-preserve-unknown-fields); "nodefault" marks a key the
// chart's values.yaml does not hold, so that Helm keeps an explicit null
// and the schema refuses it (S-type), as it does for every key of a map
// entry or list item (a node group, a user).
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
	ControlPlane ControlPlane `json:"controlPlane,omitzero" chart:"null=T-section-null"`
	// NodeGroups are the worker groups by name. When empty, the chart
	// emits one default group, md0: 0 to 10 u1.medium VMs with 20Gi disks
	// and the ingress-nginx role.
	NodeGroups map[string]NodeGroup `json:"nodeGroups,omitempty"`
	// Addons configures the addons installed into the tenant cluster.
	Addons Addons `json:"addons,omitzero" chart:"null=T-section-null"`
	// OIDC selects how kubectl users authenticate to the tenant cluster.
	OIDC OIDC `json:"oidc,omitzero" chart:"null=T-section-null"`
	// Talos configures the worker OS image.
	Talos Talos `json:"talos,omitzero" chart:"null=T-section-null"`
	// NodeHealthCheck tunes the MachineHealthCheck of the worker groups.
	NodeHealthCheck NodeHealthCheck `json:"nodeHealthCheck,omitzero" chart:"null=T-section-null"`
	// MaxNodeProvisionTime bounds how long the autoscaler waits for a node
	// (a duration such as "30m", see ErrDuration). Default "30m".
	MaxNodeProvisionTime string `json:"maxNodeProvisionTime,omitempty" chart:"null=T-duration-positive,empty=T-duration-positive"`
	// Images overrides images of chart-internal helpers.
	Images Images `json:"images,omitzero" chart:"null=T-section-null"`
	// SchedulingClass names a cluster-scoped SchedulingClass applied to the
	// application's workloads; empty inherits the tenant's.
	SchedulingClass string `json:"schedulingClass,omitempty"`

	// unknown holds the fields of the document under spec that the model
	// does not know; they are written back on encode.
	unknown *unknownFields
	// doc holds what the document showed that Check decides by release.
	doc *docFacts
}

// Talos configures the Talos worker image.
type Talos struct {
	// Version is the Talos release of the worker image. Default: the
	// chart's, v1.13.6.
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

// RegistryMirror is one entry of Talos's machine.registries.mirrors. The
// chart's schema does not look into registryMirrors, so an entry of
// another shape (such as a string) is kept as it was written (Raw) and
// written back.
type RegistryMirror struct {
	// Endpoints are the mirror URLs, tried in order.
	Endpoints []string `json:"endpoints,omitempty"`
	// OverridePath uses the endpoint's path as is, without Talos's /v2
	// suffix.
	OverridePath bool `json:"overridePath,omitempty"`
	// SkipFallback stops Talos falling back to the upstream registry when
	// every mirror fails.
	SkipFallback bool `json:"skipFallback,omitempty"`
	// Raw is an entry that is not an object, as JSON; the fields above
	// are then unset. Nil for an object.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON reads an object into the fields and anything else into
// Raw.
func (m *RegistryMirror) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		*m = RegistryMirror{Raw: append(json.RawMessage(nil), t...)}
		return nil
	}
	type plain RegistryMirror
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = RegistryMirror(p)
	return nil
}

// MarshalJSON writes Raw when set, else the fields.
func (m RegistryMirror) MarshalJSON() ([]byte, error) {
	if m.Raw != nil {
		return m.Raw, nil
	}
	type plain RegistryMirror
	return json.Marshal(plain(m))
}

// defaultTalosVersion is the chart's default Talos release.
const defaultTalosVersion = "v1.13.6"

// NodeHealthCheck tunes the MachineHealthCheck of each worker group.
type NodeHealthCheck struct {
	// MaxUnhealthy is the number ("1") or percentage ("50%") of unhealthy
	// nodes tolerated before remediation pauses. Default "50%".
	MaxUnhealthy string `json:"maxUnhealthy,omitempty" chart:"required,empty=T-maxunhealthy-format"`
	// NodeStartupTimeout bounds how long a machine may take to become
	// Ready. Default "20m". The chart passes it to Cluster API unchecked.
	NodeStartupTimeout string `json:"nodeStartupTimeout,omitempty" chart:"required"`
	// ReadyUnknownTimeout is how long Ready may be Unknown. Default "5m".
	ReadyUnknownTimeout string `json:"readyUnknownTimeout,omitempty" chart:"null=T-duration-positive,empty=T-duration-positive"`
	// ReadyFalseTimeout is how long Ready may be False. Default "10m".
	ReadyFalseTimeout string `json:"readyFalseTimeout,omitempty" chart:"null=T-duration-positive,empty=T-duration-positive"`
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
