package cozystack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// Config configures a Client. Dynamic and Clientset are required (New) or
// built from a rest.Config (NewForConfig); the other fields' zero values
// are the strict defaults.
type Config struct {
	// Dynamic reads and writes the applications of the management cluster.
	Dynamic dynamic.Interface
	// Clientset reads the management cluster's Secrets and namespaces.
	Clientset kubernetes.Interface
	// Logger receives progress messages. Default: discard.
	Logger *slog.Logger
	// PollInterval is how often waits look again. Default 2s.
	PollInterval time.Duration
	// Kubeconfig is the admin kubeconfig variant Cluster.RESTConfig and
	// Cluster.Clientset use by default. Default ref.AdminConf (the external
	// host); use ref.AdminSvc or ref.SuperAdminSvc from inside the
	// management cluster.
	Kubeconfig ref.KubeconfigVariant
	// SkipValidation applies objects without first checking them against
	// the chart's rules (tenant.KubernetesSpec.Validate). Safe only when the
	// caller has validated them already.
	SkipValidation bool
}

// Client reads and writes Cozystack's Kubernetes and Tenant applications,
// and the Secrets Cozystack derives from them, on a management cluster. It
// uses the dynamic client, so it works the same against Cozystack's
// aggregated API and against CRDs of the same group, version and kinds.
type Client struct {
	dyn  dynamic.Interface
	core kubernetes.Interface
	cfg  Config
	log  *slog.Logger
}

// New returns a Client using cfg's clients.
func New(cfg Config) (*Client, error) {
	if cfg.Dynamic == nil || cfg.Clientset == nil {
		return nil, fmt.Errorf("%w: Dynamic and Clientset are required (NewForConfig builds them)", ErrInvalidConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 2 * time.Second
	}
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = ref.AdminConf
	}
	if !cfg.Kubeconfig.Valid() {
		return nil, fmt.Errorf("%w: kubeconfig variant %q", ErrInvalidConfig, cfg.Kubeconfig)
	}
	return &Client{dyn: cfg.Dynamic, core: cfg.Clientset, cfg: cfg, log: cfg.Logger}, nil
}

// NewForConfig returns a Client for the management cluster rc points at;
// the clients cfg leaves nil are built from rc.
func NewForConfig(rc *rest.Config, cfg Config) (*Client, error) {
	if rc == nil {
		return nil, fmt.Errorf("%w: nil rest.Config", ErrInvalidConfig)
	}
	var err error
	if cfg.Dynamic == nil {
		if cfg.Dynamic, err = dynamic.NewForConfig(rc); err != nil {
			return nil, fmt.Errorf("cozystack: dynamic client: %w", err)
		}
	}
	if cfg.Clientset == nil {
		if cfg.Clientset, err = kubernetes.NewForConfig(rc); err != nil {
			return nil, fmt.Errorf("cozystack: clientset: %w", err)
		}
	}
	return New(cfg)
}

// ApplyKubernetes creates the Kubernetes application k, or replaces the
// spec, and adds the labels and annotations, of the existing one. Unless
// Config.SkipValidation is set, it first validates k against the platform
// of its namespace (see Values); the checks' warnings (tenant.Kubernetes.Check)
// go to Config.Logger. Fields of the stored object that the model
// does not know (a newer Cozystack's) are kept where their parent still
// exists in k's spec, so nothing is lost. It returns the object as stored.
func (c *Client) ApplyKubernetes(ctx context.Context, k *tenant.Kubernetes) (*tenant.Kubernetes, error) {
	if err := k.Ref().Validate(); err != nil {
		return nil, err
	}
	if !c.cfg.SkipValidation {
		p, _, err := c.Values(ctx, k.Namespace)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		warnings, err := k.Check(p)
		if err != nil {
			return nil, err
		}
		for _, w := range warnings {
			c.log.Warn("Kubernetes application accepted with a warning", "tenant", k.Namespace, "cluster", k.Name, "warning", w.Error())
		}
	}
	out, err := apply(ctx, c.dyn, kubernetesKind, k)
	if err != nil {
		return nil, err
	}
	c.log.Info("applied Kubernetes application", "tenant", k.Namespace, "cluster", k.Name)
	return out, nil
}

// Kubernetes reads the Kubernetes application c. It returns an error
// wrapping ErrNotFound if it does not exist. Fields the model does not know
// are kept with the object (see tenant.DecodeKubernetes).
func (c *Client) Kubernetes(ctx context.Context, cl ref.Cluster) (*tenant.Kubernetes, error) {
	return get(ctx, c.dyn, kubernetesKind, cl.Namespace, cl.Name)
}

// ListKubernetes lists the Kubernetes applications of tenant namespace ns,
// sorted by name.
func (c *Client) ListKubernetes(ctx context.Context, ns string) ([]*tenant.Kubernetes, error) {
	return list(ctx, c.dyn, kubernetesKind, ns)
}

// DeleteKubernetes deletes the Kubernetes application cl. Deleting one
// that does not exist is not an error.
func (c *Client) DeleteKubernetes(ctx context.Context, cl ref.Cluster) error {
	return remove(ctx, c.dyn, tenant.KubernetesResource, cl.Namespace, cl.Name)
}

// ApplyTenant creates the Tenant t in its parent namespace, or replaces the
// spec of the existing one, like ApplyKubernetes.
func (c *Client) ApplyTenant(ctx context.Context, t *tenant.Tenant) (*tenant.Tenant, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	out, err := apply(ctx, c.dyn, tenantKind, t)
	if err != nil {
		return nil, err
	}
	c.log.Info("applied Tenant application", "tenant", t.Namespace, "name", t.Name)
	return out, nil
}

// Tenant reads the Tenant name in the tenant namespace parent.
func (c *Client) Tenant(ctx context.Context, parent, name string) (*tenant.Tenant, error) {
	return get(ctx, c.dyn, tenantKind, parent, name)
}

// DeleteTenant deletes the Tenant name in the tenant namespace parent.
// Deleting one that does not exist is not an error.
func (c *Client) DeleteTenant(ctx context.Context, parent, name string) error {
	return remove(ctx, c.dyn, tenant.TenantResource, parent, name)
}

// Values reads what Cozystack tells the applications of tenant namespace
// ns: the platform settings and the namespace's services, from the
// cozystack-values Secret. Without that Secret it falls back to the
// namespace's labels for the services and returns a zero Platform. It
// returns an error wrapping ErrNotFound when the namespace does not exist.
func (c *Client) Values(ctx context.Context, ns string) (tenant.Platform, tenant.Services, error) {
	sec, err := c.core.CoreV1().Secrets(ns).Get(ctx, tenant.ValuesSecret, metav1.GetOptions{})
	if err == nil {
		return tenant.ParseValues(sec.Data[tenant.ValuesSecretKey])
	}
	if !apierrors.IsNotFound(err) {
		return tenant.Platform{}, tenant.Services{}, fmt.Errorf("read %s/%s: %w", ns, tenant.ValuesSecret, err)
	}
	nsObj, err := c.core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return tenant.Platform{}, tenant.Services{}, fmt.Errorf("%w: namespace %s", ErrNotFound, ns)
	}
	if err != nil {
		return tenant.Platform{}, tenant.Services{}, fmt.Errorf("read namespace %s: %w", ns, err)
	}
	return tenant.Platform{}, tenant.ServicesFromLabels(nsObj.Labels), nil
}
