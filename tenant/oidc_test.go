package tenant_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/tenant"
)

func TestClusterRef_OIDC_namesAgree(t *testing.T) {
	ref := tenant.ClusterRef{Namespace: "tenant-acme", Name: "prod"}
	c := ref.OIDC()
	require.Equal(t, ref.ReleaseName(), c.Release())
	require.Equal(t, ref.OIDCKubeconfigSecret(), c.KubeconfigSecret())
	require.Equal(t, ref.OIDCAuthnConfigSecret(), c.AuthnConfigSecret())
	require.Equal(t, "tenant-acme-kubernetes-prod", c.ClientID())
	require.Equal(t, tenant.OIDCKubeconfigKey, oidc.KubeconfigKey)
	require.Equal(t, tenant.OIDCAuthnConfigKey, oidc.AuthnConfigKey)
	require.Equal(t, tenant.AuthenticationConfigVolume, oidc.AuthnConfigVolume)
	require.Equal(t, tenant.AuthenticationConfigPath, oidc.AuthnConfigDir)
}

// The spec's OIDC values feed package oidc's renderer as they are; what
// Validate accepts renders, and the chart's refusals are the same errors
// in both packages.
func TestKubernetes_AuthenticationSpec(t *testing.T) {
	platform := tenant.Platform{RootHost: "example.org", OIDCEnabled: true}
	t.Run("System", func(t *testing.T) {
		k := tenant.NewKubernetes("tenant-acme", "prod", fullSpec())
		require.NoError(t, k.Validate(platform))
		spec := k.AuthenticationSpec(platform)
		require.Equal(t, oidc.ModeSystem, spec.Mode)
		require.Equal(t, "v1.34", spec.KubernetesVersion)
		require.Equal(t, []string{"audit-policy", "webhook"}, spec.ExtraVolumes)
		auth, err := oidc.RenderAuthentication(spec)
		require.NoError(t, err)
		require.Equal(t, "https://keycloak.example.org/realms/cozy", auth.Config.JWT[0].Issuer.URL)
		require.Equal(t, []string{"tenant-acme-kubernetes-prod"}, auth.Config.JWT[0].Issuer.Audiences)
		require.Equal(t, k.Ref().OIDCAuthnConfigSecret(), auth.Secret.Name)
		require.Equal(t, []string{tenant.AuthenticationConfigFlag}, auth.APIServerArgs)

		users := k.Spec.OIDC.RBACUsers()
		require.Equal(t, []oidc.User{{Email: "alice@acme.example", Role: oidc.RoleAdmin}, {Email: "bob@acme.example", Role: oidc.RoleView}}, users)
		bindings, err := k.Ref().OIDC().Bindings(users)
		require.NoError(t, err)
		require.Len(t, bindings, 2)
	})
	t.Run("CustomConfig from a Secret", func(t *testing.T) {
		k := tenant.NewKubernetes("tenant-acme", "byo", tenant.KubernetesSpec{OIDC: tenant.OIDC{
			Mode: oidc.ModeCustomConfig, CustomConfig: tenant.CustomConfig{SecretRef: tenant.SecretRef{Name: "my-authn"}}}})
		require.NoError(t, k.Validate(tenant.Platform{}))
		auth, err := oidc.RenderAuthentication(k.AuthenticationSpec(tenant.Platform{}))
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
			{"legacy flag", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: oidc.ModeSystem},
				ControlPlane: tenant.ControlPlane{APIServer: tenant.APIServer{ExtraArgs: []string{"--oidc-issuer-url=x"}}}},
				oidc.ErrLegacyOIDCFlag},
			{"both sources", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: oidc.ModeCustomConfig,
				CustomConfig: tenant.CustomConfig{Config: "x", SecretRef: tenant.SecretRef{Name: "y"}}}}, oidc.ErrCustomConfigAmbiguous},
			{"no source", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: oidc.ModeCustomConfig}}, oidc.ErrCustomConfigMissing},
			{"authentication-config volume", tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: oidc.ModeSystem},
				ControlPlane: tenant.ControlPlane{APIServer: tenant.APIServer{ExtraVolumes: []corev1.Volume{secretVolume("authentication-config")}}}},
				oidc.ErrReservedVolume},
		} {
			t.Run(tt.name, func(t *testing.T) {
				k := tenant.NewKubernetes("tenant-acme", "prod", tt.spec)
				require.ErrorIs(t, k.Validate(platform), tt.want, "tenant refuses")
				_, err := oidc.RenderAuthentication(k.AuthenticationSpec(platform))
				require.ErrorIs(t, err, tt.want, "oidc refuses")
			})
		}
	})
}
