package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// requireResult checks a capability's row of the summary table.
func requireResult(t *testing.T, out, capability, result string) {
	t.Helper()
	require.Regexp(t, regexp.MustCompile(`(?m)^`+capability+`\s+`+result), out)
}

// TestQuickstart plays the whole embedded story through the code path of
// `make demo`, so the demo cannot rot unnoticed.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	var out, progress bytes.Buffer
	o := &options{out: &out, progress: &progress, timeout: cli.Timeout(25 * time.Minute)}
	err := o.run(context.Background())
	t.Log("\n" + out.String())
	require.NoError(t, err, progress.String())

	got := out.String()
	for _, c := range []string{"tenant", "oidc", "gpu", "backup", "etcd"} {
		requireResult(t, got, c, "ok: ")
	}
	require.Contains(t, got, "tenant: spec.addons.hami.enabled: addons.hami requires addons.gpuOperator", "the invalid spec is refused")
	requireResult(t, got, "oidc", `ok: alice@alpha.example accepted by tenant-alpha/prod, rejected by tenant-beta/prod`)
	require.Regexp(t, `tenant-beta/prod\s+401 Unauthorized\s+audience \[tenant-alpha-kubernetes-prod`, got)
	requireResult(t, got, "gpu", `ok: 4 pods placed by HAMi's rules; ledger: 69360/194560 MiB`)
	requireResult(t, got, "backup", `ok: namespace shop backed up \(\d+ items, verified in S3\), deleted, restored identical`)
	requireResult(t, got, "etcd", `ok: etcd-0 moved node-\w → node-d in .* under load: [1-9]\d* writes acknowledged \(\d+ failed\), none lost`)
}

// TestQuickstartRemote runs the read-only --kubeconfig tour against a fake
// Cozystack management cluster (package tenanttest on a real apiserver with
// simulated nodes and a real tenant etcd).
func TestQuickstartRemote(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1, Cluster: &localenv.ClusterConfig{}})
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Namespace: ref.RootNamespace})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	api, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: "remote-prod"})
	require.NoError(t, err)
	quickstartRemote(t, env, api.RESTConfig(), tn.DialContext)
}

// TestQuickstartRemote_kind runs the same tour against a kind cluster
// (one node, tenantkit's offline node image) as the management cluster,
// as a user would run the quickstart against theirs: the tenant etcd is
// the v1alpha1 layout's StatefulSet, real etcd pods on the kind node with
// volumes of its local-path StorageClass, and the tour reaches them the
// way it reaches a real tenant etcd, through the API's port-forward. The
// kind cluster also stands in for the tenant cluster (its admin kubeconfig
// is published as Kamaji would). Opt-in with TENANTKIT_KIND=1 (make
// test-kind).
func TestQuickstartRemote_kind(t *testing.T) {
	if os.Getenv("TENANTKIT_KIND") == "" {
		t.Skip("set TENANTKIT_KIND=1 to run the quickstart against a kind cluster")
	}
	env := localenv.StartT(t, localenv.Config{Provider: localenv.Kind})
	t.Logf("kind cluster %s created in %s", env.KindClusterName(), env.StartDuration().Round(time.Second))
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Namespace: ref.RootNamespace})
	t.Logf("tenant etcd (3 pods on the kind node) Ready in %s", tn.ReadyAfter.Round(time.Second))
	got := quickstartRemote(t, env, env.RESTConfig(), nil)
	for i := range 3 {
		require.Regexp(t, `(?m)^`+etcdlayout.PodName(i)+`\s+[0-9a-f]+\s+`+env.KindClusterName()+`-control-plane\s+voter`, got)
	}
}

// quickstartRemote runs the tour with --kubeconfig to env (the management
// cluster, holding the tenant etcd in tenant-root), with prod's admin
// kubeconfig pointing at tenantRC. dial reaches the tenant etcd's members;
// nil leaves the example's own (port-forward through the API). It
// returns the tour's output.
func quickstartRemote(t *testing.T, env *localenv.Env, tenantRC *rest.Config, dial etcdrelocate.DialFunc) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})

	spec := clusterSpec("alice@example.org")
	spec.OIDC.Users = append(spec.OIDC.Users, tenant.OIDCUser{Email: "bob@example.org", Role: tenant.RoleView})
	k, err := p.Client().ApplyKubernetes(ctx, tenant.NewKubernetes(ref.Cluster{Namespace: ref.RootNamespace, Name: "prod"}, spec))
	require.NoError(t, err)
	// A field from a newer Cozystack: read, listed, not a failure.
	dyn := dynamic.NewForConfigOrDie(env.RESTConfig())
	u, err := dyn.Resource(tenant.KubernetesResource).Namespace(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(u.Object, "on", "spec", "futureFeature"))
	_, err = dyn.Resource(tenant.KubernetesResource).Namespace(k.Namespace).Update(ctx, u, metav1.UpdateOptions{})
	require.NoError(t, err)

	require.NoError(t, p.PublishKubeconfig(ctx, k.Ref(), tenantRC))
	node := gpusharetest.NodeT(t, "gpu-1", gpusharetest.GPUs("x", 2, "NVIDIA L40S", 46068)...)
	_, err = kubernetes.NewForConfigOrDie(tenantRC).CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)

	var out, progress bytes.Buffer
	o := &options{out: &out, progress: &progress, timeout: cli.Timeout(10 * time.Minute),
		namespace: ref.RootNamespace, cluster: "prod", etcdDial: dial}
	o.target.Kubeconfig = env.KubeconfigPath()
	err = o.run(ctx)
	t.Log("\n" + out.String())
	require.NoError(t, err, progress.String())
	got := out.String()
	requireResult(t, got, "tenant", `ok: tenant-root/prod read; the chart's checks pass`)
	require.Regexp(t, `fields tenantkit does not know\s+spec.futureFeature`, got)
	requireResult(t, got, "oidc", `ok: mode System, audience tenant-root-kubernetes-prod`)
	require.Regexp(t, `user kubeconfig\s+server https://kubernetes-prod.example.org:443, issuer https://keycloak.example.org/realms/cozy, client tenant-root-kubernetes-prod`, got)
	requireResult(t, got, "gpu", `ok: 1 GPU nodes, 2 GPUs, 0 pods; 0/92136 MiB`)
	requireResult(t, got, "backup", `skipped: Velero is off`)
	requireResult(t, got, "etcd", `ok: tenant-root/etcd: 3 voters, all healthy; layout statefulset`)
	return got
}

func TestUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    options
	}{
		{"cluster flags without --kubeconfig", options{namespace: "tenant-acme", cluster: "prod"}},
		{"--kubeconfig without the cluster", options{target: cli.Target{Kubeconfig: "/nonexistent"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.timeout = cli.Timeout(time.Minute)
			err := tt.o.run(context.Background())
			var ee *cli.ExitError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, cli.ExitUsage, ee.Code)
		})
	}
}

// TestPlay checks the story runner: results, a skip, a failure that blocks
// the steps after a required one, the summary and the exit code.
func TestPlay(t *testing.T) {
	ok := func(context.Context) (string, error) { return "fine", nil }
	var out bytes.Buffer
	outcomes, err := play(context.Background(), &out, []step{
		{capability: "one", title: "works", run: ok},
		{capability: "two", title: "has nothing to do", run: func(context.Context) (string, error) { return "", skip("addon off") }},
		{capability: "three", title: "breaks", required: true, run: func(context.Context) (string, error) {
			return "", errors.New("broken\nacross lines")
		}},
		{capability: "four", title: "needs three", run: ok},
	})
	var ee *cli.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, cli.ExitFailure, ee.Code)
	require.Len(t, outcomes, 4)
	got := out.String()
	requireResult(t, got, "one", `ok: fine\s+\d`)
	requireResult(t, got, "two", `skipped: addon off`)
	requireResult(t, got, "three", `FAILED: broken across lines`)
	requireResult(t, got, "four", `skipped: needs three\s+-`)

	out.Reset()
	_, err = play(context.Background(), &out, []step{{capability: "one", run: ok}})
	require.NoError(t, err)
}
