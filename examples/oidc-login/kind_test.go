package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/cozystack/cozystacktest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// noIssuers is the kind apiserver's first authentication configuration:
// no JWT issuer yet (dex starts after the cluster).
const noIssuers = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"

// kindUser is a dex user of TestRemote_kind.
type kindUser struct {
	email  string
	groups []string
}

var (
	kindAlice   = kindUser{"alice@example.org", []string{"tenant-root-admin"}} // role admin
	kindBob     = kindUser{"bob@example.org", []string{"tenant-root-view"}}    // role view
	kindCarol   = kindUser{"carol@example.org", []string{"tenant-root-use"}}   // a tenant member without a binding
	kindMallory = kindUser{"mallory@example.org", []string{"tenant-x-admin"}}  // another tenant's member
)

// TestRemote_kind runs the remote mode against a kind cluster whose
// kube-apiserver reads the AuthenticationConfiguration the example renders
// for the tenant cluster, and signs users in against it: the cluster is
// the management cluster (the platform's objects) and the tenant cluster
// (its admin kubeconfig is published for itself), as in TestRemote.
//
// The tenant's issuer is localenv's dex, listening on this host's address
// on the cluster's docker network, which the node reaches. The tenant
// trusts it with mode CustomConfig: System mode's issuer is the platform's
// Keycloak, https://keycloak.<root host>/realms/cozy with the system roots,
// which no local server can be without DNS and trust-store changes. The
// inline configuration is the text System mode renders for dex (the
// chart's audience, claim mappings and tenant groups gate), which the
// example stores verbatim. Opt-in with TENANTKIT_KIND=1.
func TestRemote_kind(t *testing.T) {
	if os.Getenv("TENANTKIT_KIND") == "" {
		t.Skip("set TENANTKIT_KIND=1 to run the example against a kind cluster")
	}
	begin := time.Now()
	env := localenv.StartT(t, localenv.Config{Provider: localenv.Kind,
		KindCluster: localenv.KindConfig{AuthenticationConfig: []byte(noIssuers)}})
	t.Logf("kind cluster %s Ready in %s", env.KindClusterName(), time.Since(begin).Round(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	c := ref.Cluster{Namespace: ref.RootNamespace, Name: "prod"}
	other := ref.Cluster{Namespace: ref.RootNamespace, Name: "staging"}
	var users []localenv.DexUser
	for _, u := range []kindUser{kindAlice, kindBob, kindCarol, kindMallory} {
		users = append(users, localenv.DexUser{Email: u.email, Password: demoPassword, Groups: u.groups})
	}
	dex, err := env.StartDex(ctx, localenv.DexConfig{Clients: []string{c.ClientID(), other.ClientID()}, Users: users})
	require.NoError(t, err)
	host, err := env.KindHostAddress(ctx)
	require.NoError(t, err)
	require.Contains(t, dex.IssuerURL, "https://"+host.String()+":", "dex listens on the cluster's network")
	own, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: c, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
		IssuerURL: dex.IssuerURL, CertificateAuthority: dex.CAPEM, NewestAPIVersion: true})
	require.NoError(t, err)

	p := cozystacktest.NewPlatformT(t, env.RESTConfig(), cozystacktest.PlatformConfig{OIDCEnabled: true})
	k := tenant.NewKubernetes(c, tenant.KubernetesSpec{OIDC: tenant.OIDC{
		Mode:         tenant.OIDCCustomConfig,
		CustomConfig: tenant.CustomConfig{Config: string(own.YAML)},
		Users:        []tenant.OIDCUser{{Email: kindAlice.email, Role: tenant.RoleAdmin}, {Email: kindBob.email, Role: tenant.RoleView}},
	}})
	_, err = p.Client().ApplyKubernetes(ctx, k)
	require.NoError(t, err)
	require.NoError(t, p.PublishKubeconfig(ctx, k.Ref(), env.RESTConfig()))

	var out bytes.Buffer
	o := &options{out: &out, outDir: t.TempDir(), timeout: cli.Timeout(10 * time.Minute), namespace: c.Namespace, cluster: c.Name, applyRBAC: true}
	o.target.Kubeconfig = env.KubeconfigPath()
	require.NoError(t, o.run(ctx), out.String())
	t.Log("\n" + out.String())
	require.Contains(t, out.String(), "mode CustomConfig, audience "+c.ClientID())
	require.Contains(t, out.String(), "RBAC applied")
	kc, err := os.ReadFile(filepath.Join(o.outDir, "oidc.kubeconfig"))
	require.NoError(t, err)
	require.Contains(t, string(kc), "--oidc-issuer-url="+dex.IssuerURL)

	// The kind apiserver reads what the example rendered.
	data, err := os.ReadFile(filepath.Join(o.outDir, "authn-config-secret.yaml"))
	require.NoError(t, err)
	var secret corev1.Secret
	require.NoError(t, yaml.Unmarshal(data, &secret))
	rendered := secret.Data[ref.OIDCAuthnConfigKey]
	require.Equal(t, own.YAML, rendered, "the example stores the tenant's configuration verbatim")
	reload := time.Now()
	require.NoError(t, env.SetKindAuthenticationConfig(ctx, rendered))
	t.Logf("kind apiserver reloaded the rendered configuration in %s", time.Since(reload).Round(time.Second))

	signIn(t, ctx, env, dex, c, other, rendered)
	t.Logf("TestRemote_kind: %s in all", time.Since(begin).Round(time.Second))
}

// signIn calls the kind apiserver with dex's ID tokens.
func signIn(t *testing.T, ctx context.Context, env *localenv.Env, dex *localenv.Dex, c, other ref.Cluster, rendered []byte) {
	cfg, err := oidc.ParseAuthenticationConfiguration(rendered)
	require.NoError(t, err)
	require.Len(t, cfg.JWT, 1)
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: cfg.JWT[0]})
	require.NoError(t, err)
	defer v.Close()
	token := func(u kindUser, audience string) string {
		tok, err := dex.PasswordToken(ctx, u.email, demoPassword, audience)
		require.NoError(t, err)
		return tok
	}
	client := func(tok string) *kubernetes.Clientset {
		rc := rest.AnonymousClientConfig(env.RESTConfig())
		rc.BearerToken = tok
		cs, err := kubernetes.NewForConfig(rc)
		require.NoError(t, err)
		return cs
	}
	review := func(tok string) (authenticationv1.UserInfo, error) {
		r, err := client(tok).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return authenticationv1.UserInfo{}, err
		}
		return r.Status.UserInfo, nil
	}

	// The apiserver names each tenant member as the rendered claim mappings
	// say (username from email, groups from groups, no prefixes): what
	// package oidc's Verifier answers for the same configuration.
	for _, u := range []kindUser{kindAlice, kindBob, kindCarol} {
		tok := token(u, c.ClientID())
		want, err := v.Verify(ctx, tok)
		require.NoError(t, err, u.email)
		require.Equal(t, u.email, want.Username)
		got, err := review(tok)
		require.NoError(t, err, u.email)
		require.Equal(t, want.Username, got.Username)
		require.ElementsMatch(t, append(append([]string{}, want.Groups...), "system:authenticated"), got.Groups, u.email)
		t.Logf("SelfSubjectReview: %s %v", got.Username, got.Groups)
	}

	// Refused with 401: another cluster's audience, kubectl's alone, and a
	// member of another tenant (the tenant groups gate).
	for name, tok := range map[string]string{
		"alice, audience " + other.ClientID(): token(kindAlice, other.ClientID()),
		"alice, audience kubectl only":        token(kindAlice, ""),
		"mallory, tenant-x-admin":             token(kindMallory, c.ClientID()),
	} {
		_, err := review(tok)
		require.True(t, apierrors.IsUnauthorized(err), "%s: %v", name, err)
		_, verr := v.Verify(ctx, tok)
		require.Error(t, verr, name)
		t.Logf("%s: 401 (%v)", name, verr)
	}

	// The bindings the example applied: admin is cluster-admin, view reads
	// but neither writes nor reads Secrets, a member without a binding is
	// forbidden everything.
	alice, bob, carol := client(token(kindAlice, c.ClientID())), client(token(kindBob, c.ClientID())), client(token(kindCarol, c.ClientID()))
	_, err = alice.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "oidc-alice"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = alice.CoreV1().ConfigMaps("oidc-alice").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "note"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = bob.CoreV1().ConfigMaps("oidc-alice").Get(ctx, "note", metav1.GetOptions{})
	require.NoError(t, err, "view reads")
	_, err = bob.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "view lists pods")
	forbidden := func(what string, err error, user string) {
		t.Helper()
		require.True(t, apierrors.IsForbidden(err), "%s: %v", what, err)
		require.Contains(t, err.Error(), `User "`+user+`"`)
	}
	_, err = bob.CoreV1().ConfigMaps("oidc-alice").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bob"}}, metav1.CreateOptions{})
	forbidden("view creates a ConfigMap", err, kindBob.email)
	_, err = bob.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	forbidden("view lists Secrets", err, kindBob.email)
	_, err = carol.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	forbidden("no binding lists pods", err, kindCarol.email)
}
