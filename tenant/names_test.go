package tenant_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	"github.com/cozystack/tenantkit/tenant/tenanttest"
)

func TestAddonKey_Release(t *testing.T) {
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	for key, want := range map[tenant.AddonKey]string{
		tenant.CertManager:           "kubernetes-prod-cert-manager",
		tenant.Cilium:                "kubernetes-prod-cilium",
		tenant.GatewayAPI:            "kubernetes-prod-gateway-api-crds",
		tenant.IngressNginx:          "kubernetes-prod-ingress-nginx",
		tenant.GPUOperator:           "kubernetes-prod-gpu-operator",
		tenant.HAMi:                  "kubernetes-prod-hami",
		tenant.FluxCD:                "kubernetes-prod-fluxcd",
		tenant.MonitoringAgents:      "kubernetes-prod-monitoring-agents",
		tenant.VerticalPodAutoscaler: "kubernetes-prod-vertical-pod-autoscaler",
		tenant.Velero:                "kubernetes-prod-velero",
		tenant.CoreDNS:               "kubernetes-prod-coredns",
		tenant.Ouroboros:             "kubernetes-prod-ouroboros",
		"nonsense":                   "",
	} {
		require.Equal(t, want, key.Release(c), key)
	}
	require.Len(t, tenant.AddonKeys(), 12)
}

func TestKubernetes_Host(t *testing.T) {
	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenant.KubernetesSpec{})
	require.Equal(t, "kubernetes-prod.acme.example.org", k.Host("acme.example.org"))
	k.Spec.Host = "api.acme.io"
	require.Equal(t, "api.acme.io", k.Host("acme.example.org"))
}

func TestKubernetes_AddonReleases(t *testing.T) {
	k := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenanttest.FullSpec())
	out, err := yaml.Marshal(k.AddonReleases(tenant.Release20260819, true))
	require.NoError(t, err)
	golden(t, "addon-releases-full", out)
	require.Contains(t, string(out), "kubernetes-prod-fluxcd", "the FluxCD addon renders before its removal")
	latest := k.AddonReleases(tenant.LatestRelease, true)
	require.Len(t, latest, len(k.AddonReleases(tenant.Release20260819, true))-1, "only fluxcd differs")
	for _, r := range latest {
		require.NotEqual(t, tenant.FluxCD, r.Addon, "cozystack 7cca3d75e removed the FluxCD addon")
	}

	minimal := tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-acme", Name: "prod"}, tenant.KubernetesSpec{})
	var names []string
	for _, r := range minimal.AddonReleases(tenant.LatestRelease, true) {
		names = append(names, r.Name)
	}
	require.Equal(t, []string{"kubernetes-prod-cilium", "kubernetes-prod-coredns"}, names, "cilium and coredns are always on")
	require.Empty(t, minimal.AddonReleases(tenant.LatestRelease, false), "nothing renders before the tenant has an etcd")
}

func TestAddons_ValuesOverride(t *testing.T) {
	s := tenanttest.FullSpec()
	for _, key := range tenant.AddonKeys() {
		switch key {
		case tenant.GatewayAPI, tenant.CertManager, tenant.IngressNginx, tenant.GPUOperator, tenant.FluxCD,
			tenant.MonitoringAgents, tenant.Ouroboros:
			require.Nil(t, s.Addons.ValuesOverride(key), key)
		default:
			require.NotNil(t, s.Addons.ValuesOverride(key), key)
		}
		require.True(t, s.Addons.Enabled(key), key)
	}
	require.False(t, tenant.Addons{}.Enabled(tenant.HAMi))
	require.False(t, tenant.Addons{}.Enabled("nonsense"))
}

func TestKubernetesSpec_WithDefaults(t *testing.T) {
	t.Run("empty node groups become md0", func(t *testing.T) {
		d := tenant.KubernetesSpec{}.WithDefaults()
		require.Equal(t, []string{"md0"}, keys(d.NodeGroups))
		md0 := d.NodeGroups["md0"]
		require.Equal(t, 0, md0.MinReplicas)
		require.Equal(t, 10, *md0.MaxReplicas)
		require.Equal(t, "u1.medium", md0.InstanceType)
		require.Equal(t, "20Gi", md0.DiskSize.String())
		require.Equal(t, []string{"ingress-nginx"}, md0.Roles)
		require.Equal(t, 2, *d.ControlPlane.Replicas)
		require.Equal(t, tenant.DefaultVersion, d.Version)
		require.Equal(t, tenant.OIDCNone, d.OIDC.Mode)
	})
	t.Run("user groups are not merged with md0, only defaulted", func(t *testing.T) {
		s := tenant.KubernetesSpec{NodeGroups: map[string]tenant.NodeGroup{"workers": {MinReplicas: 2}}}
		d := s.WithDefaults()
		require.Equal(t, []string{"workers"}, keys(d.NodeGroups))
		w := d.NodeGroups["workers"]
		require.Empty(t, w.InstanceType, `"" is a value: no instance type`)
		require.Equal(t, 10, *w.MaxReplicas)
		require.Equal(t, "20Gi", w.DiskSize.String())
		require.Equal(t, "7%", w.Kubelet.EvictionHardMemory)
		require.Nil(t, s.NodeGroups["workers"].MaxReplicas, "WithDefaults must not change its receiver")
	})
	t.Run("set values are kept", func(t *testing.T) {
		full := tenanttest.FullSpec()
		d := full.WithDefaults()
		requireSemanticEqual(t, full.NodeGroups["md0"].DiskSize, d.NodeGroups["md0"].DiskSize)
		require.Equal(t, 3, *d.ControlPlane.Replicas)
		require.Equal(t, []string{"gpu"}, full.GPUNodeGroups())
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
