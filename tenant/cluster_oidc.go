package tenant

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/oidc"
)

// AuthenticationSpec reads the cluster's application and its tenant's
// platform values and returns the input of oidc.RenderAuthentication.
func (cl *Cluster) AuthenticationSpec(ctx context.Context) (oidc.AuthenticationSpec, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return oidc.AuthenticationSpec{}, err
	}
	p, _, err := cl.Values(ctx)
	if err != nil {
		return oidc.AuthenticationSpec{}, err
	}
	return k.AuthenticationSpec(p), nil
}

// OIDCKubeconfigSpec returns the input of oidc.Kubeconfig for the cluster's
// users, as the chart's bootstrap Job builds it: server
// https://<host>:443, the tenant CA from the admin kubeconfig (it waits for
// it), and the issuer. In System mode the issuer is the platform realm and
// the client ID the cluster's; in CustomConfig mode both come from the
// first JWT authenticator of the tenant's configuration (inline, or from
// the referenced Secret). With OIDC off it returns an error wrapping
// ErrInvalidValue.
func (cl *Cluster) OIDCKubeconfigSpec(ctx context.Context) (oidc.KubeconfigSpec, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return oidc.KubeconfigSpec{}, err
	}
	p, s, err := cl.Values(ctx)
	if err != nil {
		return oidc.KubeconfigSpec{}, err
	}
	spec := oidc.KubeconfigSpec{Cluster: cl.ref.OIDC(), Server: "https://" + k.Host(s.Host) + ":443"}
	switch k.Spec.OIDC.Mode {
	case oidc.ModeSystem:
		spec.IssuerURL = oidc.SystemIssuerURL(p.RootHost)
	case oidc.ModeCustomConfig:
		if err := cl.customIssuer(ctx, k.Spec.OIDC.CustomConfig, &spec); err != nil {
			return oidc.KubeconfigSpec{}, err
		}
	default:
		return oidc.KubeconfigSpec{}, fmt.Errorf("%w: cluster %s has OIDC off (mode %q)", ErrInvalidValue, cl.ref, k.Spec.OIDC.Mode)
	}
	admin, err := cl.WaitKubeconfig(ctx, SuperAdminSvc)
	if err != nil {
		return oidc.KubeconfigSpec{}, err
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(admin)
	if err != nil {
		return oidc.KubeconfigSpec{}, fmt.Errorf("%w: %v", ErrMalformedKubeconfig, err)
	}
	spec.CertificateAuthority = rc.CAData
	return spec, nil
}

// customIssuer fills the issuer, its CA and the client ID from the
// tenant's own AuthenticationConfiguration.
func (cl *Cluster) customIssuer(ctx context.Context, cc CustomConfig, spec *oidc.KubeconfigSpec) error {
	data := []byte(cc.Config)
	if cc.SecretRef.Name != "" {
		sec, err := cl.c.core.CoreV1().Secrets(cl.ref.Namespace).Get(ctx, cc.SecretRef.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("read custom authentication config %s/%s: %w", cl.ref.Namespace, cc.SecretRef.Name, err)
		}
		data = sec.Data[OIDCAuthnConfigKey]
	}
	cfg, err := oidc.ParseAuthenticationConfiguration(data)
	if err != nil {
		return err
	}
	if len(cfg.JWT) == 0 || len(cfg.JWT[0].Issuer.Audiences) == 0 {
		return fmt.Errorf("%w: custom authentication config of %s has no JWT issuer with an audience", ErrInvalidValue, cl.ref)
	}
	iss := cfg.JWT[0].Issuer
	spec.IssuerURL, spec.ClientID = iss.URL, iss.Audiences[0]
	spec.IssuerCertificateAuthority = []byte(iss.CertificateAuthority)
	return nil
}

// SyncOIDCUsers makes the ClusterRoleBindings inside the tenant cluster
// match spec.oidc.users, as the chart's bootstrap Job does: one binding per
// user, stale bindings of the release pruned. With OIDC off it prunes them
// all. It waits for the admin kubeconfig and returns the plan it applied.
func (cl *Cluster) SyncOIDCUsers(ctx context.Context) (*oidc.RBACPlan, error) {
	k, err := cl.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := cl.Clientset(ctx)
	if err != nil {
		return nil, err
	}
	var users []oidc.User
	if k.Spec.OIDC.On() {
		users = k.Spec.OIDC.RBACUsers()
	}
	return oidc.SyncRBAC(ctx, cs, cl.ref.OIDC(), users)
}
