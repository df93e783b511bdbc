package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/ref"
	"github.com/cozystack/tenantkit/tenant"
)

var (
	clusterA = ref.Cluster{Namespace: "tenant-a", Name: "prod"}
	clusterB = ref.Cluster{Namespace: "tenant-b", Name: "prod"}
)

const (
	aliceEmail    = "alice@a.example"
	alicePassword = "correct horse battery staple"
	idTokenTTL    = 30 * time.Second
)

// world is dex, two tenant apiservers and a headless user who signs in
// whenever the plugin opens a URL (its --browser-command appends the URL
// to a file the test watches).
type world struct {
	t      *testing.T
	ctx    context.Context
	dex    *localenv.Dex
	api    map[ref.Cluster]*localenv.APIServer
	dir    string
	mu     sync.Mutex
	signIn int // URLs the plugin opened: sign-ins started
	seq    int
}

func newWorld(t *testing.T, ctx context.Context) *world {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 1, SkipAPIServer: true})
	dex, err := env.StartDex(ctx, localenv.DexConfig{Clients: []string{clusterA.ClientID(), clusterB.ClientID()}, IDTokenTTL: idTokenTTL,
		Users: []localenv.DexUser{{Email: aliceEmail, Password: alicePassword, Groups: []string{"tenant-a-admin", "tenant-b-admin"}}}})
	require.NoError(t, err)
	w := &world{t: t, ctx: ctx, dex: dex, api: map[ref.Cluster]*localenv.APIServer{}, dir: t.TempDir()}
	for _, c := range []ref.Cluster{clusterA, clusterB} {
		auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: c, OIDC: tenant.OIDC{Mode: tenant.OIDCSystem},
			IssuerURL: dex.IssuerURL, CertificateAuthority: dex.CAPEM, KubernetesVersion: "v1.37", NewestAPIVersion: true})
		require.NoError(t, err)
		path := filepath.Join(w.dir, c.Namespace+"-authn.yaml")
		require.NoError(t, os.WriteFile(path, auth.YAML, 0o600))
		w.api[c], err = env.StartAPIServer(ctx, localenv.APIServerConfig{Name: c.Namespace, ExtraArgs: []string{"--authentication-config=" + path}})
		require.NoError(t, err)
		// Wait until the apiserver's authenticator has discovered dex, with
		// a token that does not come from the plugin.
		tok, err := dex.PasswordToken(ctx, aliceEmail, alicePassword, c.ClientID())
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := whoami(ctx, &rest.Config{Host: w.api[c].URL, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: w.api[c].CAPEM}})
			return err == nil
		}, 90*time.Second, 250*time.Millisecond)
	}
	// The plugin is this test binary (TestMain), behind a wrapper that
	// counts the processes kubectl's exec started.
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "plugin"), []byte("#!/bin/sh\necho run >> "+filepath.Join(w.dir, "runs")+
		"\nTENANTKIT_OIDC_CREDENTIAL_MAIN=1 exec "+self+" \"$@\"\n"), 0o700))
	browser := filepath.Join(w.dir, "browser")
	require.NoError(t, os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" >> "+filepath.Join(w.dir, "urls")+"\n"), 0o700))
	go w.user()
	return w
}

// user signs in at dex for every URL the plugin opens.
func (w *world) user() {
	seen := 0
	for w.ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		data, _ := os.ReadFile(filepath.Join(w.dir, "urls"))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for ; len(data) > 0 && seen < len(lines); seen++ {
			w.mu.Lock()
			w.signIn++
			w.mu.Unlock()
			go func(u string) {
				if err := w.dex.SignIn(w.ctx, u, aliceEmail, alicePassword); err != nil {
					w.t.Errorf("headless sign-in at %s: %v", u, err)
				}
			}(lines[seen])
		}
	}
}

// runs counts the plugin processes started so far.
func (w *world) runs() int {
	data, _ := os.ReadFile(filepath.Join(w.dir, "runs"))
	return bytes.Count(data, []byte("run\n"))
}

func (w *world) signIns() int { w.mu.Lock(); defer w.mu.Unlock(); return w.signIn }

// dexLogins counts the logins dex itself logged: the independent count.
func (w *world) dexLogins() int {
	data, err := os.ReadFile(w.dex.LogPath())
	require.NoError(w.t, err)
	return strings.Count(string(data), `msg="login successful"`)
}

// kubeconfig renders the user kubeconfig of cluster c (its client, its
// audience) with the tenantkit plugin — this test binary — pointed at
// server, caching under cache.
func (w *world) kubeconfig(c ref.Cluster, server ref.Cluster, cache string, extra ...string) *clientcmdapi.Config {
	api := w.api[server]
	kc, err := oidc.RenderKubeconfig(oidc.KubeconfigSpec{Cluster: c, Server: api.URL, CertificateAuthority: api.CAPEM,
		IssuerURL: w.dex.IssuerURL, IssuerCertificateAuthority: w.dex.CAPEM, Plugin: oidc.PluginTenantkit, Command: filepath.Join(w.dir, "plugin"),
		ExtraScopes: []string{"email", "groups", "offline_access"},
		ExtraArgs:   append([]string{"--cache-dir=" + cache, "--redirect-port=0", "--browser-command=" + filepath.Join(w.dir, "browser")}, extra...)})
	require.NoError(w.t, err)
	cfg, err := clientcmd.Load(kc.YAML)
	require.NoError(w.t, err)
	return cfg
}

// restConfig is the rest.Config of kubeconfig cfg, as kubectl builds it;
// each gets its own exec authenticator (client-go shares one between
// identical exec configs), so each runs the plugin in its own process.
func (w *world) restConfig(cfg *clientcmdapi.Config) *rest.Config {
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	require.NoError(w.t, err)
	w.mu.Lock()
	w.seq++
	ep := *rc.ExecProvider // shared with cfg: copy before changing
	ep.Env = append(slices.Clone(ep.Env), clientcmdapi.ExecEnvVar{Name: "TEST_INVOCATION", Value: fmt.Sprint(w.seq)})
	rc.ExecProvider = &ep
	w.mu.Unlock()
	return rc
}

func whoami(ctx context.Context, rc *rest.Config) (*authenticationv1.SelfSubjectReview, error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
}

// runPlugin runs the plugin as kubectl does for cfg's user and returns
// its stdout and stderr.
func (w *world) runPlugin(cfg *clientcmdapi.Config, command ...string) (stdout, stderr []byte) {
	ex := cfg.AuthInfos["kubernetes-prod-oidc"].Exec
	args := append(command, ex.Args[1:]...)
	cmd := exec.CommandContext(w.ctx, ex.Command, args...)
	cmd.Env = append(os.Environ(),
		`KUBERNETES_EXEC_INFO={"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(w.t, cmd.Run(), errb.String())
	return out.Bytes(), errb.Bytes()
}

// execCredential runs get-token by hand and checks that the token is on
// stdout only.
func (w *world) execCredential(cfg *clientcmdapi.Config) *clientauthv1.ExecCredential {
	stdout, stderr := w.runPlugin(cfg, "get-token")
	var ec clientauthv1.ExecCredential
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.DisallowUnknownFields()
	require.NoError(w.t, dec.Decode(&ec))
	require.False(w.t, dec.More(), "stdout holds the ExecCredential only")
	require.Equal(w.t, "client.authentication.k8s.io/v1", ec.APIVersion)
	require.NotEmpty(w.t, ec.Status.Token)
	require.NotContains(w.t, string(stderr), ec.Status.Token, "the token is never on stderr")
	return &ec
}

// TestPlugin is the plugin as kubectl uses it, through client-go's exec
// authenticator (the code kubectl runs), against real dex and two real
// tenant kube-apiservers with their clusters' AuthenticationConfiguration.
func TestPlugin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w := newWorld(t, ctx)
	cache := t.TempDir()
	a := w.kubeconfig(clusterA, clusterA, cache)

	t.Run("16 parallel whoami, one sign-in", func(t *testing.T) { w.parallelWhoami(t, a) })
	t.Run("A's token refused by B", func(t *testing.T) {
		_, err := whoami(ctx, w.restConfig(w.kubeconfig(clusterA, clusterB, cache)))
		require.True(t, apierrors.IsUnauthorized(err), "B accepted a token for A: %v", err)
		_, err = whoami(ctx, w.restConfig(w.kubeconfig(clusterB, clusterB, cache)))
		require.NoError(t, err, "B's own client signs in for B")
		require.Equal(t, 2, w.signIns(), "one sign-in per cluster: dex cannot exchange A's token for B's audience")
	})

	t.Run("expiry refreshes without a sign-in", func(t *testing.T) {
		before := w.signIns()
		first := w.execCredential(a)
		time.Sleep(time.Until(first.Status.ExpirationTimestamp.Time) + time.Second)
		_, err := whoami(ctx, w.restConfig(a))
		require.NoError(t, err)
		second := w.execCredential(a)
		require.True(t, second.Status.ExpirationTimestamp.After(first.Status.ExpirationTimestamp.Time))
		require.NotEqual(t, first.Status.Token, second.Status.Token)
		require.Equal(t, before, w.signIns())
	})

	t.Run("tampered cache, new sign-in", func(t *testing.T) {
		before := w.signIns()
		files, err := filepath.Glob(filepath.Join(cache, "*.json"))
		require.NoError(t, err)
		require.Len(t, files, 2, "one entry per cluster")
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(f, bytes.Replace(data, []byte(`"id_token":"`), []byte(`"id_token":"x`), 1), 0o600))
		}
		_, err = whoami(ctx, w.restConfig(a))
		require.NoError(t, err)
		require.Equal(t, before+1, w.signIns())
	})

	t.Run("logout, then a sign-in", func(t *testing.T) {
		before := w.signIns()
		stdout, _ := w.runPlugin(a, "logout")
		require.Contains(t, string(stdout), "removed the cached tokens; the issuer offers no revocation")
		_, err := whoami(ctx, w.restConfig(a))
		require.NoError(t, err)
		require.Equal(t, before+1, w.signIns())
	})

	t.Run("kubectl", func(t *testing.T) { w.kubectl(t) })

	t.Run("device grant", func(t *testing.T) {
		before := w.signIns()
		r, err := whoami(ctx, w.restConfig(w.kubeconfig(clusterA, clusterA, t.TempDir(), "--grant=device-code")))
		require.NoError(t, err)
		require.Equal(t, aliceEmail, r.Status.UserInfo.Username)
		require.Equal(t, before+1, w.signIns())
	})
}

// parallelWhoami runs 16 whoami at once, each through its own exec
// authenticator and so its own plugin process: one sign-in for all.
func (w *world) parallelWhoami(t *testing.T, a *clientcmdapi.Config) {
	runs := w.runs()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	users := make([]string, 16)
	for i := range 16 {
		rc := w.restConfig(a)
		wg.Go(func() {
			r, err := whoami(w.ctx, rc)
			if errs[i] = err; err == nil {
				users[i] = r.Status.UserInfo.Username
			}
		})
	}
	wg.Wait()
	for i := range 16 {
		require.NoError(t, errs[i], "invocation %d", i)
		require.Equal(t, aliceEmail, users[i])
	}
	require.Equal(t, 16, w.runs()-runs, "16 plugin processes")
	t.Logf("16 parallel invocations: %d sign-in(s) started by the plugin, %d login(s) logged by dex", w.signIns(), w.dexLogins())
	require.Equal(t, 1, w.signIns())
	require.Equal(t, 1, w.dexLogins())
}
