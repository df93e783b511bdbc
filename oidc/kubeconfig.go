package oidc

import (
	"encoding/base64"
	"fmt"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ExecAPIVersion is the exec credential API the kubeconfig asks for.
const ExecAPIVersion = "client.authentication.k8s.io/v1"

// KubeconfigSpec describes a user kubeconfig for a tenant cluster.
type KubeconfigSpec struct {
	// Cluster is the tenant cluster; it names the kubeconfig entries and
	// gives the default client ID.
	Cluster ref.Cluster
	// Server is the apiserver URL, for example
	// https://kubernetes-prod.acme.example.org:443. Required.
	Server string
	// CertificateAuthority is the apiserver's CA (PEM). Empty means the
	// system roots.
	CertificateAuthority []byte
	// IssuerURL is the OIDC issuer. Required.
	IssuerURL string
	// IssuerCertificateAuthority is the issuer's CA (PEM) when it is
	// private; passed to the plugin as --certificate-authority-data.
	IssuerCertificateAuthority []byte
	// ClientID overrides the client ID (default Cluster.ClientID()).
	ClientID string
	// ExtraScopes overrides the scopes requested besides openid (default
	// email and groups).
	ExtraScopes []string
	// Command overrides the plugin command (default "kubectl", which runs
	// "kubectl oidc-login").
	Command string
	// ExtraArgs are appended to the plugin's arguments, for example
	// "--grant-type=password" or "--token-cache-dir=...".
	ExtraArgs []string
}

// Kubeconfig builds the user kubeconfig for a tenant cluster with
// client-go's types: one cluster, one context and one user whose
// credentials come from the exec plugin `kubectl oidc-login get-token`
// (client.authentication.k8s.io/v1, interactiveMode IfAvailable, PKCE S256).
// Cluster and context are named after the release, the user
// "<release>-oidc".
func Kubeconfig(spec KubeconfigSpec) (*clientcmdapi.Config, error) {
	if err := checkCluster(spec.Cluster); err != nil {
		return nil, err
	}
	if spec.Server == "" || spec.IssuerURL == "" {
		return nil, invalidf("kubeconfig needs Server and IssuerURL")
	}
	clientID := spec.ClientID
	if clientID == "" {
		clientID = spec.Cluster.ClientID()
	}
	scopes := spec.ExtraScopes
	if scopes == nil {
		scopes = []string{"email", "groups"}
	}
	args := []string{"oidc-login", "get-token",
		"--oidc-issuer-url=" + spec.IssuerURL,
		"--oidc-client-id=" + clientID,
	}
	for _, s := range scopes {
		args = append(args, "--oidc-extra-scope="+s)
	}
	args = append(args, "--oidc-pkce-method=S256")
	if len(spec.IssuerCertificateAuthority) > 0 {
		args = append(args, "--certificate-authority-data="+base64.StdEncoding.EncodeToString(spec.IssuerCertificateAuthority))
	}
	args = append(args, spec.ExtraArgs...)
	command := spec.Command
	if command == "" {
		command = "kubectl"
	}
	name := spec.Cluster.Release()
	user := name + "-oidc"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: spec.Server, CertificateAuthorityData: spec.CertificateAuthority}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion:         ExecAPIVersion,
		Command:            command,
		Args:               args,
		InteractiveMode:    clientcmdapi.IfAvailableExecInteractiveMode,
		ProvideClusterInfo: true,
		InstallHint:        "kubectl oidc-login is required: kubectl krew install oidc-login (https://github.com/int128/kubelogin)",
	}}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	return cfg, nil
}

// KubeconfigYAML renders Kubeconfig(spec) as a kubeconfig file.
func KubeconfigYAML(spec KubeconfigSpec) ([]byte, error) {
	cfg, err := Kubeconfig(spec)
	if err != nil {
		return nil, err
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	return data, nil
}

// KubeconfigSecret returns the Secret Cozystack publishes the kubeconfig in
// (ref.Cluster.OIDCKubeconfigSecret, key ref.OIDCKubeconfigKey), for the
// dashboard.
func KubeconfigSecret(spec KubeconfigSpec) (*corev1.Secret, error) {
	data, err := KubeconfigYAML(spec)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: spec.Cluster.OIDCKubeconfigSecret(), Namespace: spec.Cluster.Namespace,
			Labels: labels(spec.Cluster)},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ref.OIDCKubeconfigKey: data},
	}, nil
}

// KubeconfigSpecFor returns the user kubeconfig spec of application k from
// values alone, as the chart's bootstrap Job builds it: server
// https://<host>:443 (spec.host, or the default host under tenantHost),
// tenantCA as the apiserver's CA, and the issuer. In System mode the issuer
// is the platform realm of p and the client ID the cluster's; in
// CustomConfig mode both come from the first JWT authenticator of the
// tenant's configuration: spec.oidc.customConfig.config, or authnConfig
// (the referenced Secret's config.yaml, which the values do not hold).
// With OIDC off it returns an error wrapping ErrInvalidConfig.
func KubeconfigSpecFor(k *tenant.Kubernetes, p tenant.Platform, tenantHost string, tenantCA, authnConfig []byte) (KubeconfigSpec, error) {
	spec := KubeconfigSpec{Cluster: k.Ref(), Server: "https://" + k.Host(tenantHost) + ":443", CertificateAuthority: tenantCA}
	switch k.Spec.OIDC.Mode {
	case tenant.OIDCSystem:
		spec.IssuerURL = SystemIssuerURL(p.RootHost)
		return spec, nil
	case tenant.OIDCCustomConfig:
	default:
		return KubeconfigSpec{}, invalidf("cluster %s has OIDC off (mode %q)", k.Ref(), k.Spec.OIDC.Mode)
	}
	data := authnConfig
	if inline := k.Spec.OIDC.CustomConfig.Config; inline != "" {
		data = []byte(inline)
	}
	cfg, err := ParseAuthenticationConfiguration(data)
	if err != nil {
		return KubeconfigSpec{}, err
	}
	if len(cfg.JWT) == 0 || len(cfg.JWT[0].Issuer.Audiences) == 0 {
		return KubeconfigSpec{}, invalidf("custom authentication config of %s has no JWT issuer with an audience", k.Ref())
	}
	iss := cfg.JWT[0].Issuer
	spec.IssuerURL, spec.ClientID = iss.URL, iss.Audiences[0]
	spec.IssuerCertificateAuthority = []byte(iss.CertificateAuthority)
	return spec, nil
}
