package etcdrelocate_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// stallFor is how long a member is stopped: longer than any bound the
// executor had before stalls were waited for (its catch-up leader check
// gave up at once, its "other voters healthy" after seconds), and shorter
// than the pods' liveness probe (3 × 5 s), which would restart it.
const stallFor = 10 * time.Second

// stopMember sends SIGSTOP to the etcd process of pod and returns the
// function that sends SIGCONT (safe to call more than once).
func (te *tenantEnv) stopMember(t testing.TB, pod string) func() {
	t.Helper()
	info, ok := te.env.Cluster().Pod(te.tenant.Namespace, pod)
	require.True(t, ok, "pod %s runs nowhere", pod)
	pid := 0
	for _, c := range info.Containers {
		if c.Name == "etcd" {
			pid = c.PID
		}
	}
	require.NotZero(t, pid, "etcd of %s is not running", pod)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	var once sync.Once
	resume := func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

// stallVictim returns the pod of the leader (leader true) or of a
// follower among the voters other than member.
func (te *tenantEnv) stallVictim(t testing.TB, r *etcdrelocate.Relocator, member string, leader bool) (string, uint64) {
	t.Helper()
	s := te.observe(t, r)
	lead := s.MemberByID(s.Leader())
	for _, m := range s.Members {
		if m.Pod == nil || m.Pod.Name == member || !m.Voter() {
			continue
		}
		if (lead != nil && m.ID == lead.ID) == leader {
			return m.Pod.Name, m.ID
		}
	}
	t.Fatalf("no voter to stall (leader=%t)", leader)
	return "", 0
}

// TestRelocateStalledMember stops (SIGSTOP, not kill) a follower and the
// leader for stallFor as the wait-pod and catch-up steps begin, with a
// write load running. In these windows the cluster has two voters, so the
// stall stops the cluster until the member resumes. The executor must
// report the stall in its progress events, wait for the member, and
// complete; with a budget shorter than the stall it must stop with a
// *StalledError that names the member and how to resume, and a re-run must
// complete. No acknowledged write may be lost.
func TestRelocateStalledMember(t *testing.T) {
	t.Parallel()
	te := startTenant(t, etcdlayout.Config{Tenant: "stall"})
	cli := te.client(t)
	load := etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/stall/"})
	r := te.relocator(t, nil)
	member := "etcd-1"
	var rows []string
	for _, tc := range []struct {
		step   etcdrelocate.StepKind
		leader bool
		// budget shorter than the stall: the run stops, a re-run completes.
		budget time.Duration
	}{
		{step: etcdrelocate.StepWaitPod},
		{step: etcdrelocate.StepWaitPod, leader: true},
		{step: etcdrelocate.StepCatchUp},
		{step: etcdrelocate.StepCatchUp, leader: true},
		{step: etcdrelocate.StepCatchUp, budget: 3 * time.Second},
	} {
		name := fmt.Sprintf("%s-leader=%t", tc.step, tc.leader)
		if tc.budget > 0 {
			name += "-past-budget"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			s := te.waitHealthy(t, r, member)
			target := te.freeNode(t, s)
			var (
				mu        sync.Mutex
				victim    string
				victimID  uint64
				resume    func()
				stalls    []etcdrelocate.Event
				stoppedAt time.Time
			)
			rr := te.relocator(t, func(e etcdrelocate.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case e.Step == tc.step && e.Phase == etcdrelocate.EventStarted && victim == "":
					victim, victimID = te.stallVictim(t, r, member, tc.leader)
					resume = te.stopMember(t, victim)
					stoppedAt = time.Now()
					time.AfterFunc(stallFor, resume)
				case e.Phase == etcdrelocate.EventStalled || e.Phase == etcdrelocate.EventRecovered:
					stalls = append(stalls, e)
					t.Logf("%s: %s", e.Phase, e.Message)
				}
			})
			plan, err := rr.Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace, Member: member, TargetNode: target,
				Options: etcdrelocate.Options{SnapshotDir: t.TempDir(), StallBudget: tc.budget}})
			require.NoError(t, err)
			res, err := rr.Execute(ctx, plan)
			mu.Lock()
			require.NotEmpty(t, victim, "step %s never started", tc.step)
			var stalled *etcdrelocate.Event
			recovered := 0
			for i, e := range stalls {
				switch {
				case e.Stall == nil || e.Stall.MemberID != victimID:
					// Another member slow to answer on a starved machine.
				case e.Phase == etcdrelocate.EventStalled && stalled == nil:
					stalled = &stalls[i]
				case e.Phase == etcdrelocate.EventRecovered:
					recovered++
				}
			}
			mu.Unlock()
			require.NotNil(t, stalled, "the stall of %s was not reported", victim)
			outcome := "completed"
			if tc.budget > 0 {
				var se *etcdrelocate.StalledError
				require.ErrorAs(t, err, &se, "a stall past the budget stops the run: %v", err)
				require.ErrorIs(t, err, etcdrelocate.ErrStalled)
				require.Equal(t, stalled.Stall.MemberID, se.MemberID)
				require.Contains(t, se.Resume, "run Plan and Execute again")
				t.Logf("stopped as documented: %v", err)
				resume()
				plan, err = te.relocator(t, nil).Plan(ctx, etcdrelocate.Request{Namespace: te.tenant.Namespace})
				require.NoError(t, err)
				require.True(t, plan.Resume)
				res, err = te.relocator(t, nil).Execute(ctx, plan)
				outcome = "stopped, resumed"
			} else {
				require.Positive(t, recovered, "the member's recovery was reported")
			}
			require.NoError(t, err)
			require.Equal(t, target, te.podNode(t, member))
			require.Empty(t, res.Verification.Problems)
			rows = append(rows, fmt.Sprintf("%-32s stopped %-7s (%s) %s after %s; %s", name, victim, etcdrelocate.FormatID(stalled.Stall.MemberID),
				outcome, time.Since(stoppedAt).Round(100*time.Millisecond), stalled.Message))
		})
	}
	rep := load.Stop()
	load.CheckT(t, context.Background(), cli)
	t.Logf("SIGSTOP for %s; load: %d writes acknowledged (all readable), %d failed, longest gap %s\n%s",
		stallFor, rep.Acked, rep.Failed, rep.LongestGap, joinLines(rows))
}
