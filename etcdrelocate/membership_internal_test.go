package etcdrelocate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cozystack/tenantkit/localenv"
)

// lossyCluster performs membership calls for real but can drop the reply,
// as a timeout after the request reached the server does, and records the
// errors etcd returned.
type lossyCluster struct {
	*clientv3.Client
	mu     sync.Mutex
	lose   map[string]int
	errors []error
}

func (l *lossyCluster) result(op string, err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.errors = append(l.errors, err)
		return err
	}
	if l.lose[op] > 0 {
		l.lose[op]--
		return fmt.Errorf("reply lost: %w", context.DeadlineExceeded)
	}
	return nil
}

func (l *lossyCluster) MemberAddAsLearner(ctx context.Context, urls []string) (*clientv3.MemberAddResponse, error) {
	r, err := l.Client.MemberAddAsLearner(ctx, urls)
	return r, l.result("add", err)
}

func (l *lossyCluster) MemberRemove(ctx context.Context, id uint64) (*clientv3.MemberRemoveResponse, error) {
	r, err := l.Client.MemberRemove(ctx, id)
	return r, l.result("remove", err)
}

func (l *lossyCluster) MemberPromote(ctx context.Context, id uint64) (*clientv3.MemberPromoteResponse, error) {
	r, err := l.Client.MemberPromote(ctx, id)
	return r, l.result("promote", err)
}

func (l *lossyCluster) seen(target error) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, err := range l.errors {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

type etcdFixture struct {
	env  *localenv.Env
	conn *connector
	cli  *clientv3.Client
	api  *lossyCluster
	mem  *memberOps
}

func newEtcdFixture(t *testing.T) *etcdFixture {
	env := localenv.StartT(t, localenv.Config{EtcdMembers: 3, SkipAPIServer: true})
	conn := &connector{tls: env.Etcd().TLSConfig(), call: 5 * time.Second}
	t.Cleanup(conn.close)
	cli, err := conn.client(env.Etcd().Endpoints()...)
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	api := &lossyCluster{Client: cli, lose: map[string]int{}}
	return &etcdFixture{env: env, conn: conn, cli: cli, api: api, mem: conn.ops(api, slog.New(slog.DiscardHandler), time.Minute)}
}

func unusedPeerURL(t *testing.T) string {
	port, err := localenv.FreePort()
	require.NoError(t, err)
	return fmt.Sprintf("https://127.0.0.1:%d", port)
}

// TestMembershipAgainstEtcd exercises the membership operations on a real
// three-member etcd cluster: settling lost replies and "already done"
// answers through MemberList, retrying "unhealthy cluster", promotion with
// a real learner process, leadership transfer, alarms, HashKV and
// snapshots.
func TestMembershipAgainstEtcd(t *testing.T) {
	t.Parallel()
	f := newEtcdFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("observe", func(t *testing.T) {
		for i := 0; i < 100; i++ {
			_, err := f.cli.Put(ctx, fmt.Sprintf("/observe/%03d", i), "v")
			require.NoError(t, err)
		}
		v, err := observeEtcd(ctx, f.mem)
		require.NoError(t, err)
		require.Len(t, v.members, 3)
		s := &State{Members: v.members, Alarms: v.alarms, HashRevision: v.hashRev}
		require.NotZero(t, s.Leader())
		require.NotZero(t, s.clusterID())
		require.NotZero(t, v.hashRev)
		for _, m := range v.members {
			require.NotNil(t, m.Status, m.StatusError)
			require.True(t, m.HashOK, "hash of %s", m.Name)
			require.Equal(t, v.members[0].Hash, m.Hash)
			require.Equal(t, "3.7.3", m.Status.Version)
		}
	})

	t.Run("add learner settles a lost reply and a repeat", func(t *testing.T) {
		url := unusedPeerURL(t)
		f.api.lose["add"] = 1
		id, err := f.mem.addLearner(ctx, url, 0)
		require.NoError(t, err)
		require.NotZero(t, id)
		again, err := f.mem.addLearner(ctx, url, 0)
		require.NoError(t, err)
		require.Equal(t, id, again, "a repeated add finds the learner by peer URL")

		// A second learner is refused: etcd allows one.
		_, err = f.mem.addLearner(ctx, unusedPeerURL(t), 0)
		require.ErrorIs(t, err, ErrUnexpectedMember)

		// Promoting a learner that never started times out "not in sync".
		err = f.mem.promote(ctx, id, 2*time.Second)
		require.ErrorIs(t, err, ErrTimeout)
		require.ErrorIs(t, err, rpctypes.ErrMemberLearnerNotReady)

		f.api.lose["remove"] = 1
		require.NoError(t, f.mem.remove(ctx, id))
		require.NoError(t, f.mem.remove(ctx, id), "removing again is settled by MemberList")
		ms, err := f.mem.list(ctx)
		require.NoError(t, err)
		require.Nil(t, byID(ms, id))
	})

	t.Run("re-adding a removed learner's URL in the same second", func(t *testing.T) {
		// etcd derives the ID from the peer URL and the second: an add in
		// the second of a removed learner gets its ID, refused as removed
		// ("member not found"), and is made again in the next second.
		url := unusedPeerURL(t)
		for time.Now().Nanosecond() > int(200*time.Millisecond) {
			time.Sleep(10 * time.Millisecond)
		}
		before := f.api.seen(rpctypes.ErrMemberNotFound)
		id, err := f.mem.addLearner(ctx, url, 0)
		require.NoError(t, err)
		require.NoError(t, f.mem.remove(ctx, id))
		again, err := f.mem.addLearner(ctx, url, 0)
		require.NoError(t, err)
		require.NotEqual(t, id, again)
		require.NoError(t, f.mem.remove(ctx, again))
		t.Logf("etcd answered %q %d times before the add went through", rpctypes.ErrMemberNotFound, f.api.seen(rpctypes.ErrMemberNotFound)-before)
	})

	t.Run("old member still registered", func(t *testing.T) {
		ms, err := f.mem.list(ctx)
		require.NoError(t, err)
		_, err = f.mem.addLearner(ctx, ms[0].PeerURLs[0], ms[0].ID)
		require.ErrorIs(t, err, ErrUnexpectedMember)
	})

	t.Run("promote a real learner", func(t *testing.T) {
		m, err := f.env.Etcd().AddMember(ctx, localenv.AddMemberOptions{Learner: true})
		require.NoError(t, err)
		ms, err := f.mem.list(ctx)
		require.NoError(t, err)
		learner := byPeerURL(ms, m.PeerURL)
		require.NotNil(t, learner)
		require.True(t, learner.IsLearner)
		f.api.lose["promote"] = 1
		require.NoError(t, f.mem.promote(ctx, learner.ID, time.Minute))
		require.NoError(t, f.mem.promote(ctx, learner.ID, time.Minute), "promoting again is settled by MemberList")
		ms, err = f.mem.list(ctx)
		require.NoError(t, err)
		require.False(t, byID(ms, learner.ID).IsLearner)
		// Back to three voters.
		require.NoError(t, f.mem.remove(ctx, learner.ID))
		require.NoError(t, f.env.Etcd().RemoveMember(ctx, m.Name))
	})

	t.Run("unhealthy cluster is retried", func(t *testing.T) {
		m := f.env.Etcd().Member("etcd-2")
		require.NoError(t, m.Kill())
		require.NoError(t, m.Restart(ctx))
		before := f.api.seen(rpctypes.ErrUnhealthy)
		start := time.Now()
		id, err := f.mem.addLearner(ctx, unusedPeerURL(t), 0)
		require.NoError(t, err)
		t.Logf("learner added %s after the restart, %d \"unhealthy cluster\" answers retried",
			time.Since(start).Round(time.Millisecond), f.api.seen(rpctypes.ErrUnhealthy)-before)
		require.Greater(t, f.api.seen(rpctypes.ErrUnhealthy), before)
		require.NoError(t, f.mem.remove(ctx, id))
	})

	t.Run("move leader", func(t *testing.T) {
		ms, err := f.mem.list(ctx)
		require.NoError(t, err)
		leader := agreedLeader(f.mem.voterStatuses(ctx, ms, 0))
		require.NotZero(t, leader)
		moved, err := f.mem.moveLeaderAway(ctx, leader)
		require.NoError(t, err)
		require.True(t, moved)
		now := agreedLeader(f.mem.voterStatuses(ctx, ms, 0))
		require.NotZero(t, now)
		require.NotEqual(t, leader, now)
		moved, err = f.mem.moveLeaderAway(ctx, leader)
		require.NoError(t, err)
		require.False(t, moved, "nothing to do when the member does not lead")
	})

	t.Run("alarm", func(t *testing.T) {
		ms, err := f.mem.list(ctx)
		require.NoError(t, err)
		_, err = pb.NewMaintenanceClient(f.cli.ActiveConnection()).Alarm(ctx, &pb.AlarmRequest{
			Action: pb.AlarmRequest_ACTIVATE, MemberID: ms[0].ID, Alarm: pb.AlarmType_NOSPACE})
		require.NoError(t, err)
		v, err := observeEtcd(ctx, f.mem)
		require.NoError(t, err)
		require.Equal(t, []Alarm{{MemberID: ms[0].ID, Type: "NOSPACE"}}, v.alarms)
		_, err = f.cli.AlarmDisarm(ctx, &clientv3.AlarmMember{MemberID: ms[0].ID, Alarm: pb.AlarmType_NOSPACE})
		require.NoError(t, err)
	})

	t.Run("snapshot", func(t *testing.T) {
		dir := t.TempDir()
		snap, err := takeSnapshot(ctx, f.conn, f.env.Etcd().Endpoints()[1], dir, "test")
		require.NoError(t, err)
		path, n := snap.path, snap.bytes
		require.Greater(t, n, int64(sha256.Size))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		sum := sha256.Sum256(data[:len(data)-sha256.Size])
		require.Equal(t, sum[:], data[len(data)-sha256.Size:])
		whole := sha256.Sum256(data)
		require.Equal(t, hex.EncodeToString(whole[:]), snap.sha256, "the digest the checkpoint records is the whole file's")
		require.Equal(t, int64(len(data)), n)
	})
}

func TestTrailerHash(t *testing.T) {
	body := make([]byte, 100_000)
	for i := range body {
		body[i] = byte(i * 7)
	}
	sum := sha256.Sum256(body)
	stream := append(append([]byte(nil), body...), sum[:]...)
	for _, chunk := range []int{1, 7, 31, 32, 33, 4096, len(stream)} {
		th := &trailerHash{h: sha256.New()}
		for off := 0; off < len(stream); off += chunk {
			th.Write(stream[off:min(off+chunk, len(stream))])
		}
		require.True(t, th.ok(), "chunk %d", chunk)
	}
	stream[10]++
	th := &trailerHash{h: sha256.New()}
	th.Write(stream)
	require.False(t, th.ok())
}
