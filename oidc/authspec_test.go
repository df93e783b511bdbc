package oidc_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// The model's OIDC values feed the renderer as they are: what Validate
// accepts renders, and the chart's refusals are the model's errors in both
// places.
func TestAuthenticationSpecFor(t *testing.T) {
	platform := tenant.Platform{RootHost: "example.org", OIDCEnabled: true}
	t.Run("System", func(t *testing.T) {
		k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenant.KubernetesSpec{
			Version: "v1.34",
			OIDC: tenant.OIDC{Mode: tenant.OIDCSystem, Users: []tenant.OIDCUser{
				{Email: "alice@acme.example", Role: tenant.RoleAdmin}, {Email: "bob@acme.example", Role: tenant.RoleView}}},
			ControlPlane: tenant.ControlPlane{APIServer: tenant.APIServer{
				ExtraVolumes: []corev1.Volume{secretVolume("audit-policy"), secretVolume("webhook")}}},
		})
		_, err := k.Check(platform)
		require.NoError(t, err)
		spec := oidc.AuthenticationSpecFor(k, platform)
		require.Equal(t, tenant.OIDCSystem, spec.OIDC.Mode)
		require.Equal(t, tenant.Version("v1.34"), spec.KubernetesVersion)
		require.Len(t, spec.APIServer.ExtraVolumes, 2)
		auth, err := oidc.RenderAuthentication(spec)
		require.NoError(t, err)
		require.Equal(t, "https://keycloak.example.org/realms/cozy", auth.Config.JWT[0].Issuer.URL)
		require.Equal(t, []string{"tenant-acme-kubernetes-prod"}, auth.Config.JWT[0].Issuer.Audiences)
		require.Equal(t, k.Ref().OIDCAuthnConfigSecret(), auth.Secret.Name)
		require.Equal(t, []string{tenant.AuthenticationConfigFlag}, auth.APIServerArgs)
		require.Equal(t, tenant.AuthenticationConfigVolume, auth.Volume.Name)
		require.Equal(t, tenant.AuthenticationConfigPath, auth.VolumeMount.MountPath)

		bindings, err := oidc.Bindings(k.Ref(), k.Spec.OIDC.Users)
		require.NoError(t, err)
		require.Len(t, bindings, 2)
	})
	t.Run("CustomConfig from a Secret", func(t *testing.T) {
		k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "byo"}, tenant.KubernetesSpec{OIDC: tenant.OIDC{
			Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{SecretRef: tenant.SecretRef{Name: "my-authn"}}}})
		_, err := k.Check(tenant.Platform{})
		require.NoError(t, err)
		auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpecFor(k, tenant.Platform{}))
		require.NoError(t, err)
		require.Nil(t, auth.Secret)
		require.Equal(t, "my-authn", auth.Volume.Secret.SecretName)
	})
	t.Run("the same refusals", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			spec tenant.KubernetesSpec
			want error
		}{
			{"legacy flag", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
				ControlPlane: tenant.ControlPlane{APIServer: tenant.APIServer{ExtraArgs: []string{"--oidc-issuer-url=x"}}}},
				tenant.ErrLegacyOIDCFlag},
			{"both sources", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig,
				CustomConfig: tenant.CustomConfig{Config: "x", SecretRef: tenant.SecretRef{Name: "y"}}}}, tenant.ErrOIDCCustomConfigConflict},
			{"no source", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig}}, tenant.ErrOIDCCustomConfigMissing},
			{"authentication-config volume", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
				ControlPlane: tenant.ControlPlane{APIServer: tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("authentication-config")}}}},
				tenant.ErrReservedVolume},
		} {
			t.Run(tt.name, func(t *testing.T) {
				k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tt.spec)
				_, err := k.Check(platform)
				require.ErrorIs(t, err, tt.want, "tenant refuses")
				_, err = oidc.RenderAuthentication(oidc.AuthenticationSpecFor(k, platform))
				require.ErrorIs(t, err, tt.want, "oidc refuses")
			})
		}
	})
}

// KubeconfigSpecFor needs no cluster: the values, the platform and the
// tenant's CA decide it.
func TestKubeconfigSpecFor(t *testing.T) {
	platform := tenant.Platform{RootHost: "example.org", OIDCEnabled: true}
	ca := []byte("-----BEGIN CERTIFICATE-----\n")
	system := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}})
	spec, err := oidc.KubeconfigSpecFor(system, platform, oidc.KubeconfigFacts{TenantHost: "acme.example.org", CertificateAuthority: ca})
	require.NoError(t, err)
	require.Equal(t, "https://kubernetes-prod.acme.example.org:443", spec.Server)
	require.Equal(t, "https://keycloak.example.org/realms/cozy", spec.IssuerURL)
	require.Empty(t, spec.ClientID, "the cluster's own client ID")
	require.Equal(t, ca, spec.CertificateAuthority)
	_, err = oidc.RenderKubeconfig(spec)
	require.NoError(t, err)

	custom := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "byo"}, tenant.KubernetesSpec{Host: "api.acme.io",
		OIDC: tenant.OIDC{Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{SecretRef: tenant.SecretRef{Name: "my-authn"}}}})
	_, err = oidc.KubeconfigSpecFor(custom, platform, oidc.KubeconfigFacts{TenantHost: "acme.example.org", CertificateAuthority: ca})
	require.ErrorIs(t, err, oidc.ErrInvalidConfig, "the Secret's configuration is needed")
	spec, err = oidc.KubeconfigSpecFor(custom, platform, oidc.KubeconfigFacts{TenantHost: "acme.example.org", CertificateAuthority: ca, AuthenticationConfig: []byte(customWith(""))})
	require.NoError(t, err)
	require.Equal(t, "https://api.acme.io:443", spec.Server)
	require.Equal(t, "https://login.example.com", spec.IssuerURL)
	require.Equal(t, "acme-prod", spec.ClientID)

	off := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "off"}, tenant.KubernetesSpec{})
	_, err = oidc.KubeconfigSpecFor(off, platform, oidc.KubeconfigFacts{TenantHost: "acme.example.org", CertificateAuthority: ca})
	require.ErrorIs(t, err, oidc.ErrInvalidConfig)
}
