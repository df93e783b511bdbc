package tenant

import (
	corev1 "k8s.io/api/core/v1"
)

// Control-plane defaults of the chart.
const (
	// DefaultControlPlaneReplicas is the default number of control-plane
	// replicas.
	DefaultControlPlaneReplicas = 2
	// DefaultAPIServerPreset is the apiserver's default resources preset.
	DefaultAPIServerPreset = "c1.medium"
	// DefaultComponentPreset is the default resources preset of the
	// controller manager, the scheduler and the konnectivity server.
	DefaultComponentPreset = "t1.micro"
)

// Chart-owned names on the control-plane Deployment.
const (
	// AuthenticationConfigVolume is the volume (and mount) the chart adds to
	// the apiserver when OIDC is on.
	AuthenticationConfigVolume = "authentication-config"
	// AuthenticationConfigPath is where that volume is mounted.
	AuthenticationConfigPath = "/etc/kubernetes/authentication-config"
	// AuthenticationConfigFlag is the flag the chart appends when OIDC is on.
	AuthenticationConfigFlag = "--authentication-config=" + AuthenticationConfigPath + "/config.yaml"
)

// ReservedVolumes returns the extra-volume names the chart always owns:
// talos-ca and talos-tls-cert.
func ReservedVolumes() []string { return []string{"talos-ca", "talos-tls-cert"} }

// ControlPlane configures the Kamaji control plane of a tenant cluster. Its
// pods run in the tenant namespace of the management cluster.
type ControlPlane struct {
	// Replicas is the number of control-plane replicas. Nil means
	// DefaultControlPlaneReplicas.
	Replicas *int `json:"replicas,omitempty"`
	// APIServer configures kube-apiserver.
	APIServer APIServer `json:"apiServer,omitzero"`
	// ControllerManager configures kube-controller-manager.
	ControllerManager Component `json:"controllerManager,omitzero"`
	// Scheduler configures kube-scheduler.
	Scheduler Component `json:"scheduler,omitzero"`
	// Konnectivity configures the konnectivity server.
	Konnectivity Konnectivity `json:"konnectivity,omitzero"`
}

// Component sizes one control-plane component: explicit Resources, or a
// named preset when Resources is empty.
type Component struct {
	// Resources sets CPU and memory explicitly.
	Resources Resources `json:"resources,omitzero"`
	// ResourcesPreset is a sizing preset such as "t1.micro", used when
	// Resources is empty.
	ResourcesPreset string `json:"resourcesPreset,omitempty"`
}

// Konnectivity configures konnectivity.
type Konnectivity struct {
	// Server sizes the konnectivity server.
	Server Component `json:"server,omitzero"`
}

// APIServer configures the tenant kube-apiserver.
type APIServer struct {
	// Resources sets CPU and memory explicitly.
	Resources Resources `json:"resources,omitzero"`
	// ResourcesPreset is used when Resources is empty. Default
	// DefaultAPIServerPreset.
	ResourcesPreset string `json:"resourcesPreset,omitempty"`
	// ExtraArgs are appended to kube-apiserver's flags (the escape hatch;
	// use OIDC for authentication, never --oidc-* flags).
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// ExtraVolumes are added to the control-plane Deployment. Only configMap
	// and secret sources are allowed; talos-ca and talos-tls-cert are
	// reserved.
	ExtraVolumes []corev1.Volume `json:"extraVolumes,omitempty"`
	// ExtraVolumeMounts are added to the kube-apiserver container; each must
	// name a volume of ExtraVolumes.
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts,omitempty"`
}

// WithDefaults returns c with the chart's defaults filled in.
func (c ControlPlane) WithDefaults() ControlPlane {
	if c.Replicas == nil {
		c.Replicas = new(DefaultControlPlaneReplicas)
	}
	c.APIServer.ResourcesPreset = orDefault(c.APIServer.ResourcesPreset, DefaultAPIServerPreset)
	c.ControllerManager.ResourcesPreset = orDefault(c.ControllerManager.ResourcesPreset, DefaultComponentPreset)
	c.Scheduler.ResourcesPreset = orDefault(c.Scheduler.ResourcesPreset, DefaultComponentPreset)
	c.Konnectivity.Server.ResourcesPreset = orDefault(c.Konnectivity.Server.ResourcesPreset, DefaultComponentPreset)
	return c
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
