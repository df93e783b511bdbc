package tenant_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// TestTenant_Resolve walks root → acme (own etcd) → dev (own SeaweedFS) →
// team (nothing of its own) and checks which tenant serves each.
func TestTenant_Resolve(t *testing.T) {
	root := tenant.RootServices(tenant.TenantSpec{Etcd: true, Ingress: true, Monitoring: true, Gateway: new(true)}, "example.org")
	require.Equal(t, tenant.Services{Etcd: "tenant-root", Ingress: "tenant-root", Monitoring: "tenant-root", Gateway: "tenant-root",
		Host: "example.org"}, root)

	acme := tenant.NewTenant("tenant-root", "acme", tenant.TenantSpec{Etcd: true, SchedulingClass: "gold"})
	acmeS, err := acme.Resolve(root)
	require.NoError(t, err)
	dev := tenant.NewTenant("tenant-acme", "dev", tenant.TenantSpec{SeaweedFS: true, SchedulingClass: "silver"})
	devS, err := dev.Resolve(acmeS)
	require.NoError(t, err)
	team := tenant.NewTenant("tenant-acme-dev", "team", tenant.TenantSpec{Host: "team.io"})
	teamS, err := team.Resolve(devS)
	require.NoError(t, err)

	require.Equal(t, tenant.Services{Etcd: "tenant-acme", Ingress: "tenant-root", Monitoring: "tenant-root",
		Host: "acme.example.org", SchedulingClass: "gold"}, acmeS, "gateway is never inherited")
	require.Equal(t, tenant.Services{Etcd: "tenant-acme", Ingress: "tenant-root", Monitoring: "tenant-root",
		SeaweedFS: "tenant-acme-dev", Host: "dev.acme.example.org", SchedulingClass: "gold"}, devS,
		"a scheduling class set above wins")
	require.Equal(t, "team.io", teamS.Host)
	require.Equal(t, "tenant-acme-dev", teamS.SeaweedFS)

	type rendered struct {
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
		Values    string            `json:"cozystackValues"`
	}
	var out []rendered
	for _, step := range []struct {
		ns string
		s  tenant.Services
	}{{"tenant-root", root}, {"tenant-acme", acmeS}, {"tenant-acme-dev", devS}, {"tenant-acme-dev-team", teamS}} {
		labels, err := step.s.NamespaceLabels(step.ns)
		require.NoError(t, err)
		require.Equal(t, step.s, tenant.ServicesFromLabels(labels), "labels carry the services")
		platform := tenant.Platform{RootHost: "example.org", OIDCEnabled: true, ClusterDomain: "cozy.local"}
		sec, err := tenant.ValuesSecretFor(step.ns, platform, step.s)
		require.NoError(t, err)
		p, s, err := tenant.ParseValues(sec.Data[tenant.ValuesSecretKey])
		require.NoError(t, err)
		require.Equal(t, platform, p)
		require.Equal(t, step.s, s, "the values Secret carries the services")
		out = append(out, rendered{step.ns, labels, string(sec.Data[tenant.ValuesSecretKey])})
	}
	data, err := yaml.Marshal(out)
	require.NoError(t, err)
	golden(t, "tenant-namespaces", data)

	_, err = tenant.NewTenant("tenant-root", "bad-name", tenant.TenantSpec{}).Resolve(root)
	require.ErrorIs(t, err, ref.ErrInvalidName)
}

func TestParseValues(t *testing.T) {
	p, s, err := tenant.ParseValues([]byte(`
_cluster:
  root-host: example.org
  oidc-enabled: true
  bundle-name: paas-full
  scheduling: {globalAppTopologySpreadConstraints: ""}
_namespace:
  etcd: tenant-root
  seaweedfs: tenant-root
  host: acme.example.org
`))
	require.NoError(t, err)
	require.Equal(t, tenant.Platform{RootHost: "example.org", OIDCEnabled: true}, p)
	require.Equal(t, tenant.Services{Etcd: "tenant-root", SeaweedFS: "tenant-root", Host: "acme.example.org"}, s)
	_, _, err = tenant.ParseValues([]byte("_cluster: [1, 2"))
	require.ErrorIs(t, err, tenant.ErrMalformed)
}
