package etcdrelocate

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// The executor's decisions on every answer etcd can give, driven through
// fakeEtcd: what a real cluster produces only by chance (a reply lost
// after the change applied, "unhealthy cluster" on demand, a learner that
// never catches up, leaders that disagree). The same operations run
// against real etcd in TestMembershipAgainstEtcd.

func fakeOps(f *fakeEtcd, bound time.Duration) *memberOps {
	return &memberOps{api: f, one: f.one, log: slog.New(slog.DiscardHandler), bound: bound, call: time.Second}
}

// unhealthy returns n "unhealthy cluster" answers.
func unhealthy(n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = rpctypes.ErrUnhealthy
	}
	return errs
}

// errPermission stands for any answer that is no reason to retry.
var errPermission = rpctypes.ErrGRPCPermissionDenied

func TestAddLearnerDecisions(t *testing.T) {
	url := fakePeerURL(1)
	tests := []struct {
		name string
		// setup shapes the cluster; m1 (0x101) has been removed unless
		// keepOld.
		setup    func(f *fakeEtcd)
		keepOld  bool
		want     error
		wantAlso error
		adds     int
		// id is the learner ID expected (0: any new one).
		id uint64
	}{
		{name: "clean add", adds: 1},
		{name: "reply lost after the add applied", setup: func(f *fakeEtcd) { f.lose["add"] = 1 }, adds: 1},
		{name: "unhealthy cluster is retried", setup: func(f *fakeEtcd) { f.before["add"] = unhealthy(3) }, adds: 4},
		{name: "an earlier run added it", setup: func(f *fakeEtcd) {
			f.members = append(f.members, &pb.Member{ID: 0x777, PeerURLs: []string{url}, IsLearner: true})
		}, adds: 0, id: 0x777},
		{name: "old member still registered", keepOld: true, want: ErrUnexpectedMember, adds: 0},
		{name: "a foreign learner", setup: func(f *fakeEtcd) {
			f.members = append(f.members, &pb.Member{ID: 0x778, PeerURLs: []string{"https://stray:2380"}, IsLearner: true})
		}, want: ErrUnexpectedMember, adds: 0},
		{name: "permission denied is not retried", setup: func(f *fakeEtcd) { f.before["add"] = []error{errPermission} },
			want: errPermission, adds: 1},
		{name: "unhealthy beyond the bound", setup: func(f *fakeEtcd) { f.before["add"] = unhealthy(1000) },
			want: ErrTimeout, wantAlso: rpctypes.ErrUnhealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if !tt.keepOld {
				f.members = removeMember(f.members, 0x101)
			}
			if tt.setup != nil {
				tt.setup(f)
			}
			id, err := fakeOps(f, 300*time.Millisecond).addLearner(context.Background(), url, 0x101)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				if tt.wantAlso != nil {
					require.ErrorIs(t, err, tt.wantAlso)
				}
				if tt.want != ErrTimeout {
					require.Equal(t, tt.adds, f.count("add"))
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.adds, f.count("add"), "MemberAddAsLearner calls")
			if tt.id != 0 {
				require.Equal(t, tt.id, id)
			}
			m := byPeerURL(f.members, url)
			require.NotNil(t, m)
			require.Equal(t, m.ID, id)
			require.True(t, m.IsLearner)
			learners := 0
			for _, m := range f.members {
				if m.IsLearner {
					learners++
				}
			}
			require.Equal(t, 1, learners, "exactly one learner, however many attempts")
		})
	}
}

func TestRemoveDecisions(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fakeEtcd)
		want    error
		removes int
	}{
		{name: "clean remove", removes: 1},
		{name: "reply lost after the remove applied", setup: func(f *fakeEtcd) { f.lose["remove"] = 1 }, removes: 1},
		{name: "removed by an earlier run", setup: func(f *fakeEtcd) { f.members = removeMember(f.members, 0x101) }, removes: 1},
		{name: "unhealthy cluster is retried", setup: func(f *fakeEtcd) { f.before["remove"] = unhealthy(2) }, removes: 3},
		{name: "permission denied is not retried", setup: func(f *fakeEtcd) { f.before["remove"] = []error{errPermission} },
			want: errPermission, removes: 1},
		{name: "MemberList unavailable beyond the bound", setup: func(f *fakeEtcd) {
			f.lose["remove"] = 1
			f.before["list"] = unhealthy(1000)
		}, want: ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if tt.setup != nil {
				tt.setup(f)
			}
			err := fakeOps(f, 300*time.Millisecond).remove(context.Background(), 0x101)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			} else {
				require.NoError(t, err)
				require.Nil(t, f.byID(0x101))
			}
			if tt.removes > 0 {
				require.Equal(t, tt.removes, f.count("remove"))
			}
		})
	}
}

func TestPromoteDecisions(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(f *fakeEtcd)
		want     error
		wantAlso error
		promotes int
	}{
		{name: "clean promote", promotes: 1},
		{name: "not ready three times", setup: func(f *fakeEtcd) { f.notReady = 3 }, promotes: 4},
		{name: "reply lost after the promote applied", setup: func(f *fakeEtcd) { f.lose["promote"] = 1 }, promotes: 1},
		{name: "promoted by an earlier run", setup: func(f *fakeEtcd) { f.byID(0x900).IsLearner = false }, promotes: 1},
		{name: "the learner is gone", setup: func(f *fakeEtcd) { f.members = removeMember(f.members, 0x900) },
			want: ErrUnexpectedMember, promotes: 1},
		{name: "never in sync", setup: func(f *fakeEtcd) { f.notReady = 1 << 30 },
			want: ErrTimeout, wantAlso: rpctypes.ErrMemberLearnerNotReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			f.members = append(removeMember(f.members, 0x101), &pb.Member{ID: 0x900, PeerURLs: []string{fakePeerURL(1)}, IsLearner: true})
			if tt.setup != nil {
				tt.setup(f)
			}
			err := fakeOps(f, time.Minute).promote(context.Background(), 0x900, 300*time.Millisecond)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				if tt.wantAlso != nil {
					require.ErrorIs(t, err, tt.wantAlso)
				}
			} else {
				require.NoError(t, err)
				require.False(t, f.byID(0x900).IsLearner)
			}
			if tt.promotes > 0 {
				require.Equal(t, tt.promotes, f.count("promote"))
			}
		})
	}
}

func TestMoveLeaderDecisions(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeEtcd)
		from  uint64
		moved bool
		to    []uint64
		want  error
	}{
		{name: "the member does not lead", from: 0x101},
		{name: "the leader hands over to the most up-to-date voter", from: 0x100, setup: func(f *fakeEtcd) {
			f.status[0x102].RaftAppliedIndex = 600
		}, moved: true, to: []uint64{0x102}},
		{name: "a leader change in between is retried", from: 0x100, setup: func(f *fakeEtcd) {
			f.before["move"] = []error{rpctypes.ErrNotLeader}
			f.status[0x101].RaftAppliedIndex = 600
		}, moved: true, to: []uint64{0x101}},
		{name: "voters disagree on the leader", from: 0x100, setup: func(f *fakeEtcd) {
			f.status[0x102].Leader = 0x102
		}, want: ErrTimeout},
		{name: "no other voter answers", from: 0x100, setup: func(f *fakeEtcd) {
			f.status[0x101], f.status[0x102] = nil, nil
		}, want: ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if tt.setup != nil {
				tt.setup(f)
			}
			moved, err := fakeOps(f, 300*time.Millisecond).moveLeaderAway(context.Background(), tt.from)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				require.Empty(t, f.moves, "no transfer without an agreed leader")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.moved, moved)
			require.Equal(t, tt.to, f.moves)
			require.NotEqual(t, tt.from, f.leader)
		})
	}
}

// A hash that could not be taken is ErrNotObserved, never ErrHashMismatch;
// a hash that differs is ErrHashMismatch.
func TestObserveHashNotObserved(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fakeEtcd)
		want  error
		not   error
	}{
		{name: "a voter does not answer HashKV", setup: func(f *fakeEtcd) {
			f.hashErr[0x101] = errors.New("rpc error: code = Unavailable")
		}, want: ErrNotObserved, not: ErrHashMismatch},
		{name: "every revision compacted", setup: func(f *fakeEtcd) {
			errs := make([]error, 100)
			for i := range errs {
				errs[i] = rpctypes.ErrCompacted
			}
			f.before["hash"] = errs
		}, want: ErrNotObserved, not: ErrHashMismatch},
		{name: "hashes differ", setup: func(f *fakeEtcd) { f.hash[0x102] = 0xbad }, want: ErrHashMismatch, not: ErrNotObserved},
		{name: "all equal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEtcd(3)
			if tt.setup != nil {
				tt.setup(f)
			}
			v, err := observeEtcd(context.Background(), fakeOps(f, time.Second))
			require.NoError(t, err)
			s := &State{Members: v.members, HashRevision: v.hashRev}
			var fails []Failure
			checkStatuses(s, Request{}, func(check string, sentinel error, format string, args ...any) {
				fails = append(fails, Failure{Check: check, Err: sentinel})
			})
			err = (&PreflightError{Failures: fails})
			if tt.want == nil {
				require.Empty(t, fails)
				return
			}
			require.ErrorIs(t, err, tt.want)
			require.NotErrorIs(t, err, tt.not)
			if tt.want == ErrNotObserved {
				for _, m := range v.members {
					if !m.HashOK {
						require.NotEmpty(t, m.HashError, "the reason is kept")
					}
				}
			}
		})
	}
}

func TestVerificationVerdict(t *testing.T) {
	require.NoError(t, (&Verification{}).err())
	err := (&Verification{Unobserved: []string{"no HashKV from etcd-1"}}).err()
	require.ErrorIs(t, err, ErrNotObserved)
	require.NotErrorIs(t, err, ErrVerify)
	err = (&Verification{Problems: []string{"HashKV of etcd-1 differs"}}).err()
	require.ErrorIs(t, err, ErrVerify)
	require.NotErrorIs(t, err, ErrNotObserved)
	err = (&Verification{Problems: []string{"2 voters"}, Unobserved: []string{"no HashKV"}}).err()
	require.ErrorIs(t, err, ErrVerify)
	require.ErrorIs(t, err, ErrNotObserved)
}
