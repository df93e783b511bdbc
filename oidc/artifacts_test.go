package oidc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/oidc"
	"github.com/cozystack/tenantkit/tenant"
)

func TestKeycloakObjects(t *testing.T) {
	data, err := oidc.KeycloakYAML(acme)
	require.NoError(t, err)
	golden(t, "keycloak", data)

	// The chart's objects (templates/oidc-keycloak.yaml, R-keycloak): the
	// client named after its ID, the scope's description, no labels.
	client := oidc.NewKeycloakClient(acme)
	require.Equal(t, "tenant-acme-kubernetes-prod", client.Spec.Name)
	require.Equal(t, client.Spec.ClientID, client.Spec.Name)
	require.Empty(t, client.Labels)
	scope := oidc.NewKeycloakClientScope(acme)
	require.Equal(t, "Per-cluster audience for tenant kube-apiserver kubernetes-prod", scope.Spec.Description)
	require.Empty(t, scope.Labels)
	require.True(t, client.Spec.Public)
	require.Equal(t, "S256", client.Spec.Attributes["pkce.code.challenge.method"])
	require.Equal(t, []string{"groups", acme.AudienceScope()}, client.Spec.DefaultClientScopes)
	mapper := oidc.NewKeycloakClientScope(acme).Spec.ProtocolMappers[0]
	require.Equal(t, "oidc-audience-mapper", mapper.ProtocolMapper)
	require.Equal(t, acme.ClientID(), mapper.Config["included.client.audience"])
	require.Equal(t, "true", mapper.Config["id.token.claim"])
}

func TestKubeconfig(t *testing.T) {
	spec := oidc.KubeconfigSpec{Cluster: acme, Server: "https://kubernetes-prod.acme.example.org:443",
		CertificateAuthority: testCA(t), IssuerURL: oidc.SystemIssuerURL("example.org")}
	kc, err := oidc.RenderKubeconfig(spec)
	require.NoError(t, err)
	data := kc.YAML
	golden(t, "kubeconfig", data)

	cfg, err := clientcmd.Load(data)
	require.NoError(t, err)
	exec := cfg.AuthInfos["kubernetes-prod-oidc"].Exec
	require.Equal(t, "client.authentication.k8s.io/v1", exec.APIVersion)
	require.Equal(t, "IfAvailable", string(exec.InteractiveMode))
	require.True(t, exec.ProvideClusterInfo)
	require.Empty(t, exec.InstallHint, "the chart writes none")
	require.Equal(t, chartExecArgs(t), exec.Args, "the chart's bootstrap Job's arguments (R-kubeconfig)")
	require.Equal(t, "kubernetes-prod", cfg.CurrentContext)

	secret := kc.Secret
	require.Equal(t, "kubernetes-prod-oidc-kubeconfig", secret.Name)
	require.Equal(t, data, secret.Data["kubeconfig"])

	_, err = oidc.RenderKubeconfig(oidc.KubeconfigSpec{Cluster: acme})
	require.ErrorIs(t, err, oidc.ErrInvalidConfig)

	t.Run("options", func(t *testing.T) {
		s := spec
		s.PKCE, s.InstallHint = oidc.PKCEMethodS256, oidc.SuggestedInstallHint
		kc, err := oidc.RenderKubeconfig(s)
		require.NoError(t, err)
		exec := kc.Config.AuthInfos["kubernetes-prod-oidc"].Exec
		require.Equal(t, "--oidc-pkce-method=S256", exec.Args[len(exec.Args)-1])
		require.NotContains(t, exec.Args, "--oidc-use-pkce")
		require.Equal(t, oidc.SuggestedInstallHint, exec.InstallHint)

		s.PKCE = "--oidc-pkce-method=plain"
		_, err = oidc.RenderKubeconfig(s)
		require.ErrorIs(t, err, oidc.ErrInvalidConfig)
	})

	t.Run("tenantkit plugin", func(t *testing.T) {
		s := spec
		s.Plugin = oidc.PluginTenantkit
		s.IssuerCertificateAuthority = testCA(t)
		kc, err := oidc.RenderKubeconfig(s)
		require.NoError(t, err)
		golden(t, "kubeconfig-tenantkit", kc.YAML)
		exec := kc.Config.AuthInfos["kubernetes-prod-oidc"].Exec
		require.Equal(t, "oidc-credential", exec.Command)
		require.Equal(t, oidc.TenantkitInstallHint, exec.InstallHint)
		require.Equal(t, "get-token", exec.Args[0])
		require.Contains(t, exec.Args, "--client-id="+acme.ClientID())

		s.PKCE = oidc.PKCEMethodS256
		_, err = oidc.RenderKubeconfig(s)
		require.ErrorIs(t, err, oidc.ErrInvalidConfig, "a kubelogin flag for the tenantkit plugin")
		s.PKCE, s.Plugin = "", "pinniped"
		_, err = oidc.RenderKubeconfig(s)
		require.ErrorIs(t, err, oidc.ErrInvalidConfig)
	})
}

// chartExecArgs returns the exec arguments of the chart's kubeconfig as
// the chart catalogue records them (R-kubeconfig), for tenant-acme/prod on
// example.org.
func chartExecArgs(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Exec struct {
			Args []string `json:"args"`
		} `json:"exec"`
	}
	block := chartBlock(t, "### R-kubeconfig", "yaml")
	block = strings.NewReplacer("<issuer>", oidc.SystemIssuerURL("example.org"), "<clientId>", acme.ClientID()).Replace(block)
	require.NoError(t, yaml.Unmarshal([]byte(block), &doc))
	require.NotEmpty(t, doc.Exec.Args)
	return doc.Exec.Args
}

func TestBindings(t *testing.T) {
	bindings, err := oidc.Bindings(acme, []tenant.OIDCUser{{Email: "alice@example.org", Role: tenant.RoleAdmin}, {Email: "bob@example.org", Role: tenant.RoleView}})
	require.NoError(t, err)
	data, err := yaml.Marshal(bindings)
	require.NoError(t, err)
	golden(t, "bindings", data)
	// Cozystack's chart: sha256("<release>-<email>"), first 16 hex digits.
	// printf 'kubernetes-prod-alice@example.org' | sha256sum | cut -c1-16
	require.Equal(t, "cozystack-oidc-8a64bbdb80d70d82", oidc.BindingName("kubernetes-prod", "alice@example.org"))

	for name, users := range map[string][]tenant.OIDCUser{
		"empty email":  {{Role: tenant.RoleView}},
		"unknown role": {{Email: "a@b", Role: "owner"}},
	} {
		_, err := oidc.Bindings(acme, users)
		require.ErrorIs(t, err, oidc.ErrInvalidUser, name)
	}
}

// Bindings and tenant's Check decide users alike: what Check refuses
// Bindings refuses, and an email listed twice, which Check warns of, is one
// binding with the last entry's role, as the chart's Job leaves it.
func TestBindings_agreeWithCheck(t *testing.T) {
	for name, tt := range map[string]struct {
		users    []tenant.OIDCUser
		wantRole string // of the one binding, when accepted
	}{
		"empty email": {users: []tenant.OIDCUser{{Role: tenant.RoleView}}},
		"duplicate, last admin": {users: []tenant.OIDCUser{{Email: "a@b", Role: tenant.RoleView}, {Email: "a@b", Role: tenant.RoleAdmin}},
			wantRole: "cluster-admin"},
		"duplicate, last view": {users: []tenant.OIDCUser{{Email: "a@b", Role: tenant.RoleAdmin}, {Email: "a@b", Role: tenant.RoleView}},
			wantRole: "view"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := tenant.KubernetesSpec{OIDC: tenant.OIDC{Users: tt.users}}
			w, checkErr := spec.Check(tenant.Platform{})
			bindings, err := oidc.Bindings(acme, tt.users)
			if tt.wantRole == "" {
				require.ErrorIs(t, checkErr, tenant.ErrEmptyName)
				require.ErrorIs(t, err, tenant.ErrEmptyName)
				require.ErrorIs(t, err, oidc.ErrInvalidUser)
				return
			}
			require.NoError(t, checkErr)
			require.True(t, w.Has(tenant.ErrDuplicateUser))
			require.NoError(t, err)
			require.Len(t, bindings, 1)
			require.Equal(t, tt.wantRole, bindings[0].RoleRef.Name)
			require.Equal(t, oidc.BindingName(acme.Release(), "a@b"), bindings[0].Name)
		})
	}
}

// The Secrets the chart renders carry its Helm labels.
func TestChartLabels(t *testing.T) {
	require.Equal(t, map[string]string{
		"helm.sh/chart":                "kubernetes-0.0.0",
		"app.kubernetes.io/name":       "kubernetes",
		"app.kubernetes.io/instance":   "kubernetes-prod",
		"app.kubernetes.io/version":    "1.32.6",
		"app.kubernetes.io/managed-by": "Helm",
	}, oidc.ChartLabels(acme, ""))
	require.Equal(t, "kubernetes-1.6.2_build.1", oidc.ChartLabels(acme, "1.6.2+build.1")["helm.sh/chart"])
	auth, err := oidc.RenderAuthentication(oidc.AuthenticationSpec{Cluster: acme, RootHost: "example.org", ChartVersion: "1.7.0",
		OIDC: tenant.OIDC{Mode: tenant.OIDCSystem}})
	require.NoError(t, err)
	require.Equal(t, oidc.ChartLabels(acme, "1.7.0"), auth.Secret.Labels)
}

func TestRBAC_Plan(t *testing.T) {
	users := []tenant.OIDCUser{{Email: "alice@example.org", Role: tenant.RoleAdmin}, {Email: "bob@example.org", Role: tenant.RoleView}}
	desired, err := oidc.Bindings(acme, users)
	require.NoError(t, err)
	byEmail := func(bs []rbacv1.ClusterRoleBinding, email string) rbacv1.ClusterRoleBinding {
		for _, b := range bs {
			if b.Subjects[0].Name == email {
				return b
			}
		}
		t.Fatalf("no binding for %s", email)
		return rbacv1.ClusterRoleBinding{}
	}
	alice, bob := byEmail(desired, "alice@example.org"), byEmail(desired, "bob@example.org")

	plan := planOn(t, users)
	require.Len(t, plan.Changes, 2)
	require.Equal(t, oidc.ActionCreate, plan.Changes[0].Action)

	plan = planOn(t, users, desired...)
	require.True(t, plan.Empty())
	require.Contains(t, plan.String(), "up to date (2 bindings)")

	demoted := alice.DeepCopy()
	demoted.RoleRef.Name = "view"
	relabelled := bob.DeepCopy()
	relabelled.Labels = nil
	stale := alice.DeepCopy()
	stale.Name = oidc.BindingName(acme.Release(), "carol@example.org")
	stale.Subjects[0].Name = "carol@example.org"
	plan = planOn(t, users, *demoted, *relabelled, *stale)
	actions := map[string]oidc.Action{}
	for _, ch := range plan.Changes {
		actions[ch.Binding.Name] = ch.Action
	}
	require.Equal(t, map[string]oidc.Action{
		// bob's binding lost the labels Plan lists by: it is created again,
		// which Execute turns into an update of the existing object.
		alice.Name: oidc.ActionReplace, bob.Name: oidc.ActionCreate, stale.Name: oidc.ActionDelete,
	}, actions)
	golden(t, "rbac-plan", []byte(plan.String()))
}

// planOn plans users' bindings on a fake cluster holding existing.
func planOn(t *testing.T, users []tenant.OIDCUser, existing ...rbacv1.ClusterRoleBinding) *oidc.RBACPlan {
	t.Helper()
	cs := fake.NewClientset()
	for _, b := range existing {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(context.Background(), &b, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	r, err := oidc.NewRBAC(acme, oidc.RBACConfig{Clientset: cs})
	require.NoError(t, err)
	plan, err := r.Plan(context.Background(), users)
	require.NoError(t, err)
	return plan
}
