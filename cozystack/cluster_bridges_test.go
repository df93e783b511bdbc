package cozystack_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/backup"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// TestCluster_bridges checks that the handle hands the other packages what
// they need, from nothing but the management cluster and the cluster's
// reference: OIDC renderer inputs and RBAC inside a real tenant apiserver,
// Velero settings from a Bucket's Secret, a GPU ledger of the tenant
// cluster, the etcd relocation request.
func TestCluster_bridges(t *testing.T) {
	env := testEnv(t)
	ctx := t.Context()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})
	ns, err := p.CreateTenant(ctx, tenant.NewTenant(ref.RootNamespace, "bridges", tenant.TenantSpec{Etcd: true}))
	require.NoError(t, err)
	c := p.Client()
	spec := tenant.KubernetesSpec{OIDC: tenant.OIDC{Mode: tenant.OIDCSystem, Users: []tenant.OIDCUser{
		{Email: "alice@acme.example", Role: tenant.RoleAdmin}, {Email: "bob@acme.example", Role: tenant.RoleView}}}}
	k, err := c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "prod"}, spec))
	require.NoError(t, err)
	cl, err := c.Cluster(k.Ref())
	require.NoError(t, err)
	tenantAPI, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: "bridges-prod"})
	require.NoError(t, err)
	require.NoError(t, p.PublishKubeconfig(ctx, k.Ref(), tenantAPI.RESTConfig()))
	tenantCS := kubernetes.NewForConfigOrDie(tenantAPI.RESTConfig())
	mgmt := kubernetes.NewForConfigOrDie(env.RESTConfig())

	t.Run("OIDC renderer inputs", func(t *testing.T) {
		as, err := cl.AuthenticationSpec(ctx)
		require.NoError(t, err)
		require.Equal(t, "example.org", as.RootHost)
		auth, err := oidc.RenderAuthentication(as)
		require.NoError(t, err)
		require.Equal(t, "https://keycloak.example.org/realms/cozy", auth.Config.JWT[0].Issuer.URL)

		ks, err := cl.OIDCKubeconfigSpec(ctx)
		require.NoError(t, err)
		require.Equal(t, "https://kubernetes-prod.bridges.example.org:443", ks.Server)
		require.Equal(t, tenantAPI.CAPEM, ks.CertificateAuthority)
		require.Equal(t, "https://keycloak.example.org/realms/cozy", ks.IssuerURL)
		kc, err := oidc.RenderKubeconfig(ks)
		require.NoError(t, err)
		require.Equal(t, "kubernetes-prod", kc.Config.CurrentContext)
	})

	t.Run("RBAC for spec.oidc.users inside the tenant cluster", func(t *testing.T) {
		plan, err := cl.SyncOIDCUsers(ctx)
		require.NoError(t, err)
		require.Len(t, plan.Changes, 2)
		require.Equal(t, []string{"alice@acme.example", "bob@acme.example"}, bindingSubjects(t, tenantCS, k.Ref()))

		k.Spec.OIDC.Users = k.Spec.OIDC.Users[:1]
		_, err = c.ApplyKubernetes(ctx, k)
		require.NoError(t, err)
		_, err = cl.SyncOIDCUsers(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"alice@acme.example"}, bindingSubjects(t, tenantCS, k.Ref()), "bob was pruned")

		plan, err = cl.SyncOIDCUsers(ctx)
		require.NoError(t, err)
		require.True(t, plan.Empty(), "a second sync changes nothing")
	})

	t.Run("RBAC in mode None: left as it is, as the chart's Job does; pruned on request", func(t *testing.T) {
		system := k.Spec.OIDC
		k.Spec.OIDC = tenant.OIDC{Mode: tenant.OIDCNone, Users: system.Users}
		_, err := c.ApplyKubernetes(ctx, k)
		require.NoError(t, err)
		plan, err := cl.SyncOIDCUsers(ctx)
		require.NoError(t, err)
		require.True(t, plan.Empty())
		require.NotEmpty(t, plan.Skipped)
		require.Contains(t, plan.String(), "left as it is")
		require.Equal(t, []string{"alice@acme.example"}, bindingSubjects(t, tenantCS, k.Ref()), "the binding stays")

		plan, err = cl.PruneOIDCUsers(ctx)
		require.NoError(t, err)
		require.Len(t, plan.Changes, 1)
		require.Equal(t, oidc.ActionDelete, plan.Changes[0].Action)
		require.Empty(t, bindingSubjects(t, tenantCS, k.Ref()), "pruned on request")

		k.Spec.OIDC = system
		_, err = c.ApplyKubernetes(ctx, k)
		require.NoError(t, err)
		_, err = cl.SyncOIDCUsers(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"alice@acme.example"}, bindingSubjects(t, tenantCS, k.Ref()), "back to System mode")
	})

	t.Run("CustomConfig issuer from the tenant's Secret", func(t *testing.T) {
		_, err := mgmt.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "my-authn"},
			StringData: map[string]string{ref.OIDCAuthnConfigKey: `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://idp.acme.example
    audiences: [acme-prod]
  claimMappings:
    username: {claim: email, prefix: ""}
`}}, metav1.CreateOptions{})
		require.NoError(t, err)
		byo, err := c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "byo"}, tenant.KubernetesSpec{OIDC: tenant.OIDC{
			Mode: tenant.OIDCCustomConfig, CustomConfig: tenant.CustomConfig{SecretRef: tenant.SecretRef{Name: "my-authn"}}}}))
		require.NoError(t, err)
		require.NoError(t, p.PublishKubeconfig(ctx, byo.Ref(), tenantAPI.RESTConfig()))
		bcl, err := c.Cluster(byo.Ref())
		require.NoError(t, err)
		ks, err := bcl.OIDCKubeconfigSpec(ctx)
		require.NoError(t, err)
		require.Equal(t, "https://idp.acme.example", ks.IssuerURL)
		require.Equal(t, "acme-prod", ks.ClientID)

		off, err := c.ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ns, Name: "plain"}, tenant.KubernetesSpec{}))
		require.NoError(t, err)
		ocl, err := c.Cluster(off.Ref())
		require.NoError(t, err)
		_, err = ocl.OIDCKubeconfigSpec(ctx)
		require.ErrorIs(t, err, oidc.ErrInvalidConfig)
	})

	t.Run("Velero settings from a Bucket", func(t *testing.T) {
		_, err := cl.VeleroValues(ctx, "backups", "velero", backup.ValuesOptions{})
		require.ErrorIs(t, err, backup.ErrSecretNotFound)
		_, err = mgmt.CoreV1().Secrets(ns).Create(ctx, backup.CredentialsSecret(backup.BucketRef{Namespace: ns, Bucket: "backups", User: "velero"},
			backup.Credentials{Bucket: "bucket-91bbb59f", Endpoint: "s3.example.org", AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "not-a-real-secret"}), metav1.CreateOptions{})
		require.NoError(t, err)

		stored, err := cl.EnableVelero(ctx, "backups", "velero", backup.ValuesOptions{})
		require.NoError(t, err)
		v := stored.Spec.Addons.Velero
		require.True(t, v.Enabled)
		bsl := v.ValuesOverride["velero"].(map[string]any)["configuration"].(map[string]any)["backupStorageLocation"].([]any)[0].(map[string]any)
		require.Equal(t, "bucket-91bbb59f", bsl["bucket"])
		require.Equal(t, "https://s3.example.org", bsl["config"].(map[string]any)["s3Url"])
		require.Equal(t, []tenant.OIDCUser{{Email: "alice@acme.example", Role: tenant.RoleAdmin}}, stored.Spec.OIDC.Users, "the rest of the spec is kept")

		want, err := backup.AddonValues(backup.Credentials{Bucket: "bucket-91bbb59f", Endpoint: "s3.example.org",
			AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "not-a-real-secret"}, backup.ValuesOptions{})
		require.NoError(t, err)
		override, err := want.Override()
		require.NoError(t, err)
		require.Equal(t, override, v.ValuesOverride, "what the API stores is what backup renders")

		vc, err := cl.VeleroClient(ctx, backup.Config{})
		require.NoError(t, err)
		require.Equal(t, "cozy-velero", vc.Namespace())
	})

	t.Run("a GPU ledger of the tenant cluster, with the cluster's HAMi policies", func(t *testing.T) {
		stored, err := cl.EnableHAMi(ctx, gpushare.HAMiSettings{NodePolicy: gpushare.NodeSpread})
		require.NoError(t, err)
		require.True(t, stored.Spec.Addons.GPUOperator.Enabled && stored.Spec.Addons.HAMi.Enabled)
		settings, err := cl.HAMiSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, gpushare.NodeSpread, settings.NodePolicy, "read back through the API")

		node := gpusharetest.NodeT(t, "gpu-1", gpusharetest.GPUs("a", 2, "NVIDIA L40S", 46068)...)
		_, err = tenantCS.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		require.NoError(t, err)
		lctx, stop := context.WithCancel(ctx)
		defer stop()
		l, err := cl.GPULedger(lctx, gpushare.Config{GPUPolicy: gpushare.GPUBinpack})
		require.NoError(t, err)
		require.Equal(t, gpushare.NodeSpread, l.Config().NodePolicy, "from the application")
		require.Equal(t, gpushare.GPUBinpack, l.Config().GPUPolicy, "the caller's setting wins")
		s := l.Summary()
		require.Equal(t, 1, s.Nodes)
		require.Equal(t, 2, s.GPUs)
		require.EqualValues(t, 2*46068, s.Capacity.MemoryMiB)
	})

	t.Run("the tenant etcd for relocation", func(t *testing.T) {
		req, err := cl.EtcdRelocation(ctx, "etcd-1", "node-b")
		require.NoError(t, err)
		require.Equal(t, etcdrelocate.Request{Namespace: ns, Member: "etcd-1", TargetNode: "node-b"}, req)
		r, err := cl.Relocator(etcdrelocate.Config{})
		require.NoError(t, err)
		require.NotNil(t, r)
	})
}

// bindingSubjects lists the subjects of the OIDC ClusterRoleBindings of
// c inside the tenant cluster, sorted.
func bindingSubjects(t *testing.T, cs kubernetes.Interface, c ref.Cluster) []string {
	t.Helper()
	r, err := oidc.NewRBAC(c, oidc.RBACConfig{Clientset: cs})
	require.NoError(t, err)
	list, err := r.List(t.Context())
	require.NoError(t, err)
	var out []string
	for _, b := range list {
		require.Equal(t, oidc.BindingName(c.Release(), b.Subjects[0].Name), b.Name)
		out = append(out, b.Subjects[0].Name)
	}
	slices.Sort(out)
	return out
}
