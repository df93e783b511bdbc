package tenant

// OIDC selects how kubectl users authenticate to the tenant cluster (the
// application's spec.oidc). Package oidc renders what each mode needs; this
// type is only the values, as the chart reads them.
type OIDC struct {
	// Mode is None (default), System or CustomConfig.
	Mode OIDCMode `json:"mode,omitempty"`
	// CustomConfig is the tenant's own AuthenticationConfiguration, read
	// only in CustomConfig mode: exactly one of Config and SecretRef.Name.
	CustomConfig CustomConfig `json:"customConfig,omitzero"`
	// Users are granted access in System and CustomConfig modes: one
	// ClusterRoleBinding each, subject User <email>.
	Users []OIDCUser `json:"users,omitempty"`
}

// OIDCMode is the identity mode of the tenant apiserver. Its values are
// those of package oidc's Mode.
type OIDCMode string

const (
	// OIDCNone leaves OIDC off; only the admin kubeconfig works. The empty
	// mode means the same.
	OIDCNone OIDCMode = "None"
	// OIDCSystem trusts the platform Keycloak realm "cozy" through a
	// per-cluster public client and audience. It needs platform OIDC.
	OIDCSystem OIDCMode = "System"
	// OIDCCustomConfig trusts an issuer the tenant brings.
	OIDCCustomConfig OIDCMode = "CustomConfig"
)

// On reports whether OIDC is on (mode System or CustomConfig).
func (m OIDCMode) On() bool { return m == OIDCSystem || m == OIDCCustomConfig }

// CustomConfig is a tenant-provided AuthenticationConfiguration.
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

// OIDCRole is the role bound to a listed user inside the tenant cluster.
type OIDCRole string

const (
	// OIDCAdmin binds ClusterRole cluster-admin.
	OIDCAdmin OIDCRole = "admin"
	// OIDCView binds ClusterRole view.
	OIDCView OIDCRole = "view"
)

// ClusterRole returns the ClusterRole the chart binds for r, or "" for an
// unknown role.
func (r OIDCRole) ClusterRole() string {
	switch r {
	case OIDCAdmin:
		return "cluster-admin"
	case OIDCView:
		return "view"
	}
	return ""
}

// OIDCUser is one user granted access to the tenant cluster.
type OIDCUser struct {
	// Email is matched against the token's email claim and used verbatim
	// as the User subject of the ClusterRoleBinding.
	Email string `json:"email"`
	// Role is admin or view.
	Role OIDCRole `json:"role"`
}
