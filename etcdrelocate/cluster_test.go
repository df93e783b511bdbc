package etcdrelocate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/internal/localenv"
	"github.com/cozystack/tenantkit/internal/localenv/etcdlayout"
)

// tenantEnv is a simulated cluster (nodes node-a … node-d) running a
// 3-member tenant etcd in the StatefulSet layout on node-a, node-b and
// node-d; node-c is free, the usual target.
type tenantEnv struct {
	env    *localenv.Env
	tenant *etcdlayout.Tenant
}

func startTenant(t *testing.T) *tenantEnv {
	t.Helper()
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{
		Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}},
	}})
	ctx := t.Context()
	// Keep node-c free while the members are placed.
	require.NoError(t, env.Cluster().Cordon(ctx, "node-c"))
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "demo"})
	require.NoError(t, env.Cluster().Uncordon(ctx, "node-c"))
	return &tenantEnv{env: env, tenant: tn}
}

// relocator returns a fresh Relocator that reaches the members through the
// simulated cluster's DNS, as a tool outside the cluster network would
// through a port-forward.
func (te *tenantEnv) relocator(t *testing.T, progress func(etcdrelocate.Event)) *etcdrelocate.Relocator {
	t.Helper()
	dyn, err := dynamic.NewForConfig(te.env.RESTConfig())
	require.NoError(t, err)
	r, err := etcdrelocate.New(etcdrelocate.Config{
		Kube:     te.tenant.Kube(),
		Dynamic:  dyn,
		Dial:     te.tenant.DialContext,
		Logger:   testLogger(t),
		Progress: progress,
	})
	require.NoError(t, err)
	return r
}

func (te *tenantEnv) podNode(t *testing.T, pod string) string {
	p, err := te.tenant.Kube().CoreV1().Pods(te.tenant.Namespace).Get(t.Context(), pod, metav1.GetOptions{})
	require.NoError(t, err)
	return p.Spec.NodeName
}

func TestRelocateStatefulSetMember(t *testing.T) {
	te := startTenant(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	r := te.relocator(t, func(e etcdrelocate.Event) {
		t.Logf("step %2d/%d %-16s %-8s %s", e.Index+1, e.Total, e.Step, e.Phase, e.Message)
	})
	s, err := r.Observe(ctx, te.tenant.Namespace, "etcd")
	require.NoError(t, err)
	require.Equal(t, etcdrelocate.LayoutStatefulSet, s.Layout)
	require.Len(t, s.Voters(), 3)
	for _, m := range s.Members {
		require.NotNil(t, m.Pod, "member %s joined with its pod by peer URL", m.Name)
		require.NotNil(t, m.PVC)
		require.NotNil(t, m.PV)
		require.Equal(t, m.Pod.Node, m.PV.Node)
	}
	from := te.podNode(t, "etcd-1")
	plan, err := etcdrelocate.NewPlan(s, etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: "etcd-1", TargetNode: "node-c",
		Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}})
	require.NoError(t, err)
	t.Log("\n" + plan.String())
	res, err := r.Execute(ctx, plan)
	require.NoError(t, err)
	require.Equal(t, "node-c", te.podNode(t, "etcd-1"))
	require.NotEqual(t, from, "node-c")
	require.NotZero(t, res.NewMemberID)
	require.NotEqual(t, plan.Member.ID, res.NewMemberID)
	require.NotNil(t, res.Verification)
	t.Logf("relocated in %s\n%s", res.Duration, res.Verification)
}
