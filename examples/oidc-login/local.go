package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

var (
	clusterA = ref.Cluster{Namespace: "tenant-a", Name: "prod"}
	clusterB = ref.Cluster{Namespace: "tenant-b", Name: "prod"}
)

const demoPassword = "tenantkit-demo"

// tenantCluster is one tenant apiserver of the demo.
type tenantCluster struct {
	ref.Cluster
	api      *localenv.APIServer
	verifier *oidc.Verifier
}

func (o *options) runLocal(ctx context.Context) error {
	env, err := localenv.OpenTarget(ctx, &o.target, "etcd", localenv.Config{EtcdMembers: 1, SkipAPIServer: true})
	if err != nil {
		return err
	}
	defer o.target.Close()

	step := cli.Step(os.Stderr, "starting dex, the shared IdP, with one client per cluster")
	dex, err := env.StartDex(ctx, localenv.DexConfig{
		Clients: []string{clusterA.ClientID(), clusterB.ClientID()},
		Users: []localenv.DexUser{
			{Email: "alice@a.example", Password: demoPassword, Groups: []string{"tenant-a-admin"}},
			{Email: "victor@a.example", Password: demoPassword, Groups: []string{"tenant-a-view"}},
			{Email: "bob@b.example", Password: demoPassword, Groups: []string{"tenant-b-admin"}},
			{Email: "mallory@x.example", Password: demoPassword, Groups: []string{"tenant-x-admin"}},
		},
	})
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}

	var clusters []*tenantCluster
	var rows [][]string
	for _, c := range []ref.Cluster{clusterA, clusterB} {
		tc, path, err := o.startTenant(ctx, env, dex, c)
		if err != nil {
			return err
		}
		clusters = append(clusters, tc)
		rows = append(rows, []string{c.String(), c.ClientID(), tc.api.URL, path})
	}
	a, b := clusters[0], clusters[1]
	fmt.Fprintf(o.out, "\nissuer %s\n\n", dex.IssuerURL)
	cli.Table(o.out, []string{"CLUSTER", "AUDIENCE (CLIENT ID)", "APISERVER", "AUTHENTICATION CONFIG"}, rows)

	tokens, err := o.login(ctx, dex)
	if err != nil {
		return err
	}
	if err := waitAuthenticators(ctx, a, b, tokens); err != nil {
		return err
	}
	if err := o.showIsolation(ctx, a, b, tokens); err != nil {
		return err
	}
	if err := o.showRBAC(ctx, a, tokens); err != nil {
		return err
	}
	return o.writeKubeconfig(a, dex)
}

// startTenant renders the cluster's AuthenticationConfiguration (System
// mode, with dex in place of the platform Keycloak) and starts its
// apiserver with it.
func (o *options) startTenant(ctx context.Context, env *localenv.Env, dex *localenv.Dex, c ref.Cluster) (*tenantCluster, string, error) {
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: c, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
		IssuerURL: dex.IssuerURL, CertificateAuthority: dex.CAPEM, KubernetesVersion: "v1.37"})
	if err != nil {
		return nil, "", err
	}
	path, err := o.writeFile(c.Namespace+"-"+ref.OIDCAuthnConfigKey, auth.YAML)
	if err != nil {
		return nil, "", err
	}
	step := cli.Step(os.Stderr, fmt.Sprintf("starting %s's kube-apiserver with --authentication-config", c))
	api, err := env.StartAPIServer(ctx, localenv.APIServerConfig{Name: c.Namespace, ExtraArgs: []string{"--authentication-config=" + path}})
	step.Done(err)
	if err != nil {
		return nil, "", cli.WithCode(cli.ExitUnavailable, err)
	}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{JWT: auth.Config.JWT[0]})
	if err != nil {
		return nil, "", err
	}
	return &tenantCluster{Cluster: c, api: api, verifier: v}, path, nil
}

// login gets the demo's tokens from dex.
func (o *options) login(ctx context.Context, dex *localenv.Dex) (map[string]string, error) {
	step := cli.Step(os.Stderr, "logging users in at dex (password grant; browser flow with PKCE for the mock user)")
	tokens := map[string]string{}
	var err error
	for _, l := range []struct{ name, email, audience string }{
		{"alice", "alice@a.example", clusterA.ClientID()},
		{"victor", "victor@a.example", clusterA.ClientID()},
		{"bob", "bob@b.example", clusterB.ClientID()},
		{"mallory", "mallory@x.example", clusterA.ClientID()},
	} {
		if tokens[l.name], err = dex.PasswordToken(ctx, l.email, demoPassword, l.audience); err != nil {
			break
		}
	}
	if err == nil {
		tokens["kilgore"], err = dex.AuthCodeToken(ctx, clusterA.ClientID())
	}
	step.Done(err)
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, name := range []string{"alice", "victor", "bob", "mallory", "kilgore"} {
		c := unverifiedClaims(tokens[name])
		rows = append(rows, []string{name, fmt.Sprint(c["email"]), fmt.Sprint(c["aud"]), fmt.Sprint(c["azp"]), fmt.Sprint(c["groups"])})
	}
	fmt.Fprintln(o.out)
	cli.Table(o.out, []string{"TOKEN", "EMAIL", "AUD", "AZP", "GROUPS"}, rows)
	return tokens, nil
}

// waitAuthenticators waits until each apiserver's JWT authenticator has
// discovered dex (it initialises in the background).
func waitAuthenticators(ctx context.Context, a, b *tenantCluster, tokens map[string]string) error {
	step := cli.Step(os.Stderr, "waiting for the apiservers' JWT authenticators to discover dex")
	var err error
	for _, w := range []struct {
		c     *tenantCluster
		token string
	}{{a, tokens["alice"]}, {b, tokens["bob"]}} {
		for {
			if _, err = oidc.WhoAmI(ctx, w.c.api.RESTConfig(), w.token); err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			break
		}
	}
	step.Done(err)
	return err
}

// showIsolation presents tokens to clusters and compares what the
// apiserver does with what oidc.Verifier says.
func (o *options) showIsolation(ctx context.Context, a, b *tenantCluster, tokens map[string]string) error {
	checks := []struct {
		token  string
		c      *tenantCluster
		accept bool
	}{
		{"alice", a, true}, {"alice", b, false}, {"bob", b, true}, {"bob", a, false},
		{"mallory", a, false}, {"kilgore", a, false},
	}
	var rows [][]string
	failed := 0
	for _, ch := range checks {
		u, apiErr := oidc.WhoAmI(ctx, ch.c.api.RESTConfig(), tokens[ch.token]) // what kube-apiserver decides
		_, vErr := ch.c.verifier.Verify(ctx, tokens[ch.token])                 // what the library decides, and why
		apiSays := "401 Unauthorized"
		if apiErr == nil {
			apiSays = fmt.Sprintf("%s %v", u.Username, u.Groups)
		} else if !apierrors.IsUnauthorized(apiErr) {
			return cli.WithCode(cli.ExitUnavailable, apiErr)
		}
		verdict := "ok"
		if (apiErr == nil) != ch.accept || (vErr == nil) != ch.accept {
			verdict, failed = "UNEXPECTED", failed+1
		}
		rows = append(rows, []string{ch.token, ch.c.String(), apiSays, reason(ch.c.Cluster, vErr), verdict})
	}
	fmt.Fprintln(o.out)
	cli.Table(o.out, []string{"TOKEN", "PRESENTED TO", "KUBE-APISERVER", "oidc.Verifier", "VERDICT"}, rows)
	if failed > 0 {
		return cli.WithCode(cli.ExitFailure, fmt.Errorf("%d presentations did not go as isolation requires", failed))
	}
	return nil
}

// reason says in a few words why the Verifier of cluster a refused a token.
func reason(a ref.Cluster, err error) string {
	var aud *oidc.AudienceError
	var rule *oidc.RuleError
	switch {
	case err == nil:
		return "accepted"
	case errors.As(err, &aud):
		return fmt.Sprintf("audience %v, want %v", aud.Got, aud.Want)
	case errors.As(err, &rule):
		return "tenant gate: not in " + a.Namespace + "-{view,use,admin,super-admin}"
	}
	return err.Error()
}

// showRBAC binds alice as admin and victor as viewer of cluster A with the
// package, and shows the effect.
func (o *options) showRBAC(ctx context.Context, a *tenantCluster, tokens map[string]string) error {
	r, err := oidc.NewRBACForConfig(a.api.RESTConfig(), a.Cluster, oidc.RBACConfig{})
	if err != nil {
		return err
	}
	plan, err := r.Sync(ctx, []tenant.OIDCUser{
		{Email: "alice@a.example", Role: tenant.RoleAdmin}, {Email: "victor@a.example", Role: tenant.RoleView},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "\nRBAC applied in %s:\n%s\n", a.Cluster, strings.TrimRight(plan.String(), "\n"))
	var rows [][]string
	for _, user := range []string{"alice", "victor"} {
		var listErr error
		for range 50 { // the authorizer's cache catches up within moments
			_, listErr = bearerClient(a.api, tokens[user]).CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			if listErr == nil || user == "victor" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		result := "allowed"
		if apierrors.IsForbidden(listErr) {
			result = "forbidden"
		} else if listErr != nil {
			return listErr
		}
		rows = append(rows, []string{user, result})
	}
	fmt.Fprintln(o.out)
	cli.Table(o.out, []string{"USER", "LIST SECRETS IN " + a.Cluster.String()}, rows)
	return nil
}

// writeKubeconfig writes the kubeconfig alice would download for A.
func (o *options) writeKubeconfig(a *tenantCluster, dex *localenv.Dex) error {
	kc, err := oidc.RenderKubeconfig(oidc.KubeconfigSpec{Cluster: a.Cluster, Server: a.api.URL, CertificateAuthority: a.api.CAPEM,
		IssuerURL: dex.IssuerURL, IssuerCertificateAuthority: dex.CAPEM, Plugin: oidc.Plugin(o.plugin)})
	if err != nil {
		return err
	}
	path, err := o.writeFile(a.Namespace+"-oidc.kubeconfig", kc.YAML)
	if err != nil {
		return err
	}
	plugin := "kubectl oidc-login"
	if o.plugin == string(oidc.PluginTenantkit) {
		plugin = "oidc-credential"
	}
	fmt.Fprintf(o.out, "\nalice's kubeconfig for %s: %s\n(%s, client %s; valid while the environment runs)\n\n",
		a.Cluster, path, plugin, a.ClientID())
	return nil
}

func bearerClient(api *localenv.APIServer, token string) *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: api.URL, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: api.CAPEM}})
}
