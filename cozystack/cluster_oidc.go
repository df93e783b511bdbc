package cozystack

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// AuthenticationSpec reads the cluster's application and its tenant's
// platform values and returns the input of oidc.RenderAuthentication
// (oidc.AuthenticationSpecFor).
func (cl *Cluster) AuthenticationSpec(ctx context.Context) (oidc.AuthenticationSpec, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return oidc.AuthenticationSpec{}, err
	}
	p, _, err := cl.Values(ctx)
	if err != nil {
		return oidc.AuthenticationSpec{}, err
	}
	return oidc.AuthenticationSpecFor(k, p), nil
}

// OIDCKubeconfigSpec returns the input of oidc.RenderKubeconfig for the cluster's
// users, as the chart's bootstrap Job builds it (oidc.KubeconfigSpecFor):
// it reads the application and its tenant's values, waits for the admin
// kubeconfig for the tenant CA, and in CustomConfig mode with a secretRef
// reads the tenant's configuration from that Secret. With OIDC off it
// returns an error wrapping oidc.ErrInvalidConfig.
func (cl *Cluster) OIDCKubeconfigSpec(ctx context.Context) (oidc.KubeconfigSpec, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return oidc.KubeconfigSpec{}, err
	}
	p, s, err := cl.Values(ctx)
	if err != nil {
		return oidc.KubeconfigSpec{}, err
	}
	if !k.Spec.OIDC.On() {
		return oidc.KubeconfigSpecFor(k, p, oidc.KubeconfigFacts{TenantHost: s.Host}) // the error says OIDC is off
	}
	var authn []byte
	if name := k.Spec.OIDC.CustomConfig.SecretRef.Name; k.Spec.OIDC.Mode == tenant.OIDCCustomConfig && name != "" {
		sec, err := cl.c.core.CoreV1().Secrets(cl.ref.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return oidc.KubeconfigSpec{}, fmt.Errorf("read custom authentication config %s/%s: %w", cl.ref.Namespace, name, err)
		}
		authn = sec.Data[ref.OIDCAuthnConfigKey]
	}
	admin, err := cl.WaitKubeconfig(ctx, ref.SuperAdminSvc)
	if err != nil {
		return oidc.KubeconfigSpec{}, err
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(admin)
	if err != nil {
		return oidc.KubeconfigSpec{}, fmt.Errorf("%w: %w", ErrMalformedKubeconfig, err)
	}
	return oidc.KubeconfigSpecFor(k, p, oidc.KubeconfigFacts{TenantHost: s.Host, CertificateAuthority: rc.CAData, AuthenticationConfig: authn})
}

// SyncOIDCUsers makes the ClusterRoleBindings inside the tenant cluster
// match spec.oidc.users, as the chart's bootstrap Job does in modes System
// and CustomConfig: one binding per user, the release's stale bindings
// pruned. It waits for the admin kubeconfig and returns the plan it
// executed.
//
// In mode None it changes nothing, as the Job does: bindings left from an
// earlier System or CustomConfig mode stay in the tenant cluster (the chart
// deletes them only with the application, in its pre-delete Job). The
// returned plan is empty, says why (RBACPlan.Skipped), and the tenant
// cluster is not contacted. PruneOIDCUsers removes them.
func (cl *Cluster) SyncOIDCUsers(ctx context.Context) (*oidc.RBACPlan, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	if !k.Spec.OIDC.On() {
		return &oidc.RBACPlan{Cluster: cl.ref,
			Skipped: "OIDC mode None: the chart's bootstrap Job neither applies nor prunes bindings (PruneOIDCUsers removes them)"}, nil
	}
	r, err := cl.rbac(ctx)
	if err != nil {
		return nil, err
	}
	return r.Sync(ctx, k.Spec.OIDC.Users)
}

// PruneOIDCUsers deletes every ClusterRoleBinding of the release inside the
// tenant cluster, whatever the mode: what the chart's pre-delete cleanup Job
// does when the application is deleted. Call it after turning OIDC off when
// the bindings must go: without an authenticator they grant nothing, but a
// legacy --oidc-* flag in extraArgs (allowed in mode None) makes them grant
// again. It waits for the admin kubeconfig and returns the plan it executed.
func (cl *Cluster) PruneOIDCUsers(ctx context.Context) (*oidc.RBACPlan, error) {
	r, err := cl.rbac(ctx)
	if err != nil {
		return nil, err
	}
	return r.Sync(ctx, nil)
}

// rbac returns the RBAC client of the tenant cluster.
func (cl *Cluster) rbac(ctx context.Context) (*oidc.RBAC, error) {
	cs, err := cl.Clientset(ctx)
	if err != nil {
		return nil, err
	}
	return oidc.NewRBAC(cl.ref, oidc.RBACConfig{Clientset: cs})
}
