package tenant

// Addons configures the addons the chart installs into the tenant cluster.
// Each renders a Flux HelmRelease <release>-<addon> in the tenant namespace
// that installs into the tenant cluster through the admin kubeconfig (key
// super-admin.svc). ValuesOverride is passed to the addon's chart as Helm
// values, deep-merged over the chart's defaults (user values win).
type Addons struct {
	// CertManager installs cert-manager.
	CertManager Addon `json:"certManager,omitzero" chart:"required"`
	// Cilium is the CNI; it is always installed.
	Cilium TunableAddon `json:"cilium,omitzero" chart:"required"`
	// GatewayAPI installs the Gateway API CRDs and turns on Cilium's
	// Gateway API support.
	GatewayAPI GatewayAPIAddon `json:"gatewayAPI,omitzero" chart:"required"`
	// IngressNginx installs the ingress-nginx controller on nodes with the
	// ingress-nginx role.
	IngressNginx IngressNginxAddon `json:"ingressNginx,omitzero" chart:"required"`
	// GPUOperator installs the NVIDIA GPU Operator.
	GPUOperator Addon `json:"gpuOperator,omitzero" chart:"required"`
	// HAMi installs HAMi GPU sharing; it requires GPUOperator. Overrides
	// go under the "hami" key of ValuesOverride.
	HAMi Addon `json:"hami,omitzero" chart:"required"`
	// FluxCD installs the Flux operator and Flux (releases
	// <release>-fluxcd-operator and <release>-fluxcd).
	FluxCD Addon `json:"fluxcd,omitzero" chart:"required"`
	// MonitoringAgents installs Fluent Bit and VMAgent shipping to the
	// tenant's monitoring stack (and the Vertical Pod Autoscaler).
	MonitoringAgents Addon `json:"monitoringAgents,omitzero" chart:"required"`
	// VerticalPodAutoscaler tunes the VPA installed with MonitoringAgents.
	VerticalPodAutoscaler TunableAddon `json:"verticalPodAutoscaler,omitzero" chart:"required"`
	// Velero installs Velero into cozy-velero. Overrides go under the
	// "velero" key of ValuesOverride; keys at the top level are ignored.
	Velero Addon `json:"velero,omitzero" chart:"required"`
	// CoreDNS is the cluster DNS; it is always installed.
	CoreDNS TunableAddon `json:"coredns,omitzero" chart:"required"`
	// Ouroboros fixes hairpin NAT for ingress-nginx with the PROXY protocol;
	// it requires IngressNginx.
	Ouroboros Addon `json:"ouroboros,omitzero" chart:"required"`
}

// Addon is an addon that can be switched on, with Helm value overrides.
type Addon struct {
	// Enabled installs the addon.
	Enabled bool `json:"enabled,omitempty" chart:"required"`
	// ValuesOverride holds Helm values merged over the chart's defaults.
	ValuesOverride map[string]any `json:"valuesOverride,omitempty" chart:"required"`
}

// TunableAddon is an addon that is not switched here (it is always on, or
// follows another addon) but whose Helm values can be overridden.
type TunableAddon struct {
	// ValuesOverride holds Helm values merged over the chart's defaults.
	ValuesOverride map[string]any `json:"valuesOverride,omitempty" chart:"required"`
}

// GatewayAPIAddon switches the Gateway API on.
type GatewayAPIAddon struct {
	// Enabled installs the Gateway API CRDs.
	Enabled bool `json:"enabled,omitempty" chart:"required"`
}

// ExposeMethod is how the ingress-nginx controller is exposed.
type ExposeMethod string

const (
	// Proxied runs the controller on the host network behind the tenant's
	// ingress (the default).
	Proxied ExposeMethod = "Proxied"
	// LoadBalancer exposes the controller through a LoadBalancer Service.
	LoadBalancer ExposeMethod = "LoadBalancer"
)

// IngressNginxAddon configures ingress-nginx.
type IngressNginxAddon struct {
	// Enabled installs the controller (needs nodes with the ingress-nginx
	// role).
	Enabled bool `json:"enabled,omitempty" chart:"required"`
	// ExposeMethod is Proxied (default) or LoadBalancer.
	ExposeMethod ExposeMethod `json:"exposeMethod,omitempty" chart:"required,empty=S-ingress-exposemethod-enum"`
	// Hosts are the domains routed to the tenant cluster when Proxied.
	Hosts []string `json:"hosts,omitempty"`
	// ValuesOverride holds Helm values merged over the chart's defaults.
	ValuesOverride map[string]any `json:"valuesOverride,omitempty" chart:"required"`
}

// AddonKey names an addon by its key under spec.addons.
type AddonKey string

// The addon keys.
const (
	CertManager           AddonKey = "certManager"
	Cilium                AddonKey = "cilium"
	GatewayAPI            AddonKey = "gatewayAPI"
	IngressNginx          AddonKey = "ingressNginx"
	GPUOperator           AddonKey = "gpuOperator"
	HAMi                  AddonKey = "hami"
	FluxCD                AddonKey = "fluxcd"
	MonitoringAgents      AddonKey = "monitoringAgents"
	VerticalPodAutoscaler AddonKey = "verticalPodAutoscaler"
	Velero                AddonKey = "velero"
	CoreDNS               AddonKey = "coredns"
	Ouroboros             AddonKey = "ouroboros"
)

// AddonKeys returns every addon key, in the order of the chart's values.
func AddonKeys() []AddonKey {
	return []AddonKey{CertManager, Cilium, GatewayAPI, IngressNginx, GPUOperator, HAMi, FluxCD,
		MonitoringAgents, VerticalPodAutoscaler, Velero, CoreDNS, Ouroboros}
}

// Enabled reports whether the chart installs addon k with these values.
// Cilium and CoreDNS are always installed; the Vertical Pod Autoscaler
// comes with MonitoringAgents. An unknown key reports false.
func (a Addons) Enabled(k AddonKey) bool {
	switch k {
	case Cilium, CoreDNS:
		return true
	case VerticalPodAutoscaler:
		return a.MonitoringAgents.Enabled
	case CertManager:
		return a.CertManager.Enabled
	case GatewayAPI:
		return a.GatewayAPI.Enabled
	case IngressNginx:
		return a.IngressNginx.Enabled
	case GPUOperator:
		return a.GPUOperator.Enabled
	case HAMi:
		return a.HAMi.Enabled
	case FluxCD:
		return a.FluxCD.Enabled
	case MonitoringAgents:
		return a.MonitoringAgents.Enabled
	case Velero:
		return a.Velero.Enabled
	case Ouroboros:
		return a.Ouroboros.Enabled
	}
	return false
}

// ValuesOverride returns the Helm value overrides of addon k (nil for
// GatewayAPI, which has none, and for unknown keys). The map is shared with
// a, not copied.
func (a Addons) ValuesOverride(k AddonKey) map[string]any {
	switch k {
	case CertManager:
		return a.CertManager.ValuesOverride
	case Cilium:
		return a.Cilium.ValuesOverride
	case IngressNginx:
		return a.IngressNginx.ValuesOverride
	case GPUOperator:
		return a.GPUOperator.ValuesOverride
	case HAMi:
		return a.HAMi.ValuesOverride
	case FluxCD:
		return a.FluxCD.ValuesOverride
	case MonitoringAgents:
		return a.MonitoringAgents.ValuesOverride
	case VerticalPodAutoscaler:
		return a.VerticalPodAutoscaler.ValuesOverride
	case Velero:
		return a.Velero.ValuesOverride
	case CoreDNS:
		return a.CoreDNS.ValuesOverride
	case Ouroboros:
		return a.Ouroboros.ValuesOverride
	}
	return nil
}
