package tenant

import (
	"github.com/cozystack/tenantkit/oidc"
)

// OIDC selects how kubectl users authenticate to the tenant cluster (the
// application's spec.oidc), in the chart's shape. The mode and role types
// are package oidc's; package oidc renders what each mode needs, from
// Kubernetes.AuthenticationSpec.
type OIDC struct {
	// Mode is oidc.ModeNone (default; empty means the same),
	// oidc.ModeSystem or oidc.ModeCustomConfig.
	Mode oidc.Mode `json:"mode,omitempty"`
	// CustomConfig is the tenant's own AuthenticationConfiguration, read
	// only in CustomConfig mode: exactly one of Config and SecretRef.Name.
	CustomConfig CustomConfig `json:"customConfig,omitzero"`
	// Users are granted access in System and CustomConfig modes: one
	// ClusterRoleBinding each, subject User <email>.
	Users []OIDCUser `json:"users,omitempty"`
}

// On reports whether OIDC is on (mode System or CustomConfig).
func (o OIDC) On() bool { return o.Mode == oidc.ModeSystem || o.Mode == oidc.ModeCustomConfig }

// CustomConfig is a tenant-provided AuthenticationConfiguration, as the
// chart's values spell it.
type CustomConfig struct {
	// Config is inline AuthenticationConfiguration YAML, stored verbatim in
	// the Secret <release>-oidc-authn-config.
	Config string `json:"config,omitempty"`
	// SecretRef names an existing Secret in the tenant namespace whose key
	// config.yaml holds the configuration.
	SecretRef SecretRef `json:"secretRef,omitzero"`
}

// SecretRef names a Secret in the tenant namespace.
type SecretRef struct {
	// Name is the Secret's name.
	Name string `json:"name,omitempty"`
}

// OIDCUser is one user granted access to the tenant cluster, as the chart's
// values spell it (package oidc's User has no wire format).
type OIDCUser struct {
	// Email is matched against the token's email claim and used verbatim
	// as the User subject of the ClusterRoleBinding.
	Email string `json:"email"`
	// Role is oidc.RoleAdmin (cluster-admin) or oidc.RoleView (view).
	Role oidc.Role `json:"role"`
}

// RBACUsers returns the users as package oidc's RBAC planner takes them.
func (o OIDC) RBACUsers() []oidc.User {
	out := make([]oidc.User, len(o.Users))
	for i, u := range o.Users {
		out[i] = oidc.User{Email: u.Email, Role: u.Role}
	}
	return out
}

// OIDC returns the cluster as package oidc names it; its names agree with
// the ClusterRef's (OIDCKubeconfigSecret, OIDCAuthnConfigSecret).
func (r ClusterRef) OIDC() oidc.Cluster { return oidc.Cluster{Namespace: r.Namespace, Name: r.Name} }

// AuthenticationSpec returns what oidc.RenderAuthentication needs to render
// the apiserver side of the cluster's OIDC mode on platform p: mode, the
// tenant Kubernetes version, the platform root host (System's issuer), the
// custom configuration, and the user's extra apiserver flags and volume
// names (which the renderer checks again).
func (k *Kubernetes) AuthenticationSpec(p Platform) oidc.AuthenticationSpec {
	s := k.Spec
	a := s.ControlPlane.APIServer
	vols := make([]string, len(a.ExtraVolumes))
	for i, v := range a.ExtraVolumes {
		vols[i] = v.Name
	}
	version := s.Version
	if version == "" {
		version = DefaultVersion
	}
	return oidc.AuthenticationSpec{
		Cluster:           k.Ref().OIDC(),
		Mode:              s.OIDC.Mode,
		KubernetesVersion: string(version),
		RootHost:          p.RootHost,
		Custom:            oidc.CustomConfig{Config: s.OIDC.CustomConfig.Config, SecretRef: s.OIDC.CustomConfig.SecretRef.Name},
		ExtraArgs:         a.ExtraArgs,
		ExtraVolumes:      vols,
	}
}
