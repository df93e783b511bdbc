package cozystack_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cozystack"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
	"github.com/cozystack/tenantkit/tenant/tenanttest"
)

func TestClient_kubernetesThroughTheAPI(t *testing.T) {
	env := testEnv(t)
	ctx := t.Context()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})
	ns, err := p.CreateTenant(ctx, tenant.NewTenant(ref.RootNamespace, "apitrip", tenant.TenantSpec{Etcd: true}))
	require.NoError(t, err)
	c := p.Client()
	dyn := dynamic.NewForConfigOrDie(env.RESTConfig())

	k := tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, tenanttest.FullSpec())
	k.Labels = map[string]string{"team": "platform"}

	t.Run("create, read back, list", func(t *testing.T) {
		stored, err := c.ApplyKubernetes(ctx, k)
		require.NoError(t, err)
		requireSemanticEqual(t, k.Spec, stored.Spec)
		require.NotEmpty(t, stored.UID)

		got, err := c.Kubernetes(ctx, k.Ref())
		require.NoError(t, err)
		requireSemanticEqual(t, k.Spec, got.Spec)
		require.Equal(t, "platform", got.Labels["team"])

		list, err := c.ListKubernetes(ctx, ns)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, "prod", list[0].Name)
	})

	t.Run("apply again replaces the spec and merges labels", func(t *testing.T) {
		u, err := dyn.Resource(tenant.KubernetesResource).Namespace(ns).Get(ctx, "prod", metav1.GetOptions{})
		require.NoError(t, err)
		u.SetLabels(map[string]string{"team": "platform", "cozystack.io/owned": "yes"})
		_, err = dyn.Resource(tenant.KubernetesResource).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{})
		require.NoError(t, err)

		next := tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, tenant.KubernetesSpec{Version: "v1.35", Addons: tenant.Addons{Velero: tenant.Addon{Enabled: true}}})
		next.Labels = map[string]string{"tier": "gold"}
		stored, err := c.ApplyKubernetes(ctx, next)
		require.NoError(t, err)
		requireSemanticEqual(t, next.Spec, stored.Spec)
		require.Equal(t, map[string]string{"team": "platform", "cozystack.io/owned": "yes", "tier": "gold"}, stored.Labels)
	})

	t.Run("an invalid spec is refused before it is sent", func(t *testing.T) {
		bad := tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, tenant.KubernetesSpec{Addons: tenant.Addons{HAMi: tenant.Addon{Enabled: true}}})
		_, err := c.ApplyKubernetes(ctx, bad)
		require.ErrorIs(t, err, tenant.ErrHAMiRequiresGPUOperator)
		got, err := c.Kubernetes(ctx, k.Ref())
		require.NoError(t, err)
		require.True(t, got.Spec.Addons.Velero.Enabled, "stored object unchanged")
	})

	t.Run("status written by Cozystack is read", func(t *testing.T) {
		u, err := dyn.Resource(tenant.KubernetesResource).Namespace(ns).Get(ctx, "prod", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(u.Object, map[string]any{
			"version": "1.6.2",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled",
				"message": "", "lastTransitionTime": "2026-08-01T00:00:00Z"}},
			"futureStatusField": int64(1),
		}, "status"))
		_, err = dyn.Resource(tenant.KubernetesResource).Namespace(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		require.NoError(t, err)
		got, err := c.Kubernetes(ctx, k.Ref())
		require.NoError(t, err)
		require.True(t, got.Status.Ready())
		require.Equal(t, "1.6.2", got.Status.Version)
	})

	t.Run("fields this package does not know are read and kept", func(t *testing.T) {
		// A newer Cozystack adds fields: at the top of the spec, inside an
		// addon, inside a node group.
		u, err := dyn.Resource(tenant.KubernetesResource).Namespace(ns).Get(ctx, "prod", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(u.Object, "v2", "spec", "futureField"))
		require.NoError(t, unstructured.SetNestedField(u.Object, "daily", "spec", "addons", "velero", "schedule"))
		require.NoError(t, unstructured.SetNestedField(u.Object, map[string]any{"md0": map[string]any{"spot": true}}, "spec", "nodeGroups"))
		_, err = dyn.Resource(tenant.KubernetesResource).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{})
		require.NoError(t, err)

		got, err := c.Kubernetes(ctx, k.Ref())
		require.NoError(t, err, "the object stays readable")
		require.Equal(t, []string{"spec.addons.velero.schedule", "spec.futureField", "spec.nodeGroups.md0.spot"}, got.UnknownFields())
		list, err := c.ListKubernetes(ctx, ns)
		require.NoError(t, err)
		require.Len(t, list, 1)

		// Read, modify, write: the unknown fields survive.
		got.Spec.Host = "prod.example.org"
		stored, err := c.ApplyKubernetes(ctx, got)
		require.NoError(t, err)
		require.Equal(t, "prod.example.org", stored.Spec.Host)
		require.Equal(t, got.UnknownFields(), stored.UnknownFields())
		u, err = dyn.Resource(tenant.KubernetesResource).Namespace(ns).Get(ctx, "prod", metav1.GetOptions{})
		require.NoError(t, err)
		v, _, _ := unstructured.NestedString(u.Object, "spec", "futureField")
		require.Equal(t, "v2", v, "the unknown field survived")
		spot, _, _ := unstructured.NestedBool(u.Object, "spec", "nodeGroups", "md0", "spot")
		require.True(t, spot)

		// A spec written from scratch replaces what the model knows and
		// keeps the rest, except under a node group the caller dropped.
		stored, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, tenant.KubernetesSpec{Version: "v1.34"}))
		require.NoError(t, err)
		require.Empty(t, stored.Spec.Host)
		require.False(t, stored.Spec.Addons.Velero.Enabled)
		require.Equal(t, []string{"spec.addons.velero.schedule", "spec.futureField"}, stored.UnknownFields())
	})

	t.Run("delete is idempotent", func(t *testing.T) {
		require.NoError(t, c.DeleteKubernetes(ctx, k.Ref()))
		_, err := c.Kubernetes(ctx, k.Ref())
		require.ErrorIs(t, err, cozystack.ErrNotFound)
		require.NoError(t, c.DeleteKubernetes(ctx, k.Ref()))
	})
}

func TestClient_platformRules(t *testing.T) {
	env := testEnv(t)
	ctx := t.Context()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})
	c := p.Client()
	system := tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}}

	// A tenant namespace whose platform has OIDC off, as Cozystack's
	// cozystack-values Secret tells it.
	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-nooidc"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	sec, err := tenant.ValuesSecretFor("tenant-nooidc", tenant.Platform{RootHost: "example.org"}, tenant.Services{Etcd: "tenant-root"})
	require.NoError(t, err)
	_, err = cs.CoreV1().Secrets("tenant-nooidc").Create(ctx, sec, metav1.CreateOptions{})
	require.NoError(t, err)

	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-nooidc", Name: "a"}, system))
	require.ErrorIs(t, err, tenant.ErrOIDCPlatformDisabled)

	ns, err := p.CreateTenant(ctx, tenant.NewTenant(ref.RootNamespace, "withoidc", tenant.TenantSpec{}))
	require.NoError(t, err)
	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "a"}, system))
	require.NoError(t, err, "platform OIDC is on for this tenant")

	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-missing", Name: "a"}, tenant.KubernetesSpec{}))
	require.Error(t, err, "the namespace does not exist")
	_, err = c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: "default", Name: "a"}, tenant.KubernetesSpec{}))
	require.ErrorIs(t, err, ref.ErrInvalidName)

	skip, err := cozystack.NewForConfig(env.RESTConfig(), cozystack.Config{SkipValidation: true})
	require.NoError(t, err)
	_, err = skip.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: "tenant-nooidc", Name: "b"}, system))
	require.NoError(t, err, "SkipValidation leaves the check to the chart")
}

func TestClient_tenantsAndValues(t *testing.T) {
	env := testEnv(t)
	ctx := t.Context()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{RootHost: "cozy.example"})
	c := p.Client()

	acme := tenant.NewTenant(ref.RootNamespace, "hier", tenant.TenantSpec{Etcd: true, Gateway: new(true)})
	acmeNS, err := p.CreateTenant(ctx, acme)
	require.NoError(t, err)
	dev := tenant.NewTenant(acmeNS, "dev", tenant.TenantSpec{SeaweedFS: true, Host: "dev.example"})
	devNS, err := p.CreateTenant(ctx, dev)
	require.NoError(t, err)
	require.Equal(t, "tenant-hier-dev", devNS)

	got, err := c.Tenant(ctx, acmeNS, "dev")
	require.NoError(t, err)
	requireSemanticEqual(t, dev.Spec, got.Spec)

	plat, s, err := c.Values(ctx, devNS)
	require.NoError(t, err)
	require.Equal(t, tenant.Platform{RootHost: "cozy.example", ClusterDomain: "cozy.local"}, plat)
	require.Equal(t, tenant.Services{Etcd: "tenant-hier", Ingress: "tenant-root", Monitoring: "tenant-root",
		SeaweedFS: "tenant-hier-dev", Host: "dev.example"}, s)

	// Without the values Secret, the namespace labels still say it.
	cs := kubernetes.NewForConfigOrDie(env.RESTConfig())
	require.NoError(t, cs.CoreV1().Secrets(devNS).Delete(ctx, tenant.ValuesSecret, metav1.DeleteOptions{}))
	plat, fromLabels, err := c.Values(ctx, devNS)
	require.NoError(t, err)
	require.Equal(t, tenant.Platform{}, plat)
	require.Equal(t, s, fromLabels)

	_, _, err = c.Values(ctx, "tenant-nothere")
	require.ErrorIs(t, err, cozystack.ErrNotFound)

	require.NoError(t, c.DeleteTenant(ctx, acmeNS, "dev"))
	_, err = c.Tenant(ctx, acmeNS, "dev")
	require.ErrorIs(t, err, cozystack.ErrNotFound)
	require.NoError(t, c.DeleteTenant(ctx, acmeNS, "dev"))
}
