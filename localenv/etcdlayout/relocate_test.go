package etcdlayout_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestV1alpha1_memberMovesToAnotherNode replays a replica relocation by
// hand: remove the member, cordon its node, delete its claim and pod; the
// StatefulSet recreates both, the scheduler binds the new claim on another
// node, and the member rejoins with an empty data directory as a learner
// with the same peer URL and is promoted.
func TestV1alpha1_memberMovesToAnotherNode(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{
		Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}},
	}})
	ctx := t.Context()
	cluster := env.Cluster()
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "move"})
	kube := tn.Kube()
	cli, err := tn.Client(ctx)
	require.NoError(t, err)
	defer cli.Close()
	_, err = cli.Put(ctx, "/before-move", "kept")
	require.NoError(t, err)

	const moving = 1
	name, peerURL := etcdlayout.PodName(moving), etcdlayout.StatefulSetPeerURL(tn.Namespace, moving)
	oldPod := pod(t, tn, name)
	from := oldPod.Spec.NodeName
	oldPVC, err := kube.CoreV1().PersistentVolumeClaims(tn.Namespace).Get(ctx, etcdlayout.PVCName(moving), metav1.GetOptions{})
	require.NoError(t, err)
	oldPV, err := kube.CoreV1().PersistentVolumes().Get(ctx, oldPVC.Spec.VolumeName, metav1.GetOptions{})
	require.NoError(t, err)
	oldDir := oldPV.Spec.Local.Path
	entries, err := os.ReadDir(oldDir)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the member's volume holds its data")

	// Remove the member first, through a client that does not use it.
	others, err := tn.Client(ctx, 0, 2)
	require.NoError(t, err)
	defer others.Close()
	id, _, err := memberID(ctx, others, peerURL)
	require.NoError(t, err)
	require.NotZero(t, id)
	// Membership calls are not idempotent and a timeout says nothing, so
	// every attempt first checks the member list by peer URL.
	eventually(t, time.Minute, "remove member", func(ctx context.Context) error {
		if id, _, err := memberID(ctx, others, peerURL); err != nil || id == 0 {
			return err
		}
		_, err := others.MemberRemove(ctx, id)
		return err
	})

	// Steer the new pod away, then delete the claim and the pod.
	require.NoError(t, cluster.Cordon(ctx, from))
	require.NoError(t, kube.CoreV1().PersistentVolumeClaims(tn.Namespace).Delete(ctx, oldPVC.Name, metav1.DeleteOptions{}))
	require.NoError(t, kube.CoreV1().Pods(tn.Namespace).Delete(ctx, name, metav1.DeleteOptions{}))
	eventually(t, time.Minute, "old claim gone and its volume wiped", func(ctx context.Context) error {
		pvc, err := kube.CoreV1().PersistentVolumeClaims(tn.Namespace).Get(ctx, oldPVC.Name, metav1.GetOptions{})
		if err == nil && pvc.UID == oldPVC.UID {
			return errors.New("old claim still there")
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if cluster.Recycled() < 1 {
			return errors.New("volume not recycled yet")
		}
		return nil
	})
	left, err := os.ReadDir(oldDir)
	require.NoError(t, err)
	require.Empty(t, left, "the old volume was wiped")

	eventually(t, time.Minute, "add learner", func(ctx context.Context) error {
		if id, _, err := memberID(ctx, others, peerURL); err != nil || id != 0 {
			return err
		}
		_, err := others.MemberAddAsLearner(ctx, []string{peerURL})
		return err
	})
	eventually(t, 2*time.Minute, "new pod on another node", func(ctx context.Context) error {
		p, err := kube.CoreV1().Pods(tn.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID == oldPod.UID || p.Spec.NodeName == "" {
			return errors.New("not recreated and scheduled yet")
		}
		if p.Spec.NodeName == from {
			t.Fatalf("%s came back on the cordoned node %s", name, from)
		}
		if info, ok := cluster.Pod(tn.Namespace, name); !ok || info.Containers[0].PID == 0 {
			return errors.New("etcd not running yet")
		}
		return nil
	})
	newPod := pod(t, tn, name)
	newPVC, err := kube.CoreV1().PersistentVolumeClaims(tn.Namespace).Get(ctx, etcdlayout.PVCName(moving), metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEqual(t, oldPVC.UID, newPVC.UID)
	newPV, err := kube.CoreV1().PersistentVolumes().Get(ctx, newPVC.Spec.VolumeName, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, newPod.Spec.NodeName, newPV.Labels["localenv.tenantkit.io/node"])
	t.Logf("%s moved from %s to %s (volume %s → %s)", name, from, newPod.Spec.NodeName, oldPV.Name, newPV.Name)

	eventually(t, 2*time.Minute, "promote learner", func(ctx context.Context) error {
		id, learner, err := memberID(ctx, others, peerURL)
		if err != nil {
			return err
		}
		if !learner {
			return nil
		}
		_, err = others.MemberPromote(ctx, id)
		return err
	})
	members, err := others.MemberList(ctx)
	require.NoError(t, err)
	require.Len(t, members.Members, 3)
	for _, m := range members.Members {
		require.False(t, m.IsLearner)
		require.NotEmpty(t, m.Name, "member %x has not started", m.ID)
	}
	eventually(t, time.Minute, "moved pod ready", func(ctx context.Context) error {
		if !ready(pod(t, tn, name)) {
			return errors.New("not ready")
		}
		return nil
	})
	moved, err := tn.Client(ctx, moving)
	require.NoError(t, err)
	defer moved.Close()
	got, err := moved.Get(ctx, "/before-move", clientv3.WithSerializable())
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1, "the new member caught up from its peers")
	require.NoError(t, cluster.Uncordon(ctx, from))
	requireNoTerminatingClaims(t, tn)
}

func requireNoTerminatingClaims(t *testing.T, tn *etcdlayout.Tenant) {
	t.Helper()
	list, err := tn.Kube().CoreV1().PersistentVolumeClaims(tn.Namespace).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, c := range list.Items {
		require.Nil(t, c.DeletionTimestamp, "claim %s terminating", c.Name)
		require.Equal(t, corev1.ClaimBound, c.Status.Phase, fmt.Sprintf("claim %s", c.Name))
	}
}
