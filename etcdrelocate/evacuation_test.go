package etcdrelocate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
)

// fleetOf builds a fleet of healthy 3-voter tenant etcds on nodes node-a
// … (one more than the highest index used, plus spare): tenant i's members
// run on the nodes placements[i] names by index.
func fleetOf(t *testing.T, spare int, placements ...[]int) *etcdrelocate.Fleet {
	t.Helper()
	f := &etcdrelocate.Fleet{}
	for i, nodes := range placements {
		s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{Namespace: fmt.Sprintf("tenant-%d", i), MemberNodes: nodes, SpareNodes: spare})
		f.Clusters = append(f.Clusters, etcdrelocate.FleetCluster{ClusterRef: etcdrelocate.ClusterRef{Namespace: s.Namespace, Cluster: s.Cluster}, State: s})
		if len(s.Nodes) > len(f.Nodes) {
			f.Nodes = s.Nodes
		}
	}
	for _, c := range f.Clusters {
		c.State.Nodes = f.Nodes
	}
	return f
}

// requireSafeMoves checks every move of p: never onto the evacuated node
// or a node holding a member of the cluster (moves planned before
// included), never two of one cluster or onto one node in one wave.
func requireSafeMoves(t *testing.T, f *etcdrelocate.Fleet, p *etcdrelocate.EvacuationPlan) {
	t.Helper()
	holds := map[etcdrelocate.ClusterRef]map[string]bool{}
	for _, c := range f.Clusters {
		holds[c.ClusterRef] = map[string]bool{}
		for _, m := range c.State.Members {
			holds[c.ClusterRef][m.Node()] = true
		}
	}
	type key struct {
		wave int
		what string
	}
	seen := map[key]bool{}
	for _, m := range p.Moves {
		require.NotEqual(t, p.Node, m.To)
		require.False(t, holds[m.ClusterRef][m.To], "%s: %s onto %s, which holds a member", m.ClusterRef, m.Member, m.To)
		holds[m.ClusterRef][m.To] = true
		for _, k := range []key{{m.Wave, "cluster " + m.ClusterRef.String()}, {m.Wave, "node " + m.To}} {
			require.False(t, seen[k], "wave %d has two moves of %s", k.wave, k.what)
			seen[k] = true
		}
	}
}

func TestPlanEvacuation_fourTenants(t *testing.T) {
	// Every tenant has a member on node-a (index 0): six nodes used, two
	// spare (NewState's default).
	f := fleetOf(t, 0, []int{0, 1, 2}, []int{0, 3, 4}, []int{0, 1, 5}, []int{0, 2, 3})
	p, err := etcdrelocate.PlanEvacuationFor(f, "node-a", etcdrelocate.EvacuationOptions{MaxParallel: 3})
	require.NoError(t, err)
	require.Empty(t, p.Refused)
	require.Len(t, p.Moves, 4)
	requireSafeMoves(t, f, p)
	for _, m := range p.Moves {
		require.Equal(t, "node-a", m.From)
		require.Equal(t, "etcd-0", m.Member)
		require.Equal(t, 1, m.FaultTolerance)
		require.Equal(t, 0, m.MinFaultTolerance, "a single relocation's window")
	}
	// Balanced: the least loaded nodes first, so each target takes one.
	targets := map[string]int{}
	for _, m := range p.Moves {
		targets[m.To]++
	}
	for n, c := range targets {
		require.Equal(t, 1, c, "node %s takes %d members", n, c)
	}

	// Stable: the same inputs give the same plan, text and JSON.
	again, err := etcdrelocate.PlanEvacuationFor(f, "node-a", etcdrelocate.EvacuationOptions{MaxParallel: 3})
	require.NoError(t, err)
	require.Equal(t, p.String(), again.String())
	j1, err := json.Marshal(p)
	require.NoError(t, err)
	j2, _ := json.Marshal(again)
	require.JSONEq(t, string(j1), string(j2))
	var back etcdrelocate.EvacuationPlan
	require.NoError(t, json.Unmarshal(j1, &back))
	require.Equal(t, p.Moves, back.Moves)
	t.Logf("\n%s", p)
}

func TestPlanEvacuation_refusals(t *testing.T) {
	f := fleetOf(t, 1, []int{0, 1, 2}, []int{0, 3, 4}, []int{0, 1, 3}, []int{1, 2, 3})
	// tenant-1 is degraded: a voter does not answer.
	f.Clusters[1].State.Members[2].Status = nil
	f.Clusters[1].State.Members[2].StatusError = "context deadline exceeded"
	// tenant-2 is mid-relocation of another node's member.
	f.Clusters[2].State.Checkpoint = &etcdrelocate.Checkpoint{Pod: "etcd-1", SourceNode: "node-b", TargetNode: "node-f", Phase: etcdrelocate.PhaseRunning}
	// tenant-3 has no member on node-a; an unobservable tenant is refused.
	f.Clusters = append(f.Clusters, etcdrelocate.FleetCluster{ClusterRef: etcdrelocate.ClusterRef{Namespace: "tenant-x", Cluster: "etcd"},
		Err: errors.New("dial tcp: i/o timeout")})
	p, err := etcdrelocate.PlanEvacuationFor(f, "node-a", etcdrelocate.EvacuationOptions{})
	require.NoError(t, err)
	require.Len(t, p.Moves, 1)
	require.Equal(t, "tenant-0", p.Moves[0].Namespace)
	require.Len(t, p.Refused, 3)
	why := map[string]string{}
	for _, r := range p.Refused {
		why[r.Namespace] = strings.Join(r.Reasons, "; ")
	}
	require.Contains(t, why["tenant-1"], "member down")
	require.Contains(t, why["tenant-2"], "recorded in checkpoint etcd-relocate")
	require.Contains(t, why["tenant-x"], "cannot be observed: dial tcp: i/o timeout")
	require.Contains(t, p.String(), "refused tenant-1/etcd etcd-0")

	_, err = etcdrelocate.PlanEvacuationFor(f, "node-z", etcdrelocate.EvacuationOptions{})
	require.ErrorIs(t, err, etcdrelocate.ErrInvalidArgument)
	_, err = etcdrelocate.PlanEvacuationFor(nil, "node-a", etcdrelocate.EvacuationOptions{})
	require.ErrorIs(t, err, etcdrelocate.ErrInvalidArgument)
}

// TestPlanEvacuation_eligibility: cordoned, NotReady and tainted nodes
// are passed over (a tolerated taint is not), the pod's node selector is
// respected, zones are spread; with nothing eligible the refusal names
// every node and why.
func TestPlanEvacuation_eligibility(t *testing.T) {
	f := fleetOf(t, 4, []int{0, 1, 2}) // spare: node-d … node-g
	zone := func(z string) map[string]string { return map[string]string{corev1.LabelTopologyZone: z, "disk": "ssd"} }
	f.Nodes[0].Labels, f.Nodes[1].Labels, f.Nodes[2].Labels = zone("z1"), zone("z2"), zone("z3")
	f.Nodes[3].Unschedulable = true
	f.Nodes[4].Ready = false
	f.Nodes[5].Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	f.Nodes[5].Labels, f.Nodes[6].Labels = zone("z2"), zone("z1")
	for _, c := range f.Clusters {
		c.State.Nodes = f.Nodes
	}
	plan := func() *etcdrelocate.EvacuationPlan {
		p, err := etcdrelocate.PlanEvacuationFor(f, "node-a", etcdrelocate.EvacuationOptions{})
		require.NoError(t, err)
		return p
	}
	// node-g (zone z1, where node-a's member leaves from) is the one eligible.
	require.Equal(t, "node-g", plan().Moves[0].To)

	// Tolerating the taint makes node-f eligible, but zone z2 already holds
	// node-b's member: node-g (z1, now empty of members) still wins.
	sched := &f.Clusters[0].State.Members[0].Pod.Scheduling
	sched.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	require.Equal(t, "node-g", plan().Moves[0].To)
	// A node selector node-g does not match leaves node-f.
	f.Nodes[6].Labels = map[string]string{corev1.LabelTopologyZone: "z1"}
	sched.NodeSelector = map[string]string{"disk": "ssd"}
	require.Equal(t, "node-f", plan().Moves[0].To)
	// Nothing eligible: refused, every node named.
	sched.Tolerations = nil
	p := plan()
	require.Empty(t, p.Moves)
	require.Len(t, p.Refused, 1)
	reasons := strings.Join(p.Refused[0].Reasons, "; ")
	for _, want := range []string{"node-a is the node being emptied", "node-b runs a member of the cluster", "node-d is cordoned",
		"node-e is not Ready", "node-f has taint dedicated=gpu:NoSchedule", "node-g does not match the pod's node selector"} {
		require.Contains(t, reasons, want)
	}
}

// TestPlanEvacuation_coLocatedAndResume: a cluster with two members on the
// node moves both, one wave apart, to different nodes; a relocation a
// checkpoint records from the node is resumed, not planned anew.
func TestPlanEvacuation_coLocatedAndResume(t *testing.T) {
	f := fleetOf(t, 2, []int{0, 0, 1}, []int{0, 2, 3})
	f.Clusters[1].State.Checkpoint = &etcdrelocate.Checkpoint{Pod: "etcd-0", SourceNode: "node-a", TargetNode: "node-e", Phase: etcdrelocate.PhaseRunning}
	p, err := etcdrelocate.PlanEvacuationFor(f, "node-a", etcdrelocate.EvacuationOptions{MaxParallel: 2})
	require.NoError(t, err)
	require.Empty(t, p.Refused)
	require.Len(t, p.Moves, 3)
	requireSafeMoves(t, f, p)
	var waves []int
	for _, m := range p.Moves {
		if m.Namespace == "tenant-0" {
			waves = append(waves, m.Wave)
		} else {
			require.True(t, m.Resume)
			require.Equal(t, "node-e", m.To)
		}
	}
	require.Len(t, waves, 2)
	require.NotEqual(t, waves[0], waves[1])

	// The report of node-a: tenant-0 loses quorum with it, and is flagged.
	rep := etcdrelocate.NodeReportFor(f, "node-a")
	require.False(t, rep.DrainSafe)
	require.Equal(t, -1, rep.Clusters[0].After)
	require.True(t, rep.Clusters[0].LosesQuorum())
	require.Equal(t, []string{"node-a: etcd-0, etcd-1"}, rep.Clusters[0].CoLocated)
	require.Equal(t, 0, rep.Clusters[1].After)
	require.Contains(t, rep.String(), "LOSES QUORUM")

	// Spread fixes tenant-0 with one move, off node-a.
	sp, err := etcdrelocate.PlanSpreadFor(f, etcdrelocate.ClusterRef{Namespace: "tenant-0", Cluster: "etcd"}, etcdrelocate.EvacuationOptions{})
	require.NoError(t, err)
	require.Len(t, sp.Moves, 1)
	require.Equal(t, "etcd-1", sp.Moves[0].Member)
	require.Equal(t, "node-a", sp.Moves[0].From)
	require.NotContains(t, []string{"node-a", "node-b"}, sp.Moves[0].To)
	_, err = etcdrelocate.PlanSpreadFor(f, etcdrelocate.ClusterRef{Namespace: "nope", Cluster: "etcd"}, etcdrelocate.EvacuationOptions{})
	require.ErrorIs(t, err, etcdrelocate.ErrInvalidArgument)
}

// TestNodeReport: a node without co-located members is drain-safe when
// every cluster keeps quorum; an unobservable cluster makes it unproven.
func TestNodeReport(t *testing.T) {
	f := fleetOf(t, 0, []int{0, 1, 2}, []int{1, 2, 3})
	rep := etcdrelocate.NodeReportFor(f, "node-a")
	require.True(t, rep.DrainSafe)
	require.Equal(t, []string{"etcd-0"}, rep.Clusters[0].OnNode)
	require.Equal(t, 1, rep.Clusters[0].FaultTolerance)
	require.Equal(t, 0, rep.Clusters[0].After)
	require.Empty(t, rep.Clusters[1].OnNode)
	require.Equal(t, 1, rep.Clusters[1].After)
	f.Clusters = append(f.Clusters, etcdrelocate.FleetCluster{ClusterRef: etcdrelocate.ClusterRef{Namespace: "tenant-x", Cluster: "etcd"}, Err: errors.New("no route")})
	rep = etcdrelocate.NodeReportFor(f, "node-a")
	require.False(t, rep.DrainSafe, "an unobserved cluster is not proven safe")
	require.Contains(t, rep.String(), "unknown: no route")
	_, err := json.Marshal(rep)
	require.NoError(t, err)
}
