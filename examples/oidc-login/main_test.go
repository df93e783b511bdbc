package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// TestLocalDemo runs the embedded demo end to end: dex, two tenant
// apiservers, isolation, RBAC and the kubeconfig.
func TestLocalDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	var out bytes.Buffer
	o := &options{out: &out, outDir: t.TempDir(), timeout: cli.Timeout(15 * time.Minute)}
	require.NoError(t, o.run(context.Background()), out.String())
	got := out.String()
	require.NotContains(t, got, "UNEXPECTED")
	require.Contains(t, got, "alice@a.example [tenant-a-admin system:authenticated]")
	require.Contains(t, got, "audience [tenant-a-kubernetes-prod kubectl], want [tenant-b-kubernetes-prod]")
	require.Regexp(t, `victor\s+forbidden`, got)
	data, err := os.ReadFile(filepath.Join(o.outDir, "tenant-a-oidc.kubeconfig"))
	require.NoError(t, err)
	_, err = clientcmd.Load(data)
	require.NoError(t, err)
}

// TestRemote renders a tenant cluster's artefacts from a fake Cozystack
// management cluster (package tenanttest on a real apiserver), and applies
// its RBAC with --apply-rbac.
func TestRemote(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})
	k := tenant.NewKubernetes(ref.Cluster{Namespace: ref.RootNamespace, Name: "prod"}, tenant.KubernetesSpec{OIDC: tenant.OIDC{
		Mode:  tenant.OIDCSystem,
		Users: []tenant.OIDCUser{{Email: "alice@example.org", Role: tenant.RoleAdmin}, {Email: "bob@example.org", Role: tenant.RoleView}},
	}})
	_, err := p.Client().ApplyKubernetes(ctx, k)
	require.NoError(t, err)
	// The tenant cluster is the same apiserver, as far as this test goes.
	require.NoError(t, p.PublishKubeconfig(ctx, k.Ref(), env.RESTConfig()))

	var out bytes.Buffer
	o := &options{out: &out, outDir: t.TempDir(), timeout: cli.Timeout(10 * time.Minute), namespace: ref.RootNamespace, cluster: "prod", applyRBAC: true}
	o.target.Kubeconfig = env.KubeconfigPath()
	require.NoError(t, o.run(ctx), out.String())
	got := out.String()
	t.Log("\n" + got)
	require.Contains(t, got, "mode System, audience tenant-root-kubernetes-prod")
	require.Contains(t, got, "RBAC applied")

	for _, f := range []string{"authn-config-secret.yaml", "keycloak.yaml", "bindings.yaml", "oidc.kubeconfig"} {
		_, err := os.Stat(filepath.Join(o.outDir, f))
		require.NoError(t, err, f)
	}
	kc, err := os.ReadFile(filepath.Join(o.outDir, "oidc.kubeconfig"))
	require.NoError(t, err)
	require.Contains(t, string(kc), "--oidc-issuer-url=https://keycloak.example.org/realms/cozy")
	require.Contains(t, string(kc), "server: https://kubernetes-prod.")

	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=cozystack-oidc"})
	require.NoError(t, err)
	require.Len(t, crbs.Items, 2)

	// The tenantkit plugin instead of kubelogin.
	o.plugin = "tenantkit"
	o.applyRBAC = false
	require.NoError(t, o.run(ctx))
	kc, err = os.ReadFile(filepath.Join(o.outDir, "oidc.kubeconfig"))
	require.NoError(t, err)
	require.Contains(t, string(kc), "command: oidc-credential")
	require.Contains(t, string(kc), "--client-id=tenant-root-kubernetes-prod")

	// A second run finds nothing to do.
	out.Reset()
	o.applyRBAC = false
	require.NoError(t, o.run(ctx))
	require.True(t, strings.Contains(out.String(), "up to date (2 bindings)"), out.String())
}
