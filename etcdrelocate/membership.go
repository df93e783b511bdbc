package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MembershipClient is the part of etcd's client API that the relocator's
// decisions rest on: the membership calls, each member's Status and HashKV
// (asked on the member's own client URL), leadership transfer and the
// alarms. *clientv3.Client satisfies it. The executor's decision logic —
// retries, settling ambiguous results through MemberList, what to do on
// each observed state — talks to etcd only through it, so tests drive it
// with a fake that produces what a real cluster cannot on demand.
type MembershipClient interface {
	MemberList(ctx context.Context, opts ...clientv3.OpOption) (*clientv3.MemberListResponse, error)
	MemberAddAsLearner(ctx context.Context, peerAddrs []string) (*clientv3.MemberAddResponse, error)
	MemberPromote(ctx context.Context, id uint64) (*clientv3.MemberPromoteResponse, error)
	MemberRemove(ctx context.Context, id uint64) (*clientv3.MemberRemoveResponse, error)
	// Status and HashKV ask the member at endpoint (a client URL).
	Status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error)
	HashKV(ctx context.Context, endpoint string, rev int64) (*clientv3.HashKVResponse, error)
	// MoveLeader is only ever called on a client whose one endpoint is the
	// leader (etcd answers "not leader" elsewhere).
	MoveLeader(ctx context.Context, transfereeID uint64) (*clientv3.MoveLeaderResponse, error)
	AlarmList(ctx context.Context) (*clientv3.AlarmResponse, error)
}

var _ MembershipClient = (*clientv3.Client)(nil)

// memberOps makes etcd membership changes safe to retry. etcd's membership
// RPCs are not idempotent and the client does not retry them once they have
// reached a server, so every result that is not a clean success is settled
// by re-reading MemberList (linearizably) and matching by ID or peer URL.
type memberOps struct {
	// api reaches the cluster (any member but the one being moved).
	api MembershipClient
	// one returns a client whose only endpoint is the member at url, and
	// the function that closes it.
	one func(url string) (MembershipClient, func(), error)
	log *slog.Logger
	// bound limits each operation including its retries; call each RPC.
	bound, call time.Duration
	// stall is the stall watch of the run the operations serve, nil
	// outside Execute.
	stall *stallWatch
}

// callCtx bounds one RPC.
func (m *memberOps) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	d := m.call
	if d <= 0 {
		d = 10 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

// list reads MemberList linearizably, retrying transient errors.
func (m *memberOps) list(ctx context.Context) ([]*pb.Member, error) {
	var members []*pb.Member
	err := m.stall.retry(ctx, m.bound, "member list", func(ctx context.Context) (bool, error) {
		cctx, cancel := m.callCtx(ctx)
		defer cancel()
		resp, err := m.api.MemberList(cctx)
		if err != nil {
			return false, err
		}
		members = resp.Members
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return members, nil
}

func byID(ms []*pb.Member, id uint64) *pb.Member {
	for _, m := range ms {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func byPeerURL(ms []*pb.Member, u string) *pb.Member {
	for _, m := range ms {
		for _, p := range m.PeerURLs {
			if sameURL(p, u) {
				return m
			}
		}
	}
	return nil
}

// remove removes member id and returns once MemberList no longer shows it.
// "member not found" means it was removed already (by an earlier attempt
// whose reply was lost, or an earlier run).
func (m *memberOps) remove(ctx context.Context, id uint64) error {
	err := m.stall.retry(ctx, m.bound, "remove member "+FormatID(id), func(ctx context.Context) (bool, error) {
		cctx, cancel := m.callCtx(ctx)
		_, err := m.api.MemberRemove(cctx, id)
		cancel()
		switch {
		case err == nil, errors.Is(err, rpctypes.ErrMemberNotFound):
		case transient(err):
			m.log.Debug("member remove: settling an unclear result", "member", FormatID(id), "err", err)
		default:
			return false, err
		}
		ms, lerr := m.list(ctx)
		if lerr != nil {
			return false, lerr
		}
		if byID(ms, id) == nil {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("remove member %s: %w", FormatID(id), err)
	}
	return nil
}

// addLearner adds peerURL as a learner and returns its ID. If MemberList
// already shows the URL (an earlier attempt whose reply was lost, or an
// earlier run) that member's ID is returned instead; if the URL still
// belongs to oldID, the old member was never removed and ErrUnexpectedMember
// is returned, as it is for another learner.
func (m *memberOps) addLearner(ctx context.Context, peerURL string, oldID uint64) (uint64, error) {
	var id uint64
	settle := func(ctx context.Context, cause error) (bool, error) {
		ms, err := m.list(ctx)
		if err != nil {
			return false, err
		}
		if mem := byPeerURL(ms, peerURL); mem != nil {
			if mem.ID == oldID {
				return false, fmt.Errorf("%w: %s still belongs to the old member %s", ErrUnexpectedMember, peerURL, FormatID(oldID))
			}
			id = mem.ID
			return true, nil
		}
		for _, mem := range ms {
			if mem.IsLearner {
				return false, fmt.Errorf("%w: another learner %s %q is present", ErrUnexpectedMember, FormatID(mem.ID), mem.PeerURLs)
			}
		}
		return false, cause
	}
	err := m.stall.retry(ctx, m.bound, "add learner "+peerURL, func(ctx context.Context) (bool, error) {
		if done, err := settle(ctx, nil); done || err != nil {
			return done, err
		}
		cctx, cancel := m.callCtx(ctx)
		resp, err := m.api.MemberAddAsLearner(cctx, []string{peerURL})
		cancel()
		switch {
		case err == nil:
			id = resp.Member.ID
			return true, nil
		case errors.Is(err, rpctypes.ErrPeerURLExist), errors.Is(err, rpctypes.ErrMemberExist),
			errors.Is(err, rpctypes.ErrTooManyLearners), transient(err):
			m.log.Debug("member add: settling an unclear result", "url", peerURL, "err", err)
			return settle(ctx, err)
		case errors.Is(err, rpctypes.ErrMemberNotFound):
			// etcd derives a new member's ID from its peer URLs and the
			// second of the request (computeMemberID), and refuses an ID
			// it has removed with ErrIDRemoved, which gRPC reports as
			// "member not found". A learner of the same URL added and
			// removed within this second (a misplaced pod moved at once)
			// has that ID: the next second gives another.
			m.log.Debug("member add: the ID of this second was removed; retrying in the next second", "url", peerURL)
			waitNextSecond(ctx)
			return settle(ctx, keepTrying{fmt.Errorf("the new member's ID was removed this second: %w", err)})
		default:
			return false, err
		}
	})
	if err != nil {
		return 0, fmt.Errorf("add learner %s: %w", peerURL, err)
	}
	return id, nil
}

// promote promotes learner id, retrying while etcd says it is not in sync.
// "not a learner" counts as done once MemberList shows a voter.
func (m *memberOps) promote(ctx context.Context, id uint64, bound time.Duration) error {
	notReady := 0
	err := m.stall.retry(ctx, bound, "promote "+FormatID(id), func(ctx context.Context) (bool, error) {
		cctx, cancel := m.callCtx(ctx)
		_, err := m.api.MemberPromote(cctx, id)
		cancel()
		switch {
		case err == nil, errors.Is(err, rpctypes.ErrMemberNotLearner), transient(err):
		case errors.Is(err, rpctypes.ErrMemberLearnerNotReady):
			notReady++
			return false, keepTrying{err}
		case errors.Is(err, rpctypes.ErrMemberNotFound):
			return false, fmt.Errorf("%w: learner %s is gone", ErrUnexpectedMember, FormatID(id))
		default:
			return false, err
		}
		ms, lerr := m.list(ctx)
		if lerr != nil {
			return false, lerr
		}
		switch mem := byID(ms, id); {
		case mem == nil:
			return false, fmt.Errorf("%w: learner %s is gone", ErrUnexpectedMember, FormatID(id))
		case !mem.IsLearner:
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("promote %s (%d times not in sync): %w", FormatID(id), notReady, err)
	}
	return nil
}

// waitNextSecond sleeps until the next wall-clock second (or ctx ends).
func waitNextSecond(ctx context.Context) {
	t := time.NewTimer(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
