package etcdrelocate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeRun returns a run of a plan moving m1 (0x101) of f to node-d, with
// its checkpoint recorded in a fake Kubernetes API and every bound 300ms.
func fakeRun(t *testing.T, f *fakeEtcd) *run {
	t.Helper()
	kube := fake.NewClientset()
	short := 300 * time.Millisecond
	r, err := New(Config{Kube: kube, Timeouts: Timeouts{Membership: short, Pod: short, CatchUp: short, Storage: short, Call: time.Second}})
	require.NoError(t, err)
	p := &Plan{Namespace: "ns", Cluster: "etcd", Layout: LayoutStatefulSet, TargetNode: "node-d", ClusterID: 0xc1, Voters: 3,
		Member: MemberRef{ID: 0x101, PeerURL: fakePeerURL(1), Pod: "m1", PVC: "data-m1", Node: "node-b"}, Peers: []uint64{0x100, 0x102}}
	p.build()
	x := &run{r: r, p: p, res: &Result{}, cp: CheckpointFor(p), bg: context.Background(),
		mem: &memberOps{api: f, one: f.one, log: r.log, bound: short, call: time.Second}}
	data, err := x.cp.Encode()
	require.NoError(t, err)
	_, err = kube.CoreV1().ConfigMaps("ns").Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: checkpointName("etcd")}, Data: map[string]string{checkpointKey: string(data)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return x
}

// replaced removes m1 from f and adds its replacement 0x900 with the same
// peer URL, as a started learner applied up to applied.
func replaced(f *fakeEtcd, learner bool, applied uint64) {
	f.members = removeMember(f.members, 0x101)
	delete(f.status, 0x101)
	f.members = append(f.members, &pb.Member{ID: 0x900, Name: "m1", PeerURLs: []string{fakePeerURL(1)},
		ClientURLs: []string{fakeClientURL(1)}, IsLearner: learner})
	f.status[0x900] = f.newStatus(0x900, applied)
}

func TestRollbackDecisions(t *testing.T) {
	timeout := errors.Join(ErrTimeout, errors.New("pod never ran"))
	tests := []struct {
		name   string
		setup  func(f *fakeEtcd)
		kind   StepKind
		cause  error
		cancel bool
		// rolled is whether a rollback happens; learner whether the
		// learner 0x900 is gone afterwards.
		rolled bool
	}{
		{name: "the learner is removed", setup: func(f *fakeEtcd) { replaced(f, true, 0) }, kind: StepWaitPod, cause: timeout, rolled: true},
		{name: "no learner was added yet", setup: func(f *fakeEtcd) { f.members = removeMember(f.members, 0x101) },
			kind: StepClaimOnTarget, cause: timeout, rolled: true},
		{name: "the old member is still there", kind: StepWaitPod, cause: timeout},
		{name: "the new member became a voter", setup: func(f *fakeEtcd) { replaced(f, false, 500) }, kind: StepCatchUp, cause: timeout},
		{name: "not a timeout", setup: func(f *fakeEtcd) { replaced(f, true, 0) }, kind: StepWaitPod, cause: ErrUnexpectedMember},
		{name: "a step before the removal", setup: func(f *fakeEtcd) { replaced(f, true, 0) }, kind: StepStopMember, cause: timeout},
		{name: "a cancelled run", setup: func(f *fakeEtcd) { replaced(f, true, 0) }, kind: StepWaitPod, cause: timeout, cancel: true},
		{name: "the learner cannot be removed", setup: func(f *fakeEtcd) {
			replaced(f, true, 0)
			f.before["remove"] = []error{errPermission}
		}, kind: StepWaitPod, cause: timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if tt.setup != nil {
				tt.setup(f)
			}
			x := fakeRun(t, f)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			err := x.rollback(ctx, tt.kind, tt.cause)
			if !tt.rolled {
				require.NoError(t, err)
				require.NotEqual(t, PhaseRolledBack, x.cp.Phase)
				return
			}
			var rb *RolledBackError
			require.ErrorAs(t, err, &rb)
			require.ErrorIs(t, err, ErrRolledBack)
			require.ErrorIs(t, err, ErrTimeout, "the cause is kept")
			require.Equal(t, 2, rb.Voters)
			require.Nil(t, f.byID(0x900), "the learner is removed")
			require.Nil(t, f.byID(0x101), "the old member is not re-added")
			require.Equal(t, PhaseRolledBack, x.cp.Phase)
			cm, err := x.r.cfg.Kube.CoreV1().ConfigMaps("ns").Get(context.Background(), checkpointName("etcd"), metav1.GetOptions{})
			require.NoError(t, err)
			cp, err := DecodeCheckpoint([]byte(cm.Data[checkpointKey]))
			require.NoError(t, err)
			require.Equal(t, PhaseRolledBack, cp.Phase, "the rollback is recorded")
		})
	}
}

func TestCatchUpDecisions(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fakeEtcd)
		want    error
		skipped bool
	}{
		{name: "the learner catches up", setup: func(f *fakeEtcd) { replaced(f, true, 100); f.advance[0x900] = 100 }},
		{name: "already caught up", setup: func(f *fakeEtcd) { replaced(f, true, 500) }},
		{name: "already a voter", setup: func(f *fakeEtcd) { replaced(f, false, 500) }, skipped: true},
		{name: "never catches up", setup: func(f *fakeEtcd) { replaced(f, true, 100) }, want: ErrTimeout},
		{name: "the learner does not answer", setup: func(f *fakeEtcd) { replaced(f, true, 100); f.status[0x900] = nil }, want: ErrTimeout},
		{name: "no agreed leader", setup: func(f *fakeEtcd) {
			replaced(f, true, 100)
			f.status[0x102].Leader = 0x102
		}, want: ErrQuorumAtRisk},
		{name: "no replacement registered", setup: func(f *fakeEtcd) { f.members = removeMember(f.members, 0x101) }, want: ErrUnexpectedMember},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			tt.setup(f)
			x := fakeRun(t, f)
			msg, skipped, err := catchUpStep{}.Run(context.Background(), x)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.skipped, skipped)
			require.NotEmpty(t, msg)
			require.Equal(t, uint64(0x900), x.learner)
		})
	}
}

func TestOthersHealthyDecisions(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeEtcd)
		want  error
	}{
		{name: "healthy"},
		{name: "the moved member may be down", setup: func(f *fakeEtcd) { f.status[0x101] = nil }},
		{name: "a voter reports an alarm", setup: func(f *fakeEtcd) { f.status[0x102].Errors = []string{"NOSPACE"} }, want: ErrQuorumAtRisk},
		{name: "a voter does not answer", setup: func(f *fakeEtcd) { f.status[0x102] = nil }, want: ErrQuorumAtRisk},
		{name: "a voter lags", setup: func(f *fakeEtcd) { f.status[0x102].RaftAppliedIndex = 10 }, want: ErrQuorumAtRisk},
		{name: "a lagging voter catches up", setup: func(f *fakeEtcd) {
			f.status[0x102].RaftAppliedIndex = 10
			f.advance[0x102] = 200
		}},
		{name: "voters disagree on the leader", setup: func(f *fakeEtcd) { f.status[0x102].Leader = 0x102 }, want: ErrQuorumAtRisk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if tt.setup != nil {
				tt.setup(f)
			}
			err := fakeRun(t, f).othersHealthy(context.Background())
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, ErrTimeout, "it waited for the cluster to settle first")
		})
	}
}

func TestSnapshotSourceDecisions(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeEtcd)
		want  uint64
		err   error
	}{
		{name: "a follower, not the leader", want: 0x102},
		{name: "the leader when the follower is down", setup: func(f *fakeEtcd) { f.status[0x102] = nil }, want: 0x100},
		{name: "the most up-to-date follower", setup: func(f *fakeEtcd) {
			f.members = append(f.members, &pb.Member{ID: 0x103, PeerURLs: []string{fakePeerURL(3)}, ClientURLs: []string{fakeClientURL(3)}})
			f.status[0x103] = f.newStatus(0x103, 700)
		}, want: 0x103},
		{name: "never the moved member", setup: func(f *fakeEtcd) { f.status[0x100], f.status[0x102] = nil, nil }, err: ErrQuorumAtRisk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if tt.setup != nil {
				tt.setup(f)
			}
			src, err := snapshotSource(context.Background(), fakeRun(t, f))
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, src.ID)
		})
	}
}

// Resumed steps recognise their work as done from etcd's state alone.
func TestResumeDecisions(t *testing.T) {
	f := newFakeEtcd(3)
	replaced(f, true, 0)
	x := fakeRun(t, f)
	msg, skipped, err := removeMemberStep{}.Run(context.Background(), x)
	require.NoError(t, err)
	require.True(t, skipped, msg)
	msg, skipped, err = addLearnerStep{}.Run(context.Background(), x)
	require.NoError(t, err)
	require.True(t, skipped, msg)
	require.Equal(t, uint64(0x900), x.learner)
	require.Zero(t, f.count("add"), "no second learner")

	f.set(func(f *fakeEtcd) { f.byID(0x900).IsLearner = false })
	msg, skipped, err = promoteStep{}.Run(context.Background(), x)
	require.NoError(t, err)
	require.True(t, skipped, msg)
	require.Zero(t, f.count("promote"))
}
