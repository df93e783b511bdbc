package etcdrelocate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// stepKinds are the steps of a StatefulSet plan, in order.
var stepKinds = []etcdrelocate.StepKind{
	etcdrelocate.StepCheckpoint, etcdrelocate.StepMoveLeader, etcdrelocate.StepSnapshot, etcdrelocate.StepCordon,
	etcdrelocate.StepStopMember, etcdrelocate.StepRemoveMember, etcdrelocate.StepAddLearner, etcdrelocate.StepClaimOnTarget,
	etcdrelocate.StepWaitPod, etcdrelocate.StepCatchUp, etcdrelocate.StepPromote, etcdrelocate.StepVerify,
	etcdrelocate.StepReleaseVolume, etcdrelocate.StepUncordon, etcdrelocate.StepFinish,
}

// quickRestarts lowers the simulated kubelet's restart back-off: the
// members killed here are killed again and again, and a back-off grown to
// its 30s cap would make the test wait for restarts rather than relocate.
func quickRestarts(cc *localenv.ClusterConfig) { cc.RestartBackoff = 200 * time.Millisecond }

// zeroTolerance reports whether the cluster has no fault tolerance after the
// step (the member is out and its replacement not yet a voter).
func zeroTolerance(k etcdrelocate.StepKind) bool {
	switch k {
	case etcdrelocate.StepStopMember, etcdrelocate.StepRemoveMember, etcdrelocate.StepAddLearner,
		etcdrelocate.StepClaimOnTarget, etcdrelocate.StepWaitPod, etcdrelocate.StepCatchUp:
		return true
	}
	return false
}

// victim picks the member to kill -9 after step k of relocating member:
// while the cluster tolerates a failure, another voter (the leader on even
// boundaries, a follower on odd ones); once the new pod runs, the new
// member itself; in between (fault tolerance 0 and nothing new to kill) a
// remaining voter, a second failure that stops writes until it restarts.
func (te *tenantEnv) victim(t testing.TB, r *etcdrelocate.Relocator, member string, i int) (pod string, losesQuorum bool) {
	k := stepKinds[i]
	if k == etcdrelocate.StepWaitPod || k == etcdrelocate.StepCatchUp {
		return member, false
	}
	s := te.observe(t, r)
	leader := ""
	if m := s.MemberByID(s.Leader()); m != nil && m.Pod != nil {
		leader = m.Pod.Name
	}
	var others []string
	for _, m := range s.Members {
		if m.Pod != nil && m.Pod.Name != member && m.Voter() {
			others = append(others, m.Pod.Name)
		}
	}
	require.NotEmpty(t, others)
	pick := others[0]
	for _, o := range others {
		if (i%2 == 0) == (o == leader) {
			pick = o
		}
	}
	return pick, zeroTolerance(k)
}

// TestRelocateMemberKilledAtEveryStep kills -9 a member at every step
// boundary of a relocation (with a write load running) and checks that the
// relocation completes, that quorum is lost only where a second failure hits
// the zero-tolerance window, and that no acknowledged write is lost.
func TestRelocateMemberKilledAtEveryStep(t *testing.T) {
	t.Parallel()
	te := startTenant(t, etcdlayout.Config{Tenant: "faults"}, quickRestarts)
	cli := te.client(t)
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/faults/"})
	r := te.relocator(t, nil)
	member := "etcd-1"
	var rows []string
	for i, k := range stepKinds {
		t.Run(fmt.Sprintf("%02d-after-%s", i+1, k), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			s := te.waitHealthy(t, r, member)
			target := te.freeNode(t, s)
			mon := etcdrelocatetest.StartMonitorT(t, te.client(t), etcdrelocatetest.MonitorConfig{})
			var killed string
			var losesQuorum bool
			rr := te.relocator(t, func(e etcdrelocate.Event) {
				if e.Index == i && e.Phase != etcdrelocate.EventStarted && killed == "" {
					killed, losesQuorum = te.victim(t, r, member, i)
					require.NoError(t, te.env.Cluster().KillContainer(te.tenant.Namespace, killed, "etcd"))
				}
			})
			plan, err := rr.Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: member, TargetNode: target,
				Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}})
			require.NoError(t, err)
			res, err := rr.Execute(ctx, plan)
			resumed := false
			if err != nil {
				// The executor stopped safely; a fresh one resumes.
				var se *etcdrelocate.StepError
				require.ErrorAs(t, err, &se, "stopped with %v", err)
				t.Logf("stopped at %s (%v); resuming", se.Step, err)
				plan, err = te.relocator(t, nil).Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace})
				require.NoError(t, err)
				require.True(t, plan.Resume)
				res, err = te.relocator(t, nil).Execute(ctx, plan)
				require.NoError(t, err)
				resumed = true
			}
			mr := mon.Stop()
			require.Equal(t, target, te.podNode(t, member))
			require.Empty(t, res.Verification.Problems)
			if !losesQuorum {
				require.Zero(t, mr.AtLoss, "quorum lost after killing %s", killed)
			}
			rows = append(rows, fmt.Sprintf("after %-16s killed %-7s resumed=%-5t min-FT %2d  no-quorum %6s  took %s",
				k, killed, resumed, mr.MinFaultTolerance, mr.AtLoss.Round(100*time.Millisecond), res.Duration.Round(100*time.Millisecond)))
		})
	}
	rep := load.Stop()
	load.CheckT(t, context.Background(), cli)
	t.Logf("kill -9 at every step boundary; load: %d writes acknowledged (all readable), %d failed, longest gap %s\n%s",
		rep.Acked, rep.Failed, rep.LongestGap, joinLines(rows))
}

// TestRelocateExecutorKilledAtEveryStep stops the executor at every step
// boundary (its context is cancelled, as a crash would end it) and runs a
// fresh one that knows nothing but the cluster state: it must resume from
// the checkpoint and complete, with no acknowledged write lost.
func TestRelocateExecutorKilledAtEveryStep(t *testing.T) {
	t.Parallel()
	te := startTenant(t, etcdlayout.Config{Tenant: "crash"})
	cli := te.client(t)
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/crash/"})
	r := te.relocator(t, nil)
	member := "etcd-1"
	var rows []string
	for i, k := range stepKinds {
		t.Run(fmt.Sprintf("%02d-after-%s", i+1, k), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			target := te.freeNode(t, te.waitHealthy(t, r, member))
			runCtx, crash := context.WithCancel(ctx)
			first := te.relocator(t, func(e etcdrelocate.Event) {
				if e.Index == i && e.Phase != etcdrelocate.EventStarted {
					crash()
				}
			})
			req := etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: member, TargetNode: target,
				Options: etcdrelocate.Options{SnapshotDir: t.TempDir()}}
			plan, err := first.Plan(ctx, req)
			require.NoError(t, err)
			_, err = first.Execute(runCtx, plan)
			if k == etcdrelocate.StepFinish {
				require.True(t, err == nil || errors.Is(err, context.Canceled), "%v", err)
				require.Equal(t, target, te.podNode(t, member))
				rows = append(rows, fmt.Sprintf("after %-16s nothing left to resume", k))
				return
			}
			require.ErrorIs(t, err, context.Canceled)
			// A new executor: only the cluster state tells it where to go on.
			fresh := te.relocator(t, nil)
			before := te.observe(t, fresh)
			require.NotNil(t, before.Checkpoint)
			snapshotRecorded := before.Checkpoint.SnapshotPath != ""
			plan, err = fresh.Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace})
			require.NoError(t, err)
			require.True(t, plan.Resume)
			res, err := fresh.Execute(ctx, plan)
			require.NoError(t, err)
			require.Equal(t, target, te.podNode(t, member))
			require.Empty(t, res.Verification.Problems)
			var skipped []etcdrelocate.StepKind
			for _, st := range res.Steps {
				if st.Skipped {
					skipped = append(skipped, st.Kind)
				}
			}
			for _, done := range stepKinds[:i+1] {
				switch done {
				case etcdrelocate.StepCheckpoint, etcdrelocate.StepMoveLeader, etcdrelocate.StepStopMember,
					etcdrelocate.StepRemoveMember, etcdrelocate.StepAddLearner, etcdrelocate.StepPromote:
					require.Contains(t, skipped, done, "step %s done before the crash was not recognised as done", done)
				case etcdrelocate.StepSnapshot:
					// The snapshot streams in the background: one the
					// checkpoint records is not taken again; one the
					// crash cut short is taken again.
					if snapshotRecorded {
						require.Contains(t, skipped, done, "the recorded snapshot was taken again")
					} else {
						require.NotContains(t, skipped, done, "no snapshot was recorded, yet it was skipped")
					}
				}
			}
			require.NotEmpty(t, res.SnapshotPath, "a snapshot was verified before the old volume went")
			rows = append(rows, fmt.Sprintf("after %-16s resumed in %s, skipped %v", k, res.Duration.Round(100*time.Millisecond), skipped))
		})
	}
	rep := load.Stop()
	load.CheckT(t, context.Background(), cli)
	t.Logf("executor stopped at every step boundary and resumed by a fresh one; load: %d writes acknowledged (all readable), %d failed\n%s",
		rep.Acked, rep.Failed, joinLines(rows))
}

func joinLines(rows []string) string {
	out := ""
	for _, r := range rows {
		out += r + "\n"
	}
	return out
}
