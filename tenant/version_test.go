package tenant_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/tenant"
)

// Which kube-apiserver loads which AuthenticationConfiguration: the one
// fact tenant's warning and oidc's renderer share.
func TestAuthenticationConfigLoads(t *testing.T) {
	for _, tt := range []struct {
		kubernetes, apiVersion string
		loads                  bool
	}{
		{"v1.31", tenant.AuthenticationConfigV1, false},
		{"v1.33", tenant.AuthenticationConfigV1, false},
		{"v1.34", tenant.AuthenticationConfigV1, true},
		{"1.37.2", tenant.AuthenticationConfigV1, true},
		{"v1.29", tenant.AuthenticationConfigV1Beta1, false},
		{"v1.30", tenant.AuthenticationConfigV1Beta1, true},
		{"v1.35", tenant.AuthenticationConfigV1Beta1, true},
		{"v1.29", tenant.AuthenticationConfigV1Alpha1, true},
		{"v1.28", tenant.AuthenticationConfigV1Alpha1, false},
	} {
		got, err := tenant.AuthenticationConfigLoads(tt.kubernetes, tt.apiVersion)
		require.NoError(t, err)
		require.Equal(t, tt.loads, got, "%s loads %s", tt.kubernetes, tt.apiVersion)
	}
	for _, v := range tenant.Versions() {
		ok, err := tenant.AuthenticationConfigLoads(string(v), tenant.AuthenticationConfigV1Beta1)
		require.NoError(t, err)
		require.True(t, ok, "the chart's v1beta1 loads on every version it offers: %s", v)
	}
	_, err := tenant.AuthenticationConfigLoads("latest", tenant.AuthenticationConfigV1)
	require.ErrorIs(t, err, tenant.ErrInvalidValue)
	_, err = tenant.AuthenticationConfigLoads("v1.35", "apiserver.config.k8s.io/v2")
	require.ErrorIs(t, err, tenant.ErrInvalidValue)

	for v, want := range map[string]string{"v1.35": tenant.AuthenticationConfigV1, "v1.33": tenant.AuthenticationConfigV1Beta1,
		"v1.29": tenant.AuthenticationConfigV1Alpha1} {
		got, err := tenant.NewestAuthenticationConfig(v)
		require.NoError(t, err)
		require.Equal(t, want, got, v)
	}
	_, err = tenant.NewestAuthenticationConfig("v1.28")
	require.ErrorIs(t, err, tenant.ErrInvalidValue)
}

func TestResourcesPresets(t *testing.T) {
	presets := tenant.ResourcesPresets()
	require.Len(t, presets, 47, "the schema's enum")
	for _, p := range []tenant.ResourcesPreset{tenant.DefaultAPIServerPreset, tenant.DefaultComponentPreset, "m1.4xlarge", "2xlarge"} {
		require.True(t, p.Valid(), p)
	}
	for _, p := range []tenant.ResourcesPreset{"", "4xlarge", "c1.8xlarge", "C1.medium", " c1.medium"} {
		require.False(t, p.Valid(), p)
	}
}
