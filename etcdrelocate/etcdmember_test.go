package etcdrelocate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestRelocateEtcdMember relocates a member of a v1alpha2 (EtcdMember)
// tenant etcd through the operator — here the test-only stand-in of package
// etcdlayout — with a write load running: the plan deletes the EtcdMember
// and waits for the operator's replacement on the target node.
func TestRelocateEtcdMember(t *testing.T) {
	t.Parallel()
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{
		Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, env.Cluster().Cordon(ctx, "node-c"))
	// The stand-in applies the pin once it has latched it into
	// status.observed, as the real operator does (the plan waits for
	// that); the strict topology spread and the cordon of the source are
	// kept so that the run exercises them too.
	tn := etcdlayout.StartV1alpha2T(t, env, etcdlayout.Config{Tenant: "v2", StrictSpread: true})
	require.NoError(t, env.Cluster().Uncordon(ctx, "node-c"))
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	r, err := etcdrelocate.New(etcdrelocate.Config{Kube: tn.Kube(), Dynamic: dyn, Dial: tn.DialContext, Logger: testLogger(t),
		Progress: func(e etcdrelocate.Event) {
			if e.Phase != etcdrelocate.EventStarted {
				t.Logf("step %2d/%d %-18s %-8s %s (%s)", e.Index+1, e.Total, e.Step, e.Phase, e.Message, e.Elapsed.Round(time.Millisecond))
			}
		}})
	require.NoError(t, err)

	s, err := r.Observe(ctx, tn.Namespace, "etcd")
	require.NoError(t, err)
	require.Equal(t, etcdrelocate.LayoutEtcdMember, s.Layout)
	require.Len(t, s.Voters(), 3)
	var member string
	for _, m := range s.Members {
		require.NotNil(t, m.Pod, "member %s joined with its pod", m.Name)
		require.NotEmpty(t, m.EtcdMember)
		if m.ID != s.Leader() && member == "" {
			member = m.EtcdMember
		}
	}

	cfg, err := tn.ClientConfig(ctx)
	require.NoError(t, err)
	cfg.AutoSyncInterval = time.Second
	cli, err := clientv3.New(cfg)
	require.NoError(t, err)
	defer cli.Close()
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/v2/"})
	mon := etcdrelocatetest.StartMonitorT(t, cli, etcdrelocatetest.MonitorConfig{})

	plan, err := r.Plan(ctx, etcdrelocate.Request{Namespace: tn.Namespace, Member: member, TargetNode: "node-c",
		Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}})
	require.NoError(t, err)
	t.Log("\n" + plan.String())
	res, err := r.Execute(ctx, plan)
	require.NoError(t, err)
	lr, mr := load.Stop(), mon.Stop()
	load.CheckT(t, ctx, cli)
	require.Empty(t, res.Verification.Problems)
	require.Equal(t, "node-c", res.Verification.PodNode)
	_, err = dyn.Resource(schemaEtcdMember).Namespace(tn.Namespace).Get(ctx, member, metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the old EtcdMember is gone")
	ec, err := dyn.Resource(schemaEtcdCluster).Namespace(tn.Namespace).Get(ctx, "etcd", metav1.GetOptions{})
	require.NoError(t, err)
	_, pinned, _ := unstructuredAffinity(ec.Object)
	require.False(t, pinned, "the EtcdCluster's affinity is restored")
	t.Logf("v1alpha2: relocated %s to node-c in %s; %d writes acknowledged, %d failed, longest gap %s; min fault tolerance %d, %s at ≤0\n%s",
		member, res.Duration.Round(time.Millisecond), lr.Acked, lr.Failed, lr.LongestGap, mr.MinFaultTolerance, mr.AtZero, res.Verification)
}
