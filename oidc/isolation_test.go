package oidc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

// TestTwoTenantClusters is the isolation story on real servers: dex as the
// shared IdP, two kube-apiservers (tenant A and tenant B) started with the
// AuthenticationConfiguration this package renders.
func TestTwoTenantClusters(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1, SkipAPIServer: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	a := ref.Cluster{Namespace: "tenant-a", Name: "prod"}
	b := ref.Cluster{Namespace: "tenant-b", Name: "prod"}
	const pw = "correct horse battery staple"
	dex, err := env.StartDex(ctx, localenv.DexConfig{
		Clients: []string{a.ClientID(), b.ClientID()},
		Users: []localenv.DexUser{
			{Email: "alice@a.example", Password: pw, Groups: []string{"tenant-a-admin"}},
			{Email: "victor@a.example", Password: pw, Groups: []string{"tenant-a-view"}},
			{Email: "mallory@x.example", Password: pw, Groups: []string{"tenant-x-admin"}},
			{Email: "eve@a.example", Password: pw, Groups: []string{"tenant-a-admin"}, EmailUnverified: true},
		},
	})
	require.NoError(t, err)

	// A gets apiserver.config.k8s.io/v1 (NewestAPIVersion), B the chart's
	// v1beta1: kube-apiserver 1.37 loads both.
	start := func(c ref.Cluster, version tenant.Version) *localenv.APIServer {
		auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: c, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
			IssuerURL: dex.IssuerURL, CertificateAuthority: dex.CAPEM, KubernetesVersion: version, NewestAPIVersion: version == "v1.37"})
		require.NoError(t, err)
		path := filepath.Join(env.Dir(), c.Namespace+"-authn.yaml")
		require.NoError(t, os.WriteFile(path, auth.YAML, 0o600))
		api, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: c.Namespace,
			ExtraArgs: []string{"--authentication-config=" + path}})
		require.NoError(t, err)
		return api
	}
	apiA, apiB := start(a, "v1.37"), start(b, "v1.33")

	token := func(email, audience string) string {
		tok, err := dex.PasswordToken(ctx, email, pw, audience)
		require.NoError(t, err)
		return tok
	}
	alice := token("alice@a.example", a.ClientID())

	// A accepts alice's token for A (once its authenticator has discovered
	// dex) and sees her email and groups.
	var user authenticationv1.UserInfo
	require.Eventually(t, func() bool {
		user, err = oidc.WhoAmI(ctx, apiA.RESTConfig(), alice)
		return err == nil
	}, 60*time.Second, 250*time.Millisecond, "A never accepted the token: %v", err)
	require.Equal(t, "alice@a.example", user.Username)
	require.Contains(t, user.Groups, "tenant-a-admin")
	require.Contains(t, user.Groups, "system:authenticated")

	// B refuses it: the audience is A's. Our Verifier says why.
	_, err = oidc.WhoAmI(ctx, apiB.RESTConfig(), alice)
	require.True(t, apierrors.IsUnauthorized(err), "B: %v", err)
	vB := verifierFor(t, b, dex)
	_, err = vB.Verify(ctx, alice)
	var audErr *oidc.AudienceError
	require.ErrorAs(t, err, &audErr)
	require.Equal(t, []string{a.ClientID(), localenv.DexKubectlClient}, audErr.Got)

	// A user outside the tenant groups is stopped by A's CEL gate, and so
	// is the auth-code + PKCE login of dex's mock user (group "authors").
	vA := verifierFor(t, a, dex)
	for _, tok := range []string{token("mallory@x.example", a.ClientID()), authCode(ctx, t, dex, a.ClientID())} {
		_, err = oidc.WhoAmI(ctx, apiA.RESTConfig(), tok)
		require.True(t, apierrors.IsUnauthorized(err), "A: %v", err)
		_, err = vA.Verify(ctx, tok)
		require.ErrorIs(t, err, oidc.ErrRuleFailed)
	}
	// email_verified: false is refused by both.
	eve := token("eve@a.example", a.ClientID())
	_, err = oidc.WhoAmI(ctx, apiA.RESTConfig(), eve)
	require.True(t, apierrors.IsUnauthorized(err), "A: %v", err)
	_, err = vA.Verify(ctx, eve)
	require.ErrorIs(t, err, oidc.ErrEmailNotVerified)
	verified, err := vA.Verify(ctx, alice)
	require.NoError(t, err)
	require.Equal(t, user.Username, verified.Username)

	t.Run("rbac", func(t *testing.T) { testRBAC(ctx, t, apiA, a, alice, token("victor@a.example", a.ClientID())) })
	t.Run("kubeconfig", func(t *testing.T) { testKubeconfig(ctx, t, apiA, a, dex, alice) })
}

// testRBAC applies bindings with the package and checks they take effect:
// admin lists secrets, view may not, and pruning revokes.
func testRBAC(ctx context.Context, t *testing.T, api *localenv.APIServer, c ref.Cluster, admin, viewer string) {
	listSecrets := func(tok string) error {
		_, err := clientWithToken(t, api, tok).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
		return err
	}
	require.True(t, apierrors.IsForbidden(listSecrets(admin)), "no binding yet")
	r, err := oidc.NewRBACForConfig(api.RESTConfig(), c, oidc.RBACConfig{})
	require.NoError(t, err)
	users := []tenant.OIDCUser{{Email: "alice@a.example", Role: tenant.RoleAdmin}, {Email: "victor@a.example", Role: tenant.RoleView}}
	plan, err := r.Sync(ctx, users)
	require.NoError(t, err)
	require.Len(t, plan.Changes, 2)
	require.Eventually(t, func() bool { return listSecrets(admin) == nil }, 20*time.Second, 100*time.Millisecond)
	require.True(t, apierrors.IsForbidden(listSecrets(viewer)))

	// Re-running changes nothing; dropping alice prunes her binding.
	plan, err = r.Sync(ctx, users)
	require.NoError(t, err)
	require.True(t, plan.Empty(), plan.String())
	plan, err = r.Sync(ctx, users[1:])
	require.NoError(t, err)
	require.Equal(t, oidc.ActionDelete, plan.Changes[0].Action)
	require.Eventually(t, func() bool { return apierrors.IsForbidden(listSecrets(admin)) }, 20*time.Second, 100*time.Millisecond)
}

// testKubeconfig drives the rendered kubeconfig through client-go's exec
// machinery. The plugin is this test binary standing in for kubectl
// oidc-login (see TestMain): it checks the arguments kubelogin would get
// and prints the token.
func testKubeconfig(ctx context.Context, t *testing.T, api *localenv.APIServer, c ref.Cluster, dex *localenv.Dex, token string) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token), 0o600))
	t.Setenv(fakeKubeloginEnv, tokenFile)
	t.Setenv(fakeKubeloginWant, dex.IssuerURL+" "+c.ClientID())
	kc, err := oidc.RenderKubeconfig(oidc.KubeconfigSpec{Cluster: c, Server: api.URL, CertificateAuthority: api.CAPEM,
		IssuerURL: dex.IssuerURL, IssuerCertificateAuthority: dex.CAPEM, Command: os.Args[0]})
	require.NoError(t, err)
	rc, err := clientcmd.RESTConfigFromKubeConfig(kc.YAML)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, "alice@a.example", review.Status.UserInfo.Username)
}

func verifierFor(t *testing.T, c ref.Cluster, dex *localenv.Dex) *oidc.Verifier {
	t.Helper()
	v, err := oidc.NewVerifier(context.Background(), oidc.VerifierConfig{JWT: oidc.JWTAuthenticator(c, dex.IssuerURL, dex.CAPEM)})
	require.NoError(t, err)
	return v
}

func authCode(ctx context.Context, t *testing.T, dex *localenv.Dex, audience string) string {
	t.Helper()
	tok, err := dex.AuthCodeToken(ctx, audience)
	require.NoError(t, err)
	return tok
}

func clientWithToken(t *testing.T, api *localenv.APIServer, token string) *kubernetes.Clientset {
	t.Helper()
	rc := &rest.Config{Host: api.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: api.CAPEM}}
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	return cs
}

// The fake kubectl oidc-login: TestMain turns the test binary into it when
// fakeKubeloginEnv is set.
const (
	fakeKubeloginEnv  = "TENANTKIT_FAKE_KUBELOGIN_TOKEN_FILE"
	fakeKubeloginWant = "TENANTKIT_FAKE_KUBELOGIN_WANT"
)

func TestMain(m *testing.M) {
	if file := os.Getenv(fakeKubeloginEnv); file != "" && len(os.Args) > 2 && os.Args[1] == "oidc-login" {
		os.Exit(fakeKubelogin(file, os.Getenv(fakeKubeloginWant), os.Args[2:]))
	}
	os.Exit(m.Run())
}

func fakeKubelogin(tokenFile, want string, args []string) int {
	var issuer, client string
	fmt.Sscan(want, &issuer, &client)
	for _, w := range []string{"get-token", "--oidc-issuer-url=" + issuer, "--oidc-client-id=" + client,
		"--oidc-extra-scope=email", "--oidc-extra-scope=groups", "--oidc-use-pkce"} {
		if !slices.Contains(args, w) {
			fmt.Fprintf(os.Stderr, "fake kubelogin: missing argument %s in %q\n", w, args)
			return 1
		}
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`+"\n", tok)
	return 0
}
