package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// statusCall bounds one Status call: a member that does not answer within
// it counts as not answering.
const statusCall = 2 * time.Second

// status asks the member at url for its Status.
func (m *memberOps) status(ctx context.Context, url string) (*MemberStatus, error) {
	return m.statusWithin(ctx, url, min(m.callOr(statusCall), statusCall))
}

// statusWithin is status with its own bound.
func (m *memberOps) statusWithin(ctx context.Context, url string, d time.Duration) (*MemberStatus, error) {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r, err := m.api.Status(cctx, url)
	if err != nil {
		return nil, fmt.Errorf("status %s: %w", url, err)
	}
	return statusOf(r), nil
}

func (m *memberOps) callOr(d time.Duration) time.Duration {
	if m.call > 0 {
		return m.call
	}
	return d
}

func statusOf(r *clientv3.StatusResponse) *MemberStatus {
	return &MemberStatus{
		Version: r.Version, ClusterID: r.Header.ClusterId, MemberID: r.Header.MemberId, Leader: r.Leader,
		RaftTerm: r.RaftTerm, RaftIndex: r.RaftIndex, RaftAppliedIndex: r.RaftAppliedIndex, Revision: r.Header.Revision,
		DBSize: r.DbSize, DBSizeInUse: r.DbSizeInUse, IsLearner: r.IsLearner, Errors: r.Errors,
	}
}

// voterStatuses asks every started voter in ms except skip for its Status,
// in parallel; members that do not answer are missing from the map.
func (m *memberOps) voterStatuses(ctx context.Context, ms []*pb.Member, skip uint64) map[uint64]*MemberStatus {
	out := map[uint64]*MemberStatus{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, mem := range ms {
		if mem.IsLearner || len(mem.ClientURLs) == 0 || mem.ID == skip {
			continue
		}
		wg.Go(func() {
			if st, err := m.status(ctx, mem.ClientURLs[0]); err == nil {
				mu.Lock()
				out[mem.ID] = st
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// agreedLeader returns the leader all answering voters report if at least
// two of them (or all of a smaller cluster) answered, else 0.
func agreedLeader(sts map[uint64]*MemberStatus) uint64 {
	var leader uint64
	for _, st := range sts {
		if st.Leader == 0 || (leader != 0 && st.Leader != leader) {
			return 0
		}
		leader = st.Leader
	}
	if len(sts) < 2 {
		return 0
	}
	return leader
}

// moveLeaderAway makes sure member from does not lead: if it does, it sends
// MoveLeader, on a client of the leader only, to the voter with the highest
// applied index, and returns once two voters agree on another leader. It
// reports whether it moved leadership.
func (m *memberOps) moveLeaderAway(ctx context.Context, from uint64) (bool, error) {
	moved := false
	err := m.stall.retry(ctx, m.bound, "move leadership away from "+FormatID(from), func(ctx context.Context) (bool, error) {
		ms, err := m.list(ctx)
		if err != nil {
			return false, err
		}
		// The member itself is not asked: it may be stopping; the others
		// report whether it leads.
		sts := m.voterStatuses(ctx, ms, from)
		leader := agreedLeader(sts)
		switch {
		case leader == 0:
			return false, keepTrying{rpctypes.ErrNoLeader}
		case leader != from:
			return true, nil
		}
		var to uint64
		for id, st := range sts {
			if id != from && (to == 0 || st.RaftAppliedIndex > sts[to].RaftAppliedIndex) {
				to = id
			}
		}
		lm := byID(ms, leader)
		if to == 0 || lm == nil || len(lm.ClientURLs) == 0 {
			return false, keepTrying{fmt.Errorf("%w: no healthy voter to take over leadership", ErrQuorumAtRisk)}
		}
		c, closeC, err := m.one(lm.ClientURLs[0])
		if err != nil {
			return false, keepTrying{err}
		}
		cctx, cancel := m.callCtx(ctx)
		_, err = c.MoveLeader(cctx, to)
		cancel()
		closeC()
		if err != nil && (errors.Is(err, rpctypes.ErrNotLeader) || errors.Is(err, rpctypes.ErrBadLeaderTransferee)) {
			return false, keepTrying{err}
		}
		if err == nil {
			m.log.Info("moved leadership", "from", FormatID(from), "to", FormatID(to))
			moved = true
		}
		return false, err
	})
	return moved, err
}
