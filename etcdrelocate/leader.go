package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// voterStatuses asks every started voter in ms except skip for its Status.
func voterStatuses(ctx context.Context, conn *connector, ms []*pb.Member, skip uint64) map[uint64]*MemberStatus {
	out := map[uint64]*MemberStatus{}
	for _, m := range ms {
		if m.IsLearner || len(m.ClientURLs) == 0 || m.ID == skip {
			continue
		}
		c, err := conn.member(m.ClientURLs[0])
		if err != nil {
			continue
		}
		if st, err := memberStatus(ctx, conn, c, m.ClientURLs[0]); err == nil {
			out[m.ID] = st
		}
	}
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
func moveLeaderAway(ctx context.Context, conn *connector, mem *membership, from uint64, bound time.Duration) (bool, error) {
	moved := false
	err := retry(ctx, bound, "move leadership away from "+FormatID(from), func(ctx context.Context) (bool, error) {
		ms, err := mem.list(ctx)
		if err != nil {
			return false, err
		}
		// The member itself is not asked: it may be stopping; the others
		// report whether it leads.
		sts := voterStatuses(ctx, conn, ms, from)
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
		c, err := conn.member(lm.ClientURLs[0])
		if err != nil {
			return false, keepTrying{err}
		}
		cctx, cancel := conn.callCtx(ctx)
		_, err = c.MoveLeader(cctx, to)
		cancel()
		if err != nil && (errors.Is(err, rpctypes.ErrNotLeader) || errors.Is(err, rpctypes.ErrBadLeaderTransferee)) {
			return false, keepTrying{err}
		}
		if err == nil {
			mem.log.Info("moved leadership", "from", FormatID(from), "to", FormatID(to))
			moved = true
		}
		return false, err
	})
	return moved, err
}
