package etcdlayout_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/internal/localenv"
	"github.com/cozystack/tenantkit/internal/localenv/etcdlayout"
)

func TestV1alpha1_threeMembersComeUp(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{}})
	ctx := t.Context()
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "demo"})
	t.Logf("StatefulSet created to 3 ready members: %s", tn.ReadyAfter)
	require.Equal(t, "tenant-demo", tn.Namespace)

	cli, err := tn.Client(ctx)
	require.NoError(t, err)
	defer cli.Close()
	_, err = cli.Put(ctx, "/greeting", "hello")
	require.NoError(t, err)
	got, err := cli.Get(ctx, "/greeting")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
	require.Equal(t, "hello", string(got.Kvs[0].Value))

	members, err := cli.MemberList(ctx)
	require.NoError(t, err)
	require.Len(t, members.Members, 3)
	var peers []string
	for _, m := range members.Members {
		require.False(t, m.IsLearner, "member %s is a learner", m.Name)
		require.Len(t, m.PeerURLs, 1)
		require.Equal(t, m.PeerURLs[0], etcdlayout.PeerURL(tn.Namespace, podOrdinal(t, m.Name)))
		peers = append(peers, m.PeerURLs[0])
	}
	require.ElementsMatch(t, []string{
		"https://etcd-0.etcd-headless.tenant-demo.svc:2380",
		"https://etcd-1.etcd-headless.tenant-demo.svc:2380",
		"https://etcd-2.etcd-headless.tenant-demo.svc:2380",
	}, peers)
}

func podOrdinal(t *testing.T, name string) int {
	t.Helper()
	for i := range 10 {
		if etcdlayout.PodName(i) == name {
			return i
		}
	}
	t.Fatalf("unexpected member name %q", name)
	return -1
}
