package oidc_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/<name>.golden (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), string(got))
}

// testCA is a fixed CA certificate (testdata/ca.pem), so that golden files
// stay stable.
func testCA(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ca.pem"))
	require.NoError(t, err)
	return data
}

func TestRenderSystem(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		newest        bool
		wantAPI       string
		ca            []byte
	}{
		{"system-v1beta1", "", false, "apiserver.config.k8s.io/v1beta1", nil},      // the chart's, whatever the version
		{"system-v1beta1", "v1.35", false, "apiserver.config.k8s.io/v1beta1", nil}, // the same text
		{"system-v1beta1", "1.32.4", true, "apiserver.config.k8s.io/v1beta1", nil}, // the newest 1.32 loads
		{"system-v1", "v1.35", true, "apiserver.config.k8s.io/v1", nil},
		{"system-v1-ca", "", true, "apiserver.config.k8s.io/v1", testCA(t)},
	} {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{
				Cluster: acme, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}, KubernetesVersion: tenant.Version(tc.version),
				RootHost: "example.org", CertificateAuthority: tc.ca, NewestAPIVersion: tc.newest,
			})
			require.NoError(t, err)
			require.Equal(t, tc.wantAPI, auth.APIVersion)
			golden(t, "authn-"+tc.name, auth.YAML)

			// What we render is what the apiserver loads.
			parsed, err := oidc.ParseAuthenticationConfiguration(auth.YAML)
			require.NoError(t, err)
			require.Equal(t, auth.Config, parsed)
			require.Equal(t, "https://keycloak.example.org/realms/cozy", parsed.JWT[0].Issuer.URL)
			require.Equal(t, oidc.JWTAuthenticator(acme, oidc.SystemIssuerURL("example.org"), tc.ca), parsed.JWT[0])

			require.Equal(t, "kubernetes-prod-oidc-authn-config", auth.Secret.Name)
			require.Equal(t, "tenant-acme", auth.Secret.Namespace)
			require.Equal(t, auth.YAML, auth.Secret.Data["config.yaml"])
			require.Equal(t, []string{"--authentication-config=/etc/kubernetes/authentication-config/config.yaml"}, auth.APIServerArgs)
			require.Equal(t, "kubernetes-prod-oidc-authn-config", auth.Volume.Secret.SecretName)
			require.Equal(t, "authentication-config", auth.VolumeMount.Name)
			require.Empty(t, auth.Warnings)
		})
	}
}

// TestRenderSystem_isTheChartsText compares the default rendering with the
// text the chart's templates/oidc-authn-config.yaml renders for the same
// cluster, as recorded in the chart catalogue (R-authn-system).
func TestRenderSystem_isTheChartsText(t *testing.T) {
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}, RootHost: "example.org"})
	require.NoError(t, err)
	require.Equal(t, chartBlock(t, "### R-authn-system", "yaml"), string(auth.YAML))
	require.Equal(t, `has(claims.groups) && dyn(claims.groups).exists(g, g in ["tenant-acme-view", "tenant-acme-use", "tenant-acme-admin", "tenant-acme-super-admin"])`,
		oidc.TenantGroupsGate(acme))
}

// chartBlock returns the first fenced block of kind lang after heading in
// the chart catalogue of package tenant.
func chartBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "tenant", "testdata", "chart", "RULES.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(data), "\n"+heading)
	require.True(t, ok, "no %q in RULES.md", heading)
	_, rest, ok = strings.Cut(rest, "```"+lang+"\n")
	require.True(t, ok, "no %s block after %q", lang, heading)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	return block
}

func TestRenderCustomConfig(t *testing.T) {
	inline := `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://login.example.com
    audiences: [acme-prod]
  claimMappings:
    username: {claim: email, prefix: ""}
    groups: {claim: groups, prefix: ""}
`
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme,
		OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{Config: inline}}})
	require.NoError(t, err)
	require.Equal(t, inline, string(auth.Secret.Data["config.yaml"]), "stored verbatim")
	require.Equal(t, "apiserver.config.k8s.io/v1beta1", auth.APIVersion)
	require.Equal(t, "https://login.example.com", auth.Config.JWT[0].Issuer.URL)
	require.Empty(t, auth.Config.JWT[0].ClaimValidationRules, "no gate is injected into a custom config")

	auth, err = oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme,
		OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{SecretRef: tenant.SecretRef{Name: "my-authn"}}}})
	require.NoError(t, err)
	require.Nil(t, auth.Secret)
	require.Nil(t, auth.Config)
	require.Equal(t, "my-authn", auth.Volume.Secret.SecretName)
	require.Len(t, auth.APIServerArgs, 1)
}

// The chart stores an inline config verbatim; the renderer refuses what
// kube-apiserver would refuse at start, unless told to render as the chart.
func TestRenderCustomConfig_checks(t *testing.T) {
	v1 := customWith("")
	for _, tc := range []struct {
		name, config, version string
		want                  error
	}{
		{"v1 on 1.31", v1, "v1.31", oidc.ErrConfigAPIVersion},
		{"not a configuration", "...", "v1.35", oidc.ErrInvalidConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := oidc.AuthenticationSpec{Cluster: acme, KubernetesVersion: tenant.Version(tc.version), OIDC: customOIDC(tc.config)}
			_, err := oidc.RenderAuthentication(spec)
			require.ErrorIs(t, err, tc.want)

			spec.SkipConfigCheck = true
			auth, err := oidc.RenderAuthentication(spec)
			require.NoError(t, err)
			require.Equal(t, tc.config, string(auth.Secret.Data["config.yaml"]), "verbatim, as the chart")
			require.Len(t, auth.Warnings, 1)
			require.ErrorIs(t, auth.Warnings[0], tc.want)
		})
	}
	// The same fact decides tenant's refusal (tenantkit's, not the
	// chart's) and the renderer's.
	k := tenant.KubernetesSpec{Version: "v1.31", OIDC: customOIDC(v1)}
	_, err := k.Check(tenant.Platform{})
	require.ErrorIs(t, err, tenant.ErrCustomConfigVersion)
	var ve *tenant.ValidationError
	require.ErrorAs(t, err, &ve)
	require.NoError(t, ve.By(tenant.DecidedByChart, tenant.DecidedByHelm), "the chart accepts it")
	k.Version = "v1.34"
	w, err := k.Check(tenant.Platform{})
	require.NoError(t, err)
	require.Empty(t, w)
	_, err = oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme, KubernetesVersion: "v1.34", OIDC: customOIDC(v1)})
	require.NoError(t, err)
}

func TestRenderNone(t *testing.T) {
	for _, mode := range []tenant.OIDCMode{"", tenant.OIDCNone} {
		auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{OIDC: tenant.OIDC{Mode: mode},
			APIServer: tenant.APIServer{ExtraArgs: []string{"--oidc-issuer-url=x"}}})
		require.NoError(t, err)
		require.Equal(t, tenant.OIDCNone, auth.Mode)
		require.Nil(t, auth.Secret)
		require.Empty(t, auth.APIServerArgs)
	}
}

func TestRenderRefuses(t *testing.T) {
	system := oidc.AuthenticationSpec{Cluster: acme, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}, RootHost: "example.org"}
	with := func(edit func(*oidc.AuthenticationSpec)) oidc.AuthenticationSpec {
		s := system
		edit(&s)
		return s
	}
	for name, tc := range map[string]struct {
		spec oidc.AuthenticationSpec
		want error
	}{
		"unknown mode":          {with(func(s *oidc.AuthenticationSpec) { s.OIDC.Mode = "Keycloak" }), tenant.ErrInvalidValue},
		"system without issuer": {with(func(s *oidc.AuthenticationSpec) { s.RootHost = "" }), oidc.ErrNoIssuer},
		"custom with both": {with(func(s *oidc.AuthenticationSpec) {
			s.OIDC = tenant.OIDC{Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{Config: "x", SecretRef: tenant.SecretRef{Name: "y"}}}
		}), tenant.ErrOIDCCustomConfigConflict},
		"custom with neither": {with(func(s *oidc.AuthenticationSpec) { s.OIDC.Mode = tenant.OIDCCustomConfig }), tenant.ErrOIDCCustomConfigMissing},
		"legacy oidc flag": {with(func(s *oidc.AuthenticationSpec) {
			s.APIServer.ExtraArgs = []string{"--v=2", "--oidc-issuer-url=https://x"}
		}), tenant.ErrLegacyOIDCFlag},
		"second authentication-config": {with(func(s *oidc.AuthenticationSpec) {
			s.APIServer.ExtraArgs = []string{"--authentication-config=/x.yaml"}
		}), tenant.ErrLegacyOIDCFlag},
		"reserved volume": {with(func(s *oidc.AuthenticationSpec) {
			s.APIServer.ExtraVolumes = []corev1.Volume{secretVolume("talos-extra"), secretVolume("authentication-config")}
		}), tenant.ErrReservedVolume},
		"kubernetes 1.29": {with(func(s *oidc.AuthenticationSpec) { s.KubernetesVersion = "v1.29" }), oidc.ErrUnsupportedVersion},
		"custom v1 on 1.33": {with(func(s *oidc.AuthenticationSpec) {
			s.KubernetesVersion, s.OIDC = "v1.33", customOIDC(customWith(""))
		}), oidc.ErrConfigAPIVersion},
		"garbage version": {with(func(s *oidc.AuthenticationSpec) { s.KubernetesVersion = "latest" }), oidc.ErrUnsupportedVersion},
		"http issuer":     {with(func(s *oidc.AuthenticationSpec) { s.IssuerURL = "http://idp.example.org" }), oidc.ErrInvalidConfig},
		"no cluster name": {with(func(s *oidc.AuthenticationSpec) { s.Cluster.Name = "" }), oidc.ErrInvalidConfig},
		"custom not yaml": {with(func(s *oidc.AuthenticationSpec) { s.OIDC = customOIDC("{") }), oidc.ErrInvalidConfig},
		"custom bad field": {with(func(s *oidc.AuthenticationSpec) {
			s.OIDC = customOIDC(customWith("  issuerr: x"))
		}), oidc.ErrInvalidConfig},
		"custom bad cel": {with(func(s *oidc.AuthenticationSpec) {
			s.OIDC = customOIDC(customWith("  claimValidationRules:\n  - expression: claims.groups.exists(g, g == 'x')\n    message: m"))
		}), oidc.ErrInvalidConfig},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := oidc.RenderAuthentication(tc.spec)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// customOIDC returns CustomConfig mode with an inline config.
func customOIDC(config string) tenant.OIDC {
	return tenant.OIDC{Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{Config: config}}
}

// secretVolume returns an apiserver extra volume from a Secret.
func secretVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
}

// customWith returns a valid v1 config with one more line in the jwt entry.
func customWith(line string) string {
	return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://login.example.com
    audiences: [acme-prod]
  claimMappings:
    username: {claim: sub, prefix: "x:"}
` + line + "\n"
}

func TestConfigErrorNamesTheField(t *testing.T) {
	_, err := oidc.ParseAuthenticationConfiguration([]byte(customWith("  claimValidationRules:\n  - expression: claims.groups.exists(g, g == 'x')\n    message: m")))
	var ce *oidc.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, err.Error(), "jwt[0].claimValidationRules[0].expression")
	require.Contains(t, err.Error(), "cannot be range of a comprehension")
}

func TestNames(t *testing.T) {
	require.Equal(t, "tenant-acme-kubernetes-prod", acme.ClientID())
	require.Equal(t, "tenant-acme-kubernetes-prod-audience", acme.AudienceScope())
	require.Equal(t, "kubernetes-prod-oidc-authn-config", acme.OIDCAuthnConfigSecret())
	require.Equal(t, "kubernetes-prod-oidc-kubeconfig", acme.OIDCKubeconfigSecret())
	require.Equal(t, "https://keycloak.example.org/realms/cozy", oidc.SystemIssuerURL("example.org"))
	require.Equal(t, []string{"tenant-acme-view", "tenant-acme-use", "tenant-acme-admin", "tenant-acme-super-admin"}, acme.TenantGroups())

	// 241 + "-kubernetes-" puts a '-' at index 252: cut, then trimmed.
	long := ref.Cluster{Namespace: "tenant-" + repeat("a", 234), Name: "x"}
	id := long.ClientID()
	require.Len(t, id, 252, "cut to 253, then the trailing '-' trimmed")
	require.NotEqual(t, '-', rune(id[len(id)-1]))
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// TestRenderedConfigRoundTripsThroughYAML checks that the v1 YAML is what
// the apiserver documents, field for field.
func TestRenderedConfigRoundTripsThroughYAML(t *testing.T) {
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}, IssuerURL: "https://idp.example.org"})
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(auth.YAML, &doc))
	jwt := doc["jwt"].([]any)[0].(map[string]any)
	require.Equal(t, []any{"tenant-acme-kubernetes-prod"}, jwt["issuer"].(map[string]any)["audiences"])
	require.Equal(t, map[string]any{"claim": "email", "prefix": ""}, jwt["claimMappings"].(map[string]any)["username"])
}
