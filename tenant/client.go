package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	sigsjson "sigs.k8s.io/json"
)

// Config configures a Client. The zero value is the strict default.
type Config struct {
	// Logger receives progress messages. Default: discard.
	Logger *slog.Logger
	// PollInterval is how often waits look again. Default 2s.
	PollInterval time.Duration
	// Kubeconfig is the admin kubeconfig variant Cluster.RESTConfig and
	// Cluster.Clientset use by default. Default AdminConf (the external
	// host); use AdminSvc or SuperAdminSvc from inside the management
	// cluster.
	Kubeconfig KubeconfigVariant
	// SkipValidation applies objects without first checking them against
	// the chart's rules (KubernetesSpec.Validate). Safe only when the
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

// New returns a Client for the management cluster rc points at.
func New(rc *rest.Config, cfg Config) (*Client, error) {
	if rc == nil {
		return nil, errors.New("tenant: nil rest.Config")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 2 * time.Second
	}
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = AdminConf
	}
	if !cfg.Kubeconfig.Valid() {
		return nil, fmt.Errorf("%w: kubeconfig variant %q", ErrInvalidValue, cfg.Kubeconfig)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("tenant: dynamic client: %w", err)
	}
	core, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("tenant: clientset: %w", err)
	}
	return &Client{dyn: dyn, core: core, cfg: cfg, log: cfg.Logger}, nil
}

// ApplyKubernetes creates the Kubernetes application k, or replaces the
// spec, and adds the labels and annotations, of the existing one. Unless
// Config.SkipValidation is set, it first validates k against the platform
// of its namespace (see Values). Fields of the stored spec that this
// package does not know (a newer Cozystack's) are kept where their parent
// still exists in k's spec, so nothing is lost. It returns the object as
// stored.
func (c *Client) ApplyKubernetes(ctx context.Context, k *Kubernetes) (*Kubernetes, error) {
	if err := k.Ref().Validate(); err != nil {
		return nil, err
	}
	if !c.cfg.SkipValidation {
		p, _, err := c.Values(ctx, k.Namespace)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if err := k.Validate(p); err != nil {
			return nil, err
		}
	}
	var out Kubernetes
	if err := c.apply(ctx, KubernetesResource, k.Namespace, k.Name, k.ObjectMeta, k.Spec, &out, KubernetesKind); err != nil {
		return nil, err
	}
	c.log.Info("applied Kubernetes application", "tenant", k.Namespace, "cluster", k.Name)
	return &out, nil
}

// Kubernetes reads the Kubernetes application ref. It returns an error
// wrapping ErrNotFound if it does not exist. Fields the model does not know
// are kept with the object (see DecodeKubernetes).
func (c *Client) Kubernetes(ctx context.Context, ref ClusterRef) (*Kubernetes, error) {
	var k Kubernetes
	if err := c.get(ctx, KubernetesResource, ref.Namespace, ref.Name, &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// ListKubernetes lists the Kubernetes applications of tenant namespace ns,
// sorted by name.
func (c *Client) ListKubernetes(ctx context.Context, ns string) ([]*Kubernetes, error) {
	list, err := c.dyn.Resource(KubernetesResource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", KubernetesResource.Resource, ns, err)
	}
	out := make([]*Kubernetes, 0, len(list.Items))
	for i := range list.Items {
		var k Kubernetes
		if err := fromUnstructured(&list.Items[i], &k); err != nil {
			return nil, err
		}
		out = append(out, &k)
	}
	return out, nil
}

// DeleteKubernetes deletes the Kubernetes application ref. Deleting one
// that does not exist is not an error.
func (c *Client) DeleteKubernetes(ctx context.Context, ref ClusterRef) error {
	return c.delete(ctx, KubernetesResource, ref.Namespace, ref.Name)
}

// ApplyTenant creates the Tenant t in its parent namespace, or replaces the
// spec of the existing one, like ApplyKubernetes.
func (c *Client) ApplyTenant(ctx context.Context, t *Tenant) (*Tenant, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	var out Tenant
	if err := c.apply(ctx, TenantResource, t.Namespace, t.Name, t.ObjectMeta, t.Spec, &out, TenantKind); err != nil {
		return nil, err
	}
	c.log.Info("applied Tenant application", "tenant", t.Namespace, "name", t.Name)
	return &out, nil
}

// Tenant reads the Tenant name in the tenant namespace parent.
func (c *Client) Tenant(ctx context.Context, parent, name string) (*Tenant, error) {
	var t Tenant
	if err := c.get(ctx, TenantResource, parent, name, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// DeleteTenant deletes the Tenant name in the tenant namespace parent.
// Deleting one that does not exist is not an error.
func (c *Client) DeleteTenant(ctx context.Context, parent, name string) error {
	return c.delete(ctx, TenantResource, parent, name)
}

// Values reads what Cozystack tells the applications of tenant namespace
// ns: the platform settings and the namespace's services, from the
// cozystack-values Secret. Without that Secret it falls back to the
// namespace's labels for the services and returns a zero Platform. It
// returns an error wrapping ErrNotFound when the namespace does not exist.
func (c *Client) Values(ctx context.Context, ns string) (Platform, Services, error) {
	sec, err := c.core.CoreV1().Secrets(ns).Get(ctx, ValuesSecret, metav1.GetOptions{})
	if err == nil {
		return ParseValues(sec.Data[ValuesSecretKey])
	}
	if !apierrors.IsNotFound(err) {
		return Platform{}, Services{}, fmt.Errorf("read %s/%s: %w", ns, ValuesSecret, err)
	}
	nsObj, err := c.core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Platform{}, Services{}, fmt.Errorf("%w: namespace %s", ErrNotFound, ns)
	}
	if err != nil {
		return Platform{}, Services{}, fmt.Errorf("read namespace %s: %w", ns, err)
	}
	if !isTenantLabelled(nsObj.Labels) {
		c.log.Debug("namespace carries no tenant values", "tenant", ns)
	}
	return Platform{}, ServicesFromLabels(nsObj.Labels), nil
}

// apiObject is a *Kubernetes or *Tenant.
type apiObject interface {
	setUnknown(*unknownFields)
	unknownFields() *unknownFields
}

// apply creates the object or, if it exists, replaces its spec (keeping
// the stored spec's unknown fields) and merges labels and annotations,
// retrying on conflicts. out receives the result.
func (c *Client) apply(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, meta metav1.ObjectMeta, spec any, out apiObject, kind string) error {
	specMap, err := toMap(spec)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": specMap}}
	obj.SetAPIVersion(APIVersion)
	obj.SetKind(kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetLabels(meta.Labels)
	obj.SetAnnotations(meta.Annotations)
	res := c.dyn.Resource(gvr).Namespace(ns)
	created, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if err == nil {
		return fromUnstructured(created, out)
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s/%s: %w", kind, ns, name, err)
	}
	var updated *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := fromUnstructured(cur, out); err != nil {
			return err
		}
		next, err := toMap(spec)
		if err != nil {
			return err
		}
		out.unknownFields().child("spec").mergeInto(next)
		cur.Object["spec"] = next
		cur.SetLabels(merged(cur.GetLabels(), meta.Labels))
		cur.SetAnnotations(merged(cur.GetAnnotations(), meta.Annotations))
		updated, err = res.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("update %s %s/%s: %w", kind, ns, name, err)
	}
	return fromUnstructured(updated, out)
}

func (c *Client) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, out apiObject) error {
	u, err := c.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %s %s/%s", ErrNotFound, gvr.Resource, ns, name)
	}
	if err != nil {
		return fmt.Errorf("get %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	return fromUnstructured(u, out)
}

func (c *Client) delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	err := c.dyn.Resource(gvr).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	return nil
}

// fromUnstructured decodes u into out, which it zeroes first, keeping the
// fields the model does not know (see DecodeKubernetes).
func fromUnstructured(u *unstructured.Unstructured, out apiObject) error {
	reflect.ValueOf(out).Elem().SetZero()
	data, err := json.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := decodeObject(data, out); err != nil {
		return fmt.Errorf("decode %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// toMap converts a typed value to the map the dynamic client sends.
func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var m map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &m); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func merged(base, add map[string]string) map[string]string {
	if len(add) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, add)
	return out
}
