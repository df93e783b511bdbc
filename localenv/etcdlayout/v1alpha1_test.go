package etcdlayout_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestV1alpha1_lifecycle brings a 3-member tenant etcd up through
// StatefulSet → scheduler → volume binding → node agent → real etcd, takes
// a node down and back, and checks that Stop leaves nothing behind.
func TestV1alpha1_lifecycle(t *testing.T) {
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{}})
	ctx := t.Context()
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "demo"})
	t.Logf("environment start (etcd, apiserver, controller manager, scheduler, 3 nodes): %s", env.StartDuration().Round(10*time.Millisecond))
	t.Logf("StatefulSet created → 3 ready members: %s", tn.ReadyAfter.Round(10*time.Millisecond))
	cluster := env.Cluster()

	cli, err := tn.Client(ctx)
	require.NoError(t, err)
	defer cli.Close()

	t.Run("members are real etcd on three nodes with DNS peer URLs", func(t *testing.T) {
		for i := range 3 {
			p := pod(t, tn, etcdlayout.PodName(i))
			require.True(t, ready(p))
			t.Logf("%s on %s, pod IP %s", p.Name, p.Spec.NodeName, p.Status.PodIP)
			info, ok := cluster.Pod(tn.Namespace, p.Name)
			require.True(t, ok)
			require.Len(t, info.Containers, 1)
			require.NotZero(t, info.Containers[0].PID, "etcd-%d runs no process", i)
			require.Equal(t, p.Status.PodIP, info.PodIP.String())
			require.True(t, info.IP.IsLoopback())
			require.Equal(t, info.IP, cluster.HostAddr(info.PodIP))
			// The headless service name resolves to the pod's address.
			addrs, err := cluster.Resolver().LookupHost(ctx, etcdlayout.StatefulSetHost(tn.Namespace, i))
			require.NoError(t, err)
			require.Equal(t, []string{info.IP.String()}, addrs)
		}

		_, err := cli.Put(ctx, "/greeting", "hello")
		require.NoError(t, err)
		got, err := cli.Get(ctx, "/greeting")
		require.NoError(t, err)
		require.Len(t, got.Kvs, 1)
		require.Equal(t, "hello", string(got.Kvs[0].Value))

		members, err := cli.MemberList(ctx)
		require.NoError(t, err)
		var peers []string
		for _, m := range members.Members {
			require.False(t, m.IsLearner, "member %s is a learner", m.Name)
			peers = append(peers, m.PeerURLs...)
		}
		require.ElementsMatch(t, []string{
			"https://etcd-0.etcd-headless.tenant-demo.svc:2380",
			"https://etcd-1.etcd-headless.tenant-demo.svc:2380",
			"https://etcd-2.etcd-headless.tenant-demo.svc:2380",
		}, peers)
		cm, err := tn.Kube().CoreV1().ConfigMaps(tn.Namespace).Get(ctx, etcdlayout.ClusterStateConfigMap, metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "existing", cm.Data["ETCD_INITIAL_CLUSTER_STATE"])
		logMemory(t, env)
	})

	t.Run("crashed member restarts", func(t *testing.T) {
		before, _ := cluster.Pod(tn.Namespace, "etcd-2")
		require.NoError(t, cluster.KillContainer(tn.Namespace, "etcd-2", "etcd"))
		eventually(t, time.Minute, "etcd-2 restarted and ready", func(ctx context.Context) error {
			p := pod(t, tn, "etcd-2")
			st := p.Status.ContainerStatuses[0]
			if st.RestartCount != 1 || !ready(p) {
				return fmt.Errorf("restarts %d, ready %t", st.RestartCount, ready(p))
			}
			if st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.ExitCode != 137 {
				return fmt.Errorf("last state %+v", st.LastTerminationState)
			}
			return nil
		})
		after, _ := cluster.Pod(tn.Namespace, "etcd-2")
		require.NotEqual(t, before.Containers[0].PID, after.Containers[0].PID)
	})

	t.Run("node down: pods not ready, process gone, quorum holds", func(t *testing.T) {
		// Cozystack's spread is only preferred, so two members may share a
		// node: take down a node with exactly one.
		down, others := loneMember(t, tn)
		name := etcdlayout.PodName(down)
		node := pod(t, tn, name).Spec.NodeName
		require.NoError(t, cluster.Down(ctx, node))
		info, ok := cluster.Pod(tn.Namespace, name)
		require.True(t, ok)
		require.Zero(t, info.Containers[0].PID, "%s still runs on a downed node", name)
		eventually(t, time.Minute, "node lifecycle controller marks the node and etcd-0 not ready", func(ctx context.Context) error {
			n, err := tn.Kube().CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return errors.New("node still Ready")
				}
			}
			if ready(pod(t, tn, name)) {
				return errors.New(name + " still Ready")
			}
			return nil
		})
		two, err := tn.Client(ctx, others...)
		require.NoError(t, err)
		defer two.Close()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err = two.Put(wctx, "/while-down", "2 of 3")
		require.NoError(t, err, "quorum of 2 of 3 accepts writes")

		require.NoError(t, cluster.Up(ctx, node))
		eventually(t, time.Minute, name+" ready again", func(ctx context.Context) error {
			if !ready(pod(t, tn, name)) {
				return errors.New("not ready")
			}
			return nil
		})
		one, err := tn.Client(ctx, down)
		require.NoError(t, err)
		defer one.Close()
		eventually(t, 30*time.Second, name+" caught up", func(ctx context.Context) error {
			got, err := one.Get(ctx, "/while-down", clientv3.WithSerializable())
			if err != nil || len(got.Kvs) != 1 {
				return fmt.Errorf("get: %v (%d keys)", err, len(got.Kvs))
			}
			return nil
		})
	})

	t.Run("stop leaves nothing behind", func(t *testing.T) {
		var pids []int
		for _, c := range env.Components() {
			pids = append(pids, c.Process.PID())
		}
		require.Len(t, pids, 4, "env etcd, apiserver, controller manager, scheduler")
		var podAddrs []string
		for i := range 3 {
			info, _ := cluster.Pod(tn.Namespace, etcdlayout.PodName(i))
			pids = append(pids, info.Containers[0].PID)
			podAddrs = append(podAddrs, net.JoinHostPort(info.IP.String(), "2379"))
		}
		require.Len(t, pids, 7, "and 3 pod etcds")
		dir := env.Dir()
		require.NoError(t, env.Stop())
		for _, pid := range pids {
			// A container's process may stay a zombie for a moment: its
			// shim died with it and init reaps it.
			require.Eventually(t, func() bool { return process.Exited(pid) }, 10*time.Second, 20*time.Millisecond, "process %d survived Stop", pid)
		}
		_, err := os.Stat(dir)
		require.ErrorIs(t, err, os.ErrNotExist)
		for _, addr := range podAddrs {
			_, err := net.DialTimeout("tcp", addr, time.Second)
			require.Error(t, err, "%s still accepts connections", addr)
		}
		require.False(t, slices.Contains(pids, 0))
	})
}

// loneMember returns the ordinal of a member alone on its node and the
// ordinals of the others.
func loneMember(t *testing.T, tn *etcdlayout.Tenant) (lone int, others []int) {
	t.Helper()
	perNode := map[string][]int{}
	for i := range 3 {
		n := pod(t, tn, etcdlayout.PodName(i)).Spec.NodeName
		perNode[n] = append(perNode[n], i)
	}
	lone = -1
	for _, members := range perNode {
		if len(members) == 1 && lone < 0 {
			lone = members[0]
		}
	}
	require.GreaterOrEqual(t, lone, 0, "no member is alone on its node: %v", perNode)
	for i := range 3 {
		if i != lone {
			others = append(others, i)
		}
	}
	return lone, others
}
