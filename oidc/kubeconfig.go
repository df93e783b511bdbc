package oidc

import (
	"cmp"
	"encoding/base64"
	"fmt"

	"github.com/cozystack/tenantkit/oidc/credential"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// execAPIVersion is the exec credential API the kubeconfig asks for.
const execAPIVersion = "client.authentication.k8s.io/v1"

// PKCEFlag is the kubelogin (kubectl oidc-login) flag that makes it use
// PKCE. Keycloak requires it of the cluster's client
// (pkce.code.challenge.method S256). The two spellings need different
// kubelogin releases; an older kubelogin refuses a flag it does not know,
// so get-token fails.
type PKCEFlag string

const (
	// PKCEUsePKCE is --oidc-use-pkce, what the chart's bootstrap Job writes
	// (the default). kubelogin has it since PR #599 (int128/kubelogin,
	// merged 2021-08-03, after v1.22.1 of 2021-02-16; the first release tag
	// carrying it was not verified), and still accepts it, deprecated as
	// "equivalent to --oidc-pkce-method=S256", since PR #1240.
	PKCEUsePKCE PKCEFlag = "--oidc-use-pkce"
	// PKCEMethodS256 is --oidc-pkce-method=S256, kubelogin's current
	// spelling: PR #1240 (merged 2025-01-13), so releases after that date
	// (the first release tag carrying it was not verified); older ones
	// refuse it.
	PKCEMethodS256 PKCEFlag = "--oidc-pkce-method=S256"
)

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
	// "kubectl oidc-login"; with PluginTenantkit "oidc-credential").
	Command string
	// ExtraArgs are appended to the plugin's arguments, for example
	// "--grant-type=password" or "--token-cache-dir=...".
	ExtraArgs []string
	// PKCE is the flag that turns PKCE on. Empty means PKCEUsePKCE, as the
	// chart writes it; PKCEMethodS256 needs a kubelogin from 2025 on.
	// PluginTenantkit always uses PKCE S256 and refuses a PKCE flag.
	PKCE PKCEFlag
	// InstallHint is shown by kubectl when the plugin is missing. Empty
	// means none, as the chart writes it.
	InstallHint string
	// Plugin is the credential plugin the kubeconfig runs: empty means
	// PluginKubelogin, as the chart writes it.
	Plugin Plugin
	// ChartVersion is the installed chart's version, for the helm.sh/chart
	// label of Kubeconfig.Secret (see ChartLabels); "" is the source's 0.0.0.
	ChartVersion string
}

// SuggestedInstallHint is an InstallHint for kubectl oidc-login.
const SuggestedInstallHint = "kubectl oidc-login is required: kubectl krew install oidc-login (https://github.com/int128/kubelogin)"

// Plugin is the exec credential plugin a user kubeconfig runs.
type Plugin string

const (
	// PluginKubelogin is kubelogin (kubectl oidc-login get-token ...), what
	// the chart's bootstrap Job writes.
	PluginKubelogin Plugin = "kubelogin"
	// PluginTenantkit is tenantkit's own plugin, the example
	// oidc-credential (oidc-credential get-token ..., package
	// oidc/credential): PKCE S256, a cache locked across processes, device
	// grant, logout with revocation.
	PluginTenantkit Plugin = "tenantkit"
)

// TenantkitInstallHint is the InstallHint PluginTenantkit gets by default.
const TenantkitInstallHint = "oidc-credential is required: go install github.com/cozystack/tenantkit/examples/oidc-credential@latest"

// Kubeconfig is a user kubeconfig for a tenant cluster, as
// RenderKubeconfig renders it: the same content three ways.
type Kubeconfig struct {
	// Config is the kubeconfig in client-go's types, for
	// clientcmd.NewDefaultClientConfig and friends.
	Config *clientcmdapi.Config
	// YAML is the kubeconfig file.
	YAML []byte
	// Secret is the Secret Cozystack publishes YAML in for the dashboard
	// (ref.Cluster.OIDCKubeconfigSecret, key ref.OIDCKubeconfigKey, the
	// chart's labels).
	Secret *corev1.Secret
}

// RenderKubeconfig renders the user kubeconfig for a tenant cluster, as
// the chart's bootstrap Job writes it: one cluster, one context and one
// user whose credentials come from the exec plugin `kubectl oidc-login
// get-token --oidc-issuer-url=… --oidc-client-id=… --oidc-extra-scope=email
// --oidc-extra-scope=groups --oidc-use-pkce` (client.authentication.k8s.io/v1,
// interactiveMode IfAvailable, provideClusterInfo, no install hint).
// Cluster and context are named after the release, the user
// "<release>-oidc". A private issuer CA and ExtraArgs follow the chart's
// arguments. With Plugin PluginTenantkit the exec block runs tenantkit's
// own plugin instead: `oidc-credential get-token --issuer-url=…
// --client-id=… --scope=email --scope=groups` (credential.Config.Args).
// A spec without Server or IssuerURL, with an unknown plugin or PKCE
// flag, is refused (ErrInvalidConfig).
func RenderKubeconfig(spec KubeconfigSpec) (*Kubeconfig, error) {
	cfg, err := buildKubeconfig(spec)
	if err != nil {
		return nil, err
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	return &Kubeconfig{Config: cfg, YAML: data, Secret: &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: spec.Cluster.OIDCKubeconfigSecret(), Namespace: spec.Cluster.Namespace,
			Labels: ChartLabels(spec.Cluster, spec.ChartVersion)},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ref.OIDCKubeconfigKey: data},
	}}, nil
}

// buildKubeconfig builds the kubeconfig of RenderKubeconfig.
func buildKubeconfig(spec KubeconfigSpec) (*clientcmdapi.Config, error) {
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
	command, args, hint, err := pluginExec(spec, clientID)
	if err != nil {
		return nil, err
	}
	name := spec.Cluster.Release()
	user := name + "-oidc"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: spec.Server, CertificateAuthorityData: spec.CertificateAuthority}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion:         execAPIVersion,
		Command:            command,
		Args:               args,
		InteractiveMode:    clientcmdapi.IfAvailableExecInteractiveMode,
		ProvideClusterInfo: true,
		InstallHint:        hint,
	}}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user}
	cfg.CurrentContext = name
	return cfg, nil
}

// pluginExec returns the exec command, arguments and install hint of
// spec's plugin.
func pluginExec(spec KubeconfigSpec, clientID string) (string, []string, string, error) {
	scopes := spec.ExtraScopes
	if scopes == nil {
		scopes = []string{"email", "groups"}
	}
	switch spec.Plugin {
	case "", PluginKubelogin:
	case PluginTenantkit:
		if spec.PKCE != "" {
			return "", nil, "", invalidf("PKCE flag %q is kubelogin's; the tenantkit plugin always uses PKCE S256", spec.PKCE)
		}
		args := append([]string{"get-token"}, credential.Config{IssuerURL: spec.IssuerURL, ClientID: clientID, Scopes: scopes,
			CertificateAuthority: spec.IssuerCertificateAuthority}.Args()...)
		return cmp.Or(spec.Command, "oidc-credential"), append(args, spec.ExtraArgs...), cmp.Or(spec.InstallHint, TenantkitInstallHint), nil
	default:
		return "", nil, "", invalidf("unknown credential plugin %q (want %s or %s)", spec.Plugin, PluginKubelogin, PluginTenantkit)
	}
	args := []string{"oidc-login", "get-token", "--oidc-issuer-url=" + spec.IssuerURL, "--oidc-client-id=" + clientID}
	for _, s := range scopes {
		args = append(args, "--oidc-extra-scope="+s)
	}
	pkce := cmp.Or(spec.PKCE, PKCEUsePKCE)
	if pkce != PKCEUsePKCE && pkce != PKCEMethodS256 {
		return "", nil, "", invalidf("unknown PKCE flag %q (want %s or %s)", pkce, PKCEUsePKCE, PKCEMethodS256)
	}
	args = append(args, string(pkce))
	if len(spec.IssuerCertificateAuthority) > 0 {
		args = append(args, "--certificate-authority-data="+base64.StdEncoding.EncodeToString(spec.IssuerCertificateAuthority))
	}
	return cmp.Or(spec.Command, "kubectl"), append(args, spec.ExtraArgs...), spec.InstallHint, nil
}

// KubeconfigFacts is what a user kubeconfig needs that a Kubernetes
// application's values do not hold; package cozystack's
// Cluster.KubeconfigSpec reads them from the management cluster.
type KubeconfigFacts struct {
	// TenantHost is the tenant's host (the cozystack-values Secret's
	// _namespace.host), under which the apiserver's default host lies.
	// Not needed when the application sets spec.host.
	TenantHost string
	// CertificateAuthority is the tenant apiserver's CA (PEM). Empty means
	// the system roots.
	CertificateAuthority []byte
	// AuthenticationConfig is the config.yaml of the Secret that
	// spec.oidc.customConfig.secretRef names; needed in CustomConfig mode
	// with a SecretRef only.
	AuthenticationConfig []byte
}

// KubeconfigSpecFor returns the user kubeconfig spec of application k on
// platform p, as the chart's bootstrap Job builds it: server
// https://<host>:443 (spec.host, or the default host under
// facts.TenantHost), facts.CertificateAuthority as the apiserver's CA, and
// the issuer. In System mode the issuer is the platform realm of p and the
// client ID the cluster's; in CustomConfig mode both come from the first
// JWT authenticator of the tenant's configuration:
// spec.oidc.customConfig.config, or facts.AuthenticationConfig. With OIDC
// off it returns an error wrapping ErrInvalidConfig.
func KubeconfigSpecFor(k *tenant.Kubernetes, p tenant.Platform, facts KubeconfigFacts) (KubeconfigSpec, error) {
	spec := KubeconfigSpec{Cluster: k.Ref(), Server: "https://" + k.Host(facts.TenantHost) + ":443", CertificateAuthority: facts.CertificateAuthority}
	switch k.Spec.OIDC.Mode {
	case tenant.OIDCSystem:
		spec.IssuerURL = SystemIssuerURL(p.RootHost)
		return spec, nil
	case tenant.OIDCCustomConfig:
	default:
		return KubeconfigSpec{}, invalidf("cluster %s has OIDC off (mode %q)", k.Ref(), k.Spec.OIDC.Mode)
	}
	data := facts.AuthenticationConfig
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
