package etcdlayout_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestV1alpha2_deletedMemberIsReplaced follows the operator's "Broken
// member" runbook: deleting an EtcdMember removes it from etcd (finalizer),
// its Pod and PVC are garbage collected, and a new member with a new name
// joins as a learner and is promoted.
func TestV1alpha2_deletedMemberIsReplaced(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{
		Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}},
	}})
	ctx := t.Context()
	tn := etcdlayout.StartV1alpha2T(t, env, etcdlayout.Config{Tenant: "next"})
	t.Logf("EtcdCluster created → 3 ready voters: %s", tn.ReadyAfter.Round(10*time.Millisecond))
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)

	names, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	require.Len(t, names, 3)
	cli, err := tn.Client(ctx)
	require.NoError(t, err)
	defer cli.Close()
	_, err = cli.Put(ctx, "/v2", "kept")
	require.NoError(t, err)
	requireVoters(t, cli, tn.Namespace, names)

	victim := names[1]
	from := pod(t, tn, victim).Spec.NodeName
	require.NoError(t, env.Cluster().Cordon(ctx, from))
	require.NoError(t, dyn.Resource(etcdlayout.EtcdMembers).Namespace(tn.Namespace).Delete(ctx, victim, metav1.DeleteOptions{}))

	eventually(t, time.Minute, "member, pod and claim of "+victim+" gone", func(ctx context.Context) error {
		for _, get := range []func() error{
			func() error {
				_, err := dyn.Resource(etcdlayout.EtcdMembers).Namespace(tn.Namespace).Get(ctx, victim, metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := tn.Kube().CoreV1().Pods(tn.Namespace).Get(ctx, victim, metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := tn.Kube().CoreV1().PersistentVolumeClaims(tn.Namespace).Get(ctx, "data-"+victim, metav1.GetOptions{})
				return err
			},
		} {
			if err := get(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
		}
		return nil
	})
	require.NoError(t, tn.WaitAvailable(ctx, 3))
	after, err := tn.MemberNames(ctx)
	require.NoError(t, err)
	require.Len(t, after, 3)
	require.NotContains(t, after, victim)
	replacement := slices.DeleteFunc(slices.Clone(after), func(n string) bool { return slices.Contains(names, n) })
	require.Len(t, replacement, 1)
	require.NotEqual(t, from, pod(t, tn, replacement[0]).Spec.NodeName, "replacement avoided the cordoned node")
	requireVoters(t, cli, tn.Namespace, after)

	fresh, err := tn.Client(ctx, slices.Index(after, replacement[0]))
	require.NoError(t, err)
	defer fresh.Close()
	eventually(t, 30*time.Second, "replacement has the data", func(ctx context.Context) error {
		got, err := fresh.Get(ctx, "/v2", clientv3.WithSerializable())
		if err != nil || len(got.Kvs) != 1 {
			return errors.Join(err, errors.New("key missing"))
		}
		return nil
	})
}

// requireVoters checks that etcd's members are exactly names, all voters,
// with the operator's DNS peer URLs.
func requireVoters(t *testing.T, cli *clientv3.Client, ns string, names []string) {
	t.Helper()
	resp, err := cli.MemberList(t.Context())
	require.NoError(t, err)
	var urls, want []string
	for _, m := range resp.Members {
		require.False(t, m.IsLearner, "%s is a learner", m.Name)
		urls = append(urls, m.PeerURLs...)
	}
	for _, n := range names {
		want = append(want, etcdlayout.MemberPeerURL(ns, n))
	}
	require.ElementsMatch(t, want, urls)
}
