package etcdrelocate_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got)
}

func TestPlanGolden(t *testing.T) {
	tests := []struct {
		name   string
		opts   etcdrelocatetest.StateOptions
		member string
	}{
		{name: "statefulset-follower", member: "etcd-1"},
		{name: "statefulset-leader", member: "etcd-0"},
		{name: "etcdmember", opts: etcdrelocatetest.StateOptions{Layout: etcdrelocate.LayoutEtcdMember}, member: "etcd-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := etcdrelocatetest.NewStateT(t, tt.opts)
			req := request(tt.member, etcdrelocatetest.NodeName(3))
			req.Options.SnapshotDir = "/var/backups"
			p, err := etcdrelocate.PlanFor(s, req)
			require.NoError(t, err)
			golden(t, "plan-"+tt.name, p.String())
		})
	}
}

func TestPlanStatefulSetOrder(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	p, err := etcdrelocate.PlanFor(s, request("etcd-1", etcdrelocatetest.NodeName(3)))
	require.NoError(t, err)
	var kinds []etcdrelocate.StepKind
	for _, st := range p.Steps {
		kinds = append(kinds, st.Kind)
	}
	require.Equal(t, []etcdrelocate.StepKind{
		etcdrelocate.StepCheckpoint, etcdrelocate.StepMoveLeader, etcdrelocate.StepSnapshot, etcdrelocate.StepCordon,
		etcdrelocate.StepStopMember, etcdrelocate.StepRemoveMember, etcdrelocate.StepAddLearner, etcdrelocate.StepClaimOnTarget,
		etcdrelocate.StepWaitPod, etcdrelocate.StepCatchUp, etcdrelocate.StepPromote, etcdrelocate.StepVerify,
		etcdrelocate.StepReleaseVolume, etcdrelocate.StepUncordon, etcdrelocate.StepFinish,
	}, kinds)
	require.Equal(t, 0, p.MinFaultTolerance)
	require.Equal(t, "data-etcd-1", p.Member.PVC)
	require.Equal(t, "pvc-uid-1", p.Member.PVCUID)
	require.False(t, p.Member.Leader)
}

func TestPlanSnapshotFirst(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	req := request("etcd-1", etcdrelocatetest.NodeName(3))
	p, err := etcdrelocate.PlanFor(s, req)
	require.NoError(t, err)
	require.Contains(t, p.Step(etcdrelocate.StepSnapshot).Action, "while the member moves")
	require.Contains(t, p.Step(etcdrelocate.StepReleaseVolume).Action, "wait for the snapshot")
	req.Options.SnapshotFirst = true
	p, err = etcdrelocate.PlanFor(s, req)
	require.NoError(t, err)
	require.NotContains(t, p.Step(etcdrelocate.StepSnapshot).Action, "while the member moves")
	require.NotContains(t, p.Step(etcdrelocate.StepReleaseVolume).Action, "wait for the snapshot")
}

func TestPlanSkips(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	req := request("etcd-1", etcdrelocatetest.NodeName(3))
	req.Options.SkipSnapshot, req.Options.SkipCordon = true, true
	p, err := etcdrelocate.PlanFor(s, req)
	require.NoError(t, err)
	for _, k := range []etcdrelocate.StepKind{etcdrelocate.StepSnapshot, etcdrelocate.StepCordon, etcdrelocate.StepUncordon} {
		require.Nil(t, p.Step(k), "step %s", k)
	}
}

func TestPlanResumesFromCheckpoint(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	first, err := etcdrelocate.PlanFor(s, request("etcd-1", etcdrelocatetest.NodeName(3)))
	require.NoError(t, err)
	cp := etcdrelocate.CheckpointFor(first)
	// The executor stopped after removing the member: etcd has two voters.
	s.Members = append(s.Members[:1], s.Members[2:]...)
	s.Checkpoint = cp
	p, err := etcdrelocate.PlanFor(s, etcdrelocate.Request{Namespace: s.Namespace})
	require.NoError(t, err)
	require.True(t, p.Resume)
	require.Equal(t, first.Member, withoutLeader(p.Member, first.Member.Leader))
	require.Len(t, p.Steps, len(first.Steps))
	// A request for another member is refused while the checkpoint exists.
	_, err = etcdrelocate.PlanFor(s, request("etcd-2", etcdrelocatetest.NodeName(3)))
	require.ErrorIs(t, err, etcdrelocate.ErrRelocationInProgress)
	// A rolled-back checkpoint is reported, not resumed.
	cp.Phase = etcdrelocate.PhaseRolledBack
	_, err = etcdrelocate.PlanFor(s, etcdrelocate.Request{Namespace: s.Namespace})
	require.ErrorIs(t, err, etcdrelocate.ErrRolledBack)
}

func withoutLeader(r etcdrelocate.MemberRef, leader bool) etcdrelocate.MemberRef {
	r.Leader = leader
	r.Name = "etcd-1"
	return r
}

// simulate replays a plan's membership changes from first principles (not
// from Step.After) and checks the safety invariants of every plan: quorum
// at every step, at most one learner, nothing stopped or removed before the
// checkpoint, the snapshot and the leadership move, the old data released
// only once the old ID is out of etcd and the learner is registered (so no
// empty member can start under the old ID), promotion only after catch-up,
// the old member never re-added, and a rollback from any step leaves a
// cluster with quorum.
func simulate(t testing.TB, p *etcdrelocate.Plan) {
	t.Helper()
	voters, healthy, learners := p.Voters, p.Voters, 0
	seen := map[etcdrelocate.StepKind]bool{}
	stopped, removed, added, promoted := false, false, false, false
	beforeChange := func() {
		require.True(t, seen[etcdrelocate.StepCheckpoint], "change before the checkpoint")
		require.True(t, seen[etcdrelocate.StepMoveLeader], "change before leadership moved")
		require.True(t, p.Options.SkipSnapshot || seen[etcdrelocate.StepSnapshot], "change before the snapshot")
	}
	for i, st := range p.Steps {
		switch st.Kind {
		case etcdrelocate.StepStopMember:
			beforeChange()
			require.False(t, stopped, "second stop")
			require.GreaterOrEqual(t, healthy-1, etcdrelocate.Quorum(voters), "stopping at step %d loses quorum", i)
			healthy, stopped = healthy-1, true
		case etcdrelocate.StepRemoveMember:
			require.True(t, stopped, "removing a running member")
			require.False(t, removed, "second removal")
			require.GreaterOrEqual(t, healthy, etcdrelocate.Quorum(voters-1), "removal at step %d loses quorum", i)
			voters, removed = voters-1, true
		case etcdrelocate.StepDeleteEtcdMember:
			beforeChange()
			require.False(t, removed, "second removal")
			require.GreaterOrEqual(t, healthy-1, etcdrelocate.Quorum(voters-1), "removal at step %d loses quorum", i)
			voters, healthy, removed = voters-1, healthy-1, true
		case etcdrelocate.StepClaimOnTarget:
			require.True(t, removed && added, "old data released while the old ID is registered or before the learner")
		case etcdrelocate.StepAddLearner, etcdrelocate.StepWaitReplacement:
			require.True(t, removed, "new member added before the old one left (same peer URL)")
			require.False(t, added, "second add")
			learners, added = learners+1, true
		case etcdrelocate.StepPromote, etcdrelocate.StepWaitVoter:
			require.True(t, added, "promote without a learner")
			require.True(t, p.Layout != etcdrelocate.LayoutStatefulSet || seen[etcdrelocate.StepCatchUp], "promotion before catch-up")
			learners, voters, healthy, promoted = learners-1, voters+1, healthy+1, true
		case etcdrelocate.StepFinish:
			require.True(t, seen[etcdrelocate.StepVerify], "finish before verify")
		}
		seen[st.Kind] = true
		require.LessOrEqual(t, learners, 1)
		require.GreaterOrEqual(t, healthy, etcdrelocate.Quorum(voters), "quorum lost after step %d %s", i, st.Kind)
		require.Equal(t, etcdrelocate.Membership{Voters: voters, Learners: learners, Healthy: healthy}, st.After, "step %d %s", i, st.Kind)
		require.GreaterOrEqual(t, st.After.FaultTolerance(), p.MinFaultTolerance)
		// A rollback from here removes the learner (if any) and stops.
		if removed && !promoted {
			require.GreaterOrEqual(t, healthy, etcdrelocate.Quorum(voters), "rollback after %s loses quorum", st.Kind)
		}
	}
	require.True(t, promoted, "plan never restores the voter")
	require.Equal(t, p.Voters, voters, "plan ends with a different voter count")
	require.Equal(t, p.Voters, healthy, "plan ends with a stopped voter")
}

func TestPlansKeepQuorum(t *testing.T) {
	for _, layout := range []etcdrelocate.Layout{etcdrelocate.LayoutStatefulSet, etcdrelocate.LayoutEtcdMember, etcdrelocate.LayoutMigrated} {
		for _, voters := range []int{3, 5, 7} {
			for member := 0; member < voters; member++ {
				s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{Layout: layout, Voters: voters})
				p, err := etcdrelocate.PlanFor(s, request(s.Members[member].Label(), etcdrelocatetest.NodeName(voters)))
				require.NoError(t, err)
				simulate(t, p)
				require.Equal(t, etcdrelocate.FaultTolerance(voters-1, voters-1), p.MinFaultTolerance)
			}
		}
	}
}

// FuzzPlanKeepsQuorum builds arbitrary cluster shapes and checks that a plan
// is either refused with a typed preflight error or keeps every invariant
// of simulate.
func FuzzPlanKeepsQuorum(f *testing.F) {
	f.Add(uint8(3), uint8(1), uint8(0), uint8(0), uint8(0))
	f.Add(uint8(2), uint8(0), uint8(1), uint8(1), uint8(3))
	f.Add(uint8(5), uint8(4), uint8(4), uint8(2), uint8(0xff))
	f.Add(uint8(4), uint8(0), uint8(0), uint8(0), uint8(0x10))
	f.Fuzz(func(t *testing.T, voters, member, leader, layout, flags uint8) {
		n := 1 + int(voters%9)
		s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{
			Voters: n, Leader: int(leader) % n, Layout: etcdrelocate.Layout(1 + layout%3),
		})
		req := request(s.Members[int(member)%n].Label(), etcdrelocatetest.NodeName(n+int(flags>>6)%2))
		req.Options.SkipSnapshot = flags&1 != 0
		req.Options.SkipCordon = flags&2 != 0
		if flags&4 != 0 {
			s.Members[(int(member)+1)%n].Status = nil
		}
		if flags&8 != 0 {
			l := s.Members[0]
			l.ID, l.IsLearner, l.Pod = 99, true, nil
			s.Members = append(s.Members, l)
		}
		if flags&16 != 0 {
			s.Alarms = []etcdrelocate.Alarm{{MemberID: s.Members[0].ID, Type: "NOSPACE"}}
		}
		p, err := etcdrelocate.PlanFor(s, req)
		if err != nil {
			var pe *etcdrelocate.PreflightError
			require.ErrorAs(t, err, &pe)
			if n < 3 {
				require.True(t, errors.Is(err, etcdrelocate.ErrTooFewVoters))
			}
			if flags&(4|8|16) == 0 && n >= 3 && n%2 == 1 {
				t.Fatalf("healthy %d-member cluster refused: %v", n, err)
			}
			return
		}
		require.True(t, n >= 3 && n%2 == 1, "plan for %d voters", n)
		require.Zero(t, flags&(4|8|16), "plan despite a down member, learner or alarm")
		simulate(t, p)
	})
}
