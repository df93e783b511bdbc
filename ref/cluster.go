package ref

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// releasePrefix is the prefix of a Kubernetes application's Helm release.
const releasePrefix = "kubernetes-"

// MaxReleaseLen is Helm's limit on release names: a Kubernetes application
// whose release "kubernetes-<name>" is longer cannot be installed.
const MaxReleaseLen = 53

// maxClientIDLen is Keycloak's (and the EDP operator's object name) limit
// on client IDs.
const maxClientIDLen = 253

// Keys of the chart's OIDC Secrets.
const (
	// OIDCKubeconfigKey is the key of the user kubeconfig in the Secret
	// named by Cluster.OIDCKubeconfigSecret.
	OIDCKubeconfigKey = "kubeconfig"
	// OIDCAuthnConfigKey is the key of the AuthenticationConfiguration in
	// the Secret named by Cluster.OIDCAuthnConfigSecret.
	OIDCAuthnConfigKey = "config.yaml"
)

// Cluster names a tenant Kubernetes cluster: the Kubernetes application
// Name in the tenant Namespace (for example tenant-acme / prod). Every other
// name of the cluster derives from these two; the methods derive them the
// way Cozystack's kubernetes chart does.
type Cluster struct {
	// Namespace is the tenant namespace, such as "tenant-acme".
	Namespace string
	// Name is the application's name, such as "prod".
	Name string
}

// String returns "namespace/name".
func (c Cluster) String() string { return c.Namespace + "/" + c.Name }

// MaxNameLen is the longest application name whose release
// "kubernetes-<name>" fits Helm's MaxReleaseLen: 42.
const MaxNameLen = MaxReleaseLen - len(releasePrefix)

// Validate checks what cozystack-api and Helm check of a Kubernetes
// application's name: the namespace is a tenant namespace, the name a
// DNS-1035 label (lower-case letters, digits and '-', starting with a
// letter, as cozystack-api requires) short enough for Helm's limit on the
// release name (at most MaxNameLen characters). It reports every problem
// (errors.Join), each wrapping ErrInvalidName.
func (c Cluster) Validate() error {
	var errs []error
	if _, err := ParseNamespace(c.Namespace); err != nil {
		errs = append(errs, err)
	}
	for _, msg := range validation.IsDNS1035Label(c.Name) {
		errs = append(errs, fmt.Errorf("%w: cluster name %q: %s", ErrInvalidName, c.Name, msg))
	}
	if n := len(c.Release()); n > MaxReleaseLen {
		errs = append(errs, fmt.Errorf("%w: cluster name %q: release name %q is %d characters, over Helm's %d",
			ErrInvalidName, c.Name, c.Release(), n, MaxReleaseLen))
	}
	return errors.Join(errs...)
}

// Release returns the Helm release, "kubernetes-<name>". It also names the
// Cluster API Cluster, the KamajiControlPlane and its Service.
func (c Cluster) Release() string { return releasePrefix + c.Name }

// AdminKubeconfigSecret returns the Secret Kamaji writes with the admin
// kubeconfigs, "kubernetes-<name>-admin-kubeconfig"; its keys are the
// KubeconfigVariant values.
func (c Cluster) AdminKubeconfigSecret() string { return c.Release() + "-admin-kubeconfig" }

// OIDCKubeconfigSecret returns the Secret with the OIDC user kubeconfig
// (System mode), "kubernetes-<name>-oidc-kubeconfig", key OIDCKubeconfigKey.
func (c Cluster) OIDCKubeconfigSecret() string { return c.Release() + "-oidc-kubeconfig" }

// OIDCAuthnConfigSecret returns the Secret with the apiserver's
// AuthenticationConfiguration, "kubernetes-<name>-oidc-authn-config", key
// OIDCAuthnConfigKey.
func (c Cluster) OIDCAuthnConfigSecret() string { return c.Release() + "-oidc-authn-config" }

// AwaitingEtcdConfigMap returns the ConfigMap the chart renders instead of
// the cluster while no tenant up the hierarchy runs an etcd,
// "kubernetes-<name>-awaiting-etcd".
func (c Cluster) AwaitingEtcdConfigMap() string { return c.Release() + "-awaiting-etcd" }

// AddonRelease returns the Flux HelmRelease of the addon whose release
// suffix is suffix, "kubernetes-<name>-<suffix>" (for example
// kubernetes-prod-gpu-operator). Package tenant knows each addon's suffix.
func (c Cluster) AddonRelease(suffix string) string { return c.Release() + "-" + suffix }

// DefaultHost returns the apiserver's external host when spec.host is
// empty: "kubernetes-<name>.<tenantHost>", or "" when the tenant has no host.
func (c Cluster) DefaultHost(tenantHost string) string {
	if tenantHost == "" {
		return ""
	}
	return c.Release() + "." + tenantHost
}

// ClientID returns the cluster's OIDC client ID and audience,
// "<namespace>-kubernetes-<name>", cut to 253 characters with trailing '-'
// trimmed, as the chart does.
func (c Cluster) ClientID() string {
	id := c.Namespace + "-" + c.Release()
	if len(id) > maxClientIDLen {
		id = id[:maxClientIDLen]
	}
	return strings.TrimRight(id, "-")
}

// AudienceScope returns the Keycloak client scope that adds the cluster's
// audience to tokens, "<clientID>-audience".
func (c Cluster) AudienceScope() string { return c.ClientID() + "-audience" }

// TenantGroups returns the Keycloak groups whose members may sign in to the
// tenant's clusters: <namespace>-view, -use, -admin and -super-admin.
func (c Cluster) TenantGroups() []string {
	ns := c.Namespace
	return []string{ns + "-view", ns + "-use", ns + "-admin", ns + "-super-admin"}
}
