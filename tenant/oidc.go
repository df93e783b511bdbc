package tenant

// OIDCMode selects which issuer the tenant cluster trusts (the
// application's spec.oidc.mode).
type OIDCMode string

// The chart's OIDC modes.
const (
	// OIDCNone turns OIDC off (the default).
	OIDCNone OIDCMode = "None"
	// OIDCSystem trusts the platform Keycloak realm "cozy" through a
	// per-cluster public client and audience; it needs platform OIDC.
	OIDCSystem OIDCMode = "System"
	// OIDCCustomConfig trusts an issuer the tenant brings, described by its
	// own AuthenticationConfiguration.
	OIDCCustomConfig OIDCMode = "CustomConfig"
)

// OIDC selects how kubectl users authenticate to the tenant cluster (the
// application's spec.oidc), in the chart's shape. Package oidc renders what
// each mode needs.
type OIDC struct {
	// Mode is OIDCNone (default; empty means the same, while a document's
	// mode: "" is refused), OIDCSystem or OIDCCustomConfig.
	Mode OIDCMode `json:"mode,omitempty" chart:"required,empty=S-oidc-mode-enum"`
	// CustomConfig is the tenant's own AuthenticationConfiguration, read
	// only in CustomConfig mode: exactly one of Config and SecretRef.Name.
	CustomConfig CustomConfig `json:"customConfig,omitzero"`
	// Users are granted access in System and CustomConfig modes: one
	// ClusterRoleBinding each, subject User <email>.
	Users []OIDCUser `json:"users,omitempty"`
}

// On reports whether OIDC is on (mode System or CustomConfig).
func (o OIDC) On() bool { return o.Mode == OIDCSystem || o.Mode == OIDCCustomConfig }

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

// OIDCRole is what an OIDC user may do in the tenant cluster.
type OIDCRole string

// The chart's roles.
const (
	// RoleAdmin binds the cluster-admin ClusterRole.
	RoleAdmin OIDCRole = "admin"
	// RoleView binds the view ClusterRole.
	RoleView OIDCRole = "view"
)

// ClusterRole returns the ClusterRole a role binds, "" for an unknown role.
func (r OIDCRole) ClusterRole() string {
	switch r {
	case RoleAdmin:
		return "cluster-admin"
	case RoleView:
		return "view"
	}
	return ""
}

// OIDCUser is one user granted access to the tenant cluster, as the chart's
// values spell it.
type OIDCUser struct {
	// Email is matched against the token's email claim and used verbatim
	// as the User subject of the ClusterRoleBinding.
	Email string `json:"email" chart:"required,missing=S-oidc-users"`
	// Role is RoleAdmin (cluster-admin) or RoleView (view).
	Role OIDCRole `json:"role" chart:"required,missing=S-oidc-users"`
}
