package oidc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// System issuer with a private CA. Empty means the system roots (the
	// chart has no such field: with it the text gains
	// issuer.certificateAuthority).
	CertificateAuthority []byte
	// NewestAPIVersion renders System mode in the newest
	// AuthenticationConfiguration API version KubernetesVersion loads
	// (apiserver.config.k8s.io/v1 from 1.34, v1beta1 before; see
	// tenant.NewestAuthenticationConfig) instead of the chart's v1beta1,
	// which every version the chart offers loads. The text is otherwise
	// the chart's.
	NewestAPIVersion bool
	// SkipConfigCheck renders an inline CustomConfig verbatim, as the chart
	// does, even when kube-apiserver would refuse it at start: it does not
	// decode or validate, or KubernetesVersion does not load its apiVersion
	// (tenant.AuthenticationConfigLoads: a v1 config on 1.31). The problems
	// are then Authentication.Warnings instead of the error, and
	// Authentication.Config is nil when the text does not decode.
	SkipConfigCheck bool
	// ChartVersion is the installed chart's version, for the helm.sh/chart
	// label of the Secret (see ChartLabels); "" is the source's 0.0.0.
	ChartVersion string
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
	// Config is the configuration; nil in mode tenant.OIDCNone and with a SecretRef.
	Config *apiserver.AuthenticationConfiguration
	// YAML is the file content (verbatim for an inline custom config).
	YAML []byte
	// Secret holds YAML under ref.OIDCAuthnConfigKey; nil when there is nothing to
	// store (tenant.OIDCNone, SecretRef).
	Secret *corev1.Secret
	// APIServerArgs are the flags to add (--authentication-config=...).
	APIServerArgs []string
	// Volume and VolumeMount put the configuration at tenant.AuthenticationConfigPath;
	// nil in tenant.OIDCNone. The volume lists the key as an item, never a subPath,
	// so that Secret updates reach the apiserver's reload loop.
	Volume      *corev1.Volume
	VolumeMount *corev1.VolumeMount
	// Warnings are the problems of an inline CustomConfig rendered with
	// SkipConfigCheck: each wraps ErrInvalidConfig or ErrConfigAPIVersion.
	Warnings []error
}

// RenderAuthentication renders the apiserver side of a tenant cluster's OIDC
// mode. It first refuses what the Cozystack chart refuses, with package
// tenant's validation (a *tenant.ValidationError: an unknown mode,
// CustomConfig with both or neither source, legacy --oidc-* flags, a user
// volume named authentication-config while OIDC is on), a Kubernetes
// version without structured authentication (ErrUnsupportedVersion), and
// System mode without an issuer (ErrNoIssuer).
//
// System mode renders the chart's text, byte for byte: apiserver.config.
// k8s.io/v1beta1 whatever the version (NewestAPIVersion renders v1 from
// 1.34), the cluster's client ID as the only audience, the email and
// groups claims without prefixes, and the tenant groups gate with the
// chart's message. An inline CustomConfig is stored verbatim, as the chart
// does, but unlike the chart only after it passed kube-apiserver's own
// decoding and validation and its apiVersion is one KubernetesVersion
// loads (ErrInvalidConfig, ErrConfigAPIVersion; SkipConfigCheck renders it
// anyway, with Warnings). Every configuration returned without Warnings has
// passed the apiserver's validation.
func RenderAuthentication(spec AuthenticationSpec) (*Authentication, error) {
	if err := checkValues(spec); err != nil {
		return nil, err
	}
	mode := spec.OIDC.Mode
	if !spec.OIDC.On() {
		return &Authentication{Mode: tenant.OIDCNone}, nil
	}
	if err := checkCluster(spec.Cluster); err != nil {
		return nil, err
	}
	kv := string(spec.KubernetesVersion)
	if kv == "" {
		kv = string(tenant.DefaultVersion)
	}
	newest, err := newestAPIVersion(kv)
	if err != nil {
		return nil, err
	}
	out := &Authentication{Mode: mode}
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
		out.APIVersion = tenant.AuthenticationConfigV1Beta1
		if spec.NewestAPIVersion {
			out.APIVersion = newest.String()
		}
		if out.YAML, out.Config, err = renderSystem(spec.Cluster, issuer, spec.CertificateAuthority, out.APIVersion); err != nil {
			return nil, err
		}
	case custom.Config != "":
		if err := renderInline(out, custom.Config, kv, spec.SkipConfigCheck); err != nil {
			return nil, err
		}
	default: // the tenant's Secret (validation ensured one source)
		secretName = custom.SecretRef.Name
	}
	if out.YAML != nil {
		out.Secret = configSecret(spec.Cluster, spec.ChartVersion, out.YAML)
	}
	out.APIServerArgs = []string{tenant.AuthenticationConfigFlag}
	out.Volume = &corev1.Volume{Name: tenant.AuthenticationConfigVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secretName,
		Items:      []corev1.KeyToPath{{Key: ref.OIDCAuthnConfigKey, Path: ref.OIDCAuthnConfigKey}},
	}}}
	out.VolumeMount = &corev1.VolumeMount{Name: tenant.AuthenticationConfigVolume, MountPath: tenant.AuthenticationConfigPath, ReadOnly: true}
	return out, nil
}

// renderSystem writes System mode's configuration in the chart's text and
// checks it as kube-apiserver loads it: it must validate and mean exactly
// JWTAuthenticator(c, issuer, ca).
func renderSystem(c ref.Cluster, issuer string, ca []byte, apiVersion string) ([]byte, *apiserver.AuthenticationConfiguration, error) {
	text := systemConfigText(c, issuer, ca, apiVersion)
	cfg, err := ParseAuthenticationConfiguration(text)
	if err != nil {
		return nil, nil, err
	}
	if len(cfg.JWT) != 1 || !equality.Semantic.DeepEqual(cfg.JWT[0], JWTAuthenticator(c, issuer, ca)) {
		return nil, nil, invalidf("issuer URL %q does not survive the chart's configuration text", issuer)
	}
	return text, cfg, nil
}

// systemConfigText is the chart's AuthenticationConfiguration text
// (templates/oidc-authn-config.yaml), with the apiVersion given and, when
// ca is set, issuer.certificateAuthority, which the chart has no field for.
func systemConfigText(c ref.Cluster, issuer string, ca []byte, apiVersion string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: %s\n    audiences:\n    - %s\n",
		apiVersion, issuer, c.ClientID())
	if len(ca) > 0 {
		chomp := "|"
		if !bytes.HasSuffix(ca, []byte("\n")) {
			chomp = "|-"
		}
		fmt.Fprintf(&b, "    certificateAuthority: %s\n", chomp)
		for line := range strings.Lines(string(ca)) {
			fmt.Fprintf(&b, "      %s", strings.TrimRight(line, "\n")+"\n")
		}
	}
	fmt.Fprintf(&b, "  claimValidationRules:\n  - expression: '%s'\n    message: \"%s\"\n", TenantGroupsGate(c), tenantGroupsMessage(c))
	b.WriteString("  claimMappings:\n    username:\n      claim: email\n      prefix: \"\"\n    groups:\n      claim: groups\n      prefix: \"\"\n")
	return []byte(b.String())
}

// renderInline takes the tenant's inline configuration verbatim, after
// the checks kube-apiserver makes when it loads it (or, with skip, noting
// them as warnings).
func renderInline(out *Authentication, text, kubernetesVersion string, skip bool) error {
	out.YAML = []byte(text)
	out.APIVersion = apiVersionOf(out.YAML, "")
	var problems []error
	cfg, err := ParseAuthenticationConfiguration(out.YAML)
	if err != nil {
		problems = append(problems, err)
	} else {
		out.Config = cfg
	}
	if loads, err := tenant.AuthenticationConfigLoads(kubernetesVersion, out.APIVersion); err == nil && !loads {
		problems = append(problems, fmt.Errorf("%w: Kubernetes %s does not load %s", ErrConfigAPIVersion, kubernetesVersion, out.APIVersion))
	}
	if len(problems) > 0 && !skip {
		return errors.Join(problems...)
	}
	out.Warnings = problems
	return nil
}

// JWTAuthenticator returns the JWT authenticator System mode renders for
// cluster c: issuer and CA, the cluster's client ID as the only audience,
// username from email (no prefix), groups from groups (no prefix), and the
// tenant groups gate with the chart's message. Build a Verifier from it to
// check tokens the way the cluster's apiserver will.
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
			Message:    tenantGroupsMessage(c),
		}},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: &empty},
			Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: &empty},
		},
	}
}

// configSecret returns the Secret holding the configuration of c.
// It carries the chart's Helm labels (ChartLabels).
func configSecret(c ref.Cluster, chartVersion string, data []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.OIDCAuthnConfigSecret(), Namespace: c.Namespace,
			Labels: ChartLabels(c, chartVersion),
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

// checkValues returns the chart's refusals (the chart, Helm and
// cozystack-api decide them) of the values that decide the apiserver's
// authentication: spec.oidc and spec.controlPlane.apiServer. The platform's
// OIDC flag is not the renderer's to check.
func checkValues(spec AuthenticationSpec) error {
	values := tenant.KubernetesSpec{OIDC: spec.OIDC, ControlPlane: tenant.ControlPlane{APIServer: spec.APIServer}}
	_, err := values.Check(tenant.Platform{OIDCEnabled: true})
	var ve *tenant.ValidationError
	if errors.As(err, &ve) {
		return ve.By(tenant.DecidedByChart, tenant.DecidedByHelm, tenant.DecidedByAPI)
	}
	return err
}

// newestAPIVersion returns the newest config API version kube-apiserver of
// kubernetesVersion loads (tenant.NewestAuthenticationConfig); versions
// before 1.30, where the file is alpha, and unparsable ones get
// ErrUnsupportedVersion.
func newestAPIVersion(kubernetesVersion string) (schema.GroupVersion, error) {
	gv, err := tenant.NewestAuthenticationConfig(kubernetesVersion)
	if err == nil && gv == tenant.AuthenticationConfigV1Alpha1 {
		err = errors.New("structured authentication needs 1.30 or later")
	}
	if err != nil {
		return schema.GroupVersion{}, fmt.Errorf("%w: %q: %w", ErrUnsupportedVersion, kubernetesVersion, err)
	}
	return schema.ParseGroupVersion(gv)
}
