package etcdrelocate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// startTenantFive is startTenant on five nodes, two of them (node-c and
// node-e) kept free while the members are placed.
func startTenantFive(t testing.TB, tenant string) *tenantEnv {
	t.Helper()
	cc := &localenv.ClusterConfig{Nodes: []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}, {Name: "node-e"}}}
	env := localenv.StartT(t, localenv.Config{Cluster: cc})
	ctx := context.Background()
	for _, n := range []string{"node-c", "node-e"} {
		require.NoError(t, env.Cluster().Cordon(ctx, n))
	}
	tn := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: tenant})
	for _, n := range []string{"node-c", "node-e"} {
		require.NoError(t, env.Cluster().Uncordon(ctx, n))
	}
	return &tenantEnv{env: env, tenant: tn}
}

// freeNodes returns the Ready, schedulable nodes running no member.
func freeNodes(s *etcdrelocate.State) []string {
	used := map[string]bool{}
	for _, m := range s.Members {
		used[m.Node()] = true
	}
	var free []string
	for _, n := range s.Nodes {
		if !used[n.Name] && n.Ready && !n.Unschedulable {
			free = append(free, n.Name)
		}
	}
	return free
}

// race plans every request first, then starts one executor per plan at
// once (each its own Relocator, as separate processes would be), and
// checks that exactly one acted and every other refused with a
// *LockedError before changing anything.
func (te *tenantEnv) race(t *testing.T, reqs []etcdrelocate.Request) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	plans := make([]*etcdrelocate.Plan, len(reqs))
	rs := make([]*etcdrelocate.Relocator, len(reqs))
	for i, req := range reqs {
		rs[i] = te.relocator(t, nil)
		req.Namespace, req.Options.SnapshotDir = te.tenant.Namespace, t.TempDir()
		p, err := rs[i].Plan(ctx, req)
		require.NoError(t, err)
		plans[i] = p
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, len(reqs))
		ress  = make([]*etcdrelocate.Result, len(reqs))
	)
	for i := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ress[i], errs[i] = rs[i].Execute(ctx, plans[i])
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, winner, "executors %d and %d both succeeded", winner, i)
			winner = i
			continue
		}
		var le *etcdrelocate.LockedError
		require.ErrorAs(t, err, &le, "executor %d (%s to %s): %v", i, reqs[i].Member, reqs[i].TargetNode, err)
		require.ErrorIs(t, err, etcdrelocate.ErrLocked)
		require.NotEmpty(t, le.Holder)
		require.False(t, le.Expires.IsZero())
		require.Empty(t, ress[i].Steps, "a refused executor ran steps")
		t.Logf("executor %d (%s to %s) refused: %v", i, reqs[i].Member, reqs[i].TargetNode, err)
	}
	require.NotEqual(t, -1, winner, "no executor acted")
	w := reqs[winner]
	require.Empty(t, ress[winner].Verification.Problems)
	require.Equal(t, w.TargetNode, te.podNode(t, w.Member))
	t.Logf("executor %d moved %s to %s in %s", winner, w.Member, w.TargetNode, ress[winner].Duration.Round(100*time.Millisecond))
	te.requireWhole(t, 3)
}

// requireWhole checks the cluster has the given number of voters, no
// learner, equal HashKV on every voter, and no checkpoint or lease left.
func (te *tenantEnv) requireWhole(t testing.TB, voters int) {
	t.Helper()
	s := te.observe(t, te.relocator(t, nil))
	require.Len(t, s.Voters(), voters)
	require.Empty(t, s.Learners())
	require.NotZero(t, s.Leader())
	for _, m := range s.Voters() {
		require.True(t, m.HashOK, "no hash from %s: %s", m.Label(), m.HashError)
		require.Equal(t, s.Voters()[0].Hash, m.Hash, "HashKV of %s differs at revision %d", m.Label(), s.HashRevision)
	}
	require.Nil(t, s.Checkpoint)
	require.Nil(t, s.Lease)
}

// TestConcurrentExecutors starts several executors at once against one
// tenant etcd under a write load — for the same member and target, the
// same member and different targets, and different members — and checks
// that each time exactly one acts and the others refuse with a
// *LockedError naming the holder; the cluster keeps 3 voters with equal
// HashKV and every acknowledged write. Then an executor whose lease is
// stolen stops before its next step, and a fresh one resumes its run.
func TestConcurrentExecutors(t *testing.T) {
	t.Parallel()
	te := startTenantFive(t, "mutex")
	cli := te.client(t)
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/mutex/"})
	r := te.relocator(t, nil)
	t.Run("same member, same target", func(t *testing.T) {
		target := freeNodes(te.waitHealthy(t, r, "etcd-1"))[0]
		req := etcdrelocate.Request{Member: "etcd-1", TargetNode: target}
		te.race(t, []etcdrelocate.Request{req, req, req})
	})
	t.Run("same member, different targets", func(t *testing.T) {
		free := freeNodes(te.waitHealthy(t, r, "etcd-1"))
		require.Len(t, free, 2)
		te.race(t, []etcdrelocate.Request{{Member: "etcd-1", TargetNode: free[0]}, {Member: "etcd-1", TargetNode: free[1]},
			{Member: "etcd-1", TargetNode: free[0]}, {Member: "etcd-1", TargetNode: free[1]}})
	})
	t.Run("different members", func(t *testing.T) {
		te.waitHealthy(t, r, "etcd-2")
		free := freeNodes(te.waitHealthy(t, r, "etcd-0"))
		require.Len(t, free, 2)
		te.race(t, []etcdrelocate.Request{{Member: "etcd-0", TargetNode: free[0]}, {Member: "etcd-2", TargetNode: free[1]},
			{Member: "etcd-1", TargetNode: free[0]}})
	})
	t.Run("stolen lease", func(t *testing.T) { testStolenLease(t, te, r) })
	rep := load.Stop()
	load.CheckT(t, context.Background(), cli)
	t.Logf("load: %d writes acknowledged (all readable), %d failed", rep.Acked, rep.Failed)
}

// testStolenLease takes the lease from a running executor after its
// checkpoint step: it must stop with ErrLeaseLost before the next step
// changes anything; once the lease is free again a fresh executor resumes
// the relocation from the checkpoint.
func testStolenLease(t *testing.T, te *tenantEnv, r *etcdrelocate.Relocator) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns, member := te.tenant.Namespace, "etcd-1"
	s := te.waitHealthy(t, r, member)
	target := freeNodes(s)[0]
	before := s.FindMember(member)
	require.NotNil(t, before)
	source := before.Node()
	ex := te.relocator(t, func(e etcdrelocate.Event) {
		if e.Step == etcdrelocate.StepCheckpoint && e.Phase == etcdrelocate.EventDone {
			stealLeaseByHand(t, te, ns)
		}
	})
	plan, err := ex.Plan(ctx, etcdrelocate.Request{Namespace: ns, Member: member, TargetNode: target, Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}})
	require.NoError(t, err)
	res, err := ex.Execute(ctx, plan)
	require.ErrorIs(t, err, etcdrelocate.ErrLeaseLost)
	t.Log(err)
	require.Len(t, res.Steps, 1, "steps after the checkpoint ran: %+v", res.Steps)
	// Nothing after the checkpoint happened: the member is still there, on
	// its pod, and the source node is not cordoned.
	after := te.observe(t, r)
	m := after.MemberByID(plan.Member.ID)
	require.NotNil(t, m, "the member was removed")
	require.Equal(t, plan.Member.PodUID, string(m.Pod.UID))
	for _, n := range after.Nodes {
		if n.Name == source {
			require.False(t, n.Unschedulable, "the source node was cordoned")
		}
	}
	require.NotNil(t, after.Checkpoint)
	require.NotNil(t, after.Lease)
	require.Equal(t, "thief", after.Lease.Holder)
	// While the thief holds it, a new plan is refused naming it.
	_, err = r.Plan(ctx, etcdrelocate.Request{Namespace: ns, Member: "etcd-0", TargetNode: target})
	var le *etcdrelocate.LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, "thief", le.Holder)
	// The thief goes away; a fresh executor resumes from the checkpoint.
	require.NoError(t, te.tenant.Kube().CoordinationV1().Leases(ns).Delete(ctx, "etcd-relocate", metav1.DeleteOptions{}))
	fresh := te.relocator(t, nil)
	plan, err = fresh.Plan(ctx, etcdrelocate.Request{Namespace: ns})
	require.NoError(t, err)
	require.True(t, plan.Resume)
	res, err = fresh.Execute(ctx, plan)
	require.NoError(t, err)
	require.Equal(t, target, te.podNode(t, member))
	require.Empty(t, res.Verification.Problems)
	te.requireWhole(t, 3)
}

// stealLeaseByHand makes "thief" the holder of the tenant's relocation
// lease by a plain Update (retrying the executor's own renewals).
func stealLeaseByHand(t testing.TB, te *tenantEnv, ns string) {
	ctx := context.Background()
	leases := te.tenant.Kube().CoordinationV1().Leases(ns)
	thief := "thief"
	for i := 0; i < 20; i++ {
		l, err := leases.Get(ctx, "etcd-relocate", metav1.GetOptions{})
		if err != nil {
			t.Errorf("get lease: %v", err)
			return
		}
		l.Spec.HolderIdentity = &thief
		if _, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			t.Errorf("steal lease: %v", err)
			return
		}
	}
	t.Error("could not steal the lease")
}

// TestRestoreAfterRollback rolls a relocation back (its target node is
// cordoned after planning, so the new pod never runs), checks that the
// error and the next plan name the call that restores the replica, and
// restores it with RestoreReplica on another node: the cluster is back to
// 3 voters with equal HashKV and every acknowledged write.
func TestRestoreAfterRollback(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	te := startTenantFive(t, "restore")
	cli := te.client(t)
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/restore/"})
	dyn, err := dynamic.NewForConfig(te.env.RESTConfig())
	require.NoError(t, err)
	r, err := etcdrelocate.New(etcdrelocate.Config{Kube: te.tenant.Kube(), Dynamic: dyn, Dial: te.tenant.DialContext,
		Logger: testLogger(t), Timeouts: etcdrelocate.Timeouts{Pod: 8 * time.Second}})
	require.NoError(t, err)
	s := te.waitHealthy(t, r, "etcd-2")
	free := freeNodes(s)
	require.Len(t, free, 2)
	plan, err := etcdrelocate.PlanFor(s, etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: "etcd-2", TargetNode: free[0],
		Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}})
	require.NoError(t, err)
	require.NoError(t, te.env.Cluster().Cordon(ctx, free[0]))
	_, err = r.Execute(ctx, plan)
	var rb *etcdrelocate.RolledBackError
	require.ErrorAs(t, err, &rb)
	require.Contains(t, err.Error(), "RestoreReplica")
	require.Contains(t, err.Error(), "--restore-to-node")
	t.Log(err)
	after := te.observe(t, r)
	require.Len(t, after.Voters(), 2)
	require.Nil(t, after.Lease, "the rolled-back run released its lease")
	_, err = r.Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace})
	require.ErrorIs(t, err, etcdrelocate.ErrRolledBack)
	require.Contains(t, err.Error(), "RestoreReplica")

	// Restore on the other free node, with the default pod timeout.
	rr := te.relocator(t, func(e etcdrelocate.Event) {
		if e.Phase != etcdrelocate.EventStarted {
			t.Logf("restore: step %2d/%d %-16s %-8s %s (%s)", e.Index+1, e.Total, e.Step, e.Phase, e.Message, e.Elapsed.Round(time.Millisecond))
		}
	})
	rp, err := rr.PlanRestore(ctx, etcdrelocate.RestoreRequest{Namespace: te.tenant.Namespace, Node: free[1]})
	require.NoError(t, err)
	t.Log(rp)
	require.True(t, rp.Restore)
	res, err := rr.RestoreReplica(ctx, etcdrelocate.RestoreRequest{Namespace: te.tenant.Namespace, Node: free[1]})
	require.NoError(t, err)
	require.Empty(t, res.Verification.Problems)
	require.Equal(t, free[1], te.podNode(t, "etcd-2"))
	te.requireWhole(t, 3)
	_, err = rr.RestoreReplica(ctx, etcdrelocate.RestoreRequest{Namespace: te.tenant.Namespace, Node: free[1]})
	require.ErrorIs(t, err, etcdrelocate.ErrNothingToRestore)
	rep := load.Stop()
	load.CheckT(t, ctx, cli)
	t.Logf("load: %d writes acknowledged (all readable), %d failed", rep.Acked, rep.Failed)
}

// TestPreflightRefusesHeldLease: a lease held by another executor is a
// refusal of its own, naming the holder; an expired one is not, nor one
// whose holder is gone.
func TestPreflightRefusesHeldLease(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	req := etcdrelocate.Request{Namespace: s.Namespace, Member: "etcd-1", TargetNode: etcdrelocatetest.NodeName(3)}
	require.NoError(t, etcdrelocate.Preflight(s, req))
	s.Lease = &etcdrelocate.LeaseInfo{Name: "etcd-relocate", Holder: "ops-laptop/4242/0123456789abcdef",
		Renewed: s.ObservedAt.Add(-5 * time.Second), Expires: s.ObservedAt.Add(25 * time.Second)}
	err := etcdrelocate.Preflight(s, req)
	var le *etcdrelocate.LockedError
	require.ErrorAs(t, err, &le)
	require.ErrorIs(t, err, etcdrelocate.ErrLocked)
	require.Equal(t, s.Lease.Holder, le.Holder)
	require.Equal(t, s.Lease.Expires, le.Expires)
	t.Log(err)
	// A holder found gone (a process of this machine that exited, as a
	// kill -9 leaves it) is no refusal: Execute takes its Lease over after
	// one call timeout.
	etcdrelocate.MarkHolderGone(s.Lease)
	require.NoError(t, etcdrelocate.Preflight(s, req))
	s.Lease.Expires = s.ObservedAt.Add(-time.Second)
	require.NoError(t, etcdrelocate.Preflight(s, req))
}

// TestRestorePlan: a rolled-back checkpoint and a cluster one voter short
// give a restore plan that adds a learner and promotes it; a running
// relocation, no checkpoint or an unusable node are refused.
func TestRestorePlan(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	p, err := etcdrelocate.PlanFor(s, etcdrelocate.Request{Namespace: s.Namespace, Member: "etcd-1", TargetNode: etcdrelocatetest.NodeName(3)})
	require.NoError(t, err)
	req := etcdrelocate.RestoreRequest{Namespace: s.Namespace, Node: etcdrelocatetest.NodeName(4)}
	_, err = etcdrelocate.RestorePlanFor(s, req)
	require.ErrorIs(t, err, etcdrelocate.ErrNothingToRestore)
	cp := etcdrelocate.CheckpointFor(p)
	s.Checkpoint = cp
	_, err = etcdrelocate.RestorePlanFor(s, req)
	require.ErrorIs(t, err, etcdrelocate.ErrNothingToRestore, "a running relocation is resumed, not restored")
	cp.Phase, cp.RetainedVolume = etcdrelocate.PhaseRolledBack, p.Member.PV
	_, err = etcdrelocate.RestorePlanFor(s, req)
	require.ErrorIs(t, err, etcdrelocate.ErrUnexpectedMember, "the removed member is still there")
	s.Members = append(s.Members[:1], s.Members[2:]...)
	rp, err := etcdrelocate.RestorePlanFor(s, req)
	require.NoError(t, err)
	require.True(t, rp.Restore)
	require.Equal(t, req.Node, rp.TargetNode)
	require.Equal(t, 3, rp.Voters)
	var kinds []etcdrelocate.StepKind
	for _, st := range rp.Steps {
		kinds = append(kinds, st.Kind)
	}
	require.Equal(t, []etcdrelocate.StepKind{etcdrelocate.StepCheckpoint, etcdrelocate.StepClearMember, etcdrelocate.StepAddLearner,
		etcdrelocate.StepClaimOnTarget, etcdrelocate.StepWaitPod, etcdrelocate.StepCatchUp, etcdrelocate.StepPromote,
		etcdrelocate.StepVerify, etcdrelocate.StepReleaseVolume, etcdrelocate.StepFinish}, kinds)
	require.Equal(t, 3, rp.Steps[len(rp.Steps)-1].After.Voters)
	t.Log(rp)
	_, err = etcdrelocate.RestorePlanFor(s, etcdrelocate.RestoreRequest{Namespace: s.Namespace, Node: etcdrelocatetest.NodeName(0)})
	require.ErrorIs(t, err, etcdrelocate.ErrTargetHasReplica)
	// An interrupted restore resumes on its own node only.
	cp.Phase, cp.TargetNode = etcdrelocate.PhaseRestoring, req.Node
	rp, err = etcdrelocate.RestorePlanFor(s, etcdrelocate.RestoreRequest{Namespace: s.Namespace})
	require.NoError(t, err)
	require.True(t, rp.Resume)
	require.Equal(t, req.Node, rp.TargetNode)
	_, err = etcdrelocate.RestorePlanFor(s, etcdrelocate.RestoreRequest{Namespace: s.Namespace, Node: etcdrelocatetest.NodeName(3)})
	require.ErrorIs(t, err, etcdrelocate.ErrRelocationInProgress)
	_, err = etcdrelocate.PlanFor(s, etcdrelocate.Request{Namespace: s.Namespace})
	require.ErrorIs(t, err, etcdrelocate.ErrRolledBack)
}
