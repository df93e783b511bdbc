package oidc

import (
	"fmt"
	"strings"
)

// Names Cozystack gives the OIDC objects of a tenant cluster.
const (
	// AuthnConfigKey is the key of the AuthenticationConfiguration in the
	// Secret named by Cluster.AuthnConfigSecret.
	AuthnConfigKey = "config.yaml"
	// KubeconfigKey is the key of the user kubeconfig in the Secret named by
	// Cluster.KubeconfigSecret.
	KubeconfigKey = "kubeconfig"
	// SystemRealm is the platform Keycloak realm that System mode trusts.
	SystemRealm = "cozy"
	// SystemRealmRef is the ClusterKeycloakRealm of the platform realm, the
	// realmRef of the Keycloak objects.
	SystemRealmRef = "keycloakrealm-cozy"
	// maxClientIDLen is Keycloak's (and the EDP operator's object name)
	// limit on client IDs.
	maxClientIDLen = 253
)

// Cluster names a tenant Kubernetes cluster: the Kubernetes application
// Name in the tenant Namespace (for example tenant-acme / prod). Every other
// name this package derives comes from these two.
type Cluster struct {
	Namespace string
	Name      string
}

// String returns "namespace/name".
func (c Cluster) String() string { return c.Namespace + "/" + c.Name }

// Release returns the Helm release of the cluster, "kubernetes-<name>".
func (c Cluster) Release() string { return "kubernetes-" + c.Name }

// ClientID returns the cluster's OIDC client ID and audience,
// "<namespace>-kubernetes-<name>", cut to 253 characters with trailing '-'
// trimmed, as the Cozystack chart does.
func (c Cluster) ClientID() string {
	id := c.Namespace + "-" + c.Release()
	if len(id) > maxClientIDLen {
		id = id[:maxClientIDLen]
	}
	return strings.TrimRight(id, "-")
}

// AudienceScope returns the name of the Keycloak client scope that adds the
// cluster's audience to tokens, "<clientID>-audience".
func (c Cluster) AudienceScope() string { return c.ClientID() + "-audience" }

// AuthnConfigSecret returns the name of the Secret that holds the
// AuthenticationConfiguration (key AuthnConfigKey),
// "kubernetes-<name>-oidc-authn-config".
func (c Cluster) AuthnConfigSecret() string { return c.Release() + "-oidc-authn-config" }

// KubeconfigSecret returns the name of the Secret that holds the OIDC user
// kubeconfig (key KubeconfigKey), "kubernetes-<name>-oidc-kubeconfig".
func (c Cluster) KubeconfigSecret() string { return c.Release() + "-oidc-kubeconfig" }

// TenantGroups returns the Keycloak groups whose members may sign in to
// the tenant's clusters: <namespace>-view, -use, -admin and -super-admin.
func (c Cluster) TenantGroups() []string {
	ns := c.Namespace
	return []string{ns + "-view", ns + "-use", ns + "-admin", ns + "-super-admin"}
}

// TenantGroupsGate returns the CEL claim validation rule that admits only
// members of the tenant groups. It guards with has() and dyn() because the
// apiserver types claims as dyn and refuses a bare claims.groups.exists().
func (c Cluster) TenantGroupsGate() string {
	quoted := make([]string, 0, 4)
	for _, g := range c.TenantGroups() {
		quoted = append(quoted, fmt.Sprintf("%q", g))
	}
	return "has(claims.groups) && dyn(claims.groups).exists(g, g in [" + strings.Join(quoted, ",") + "])"
}

// validate checks that both names are set.
func (c Cluster) validate() error {
	if c.Namespace == "" || c.Name == "" {
		return invalidf("cluster needs a namespace and a name (got %q)", c.String())
	}
	return nil
}

// SystemIssuerURL returns the issuer of the platform Keycloak realm for a
// Cozystack installation with the given root host:
// "https://keycloak.<rootHost>/realms/cozy".
func SystemIssuerURL(rootHost string) string {
	return "https://keycloak." + rootHost + "/realms/" + SystemRealm
}
