package etcdrelocate_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// BenchmarkEvacuate measures the evacuation of a node holding a member of
// each of four tenant etcds (64 MiB of data each, a writer on each) at
// MaxParallel 3, against its baseline in the same run: the same four moves
// one after the other, each a single relocation (then moved back).
//
// Metrics: evacuate-s (the evacuation's wall time), singles-s (the sum of
// the four single moves), evacuate/singles (target ≤ 0.6), min-FT (the
// lowest fault tolerance any tenant's monitor saw in two samples in a
// row: 0 while a member is out, never below).
func BenchmarkEvacuate(b *testing.B) {
	var nodes []localenv.NodeConfig
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d", "node-e", "node-f"} {
		nodes = append(nodes, localenv.NodeConfig{Name: n})
	}
	env := localenv.StartT(b, localenv.Config{Cluster: &localenv.ClusterConfig{Nodes: nodes, VolumesPerNode: 8}})
	ctx := context.Background()
	placements := [][]string{{"node-a", "node-b", "node-c"}, {"node-a", "node-d", "node-e"}, {"node-a", "node-b", "node-f"}, {"node-a", "node-c", "node-d"}}
	var tenants []*etcdlayout.Tenant
	for i, on := range placements {
		tn := placeTenant(b, env, etcdlayout.Config{Tenant: fmt.Sprintf("bev%d", i), Size: resource.MustParse("1Gi")}, on...)
		cli, err := tn.Client(ctx)
		require.NoError(b, err)
		b.Cleanup(func() { cli.Close() })
		fillClient(b, cli, 64)
		tenants = append(tenants, tn)
	}
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(b, err)
	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(b, err)
	r, err := etcdrelocate.New(etcdrelocate.Config{Kube: kube, Dynamic: dyn, Dial: func(ctx context.Context, addr string) (net.Conn, error) {
		return env.Cluster().DialContext(ctx, "tcp", addr)
	}})
	require.NoError(b, err)
	opts := etcdrelocate.EvacuationOptions{MaxParallel: 3, Relocation: etcdrelocate.Options{SnapshotDir: b.TempDir()}}
	for range b.N {
		// Baseline: the same moves one at a time (each a single
		// relocation), then back onto node-a.
		plan, err := r.PlanEvacuation(ctx, "node-a", opts)
		require.NoError(b, err)
		require.Len(b, plan.Moves, 4, "%s", plan)
		var singles time.Duration
		for _, mv := range plan.Moves {
			singles += moveOnce(b, r, mv.Namespace, mv.Member, mv.To)
		}
		for _, mv := range plan.Moves {
			moveOnce(b, r, mv.Namespace, mv.Member, "node-a")
		}
		monitors := map[string]*etcdrelocatetest.Monitor{}
		for _, tn := range tenants {
			cli, err := tn.Client(ctx)
			require.NoError(b, err)
			monitors[tn.Namespace] = etcdrelocatetest.StartMonitor(cli, etcdrelocatetest.MonitorConfig{})
			defer cli.Close()
		}
		plan, err = r.PlanEvacuation(ctx, "node-a", opts)
		require.NoError(b, err)
		rep, err := r.Evacuate(ctx, plan, nil)
		require.NoError(b, err)
		require.Len(b, rep.Moved, 4, "%s", rep)
		minFT := 1
		for ns, m := range monitors {
			mr := m.Stop()
			require.Zero(b, mr.AtLoss, "%s lost quorum", ns)
			if mr.AtZero > 0 {
				minFT = 0
			}
		}
		b.ReportMetric(rep.Duration.Seconds(), "evacuate-s")
		b.ReportMetric(singles.Seconds(), "singles-s")
		b.ReportMetric(rep.Duration.Seconds()/singles.Seconds(), "evacuate/singles")
		b.ReportMetric(float64(minFT), "min-FT")
		b.ReportMetric(0, "ns/op")
		b.Logf("evacuation %s, four single moves %s in all\n%s", rep.Duration.Round(100*time.Millisecond), singles.Round(100*time.Millisecond), rep)
		// Back onto node-a for the next iteration.
		require.NoError(b, env.Cluster().Uncordon(ctx, "node-a"))
		for _, mv := range plan.Moves {
			moveOnce(b, r, mv.Namespace, mv.Member, "node-a")
		}
	}
}

// moveOnce relocates member of the tenant etcd in ns to node as a single
// relocation, waiting for the cluster to settle first, and returns how long
// the relocation took.
func moveOnce(b *testing.B, r *etcdrelocate.Relocator, ns, member, node string) time.Duration {
	b.Helper()
	ctx := context.Background()
	var plan *etcdrelocate.Plan
	var err error
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		plan, err = r.Plan(ctx, etcdrelocate.Request{Namespace: ns, Member: member, TargetNode: node, Options: etcdrelocate.Options{SnapshotDir: b.TempDir()}})
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(b, err)
	res, err := r.Execute(ctx, plan)
	require.NoError(b, err)
	return res.Duration
}
