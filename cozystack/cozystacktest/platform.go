package cozystacktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// PlatformConfig configures a fake platform. The zero value is a platform
// on root host example.org without platform OIDC, whose root tenant runs
// etcd, ingress, monitoring and SeaweedFS.
type PlatformConfig struct {
	// RootHost is the platform's root domain. Default "example.org".
	RootHost string
	// OIDCEnabled turns platform OIDC on (authentication.oidc.enabled).
	OIDCEnabled bool
	// Root is the spec of the root tenant. Nil means etcd, ingress,
	// monitoring and SeaweedFS on.
	Root *tenant.TenantSpec
	// Client configures the platform's cozystack.Client (its clients are
	// built from the rest.Config when nil).
	Client cozystack.Config
}

// Platform fakes the parts of a Cozystack management cluster that package
// tenant reads, on any apiserver: the application CRDs, tenant namespaces
// with the labels and cozystack-values Secret the tenant chart renders, and
// the admin kubeconfig Secret Kamaji writes. Nothing reconciles: a Tenant
// gets its namespace from CreateTenant, a cluster its kubeconfig from
// PublishKubeconfig.
type Platform struct {
	cfg    PlatformConfig
	core   kubernetes.Interface
	client *cozystack.Client
	info   tenant.Platform
}

// NewPlatform installs the CRDs and the root tenant namespace on the
// cluster rc points at. It is safe to call again on the same cluster.
func NewPlatform(ctx context.Context, rc *rest.Config, cfg PlatformConfig) (*Platform, error) {
	if cfg.RootHost == "" {
		cfg.RootHost = "example.org"
	}
	if cfg.Root == nil {
		cfg.Root = &tenant.TenantSpec{Etcd: true, Ingress: true, Monitoring: true, SeaweedFS: true}
	}
	core, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	client, err := cozystack.NewForConfig(rc, cfg.Client)
	if err != nil {
		return nil, err
	}
	p := &Platform{cfg: cfg, core: core, client: client,
		info: tenant.Platform{RootHost: cfg.RootHost, OIDCEnabled: cfg.OIDCEnabled, ClusterDomain: "cozy.local"}}
	if err := installCRDs(ctx, rc); err != nil {
		return nil, err
	}
	if err := p.renderNamespace(ctx, ref.RootNamespace, tenant.RootServices(*cfg.Root, cfg.RootHost)); err != nil {
		return nil, err
	}
	return p, nil
}

// NewPlatformT is NewPlatform for tests: it fails t on error.
func NewPlatformT(t testing.TB, rc *rest.Config, cfg PlatformConfig) *Platform {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := NewPlatform(ctx, rc, cfg)
	if err != nil {
		t.Fatalf("cozystacktest: start platform: %v", err)
	}
	return p
}

// Client returns a cozystack.Client on the platform's cluster.
func (p *Platform) Client() *cozystack.Client { return p.client }

// CreateTenant applies the Tenant t and renders its namespace as the tenant
// chart does: labels and the cozystack-values Secret, with services
// resolved from its parent's. The parent namespace must exist. It returns
// the new namespace and is safe to call again.
func (p *Platform) CreateTenant(ctx context.Context, t *tenant.Tenant) (string, error) {
	ns, err := t.ChildNamespace()
	if err != nil {
		return "", err
	}
	_, parent, err := p.client.Values(ctx, t.Namespace)
	if err != nil {
		return "", fmt.Errorf("parent of tenant %s: %w", ns, err)
	}
	if _, err := p.client.ApplyTenant(ctx, t); err != nil {
		return "", err
	}
	s, err := t.Resolve(parent)
	if err != nil {
		return "", err
	}
	return ns, p.renderNamespace(ctx, ns, s)
}

// renderNamespace creates or relabels namespace ns and writes its
// cozystack-values Secret.
func (p *Platform) renderNamespace(ctx context.Context, ns string, s tenant.Services) error {
	labels, err := s.NamespaceLabels(ns)
	if err != nil {
		return err
	}
	want := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
	cur, err := p.core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = p.core.CoreV1().Namespaces().Create(ctx, want, metav1.CreateOptions{})
	case err == nil:
		cur.Labels = labels
		_, err = p.core.CoreV1().Namespaces().Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	sec, err := tenant.ValuesSecretFor(ns, p.info, s)
	if err != nil {
		return err
	}
	return p.putSecret(ctx, sec)
}

// PublishKubeconfig does what Kamaji does once a control plane is up: it
// writes the admin kubeconfig Secret of cluster c with its four keys.
// All four point at the apiserver rc describes with rc's credentials (in
// Cozystack the .svc variants use the Service address and super-admin a
// system:masters identity).
func (p *Platform) PublishKubeconfig(ctx context.Context, c ref.Cluster, rc *rest.Config) error {
	data, err := Kubeconfig(c.Release(), rc)
	if err != nil {
		return err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: c.AdminKubeconfigSecret(), Namespace: c.Namespace},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{},
	}
	for _, v := range ref.KubeconfigVariants() {
		sec.Data[string(v)] = data
	}
	return p.putSecret(ctx, sec)
}

// putSecret creates sec or replaces the existing Secret's data.
func (p *Platform) putSecret(ctx context.Context, sec *corev1.Secret) error {
	api := p.core.CoreV1().Secrets(sec.Namespace)
	_, err := api.Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var cur *corev1.Secret
		if cur, err = api.Get(ctx, sec.Name, metav1.GetOptions{}); err == nil {
			sec.ResourceVersion = cur.ResourceVersion
			_, err = api.Update(ctx, sec, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return nil
}
