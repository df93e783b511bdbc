package tenant

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Control-plane defaults of the chart.
const (
	// defaultControlPlaneReplicas is the default number of control-plane
	// replicas.
	defaultControlPlaneReplicas = 2
	// DefaultAPIServerPreset is the apiserver's default resources preset.
	DefaultAPIServerPreset ResourcesPreset = "c1.medium"
	// DefaultComponentPreset is the default resources preset of the
	// controller manager, the scheduler and the konnectivity server.
	DefaultComponentPreset ResourcesPreset = "t1.micro"
)

// ResourcesPreset names a sizing preset of a control-plane component, such
// as "c1.medium".
type ResourcesPreset string

// ResourcesPresets returns the presets the chart's schema accepts: the
// series t1, c1, s1, u1 and m1 in the sizes nano to 4xlarge, and the
// legacy sizes nano to 2xlarge without a series (cozystack-api logs a
// deprecation warning for those).
func ResourcesPresets() []ResourcesPreset {
	sizes := []string{"nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge"}
	var out []ResourcesPreset
	for _, series := range []string{"t1", "c1", "s1", "u1", "m1"} {
		for _, size := range sizes {
			out = append(out, ResourcesPreset(series+"."+size))
		}
	}
	for _, size := range sizes[:7] {
		out = append(out, ResourcesPreset(size))
	}
	return out
}

// Valid reports whether the chart's schema accepts p.
func (p ResourcesPreset) Valid() bool { return slices.Contains(ResourcesPresets(), p) }

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

// reservedVolumes returns the extra-volume names the chart always owns:
// talos-ca and talos-tls-cert.
func reservedVolumes() []string { return []string{"talos-ca", "talos-tls-cert"} }

// ControlPlane configures the Kamaji control plane of a tenant cluster. Its
// pods run in the tenant namespace of the management cluster.
type ControlPlane struct {
	// Replicas is the number of control-plane replicas. Nil means the
	// chart's default, 2.
	Replicas *int `json:"replicas,omitempty" chart:"required"`
	// APIServer configures kube-apiserver.
	APIServer APIServer `json:"apiServer,omitzero" chart:"required"`
	// ControllerManager configures kube-controller-manager.
	ControllerManager Component `json:"controllerManager,omitzero" chart:"required"`
	// Scheduler configures kube-scheduler.
	Scheduler Component `json:"scheduler,omitzero" chart:"required"`
	// Konnectivity configures the konnectivity server.
	Konnectivity Konnectivity `json:"konnectivity,omitzero" chart:"required"`
}

// Component sizes one control-plane component: explicit Resources, or a
// named preset when Resources is empty.
type Component struct {
	// Resources sets CPU and memory explicitly.
	Resources Resources `json:"resources,omitzero" chart:"required"`
	// ResourcesPreset is a sizing preset such as "t1.micro", used when
	// Resources is empty. Default DefaultComponentPreset.
	ResourcesPreset ResourcesPreset `json:"resourcesPreset,omitempty" chart:"required,empty=S-resourcespreset-enum"`
}

// Konnectivity configures konnectivity.
type Konnectivity struct {
	// Server sizes the konnectivity server.
	Server Component `json:"server,omitzero" chart:"required"`
}

// APIServer configures the tenant kube-apiserver.
type APIServer struct {
	// Resources sets CPU and memory explicitly.
	Resources Resources `json:"resources,omitzero" chart:"required"`
	// ResourcesPreset is used when Resources is empty. Default
	// DefaultAPIServerPreset.
	ResourcesPreset ResourcesPreset `json:"resourcesPreset,omitempty" chart:"required,empty=S-resourcespreset-enum"`
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

// withDefaults returns c with the chart's defaults filled in.
func (c ControlPlane) withDefaults() ControlPlane {
	if c.Replicas == nil {
		c.Replicas = new(defaultControlPlaneReplicas)
	}
	c.APIServer.ResourcesPreset = orDefault(c.APIServer.ResourcesPreset, DefaultAPIServerPreset)
	c.ControllerManager.ResourcesPreset = orDefault(c.ControllerManager.ResourcesPreset, DefaultComponentPreset)
	c.Scheduler.ResourcesPreset = orDefault(c.Scheduler.ResourcesPreset, DefaultComponentPreset)
	c.Konnectivity.Server.ResourcesPreset = orDefault(c.Konnectivity.Server.ResourcesPreset, DefaultComponentPreset)
	return c
}

func orDefault[S ~string](s, def S) S {
	if s == "" {
		return def
	}
	return s
}
