package tenant

import "github.com/cozystack/tenantkit/ref"

// AddonRelease describes the Flux HelmRelease the chart renders for one
// addon: it lives in the tenant namespace of the management cluster and
// installs ReleaseName into TargetNamespace of the tenant cluster.
type AddonRelease struct {
	// Addon is the addon's key under spec.addons.
	Addon AddonKey `json:"addon"`
	// Name is the HelmRelease name, <release>-<suffix>.
	Name string `json:"name"`
	// ReleaseName is the Helm release name inside the tenant cluster.
	ReleaseName string `json:"releaseName"`
	// TargetNamespace is the namespace inside the tenant cluster.
	TargetNamespace string `json:"targetNamespace"`
	// DependsOn lists the HelmReleases (in the tenant namespace) this one
	// waits for.
	DependsOn []string `json:"dependsOn,omitempty"`
}

// addonChart is the chart's fixed data for one addon.
type addonChart struct {
	suffix, releaseName, targetNamespace string
	dependsOn                            func(a Addons) []string // suffixes
}

func onCilium(Addons) []string { return []string{"cilium"} }

var addonCharts = map[AddonKey]addonChart{
	CertManager:  {"cert-manager", "cert-manager", "cozy-cert-manager", func(Addons) []string { return []string{"cilium", "cert-manager-crds"} }},
	Cilium:       {"cilium", "cilium", "cozy-cilium", ciliumDeps},
	GatewayAPI:   {"gateway-api-crds", "gateway-api-crds", "kube-system", nil},
	IngressNginx: {"ingress-nginx", "ingress-nginx", "cozy-ingress-nginx", onCilium},
	GPUOperator:  {"gpu-operator", "gpu-operator", "cozy-gpu-operator", onCilium},
	HAMi:         {"hami", "hami", "cozy-hami", func(Addons) []string { return []string{"cilium", "gpu-operator"} }},
	FluxCD:       {"fluxcd", "fluxcd", "cozy-fluxcd", func(Addons) []string { return []string{"cilium", "fluxcd-operator"} }},
	MonitoringAgents: {"monitoring-agents", "cozy-monitoring-agents", "cozy-monitoring", func(Addons) []string {
		return []string{"cozy-victoria-metrics-operator", "vertical-pod-autoscaler-crds", "prometheus-operator-crds", "metrics-server"}
	}},
	VerticalPodAutoscaler: {"vertical-pod-autoscaler", "vertical-pod-autoscaler", "cozy-vertical-pod-autoscaler", func(Addons) []string { return []string{"monitoring-agents"} }},
	Velero:                {"velero", "velero", "cozy-velero", onCilium},
	CoreDNS:               {"coredns", "coredns", "kube-system", onCilium},
	Ouroboros:             {"ouroboros", "ouroboros", "cozy-ouroboros", ouroborosDeps},
}

func ciliumDeps(a Addons) []string {
	if a.GatewayAPI.Enabled {
		return []string{"gateway-api-crds"}
	}
	return nil
}

func ouroborosDeps(a Addons) []string {
	deps := []string{"cilium", "coredns", "ingress-nginx"}
	if a.GatewayAPI.Enabled {
		deps = append(deps, "gateway-api-crds")
	}
	return deps
}

// releaseSuffix returns the suffix of addon k's HelmRelease name
// ("gpu-operator" for GPUOperator), or "" for an unknown key.
func (k AddonKey) releaseSuffix() string { return addonCharts[k].suffix }

// Release returns the name of the Flux HelmRelease of addon k for cluster
// c, "kubernetes-<name>-<suffix>" (kubernetes-prod-gpu-operator), or "" for
// an unknown key.
func (k AddonKey) Release(c ref.Cluster) string {
	s := k.releaseSuffix()
	if s == "" {
		return ""
	}
	return c.AddonRelease(s)
}

// AddonReleases returns the HelmReleases the chart of release r renders
// for the enabled addons of k, in the order of AddonKeys (FluxCD only for a
// release that has it, see Release.HasFluxCD). Like the chart, it renders
// nothing when the tenant has no etcd yet; pass hasEtcd false for that
// case.
func (k *Kubernetes) AddonReleases(r Release, hasEtcd bool) []AddonRelease {
	if !hasEtcd {
		return nil
	}
	c := k.Ref()
	var out []AddonRelease
	for _, key := range AddonKeys() {
		if !k.Spec.Addons.Enabled(key) || key == FluxCD && !r.HasFluxCD() {
			continue
		}
		ac := addonCharts[key]
		r := AddonRelease{Addon: key, Name: key.Release(c), ReleaseName: ac.releaseName, TargetNamespace: ac.targetNamespace}
		if ac.dependsOn != nil {
			for _, d := range ac.dependsOn(k.Spec.Addons) {
				r.DependsOn = append(r.DependsOn, c.AddonRelease(d))
			}
		}
		out = append(out, r)
	}
	return out
}
