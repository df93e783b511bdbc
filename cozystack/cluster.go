package cozystack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a handle on one tenant Kubernetes cluster, seen from the
// management cluster. It derives every name from its ClusterRef, so callers
// never build Secret or release names themselves. It holds no state beyond
// the reference; every method reads the current state.
type Cluster struct {
	c   *Client
	ref ref.Cluster
}

// NewCluster returns a handle on cluster r, reached through the management
// cluster rc points at (see NewForConfig).
func NewCluster(rc *rest.Config, r ref.Cluster, cfg Config) (*Cluster, error) {
	c, err := NewForConfig(rc, cfg)
	if err != nil {
		return nil, err
	}
	return c.Cluster(r)
}

// Cluster returns a handle on cluster r.
func (c *Client) Cluster(r ref.Cluster) (*Cluster, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &Cluster{c: c, ref: r}, nil
}

// Ref returns the cluster's reference; its methods give the derived names.
func (cl *Cluster) Ref() ref.Cluster { return cl.ref }

// Kubernetes reads the cluster's Kubernetes application.
func (cl *Cluster) Kubernetes(ctx context.Context) (*tenant.Kubernetes, error) {
	return cl.c.Kubernetes(ctx, cl.ref)
}

// Values reads the platform settings and services of the cluster's tenant
// namespace (see Client.Values).
func (cl *Cluster) Values(ctx context.Context) (tenant.Platform, tenant.Services, error) {
	return cl.c.Values(ctx, cl.ref.Namespace)
}

// Host returns the apiserver's external host: spec.host, or
// kubernetes-<name>.<tenant host>.
func (cl *Cluster) Host(ctx context.Context) (string, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return "", err
	}
	_, s, err := cl.Values(ctx)
	if err != nil {
		return "", err
	}
	return k.Host(s.Host), nil
}

// EtcdNamespace returns the tenant namespace whose etcd stores the
// cluster (the name of its Kamaji DataStore), or an error wrapping ErrNoEtcd.
func (cl *Cluster) EtcdNamespace(ctx context.Context) (string, error) {
	_, s, err := cl.Values(ctx)
	if err != nil {
		return "", err
	}
	if s.Etcd == "" {
		return "", fmt.Errorf("%w: cluster %s (ConfigMap %s explains)", ErrNoEtcd, cl.ref, cl.ref.AwaitingEtcdConfigMap())
	}
	return s.Etcd, nil
}

// SeaweedFSNamespace returns the tenant namespace whose SeaweedFS backs the
// Buckets of the cluster's tenant, or an error wrapping ErrNoSeaweedFS.
func (cl *Cluster) SeaweedFSNamespace(ctx context.Context) (string, error) {
	_, s, err := cl.Values(ctx)
	if err != nil {
		return "", err
	}
	if s.SeaweedFS == "" {
		return "", fmt.Errorf("%w: tenant %s", ErrNoSeaweedFS, cl.ref.Namespace)
	}
	return s.SeaweedFS, nil
}

// Kubeconfig reads variant v of the admin kubeconfig without waiting. It
// returns an error wrapping ErrKubeconfigNotReady while Kamaji has not
// written it yet, and ErrMalformedKubeconfig if what is there is unusable.
func (cl *Cluster) Kubeconfig(ctx context.Context, v ref.KubeconfigVariant) ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("%w: kubeconfig variant %q", ErrInvalidConfig, v)
	}
	name := cl.ref.AdminKubeconfigSecret()
	sec, err := cl.c.core.CoreV1().Secrets(cl.ref.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w: Secret %s/%s does not exist", ErrKubeconfigNotReady, cl.ref.Namespace, name)
	}
	if err != nil {
		if cerr := contextErr(ctx); cerr != nil {
			err = cerr
		}
		return nil, fmt.Errorf("read %s/%s: %w", cl.ref.Namespace, name, err)
	}
	data := sec.Data[string(v)]
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: Secret %s/%s has no key %s", ErrKubeconfigNotReady, cl.ref.Namespace, name, v)
	}
	if _, err := clientcmd.RESTConfigFromKubeConfig(data); err != nil {
		return nil, fmt.Errorf("%w: %s/%s key %s: %w", ErrMalformedKubeconfig, cl.ref.Namespace, name, v, err)
	}
	return data, nil
}

// WaitKubeconfig waits until variant v of the admin kubeconfig exists and
// returns it. It polls every Config.PollInterval and stops with ctx: the
// error then wraps ctx.Err(). Errors other than "not ready yet" end the
// wait at once.
func (cl *Cluster) WaitKubeconfig(ctx context.Context, v ref.KubeconfigVariant) ([]byte, error) {
	tick := time.NewTicker(cl.c.cfg.PollInterval)
	defer tick.Stop()
	begin := time.Now()
	for {
		data, err := cl.Kubeconfig(ctx, v)
		if !errors.Is(err, ErrKubeconfigNotReady) {
			if err == nil {
				cl.c.log.Info("admin kubeconfig ready", "cluster", cl.ref.String(), "variant", string(v), "waited", time.Since(begin))
			}
			return data, err
		}
		cl.c.log.Debug("waiting for admin kubeconfig", "cluster", cl.ref.String(), "reason", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for %s key %s: %w (last: %w)", cl.ref.AdminKubeconfigSecret(), v, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// RESTConfig waits for variant v of the admin kubeconfig (Config.Kubeconfig
// when v is empty) and returns a rest.Config for the tenant cluster.
func (cl *Cluster) RESTConfig(ctx context.Context, v ref.KubeconfigVariant) (*rest.Config, error) {
	if v == "" {
		v = cl.c.cfg.Kubeconfig
	}
	data, err := cl.WaitKubeconfig(ctx, v)
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedKubeconfig, err)
	}
	return rc, nil
}

// Clientset waits for the admin kubeconfig (variant Config.Kubeconfig) and
// returns a clientset for the tenant cluster.
func (cl *Cluster) Clientset(ctx context.Context) (*kubernetes.Clientset, error) {
	rc, err := cl.RESTConfig(ctx, "")
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("tenant cluster %s: %w", cl.ref, err)
	}
	return cs, nil
}

// contextErr returns ctx's error, or context.DeadlineExceeded once ctx's
// deadline has passed even if ctx has not noticed yet (client-go's rate
// limiter refuses a request at that point with an error of its own).
func contextErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
