package tenant

import (
	"slices"
)

// Defaults of the chart that are not tied to a sub-type.
const (
	// defaultStorageClass is the application's default StorageClass.
	defaultStorageClass = "replicated"
	// defaultImageFactoryURL is the default Talos image factory.
	defaultImageFactoryURL = "https://factory.talos.dev"
	// defaultInstallerRepository is the default Talos installer repository.
	defaultInstallerRepository = "factory.talos.dev/installer"
)

// WithDefaults returns s with every chart default filled in: what the chart
// renders from s. The result is a deep enough copy that changing its node
// groups does not change s. Maps and slices of values (ValuesOverride,
// ExtraArgs, ...) are shared.
func (s KubernetesSpec) WithDefaults() KubernetesSpec {
	if s.Version == "" {
		s.Version = DefaultVersion
	}
	if s.StorageClass == "" {
		s.StorageClass = defaultStorageClass
	}
	if s.MaxNodeProvisionTime == "" {
		s.MaxNodeProvisionTime = defaultMaxNodeProvisionTime
	}
	s.ControlPlane = s.ControlPlane.withDefaults()
	s.NodeGroups = s.effectiveNodeGroups()
	for name, g := range s.NodeGroups {
		s.NodeGroups[name] = g.withDefaults()
	}
	if s.Addons.IngressNginx.ExposeMethod == "" {
		s.Addons.IngressNginx.ExposeMethod = Proxied
	}
	if s.OIDC.Mode == "" {
		s.OIDC.Mode = OIDCNone
	}
	s.Talos.Version = orDefault(s.Talos.Version, defaultTalosVersion)
	s.Talos.ImageFactoryURL = orDefault(s.Talos.ImageFactoryURL, defaultImageFactoryURL)
	s.Talos.InstallerRepository = orDefault(s.Talos.InstallerRepository, defaultInstallerRepository)
	h := &s.NodeHealthCheck
	h.MaxUnhealthy = orDefault(h.MaxUnhealthy, defaultMaxUnhealthy)
	h.NodeStartupTimeout = orDefault(h.NodeStartupTimeout, defaultNodeStartupTimeout)
	h.ReadyUnknownTimeout = orDefault(h.ReadyUnknownTimeout, defaultReadyUnknownTimeout)
	h.ReadyFalseTimeout = orDefault(h.ReadyFalseTimeout, defaultReadyFalseTimeout)
	return s
}

// effectiveNodeGroups returns the node groups the chart renders: a copy of
// s.NodeGroups, or {md0: defaultNodeGroup()} when there are none. User
// groups are not merged with the default.
func (s KubernetesSpec) effectiveNodeGroups() map[string]NodeGroup {
	if len(s.NodeGroups) == 0 {
		return map[string]NodeGroup{defaultNodeGroupName: defaultNodeGroup()}
	}
	out := make(map[string]NodeGroup, len(s.NodeGroups))
	for name, g := range s.NodeGroups {
		out[name] = g
	}
	return out
}

// GPUNodeGroups returns the names of the node groups whose VMs get GPUs.
func (s KubernetesSpec) GPUNodeGroups() []string {
	var out []string
	for name, g := range s.NodeGroups {
		if g.hasGPUs() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
