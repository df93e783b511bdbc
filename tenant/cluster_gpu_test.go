package tenant_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/tenant"
)

func TestKubernetes_GPUConfig(t *testing.T) {
	hami := func(values map[string]any) *tenant.Kubernetes {
		return tenant.NewKubernetes("tenant-acme", "gpu", tenant.KubernetesSpec{Addons: tenant.Addons{
			GPUOperator: tenant.Addon{Enabled: true},
			HAMi:        tenant.Addon{Enabled: true, ValuesOverride: map[string]any{"hami": values}},
		}})
	}
	for _, tt := range []struct {
		name    string
		k       *tenant.Kubernetes
		want    gpushare.Config
		wantErr error
	}{
		{"HAMi off: the chart defaults", tenant.NewKubernetes("tenant-acme", "gpu", tenant.KubernetesSpec{}), gpushare.Config{}, nil},
		{"policies", hami(map[string]any{"scheduler": map[string]any{"defaultSchedulerPolicy": map[string]any{
			"nodeSchedulerPolicy": "spread", "gpuSchedulerPolicy": "mutex,binpack"}}}),
			gpushare.Config{NodePolicy: gpushare.NodeSpread, GPUPolicy: "mutex,binpack"}, nil},
		{"resource names and no webhook", hami(map[string]any{"resourceName": "example.com/gpu", "resourceMem": "example.com/gpumem",
			"resourceMemPercentage": "example.com/gpumem-percentage", "resourceCores": "example.com/gpucores",
			"scheduler": map[string]any{"admissionWebhook": map[string]any{"enabled": false}}}),
			gpushare.Config{Resources: gpushare.ResourceNames{GPU: "example.com/gpu", Memory: "example.com/gpumem",
				MemoryPercentage: "example.com/gpumem-percentage", Cores: "example.com/gpucores"}, SkipWebhookDefaults: true}, nil},
		{"unknown policy", hami(map[string]any{"scheduler": map[string]any{"defaultSchedulerPolicy": map[string]any{"nodeSchedulerPolicy": "random"}}}),
			gpushare.Config{}, tenant.ErrInvalidValue},
		{"wrong type", hami(map[string]any{"resourceName": int64(1)}), gpushare.Config{}, tenant.ErrInvalidValue},
		{"webhook switch of the wrong type", hami(map[string]any{"scheduler": map[string]any{"admissionWebhook": map[string]any{"enabled": "no"}}}),
			gpushare.Config{}, tenant.ErrInvalidValue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.k.GPUConfig()
			require.ErrorIs(t, err, tt.wantErr)
			require.Equal(t, tt.want, got)
		})
	}
}

// What package gpushare renders as the addons block, package tenant reads
// back as the same HAMi settings.
func TestKubernetes_GPUConfig_fromGPUShareValues(t *testing.T) {
	addons := gpushare.Addons{GPUOperator: true, HAMi: true,
		HAMiSettings: gpushare.HAMiSettings{NodePolicy: gpushare.NodeSpread, GPUPolicy: gpushare.GPUBinpack}}
	values, err := addons.Values()
	require.NoError(t, err)
	doc, err := yaml.Marshal(values)
	require.NoError(t, err)
	spec, err := tenant.ParseSpec(doc)
	require.NoError(t, err)
	require.NoError(t, spec.Validate(tenant.Platform{}))
	got, err := tenant.NewKubernetes("tenant-acme", "gpu", spec).GPUConfig()
	require.NoError(t, err)
	want, err := addons.HAMiSettings.Config()
	require.NoError(t, err)
	require.Equal(t, want, got)
}
