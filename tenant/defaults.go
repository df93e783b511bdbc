package tenant

import (
	"slices"
)

// Defaults of the chart that are not tied to a sub-type.
const (
	// DefaultStorageClass is the application's default StorageClass.
	DefaultStorageClass = "replicated"
	// DefaultImageFactoryURL is the default Talos image factory.
	DefaultImageFactoryURL = "https://factory.talos.dev"
	// DefaultInstallerRepository is the default Talos installer repository.
	DefaultInstallerRepository = "factory.talos.dev/installer"
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
		s.StorageClass = DefaultStorageClass
	}
	if s.MaxNodeProvisionTime == "" {
		s.MaxNodeProvisionTime = DefaultMaxNodeProvisionTime
	}
	s.ControlPlane = s.ControlPlane.WithDefaults()
	s.NodeGroups = s.EffectiveNodeGroups()
	for name, g := range s.NodeGroups {
		s.NodeGroups[name] = g.WithDefaults()
	}
	if s.Addons.IngressNginx.ExposeMethod == "" {
		s.Addons.IngressNginx.ExposeMethod = Proxied
	}
	if s.OIDC.Mode == "" {
		s.OIDC.Mode = OIDCNone
	}
	s.Talos.Version = orDefault(s.Talos.Version, DefaultTalosVersion)
	s.Talos.ImageFactoryURL = orDefault(s.Talos.ImageFactoryURL, DefaultImageFactoryURL)
	s.Talos.InstallerRepository = orDefault(s.Talos.InstallerRepository, DefaultInstallerRepository)
	h := &s.NodeHealthCheck
	h.MaxUnhealthy = orDefault(h.MaxUnhealthy, DefaultMaxUnhealthy)
	h.NodeStartupTimeout = orDefault(h.NodeStartupTimeout, DefaultNodeStartupTimeout)
	h.ReadyUnknownTimeout = orDefault(h.ReadyUnknownTimeout, DefaultReadyUnknownTimeout)
	h.ReadyFalseTimeout = orDefault(h.ReadyFalseTimeout, DefaultReadyFalseTimeout)
	return s
}

// EffectiveNodeGroups returns the node groups the chart renders: a copy of
// s.NodeGroups, or {md0: DefaultNodeGroup()} when there are none. User
// groups are not merged with the default.
func (s KubernetesSpec) EffectiveNodeGroups() map[string]NodeGroup {
	if len(s.NodeGroups) == 0 {
		return map[string]NodeGroup{DefaultNodeGroupName: DefaultNodeGroup()}
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
		if g.HasGPUs() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
