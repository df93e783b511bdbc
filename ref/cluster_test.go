package ref_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/ref"
)

func TestCluster_names(t *testing.T) {
	c := ref.Cluster{Namespace: "tenant-acme", Name: "prod"}
	require.NoError(t, c.Validate())
	require.Equal(t, "tenant-acme/prod", c.String())
	require.Equal(t, "kubernetes-prod", c.Release())
	require.Equal(t, "kubernetes-prod-admin-kubeconfig", c.AdminKubeconfigSecret())
	require.Equal(t, "kubernetes-prod-oidc-kubeconfig", c.OIDCKubeconfigSecret())
	require.Equal(t, "kubernetes-prod-oidc-authn-config", c.OIDCAuthnConfigSecret())
	require.Equal(t, "kubernetes-prod-awaiting-etcd", c.AwaitingEtcdConfigMap())
	require.Equal(t, "kubernetes-prod-velero", c.AddonRelease("velero"))
	require.Equal(t, "kubernetes-prod.acme.example.org", c.DefaultHost("acme.example.org"))
	require.Empty(t, c.DefaultHost(""))
	require.Equal(t, "tenant-acme-kubernetes-prod", c.ClientID())
	require.Equal(t, "tenant-acme-kubernetes-prod-audience", c.AudienceScope())
	require.Equal(t, []string{"tenant-acme-view", "tenant-acme-use", "tenant-acme-admin", "tenant-acme-super-admin"}, c.TenantGroups())
}

func TestCluster_ClientIDIsCut(t *testing.T) {
	// 241 + "-kubernetes-" puts a '-' at index 252: cut, then trimmed.
	long := ref.Cluster{Namespace: "tenant-" + repeat("a", 234), Name: "x"}
	id := long.ClientID()
	require.Len(t, id, 252, "cut to 253, then the trailing '-' trimmed")
	require.NotEqual(t, '-', rune(id[len(id)-1]))
}

func TestCluster_Validate(t *testing.T) {
	for _, tt := range []struct {
		ns, name string
		ok       bool
	}{
		{"tenant-acme", "prod", true},
		{"tenant-root", "a1", true},
		{"tenant-acme", repeat("a", ref.MaxNameLen), true}, // release kubernetes-<42> is 53: Helm's limit
		{"tenant-acme", repeat("a", 43), false},
		{"default", "prod", false},
		{"tenant-acme", "Prod", false},
		{"tenant-acme", "", false},
		{"tenant-acme", "pro_d", false},
		{"tenant-acme", "1prod", false}, // DNS-1035: a letter first, as cozystack-api requires
		{"tenant-acme", "prod-", false},
		{"tenant-acme", "prod.eu", false},
		{"tenant-acme", "dev-cluster-2", true},
	} {
		err := ref.Cluster{Namespace: tt.ns, Name: tt.name}.Validate()
		if tt.ok {
			require.NoError(t, err, "%s/%s", tt.ns, tt.name)
		} else {
			require.ErrorIs(t, err, ref.ErrInvalidName, "%s/%s", tt.ns, tt.name)
		}
	}
}

func TestKubeconfigVariants(t *testing.T) {
	var keys []string
	for _, v := range ref.KubeconfigVariants() {
		require.True(t, v.Valid())
		keys = append(keys, string(v))
	}
	require.Equal(t, []string{"admin.conf", "admin.svc", "super-admin.conf", "super-admin.svc"}, keys)
	require.False(t, ref.KubeconfigVariant("kubeconfig").Valid())
}

func TestCluster_Validate_everyProblem(t *testing.T) {
	err := ref.Cluster{Namespace: "default", Name: "1" + strings.Repeat("a", 50)}.Validate()
	require.ErrorIs(t, err, ref.ErrInvalidName)
	msg := err.Error()
	for _, want := range []string{`"default" is not a tenant namespace`, "a DNS-1035 label", "over Helm's 53"} {
		require.Contains(t, msg, want)
	}
}
