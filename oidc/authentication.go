package oidc

import (
	"strings"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"sigs.k8s.io/yaml"
)

// AuthenticationSpec is what RenderAuthentication needs: the parts of a
// Kubernetes application that decide the apiserver's authentication, and
// the platform's issuer. AuthenticationSpecFor fills it from the model.
// The zero value (OIDC off) renders nothing.
type AuthenticationSpec struct {
	// Cluster is the tenant cluster; its client ID is the audience.
	Cluster ref.Cluster
	// OIDC is the application's spec.oidc: the mode and, in CustomConfig
	// mode, the tenant's own configuration.
	OIDC tenant.OIDC
	// KubernetesVersion of the tenant apiserver picks the config API
	// version. Default tenant.DefaultVersion.
	KubernetesVersion tenant.Version
	// APIServer is the application's spec.controlPlane.apiServer: its
	// extraArgs and extraVolumes must not collide with the rendered
	// configuration.
	APIServer tenant.APIServer
	// RootHost is the platform's root host; System mode trusts
	// SystemIssuerURL(RootHost).
	RootHost string
	// IssuerURL replaces the System issuer, for a platform whose Keycloak
	// lives elsewhere (or a test IdP).
	IssuerURL string
	// CertificateAuthority is the PEM bundle the apiserver uses to reach a
	// System issuer with a private CA. Empty means the system roots.
	CertificateAuthority []byte
}

// AuthenticationSpecFor returns the input of RenderAuthentication for
// application k on platform p: its reference, spec.oidc, version and
// apiserver settings, and the platform's root host.
func AuthenticationSpecFor(k *tenant.Kubernetes, p tenant.Platform) AuthenticationSpec {
	return AuthenticationSpec{
		Cluster:           k.Ref(),
		OIDC:              k.Spec.OIDC,
		KubernetesVersion: k.Spec.Version,
		APIServer:         k.Spec.ControlPlane.APIServer,
		RootHost:          p.RootHost,
	}
}

// Authentication is what a tenant apiserver needs for its OIDC mode.
type Authentication struct {
	// Mode is the rendered mode.
	Mode tenant.OIDCMode
	// APIVersion is the config API version rendered.
	APIVersion string
	// Config is the configuration; nil in ModeNone and with a SecretRef.
	Config *apiserver.AuthenticationConfiguration
	// YAML is the file content (verbatim for an inline custom config).
	YAML []byte
	// Secret holds YAML under AuthnConfigKey; nil when there is nothing to
	// store (ModeNone, SecretRef).
	Secret *corev1.Secret
	// APIServerArgs are the flags to add (--authentication-config=...).
	APIServerArgs []string
	// Volume and VolumeMount put the configuration at AuthnConfigDir; nil
	// in ModeNone. The volume lists the key as an item, never a subPath,
	// so that Secret updates reach the apiserver's reload loop.
	Volume      *corev1.Volume
	VolumeMount *corev1.VolumeMount
}

// RenderAuthentication renders the apiserver side of a tenant cluster's OIDC
// mode. Every configuration it returns has passed the apiserver's own
// validation. It first refuses what the Cozystack chart refuses, with
// package tenant's validation (a *tenant.ValidationError: an unknown mode,
// CustomConfig with both or neither source, legacy --oidc-* flags, a user
// volume named authentication-config while OIDC is on), and System mode
// without an issuer (ErrNoIssuer).
func RenderAuthentication(spec AuthenticationSpec) (*Authentication, error) {
	values := tenant.KubernetesSpec{Version: spec.KubernetesVersion, OIDC: spec.OIDC,
		ControlPlane: tenant.ControlPlane{APIServer: spec.APIServer}}
	if err := values.ValidateAuthentication(); err != nil {
		return nil, err
	}
	mode := spec.OIDC.Mode
	if !spec.OIDC.On() {
		return &Authentication{Mode: tenant.OIDCNone}, nil
	}
	if err := checkCluster(spec.Cluster); err != nil {
		return nil, err
	}
	kv := spec.KubernetesVersion
	if kv == "" {
		kv = tenant.DefaultVersion
	}
	gv, err := APIVersionFor(string(kv))
	if err != nil {
		return nil, err
	}
	out := &Authentication{Mode: mode, APIVersion: gv.String()}
	secretName := spec.Cluster.OIDCAuthnConfigSecret()
	custom := spec.OIDC.CustomConfig
	switch {
	case mode == tenant.OIDCSystem:
		issuer := spec.IssuerURL
		if issuer == "" && spec.RootHost != "" {
			issuer = SystemIssuerURL(spec.RootHost)
		}
		if issuer == "" {
			return nil, ErrNoIssuer
		}
		jwt := JWTAuthenticator(spec.Cluster, issuer, spec.CertificateAuthority)
		out.Config = &apiserver.AuthenticationConfiguration{JWT: []apiserver.JWTAuthenticator{jwt}}
		if out.YAML, err = EncodeAuthenticationConfiguration(out.Config, gv); err != nil {
			return nil, err
		}
	case custom.Config != "":
		if out.Config, err = ParseAuthenticationConfiguration([]byte(custom.Config)); err != nil {
			return nil, err
		}
		out.YAML = []byte(custom.Config)
		out.APIVersion = apiVersionOf(out.YAML, out.APIVersion)
	default: // the tenant's Secret (validation ensured one source)
		secretName = custom.SecretRef.Name
	}
	if out.YAML != nil {
		out.Secret = configSecret(spec.Cluster, out.YAML)
	}
	out.APIServerArgs = []string{tenant.AuthenticationConfigFlag}
	out.Volume = &corev1.Volume{Name: tenant.AuthenticationConfigVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secretName,
		Items:      []corev1.KeyToPath{{Key: ref.OIDCAuthnConfigKey, Path: ref.OIDCAuthnConfigKey}},
	}}}
	out.VolumeMount = &corev1.VolumeMount{Name: tenant.AuthenticationConfigVolume, MountPath: tenant.AuthenticationConfigPath, ReadOnly: true}
	return out, nil
}

// JWTAuthenticator returns the JWT authenticator System mode renders for
// cluster c: issuer and CA, the cluster's client ID as the only audience,
// username from email (no prefix), groups from groups (no prefix), and the
// tenant groups gate. Build a Verifier from it to check tokens the way the
// cluster's apiserver will.
func JWTAuthenticator(c ref.Cluster, issuerURL string, caPEM []byte) apiserver.JWTAuthenticator {
	empty := ""
	return apiserver.JWTAuthenticator{
		Issuer: apiserver.Issuer{
			URL:                  issuerURL,
			CertificateAuthority: string(caPEM),
			Audiences:            []string{c.ClientID()},
		},
		ClaimValidationRules: []apiserver.ClaimValidationRule{{
			Expression: TenantGroupsGate(c),
			Message:    "user must be a member of one of the tenant groups " + strings.Join(c.TenantGroups(), ", "),
		}},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: &empty},
			Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: &empty},
		},
	}
}

// configSecret returns the Secret holding the configuration of c.
func configSecret(c ref.Cluster, data []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.OIDCAuthnConfigSecret(), Namespace: c.Namespace,
			Labels: labels(c),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{ref.OIDCAuthnConfigKey: data},
	}
}

// apiVersionOf reads the apiVersion of a YAML document, or returns def.
func apiVersionOf(doc []byte, def string) string {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil || tm.APIVersion == "" {
		return def
	}
	return tm.APIVersion
}
