package tenant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cozystack/tenantkit/ref"
)

// Validate checks the object's names and its spec (see
// KubernetesSpec.Validate). It returns nil or a *ValidationError.
func (k *Kubernetes) Validate(p Platform) error {
	var ps problems
	if err := k.Ref().Validate(); err != nil {
		ps.add("metadata", ref.ErrInvalidName, strings.TrimPrefix(err.Error(), ref.ErrInvalidName.Error()+": "))
	}
	if err := k.Spec.Validate(p); err != nil {
		ps = append(ps, err.(*ValidationError).Errors...)
	}
	return ps.err()
}

// Validate reports what the chart would refuse to render, or the
// application's schema refuse to accept, for spec s on platform p. It
// returns nil or a *ValidationError listing every problem; each is a
// *FieldError wrapping one of the package's sentinels:
//
//   - ErrOIDCPlatformDisabled: mode System without platform OIDC;
//   - ErrOIDCCustomConfigConflict, ErrOIDCCustomConfigMissing: mode
//     CustomConfig with both or neither source;
//   - ErrLegacyOIDCFlag: --oidc-* or --authentication-config in extraArgs
//     while OIDC is on;
//   - ErrReservedVolume, ErrVolumeName, ErrVolumeSource, ErrDuplicateVolume,
//     ErrUndeclaredVolumeMount: extra volume rules;
//   - ErrHAMiRequiresGPUOperator, ErrOuroborosRequiresIngress: addon
//     dependencies;
//   - ErrNodeGroupResources: cpu without memory or memory without cpu;
//   - ErrInvalidValue: a value outside the schema's enums, an empty
//     required field.
func (s KubernetesSpec) Validate(p Platform) error {
	var ps problems
	if s.Version != "" && !s.Version.Valid() {
		ps.add("spec.version", ErrInvalidValue, fmt.Sprintf("%q is not one of %s", s.Version, joinVersions()))
	}
	s.validateOIDC(&p, &ps)
	s.validateAPIServer(&ps)
	s.validateAddons(&ps)
	s.validateNodeGroups(&ps)
	return ps.err()
}

// ValidateAuthentication reports the chart's refusals that concern the
// apiserver's authentication, without the platform's settings: the OIDC
// mode, users and custom configuration, and the apiserver's extra flags and
// volumes (see Validate). Package oidc checks its renderer's input with it.
func (s KubernetesSpec) ValidateAuthentication() error {
	var ps problems
	s.validateOIDC(nil, &ps)
	s.validateAPIServer(&ps)
	return ps.err()
}

// validateOIDC checks spec.oidc; a nil p skips the platform's OIDC flag.
func (s KubernetesSpec) validateOIDC(p *Platform, ps *problems) {
	o := s.OIDC
	switch o.Mode {
	case "", OIDCNone:
	case OIDCSystem:
		if p != nil && !p.OIDCEnabled {
			ps.add("spec.oidc.mode", ErrOIDCPlatformDisabled, "")
		}
	case OIDCCustomConfig:
		inline, secret := o.CustomConfig.Config != "", o.CustomConfig.SecretRef.Name != ""
		switch {
		case inline && secret:
			ps.add("spec.oidc.customConfig", ErrOIDCCustomConfigConflict, "")
		case !inline && !secret:
			ps.add("spec.oidc.customConfig", ErrOIDCCustomConfigMissing, "")
		}
	default:
		ps.add("spec.oidc.mode", ErrInvalidValue, fmt.Sprintf("%q is not one of None, System, CustomConfig", o.Mode))
	}
	for i, u := range o.Users {
		f := fmt.Sprintf("spec.oidc.users[%d]", i)
		if u.Email == "" {
			ps.add(f+".email", ErrInvalidValue, "required")
		}
		if u.Role.ClusterRole() == "" {
			ps.add(f+".role", ErrInvalidValue, fmt.Sprintf("%q is not one of admin, view", u.Role))
		}
	}
}

func (s KubernetesSpec) validateAddons(ps *problems) {
	a := s.Addons
	if a.HAMi.Enabled && !a.GPUOperator.Enabled {
		ps.add("spec.addons.hami.enabled", ErrHAMiRequiresGPUOperator, "")
	}
	if a.Ouroboros.Enabled && !a.IngressNginx.Enabled {
		ps.add("spec.addons.ouroboros.enabled", ErrOuroborosRequiresIngress, "")
	}
	switch a.IngressNginx.ExposeMethod {
	case "", Proxied, LoadBalancer:
	default:
		ps.add("spec.addons.ingressNginx.exposeMethod", ErrInvalidValue,
			fmt.Sprintf("%q is not one of Proxied, LoadBalancer", a.IngressNginx.ExposeMethod))
	}
}

func (s KubernetesSpec) validateNodeGroups(ps *problems) {
	names := make([]string, 0, len(s.NodeGroups))
	for name := range s.NodeGroups {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		g := s.NodeGroups[name]
		f := "spec.nodeGroups." + name
		if (g.Resources.CPU == nil) != (g.Resources.Memory == nil) {
			ps.add(f+".resources", ErrNodeGroupResources, "")
		}
		if g.MaxReplicas != nil && *g.MaxReplicas < g.MinReplicas {
			ps.add(f+".maxReplicas", ErrInvalidValue, fmt.Sprintf("%d is below minReplicas %d", *g.MaxReplicas, g.MinReplicas))
		}
		if g.MinReplicas < 0 {
			ps.add(f+".minReplicas", ErrInvalidValue, fmt.Sprintf("%d is negative", g.MinReplicas))
		}
		for i, gpu := range g.GPUs {
			if gpu.Name == "" {
				ps.add(fmt.Sprintf("%s.gpus[%d].name", f, i), ErrInvalidValue, "required")
			}
		}
	}
}

func joinVersions() string {
	vs := Versions()
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}
