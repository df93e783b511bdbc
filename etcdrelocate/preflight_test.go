package etcdrelocate_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
)

func request(member, node string) etcdrelocate.Request {
	return etcdrelocate.Request{Namespace: etcdrelocatetest.Namespace, Member: member, TargetNode: node}
}

func TestPreflightRefusals(t *testing.T) {
	tests := []struct {
		name  string
		opts  etcdrelocatetest.StateOptions
		edit  func(s *etcdrelocate.State, r *etcdrelocate.Request)
		want  error
		check string
	}{
		{name: "two members", opts: etcdrelocatetest.StateOptions{Voters: 2}, want: etcdrelocate.ErrTooFewVoters, check: "voters"},
		{name: "four members", opts: etcdrelocatetest.StateOptions{Voters: 4}, want: etcdrelocate.ErrEvenVoters, check: "voters"},
		{name: "member down", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[2].Status, s.Members[2].StatusError, s.Members[2].HashOK = nil, "connection refused", false
		}, want: etcdrelocate.ErrMemberDown, check: "members"},
		{name: "member never started", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[2].Name = ""
		}, want: etcdrelocate.ErrMemberDown, check: "members"},
		{name: "learner present", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			l := s.Members[2]
			l.ID, l.IsLearner, l.Pod, l.PVC, l.PV = 42, true, nil, nil, nil
			s.Members = append(s.Members, l)
		}, want: etcdrelocate.ErrLearnerPresent, check: "learners"},
		{name: "alarm raised", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Alarms = []etcdrelocate.Alarm{{MemberID: s.Members[0].ID, Type: "NOSPACE"}}
		}, want: etcdrelocate.ErrAlarm, check: "alarms"},
		{name: "target holds a replica", edit: func(_ *etcdrelocate.State, r *etcdrelocate.Request) {
			r.TargetNode = etcdrelocatetest.NodeName(2)
		}, want: etcdrelocate.ErrTargetHasReplica, check: "target-node"},
		{name: "unknown layout", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Layout = etcdrelocate.LayoutUnknown
		}, want: etcdrelocate.ErrUnknownLayout, check: "layout"},
		{name: "unknown member", edit: func(_ *etcdrelocate.State, r *etcdrelocate.Request) {
			r.Member = "etcd-7"
		}, want: etcdrelocate.ErrMemberNotFound, check: "member"},
		{name: "target missing", edit: func(_ *etcdrelocate.State, r *etcdrelocate.Request) {
			r.TargetNode = "node-z"
		}, want: etcdrelocate.ErrTargetNode, check: "target-node"},
		{name: "target not ready", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Node(etcdrelocatetest.NodeName(3)).Ready = false
		}, want: etcdrelocate.ErrTargetNode, check: "target-node"},
		{name: "target cordoned", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Node(etcdrelocatetest.NodeName(3)).Unschedulable = true
		}, want: etcdrelocate.ErrTargetNode, check: "target-node"},
		{name: "target is the source", edit: func(_ *etcdrelocate.State, r *etcdrelocate.Request) {
			r.TargetNode = etcdrelocatetest.NodeName(1)
		}, want: etcdrelocate.ErrTargetNode, check: "target-node"},
		{name: "split brain", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[1].Status.ClusterID = 7
		}, want: etcdrelocate.ErrClusterIDMismatch, check: "cluster-id"},
		{name: "leaders disagree", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[1].Status.Leader = s.Members[1].ID
		}, want: etcdrelocate.ErrNoLeader, check: "leader"},
		{name: "no leader", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			for i := range s.Members {
				s.Members[i].Status.Leader = 0
			}
		}, want: etcdrelocate.ErrNoLeader, check: "leader"},
		{name: "indexes apart", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[0].Status.RaftAppliedIndex += 5000
		}, want: etcdrelocate.ErrIndexLag, check: "raft-index"},
		{name: "hash mismatch", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[2].Hash++
		}, want: etcdrelocate.ErrHashMismatch, check: "hashkv"},
		{name: "no HashKV", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Members[2].HashOK, s.Members[2].HashError = false, "context deadline exceeded"
		}, want: etcdrelocate.ErrNotObserved, check: "hashkv"},
		{name: "etcd 3.5.12", opts: etcdrelocatetest.StateOptions{Version: "3.5.12"}, want: etcdrelocate.ErrVersionHazard, check: "version"},
		{name: "SAN missing", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Certificates[1].DNSNames = []string{"etcd-0.etcd-headless.tenant-test.svc", "etcd-2.etcd-headless.tenant-test.svc"}
		}, want: etcdrelocate.ErrCertSAN, check: "certificates"},
		{name: "peer cert without clientAuth", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Certificates[1].ClientAuth = false
		}, want: etcdrelocate.ErrCertSAN, check: "certificates"},
		{name: "defrag running", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.DefragJobs = []string{"etcd-defrag-29000000"}
		}, want: etcdrelocate.ErrDefragRunning, check: "defrag"},
		{name: "rollout", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Workload.UpdateRevision = "etcd-2"
		}, want: etcdrelocate.ErrRolloutInProgress, check: "workload"},
		{name: "initial cluster state new", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Workload.InitialClusterState = "new"
		}, want: etcdrelocate.ErrRolloutInProgress, check: "workload"},
		{name: "pdb exhausted", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.PDB.DisruptionsAllowed = 0
		}, want: etcdrelocate.ErrDisruptionNotAllowed, check: "pdb"},
		{name: "operator progressing", opts: etcdrelocatetest.StateOptions{Layout: etcdrelocate.LayoutEtcdMember}, edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Workload.Progressing = true
		}, want: etcdrelocate.ErrRolloutInProgress, check: "workload"},
		{name: "operator deadline exceeded", opts: etcdrelocatetest.StateOptions{Layout: etcdrelocate.LayoutEtcdMember}, edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Workload.Operator.Available = "False/DeadlineExceeded"
		}, want: etcdrelocate.ErrRolloutInProgress, check: "operator"},
		{name: "operator below target", opts: etcdrelocatetest.StateOptions{Layout: etcdrelocate.LayoutEtcdMember}, edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Workload.Operator.ReadyMembers = 2
		}, want: etcdrelocate.ErrRolloutInProgress, check: "operator"},
		{name: "another relocation", edit: func(s *etcdrelocate.State, _ *etcdrelocate.Request) {
			s.Checkpoint = &etcdrelocate.Checkpoint{Version: 1, Namespace: s.Namespace, Cluster: "etcd", Layout: etcdrelocate.LayoutStatefulSet,
				MemberID: s.Members[0].ID, PeerURL: s.Members[0].PeerURL(), Pod: "etcd-0", PVC: "data-etcd-0", Voters: 3,
				TargetNode: etcdrelocatetest.NodeName(4), Phase: etcdrelocate.PhaseRunning}
		}, want: etcdrelocate.ErrRelocationInProgress, check: "checkpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := etcdrelocatetest.NewStateT(t, tt.opts)
			req := request("etcd-1", etcdrelocatetest.NodeName(3))
			if tt.edit != nil {
				tt.edit(s, &req)
			}
			err := etcdrelocate.Preflight(s, req)
			require.ErrorIs(t, err, tt.want)
			var pe *etcdrelocate.PreflightError
			require.ErrorAs(t, err, &pe)
			checks := map[string]bool{}
			for _, f := range pe.Failures {
				checks[f.Check] = true
			}
			require.True(t, checks[tt.check], "failures %v lack check %q", pe.Failures, tt.check)
			_, err = etcdrelocate.PlanFor(s, req)
			require.ErrorIs(t, err, tt.want, "PlanFor refuses what Preflight refuses")
		})
	}
}

// A hash that could not be taken is reported as not observed, never as a
// mismatch; a real mismatch is never reported as not observed.
func TestPreflightHashNotObservedIsNoMismatch(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	s.Members[1].HashOK, s.Members[1].HashError = false, "rpc error: code = Unavailable"
	err := etcdrelocate.Preflight(s, request("etcd-1", etcdrelocatetest.NodeName(3)))
	require.ErrorIs(t, err, etcdrelocate.ErrNotObserved)
	require.NotErrorIs(t, err, etcdrelocate.ErrHashMismatch)
	require.ErrorContains(t, err, "Unavailable")

	s = etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	s.Members[1].Hash++
	err = etcdrelocate.Preflight(s, request("etcd-1", etcdrelocatetest.NodeName(3)))
	require.ErrorIs(t, err, etcdrelocate.ErrHashMismatch)
	require.NotErrorIs(t, err, etcdrelocate.ErrNotObserved)
}

func TestPreflightAccepts(t *testing.T) {
	for _, layout := range []etcdrelocate.Layout{etcdrelocate.LayoutStatefulSet, etcdrelocate.LayoutEtcdMember, etcdrelocate.LayoutMigrated} {
		for _, voters := range []int{3, 5} {
			s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{Layout: layout, Voters: voters})
			require.NoError(t, etcdrelocate.Preflight(s, request("etcd-1", etcdrelocatetest.NodeName(voters))), "%s, %d voters", layout, voters)
		}
	}
}

func TestPreflightVersionHazardSkipped(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{Version: "3.5.12"})
	req := request("etcd-1", etcdrelocatetest.NodeName(3))
	req.Options.SkipVersionHazard = true
	p, err := etcdrelocate.PlanFor(s, req)
	require.NoError(t, err)
	require.NotEmpty(t, p.Warnings)
	require.Contains(t, p.Warnings[0], "#19557")
}

func TestPreflightListsEveryFailure(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{Voters: 2})
	s.Alarms = []etcdrelocate.Alarm{{MemberID: 1, Type: "CORRUPT"}}
	err := etcdrelocate.Preflight(s, request("etcd-1", etcdrelocatetest.NodeName(1)))
	for _, want := range []error{etcdrelocate.ErrTooFewVoters, etcdrelocate.ErrAlarm, etcdrelocate.ErrTargetNode} {
		require.True(t, errors.Is(err, want), "%v lacks %v", err, want)
	}
}

func TestFindMember(t *testing.T) {
	s := etcdrelocatetest.NewStateT(t, etcdrelocatetest.StateOptions{})
	for _, ref := range []string{"etcd-1", etcdrelocate.FormatID(etcdrelocatetest.MemberID(1))} {
		m := s.FindMember(ref)
		require.NotNil(t, m, ref)
		require.Equal(t, etcdrelocatetest.MemberID(1), m.ID)
	}
	require.Nil(t, s.FindMember("etcd-9"))
}
