package oidc

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"sigs.k8s.io/yaml"
)

// Mode selects which issuer a tenant cluster trusts (the Kubernetes
// application's spec.oidc.mode).
type Mode string

const (
	// ModeNone turns OIDC off; the empty Mode means the same.
	ModeNone Mode = "None"
	// ModeSystem trusts the platform Keycloak realm "cozy" through a
	// per-cluster public client and audience.
	ModeSystem Mode = "System"
	// ModeCustomConfig trusts an issuer the tenant brings, described by its
	// own AuthenticationConfiguration.
	ModeCustomConfig Mode = "CustomConfig"
)

// Where the apiserver finds the configuration.
const (
	// AuthnConfigVolume is the name of the apiserver volume holding the
	// configuration; user volumes may not take it.
	AuthnConfigVolume = "authentication-config"
	// AuthnConfigDir is where that volume is mounted.
	AuthnConfigDir = "/etc/kubernetes/authentication-config"
)

// DefaultKubernetesVersion is the tenant Kubernetes version assumed when
// AuthenticationSpec.KubernetesVersion is empty (Cozystack's default).
const DefaultKubernetesVersion = "v1.35"

// CustomConfig is the tenant's own AuthenticationConfiguration in
// CustomConfig mode: exactly one of Config and SecretRef.
type CustomConfig struct {
	// Config is an inline AuthenticationConfiguration (YAML). It is
	// validated and stored verbatim.
	Config string
	// SecretRef names a Secret in the tenant namespace whose key
	// config.yaml holds the configuration; it is mounted as it is.
	SecretRef string
}

// AuthenticationSpec is what RenderAuthentication needs. The zero value
// (ModeNone) renders nothing.
type AuthenticationSpec struct {
	// Cluster is the tenant cluster; its client ID is the audience.
	Cluster Cluster
	// Mode selects the issuer.
	Mode Mode
	// KubernetesVersion of the tenant apiserver picks the config API
	// version. Default DefaultKubernetesVersion.
	KubernetesVersion string
	// RootHost is the platform's root host; System mode trusts
	// SystemIssuerURL(RootHost).
	RootHost string
	// IssuerURL replaces the System issuer, for a platform whose Keycloak
	// lives elsewhere (or a test IdP).
	IssuerURL string
	// CertificateAuthority is the PEM bundle the apiserver uses to reach a
	// System issuer with a private CA. Empty means the system roots.
	CertificateAuthority []byte
	// Custom is the tenant's configuration in CustomConfig mode.
	Custom CustomConfig
	// ExtraArgs are the user's extra apiserver flags; --oidc-* and
	// --authentication-config are refused while OIDC is on.
	ExtraArgs []string
	// ExtraVolumes are the names of the user's extra apiserver volumes;
	// AuthnConfigVolume is refused while OIDC is on.
	ExtraVolumes []string
}

// Authentication is what a tenant apiserver needs for its OIDC mode.
type Authentication struct {
	// Mode is the rendered mode.
	Mode Mode
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
// validation. It refuses what the Cozystack chart refuses: System mode
// without an issuer, CustomConfig with both or neither source, legacy
// --oidc-* flags and a user volume named authentication-config.
func RenderAuthentication(spec AuthenticationSpec) (*Authentication, error) {
	mode := spec.Mode
	if mode == "" {
		mode = ModeNone
	}
	switch mode {
	case ModeNone:
		return &Authentication{Mode: ModeNone}, nil
	case ModeSystem, ModeCustomConfig:
	default:
		return nil, fmt.Errorf("%w: %q (want None, System or CustomConfig)", ErrUnknownMode, spec.Mode)
	}
	if err := spec.Cluster.validate(); err != nil {
		return nil, err
	}
	if err := checkUserAPIServerSettings(spec.ExtraArgs, spec.ExtraVolumes); err != nil {
		return nil, err
	}
	kv := spec.KubernetesVersion
	if kv == "" {
		kv = DefaultKubernetesVersion
	}
	gv, err := APIVersionFor(kv)
	if err != nil {
		return nil, err
	}
	out := &Authentication{Mode: mode, APIVersion: gv.String()}
	secretName := spec.Cluster.AuthnConfigSecret()
	switch {
	case mode == ModeSystem:
		issuer := spec.IssuerURL
		if issuer == "" && spec.RootHost != "" {
			issuer = SystemIssuerURL(spec.RootHost)
		}
		if issuer == "" {
			return nil, ErrNoIssuer
		}
		jwt := spec.Cluster.JWTAuthenticator(issuer, spec.CertificateAuthority)
		out.Config = &apiserver.AuthenticationConfiguration{JWT: []apiserver.JWTAuthenticator{jwt}}
		if out.YAML, err = EncodeAuthenticationConfiguration(out.Config, gv); err != nil {
			return nil, err
		}
	case spec.Custom.Config != "" && spec.Custom.SecretRef != "":
		return nil, ErrCustomConfigAmbiguous
	case spec.Custom.Config != "":
		if out.Config, err = ParseAuthenticationConfiguration([]byte(spec.Custom.Config)); err != nil {
			return nil, err
		}
		out.YAML = []byte(spec.Custom.Config)
		out.APIVersion = apiVersionOf(out.YAML, out.APIVersion)
	case spec.Custom.SecretRef != "":
		secretName = spec.Custom.SecretRef
	default:
		return nil, ErrCustomConfigMissing
	}
	if out.YAML != nil {
		out.Secret = configSecret(spec.Cluster, out.YAML)
	}
	out.APIServerArgs = []string{"--authentication-config=" + path.Join(AuthnConfigDir, AuthnConfigKey)}
	out.Volume = &corev1.Volume{Name: AuthnConfigVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secretName,
		Items:      []corev1.KeyToPath{{Key: AuthnConfigKey, Path: AuthnConfigKey}},
	}}}
	out.VolumeMount = &corev1.VolumeMount{Name: AuthnConfigVolume, MountPath: AuthnConfigDir, ReadOnly: true}
	return out, nil
}

// JWTAuthenticator returns the JWT authenticator System mode renders for
// the cluster: issuer and CA, the cluster's client ID as the only audience,
// username from email (no prefix), groups from groups (no prefix), and the
// tenant groups gate. Build a Verifier from it to check tokens the way the
// cluster's apiserver will.
func (c Cluster) JWTAuthenticator(issuerURL string, caPEM []byte) apiserver.JWTAuthenticator {
	empty := ""
	return apiserver.JWTAuthenticator{
		Issuer: apiserver.Issuer{
			URL:                  issuerURL,
			CertificateAuthority: string(caPEM),
			Audiences:            []string{c.ClientID()},
		},
		ClaimValidationRules: []apiserver.ClaimValidationRule{{
			Expression: c.TenantGroupsGate(),
			Message:    "user must be a member of one of the tenant groups " + strings.Join(c.TenantGroups(), ", "),
		}},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: &empty},
			Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: &empty},
		},
	}
}

// checkUserAPIServerSettings refuses user flags and volumes that collide
// with the rendered configuration.
func checkUserAPIServerSettings(args, volumes []string) error {
	for _, a := range args {
		if strings.HasPrefix(a, "--oidc-") || strings.HasPrefix(a, "--authentication-config") {
			name, _, _ := strings.Cut(a, "=")
			return fmt.Errorf("%w: %s", ErrLegacyOIDCFlag, name)
		}
	}
	for _, v := range volumes {
		if v == AuthnConfigVolume {
			return ErrReservedVolume
		}
	}
	return nil
}

func configSecret(c Cluster, data []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.AuthnConfigSecret(), Namespace: c.Namespace,
			Labels: map[string]string{LabelManagedBy: ManagedByValue, LabelInstance: c.Release()},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{AuthnConfigKey: data},
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
