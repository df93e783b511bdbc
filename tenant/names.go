package tenant

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ReleasePrefix is the prefix of a Kubernetes application's Helm release.
const ReleasePrefix = "kubernetes-"

// Keys of the chart's OIDC Secrets.
const (
	// OIDCKubeconfigKey is the key of the user kubeconfig in the Secret
	// named by ClusterRef.OIDCKubeconfigSecret.
	OIDCKubeconfigKey = "kubeconfig"
	// OIDCAuthnConfigKey is the key of the AuthenticationConfiguration in
	// the Secret named by ClusterRef.OIDCAuthnConfigSecret.
	OIDCAuthnConfigKey = "config.yaml"
)

// ClusterRef names a tenant Kubernetes cluster: the Kubernetes application
// Name in the tenant Namespace (for example tenant-acme / prod). Every other
// name of the cluster derives from these two; the methods below derive them
// the way the chart does.
type ClusterRef struct {
	// Namespace is the tenant namespace, such as "tenant-acme".
	Namespace string
	// Name is the application's name, such as "prod".
	Name string
}

// String returns "namespace/name".
func (r ClusterRef) String() string { return r.Namespace + "/" + r.Name }

// Validate checks that the namespace is a tenant namespace and the name a
// DNS label short enough for the names derived from it.
func (r ClusterRef) Validate() error {
	if _, err := ParseNamespace(r.Namespace); err != nil {
		return err
	}
	if msgs := validation.IsDNS1123Label(r.Name); len(msgs) > 0 {
		return fmt.Errorf("%w: cluster name %q: %s", ErrInvalidName, r.Name, msgs[0])
	}
	// The longest derived object name that must be a DNS label is the
	// KamajiControlPlane's Service, <release>.
	if n := len(r.ReleaseName()); n > validation.DNS1123LabelMaxLength {
		return fmt.Errorf("%w: cluster name %q: release name %q is %d characters, over %d",
			ErrInvalidName, r.Name, r.ReleaseName(), n, validation.DNS1123LabelMaxLength)
	}
	return nil
}

// ReleaseName returns the Helm release, "kubernetes-<name>". It also names
// the Cluster API Cluster, the KamajiControlPlane and its Service.
func (r ClusterRef) ReleaseName() string { return ReleasePrefix + r.Name }

// AdminKubeconfigSecret returns the Secret Kamaji writes with the admin
// kubeconfigs, "kubernetes-<name>-admin-kubeconfig"; its keys are the
// KubeconfigVariant values.
func (r ClusterRef) AdminKubeconfigSecret() string { return r.ReleaseName() + "-admin-kubeconfig" }

// OIDCKubeconfigSecret returns the Secret with the OIDC user kubeconfig
// (System mode), "kubernetes-<name>-oidc-kubeconfig", key OIDCKubeconfigKey.
func (r ClusterRef) OIDCKubeconfigSecret() string { return r.ReleaseName() + "-oidc-kubeconfig" }

// OIDCAuthnConfigSecret returns the Secret with the apiserver's
// AuthenticationConfiguration, "kubernetes-<name>-oidc-authn-config", key
// OIDCAuthnConfigKey.
func (r ClusterRef) OIDCAuthnConfigSecret() string { return r.ReleaseName() + "-oidc-authn-config" }

// AwaitingEtcdConfigMap returns the ConfigMap the chart renders instead of
// the cluster while no tenant up the hierarchy runs an etcd,
// "kubernetes-<name>-awaiting-etcd".
func (r ClusterRef) AwaitingEtcdConfigMap() string { return r.ReleaseName() + "-awaiting-etcd" }

// AddonRelease returns the name of the Flux HelmRelease of addon k,
// "kubernetes-<name>-<suffix>" (for example kubernetes-prod-gpu-operator).
// It returns "" for an unknown key.
func (r ClusterRef) AddonRelease(k AddonKey) string {
	s := AddonReleaseSuffix(k)
	if s == "" {
		return ""
	}
	return r.ReleaseName() + "-" + s
}

// DefaultHost returns the apiserver's external host when spec.host is
// empty: "kubernetes-<name>.<tenantHost>", or "" when the tenant has no host.
func (r ClusterRef) DefaultHost(tenantHost string) string {
	if tenantHost == "" {
		return ""
	}
	return r.ReleaseName() + "." + tenantHost
}

// KubeconfigVariant is a key of the admin kubeconfig Secret. The .conf
// variants reach the apiserver at its external host; the .svc variants at
// its Service inside the management cluster. super-admin is in
// system:masters; admin is bound to cluster-admin.
type KubeconfigVariant string

// The four admin kubeconfig variants Kamaji writes.
const (
	AdminConf      KubeconfigVariant = "admin.conf"
	AdminSvc       KubeconfigVariant = "admin.svc"
	SuperAdminConf KubeconfigVariant = "super-admin.conf"
	SuperAdminSvc  KubeconfigVariant = "super-admin.svc"
)

// KubeconfigVariants returns the four variants.
func KubeconfigVariants() []KubeconfigVariant {
	return []KubeconfigVariant{AdminConf, AdminSvc, SuperAdminConf, SuperAdminSvc}
}

// Valid reports whether v is one of the four variants.
func (v KubeconfigVariant) Valid() bool {
	switch v {
	case AdminConf, AdminSvc, SuperAdminConf, SuperAdminSvc:
		return true
	}
	return false
}
