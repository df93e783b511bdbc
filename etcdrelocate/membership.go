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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// membership makes etcd membership changes safe to retry. etcd's membership
// RPCs are not idempotent and the client does not retry them once they have
// reached a server, so every result that is not a clean success is settled
// by re-reading MemberList (linearizably) and matching by ID or peer URL.
type membership struct {
	api  clientv3.Cluster
	conn *connector
	log  *slog.Logger
	// bound limits each operation including its retries.
	bound time.Duration
}

// transient reports whether err may clear up by itself: "unhealthy
// cluster" (strict reconfig check within 5 s of a reconnect), no leader, a
// leader change, timeouts and unavailable endpoints. A transient error on a
// membership RPC also leaves its outcome unknown.
func transient(err error) bool {
	for _, e := range []error{rpctypes.ErrUnhealthy, rpctypes.ErrNoLeader, rpctypes.ErrNotLeader, rpctypes.ErrLeaderChanged,
		rpctypes.ErrStopped, rpctypes.ErrTimeout, rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost,
		rpctypes.ErrTimeoutWaitAppliedIndex, rpctypes.ErrNotCapable, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	var k keepTrying
	if errors.As(err, &k) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// keepTrying marks an error retry should retry (a condition not met yet).
type keepTrying struct{ error }

func (k keepTrying) Unwrap() error { return k.error }

// retry calls attempt until it reports done, returns a non-transient error,
// the bound passes (ErrTimeout, wrapping the last error) or ctx ends.
func retry(ctx context.Context, bound time.Duration, what string, attempt func(ctx context.Context) (bool, error)) error {
	deadline := time.Now().Add(bound)
	wait := 100 * time.Millisecond
	for {
		done, err := attempt(ctx)
		if err == nil && done {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !transient(err) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s after %s: %w", ErrTimeout, what, bound, lastErr(err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

func lastErr(err error) error {
	if err == nil {
		return errors.New("condition not met")
	}
	return err
}

// list reads MemberList linearizably, retrying transient errors.
func (m *membership) list(ctx context.Context) ([]*pb.Member, error) {
	var members []*pb.Member
	err := retry(ctx, m.bound, "member list", func(ctx context.Context) (bool, error) {
		cctx, cancel := m.conn.callCtx(ctx)
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
			if SameURL(p, u) {
				return m
			}
		}
	}
	return nil
}

// remove removes member id and returns once MemberList no longer shows it.
// "member not found" means it was removed already (by an earlier attempt
// whose reply was lost, or an earlier run).
func (m *membership) remove(ctx context.Context, id uint64) error {
	err := retry(ctx, m.bound, "remove member "+FormatID(id), func(ctx context.Context) (bool, error) {
		cctx, cancel := m.conn.callCtx(ctx)
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
// is returned.
func (m *membership) addLearner(ctx context.Context, peerURL string, oldID uint64) (uint64, error) {
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
				return false, fmt.Errorf("%w: another learner %s (%v) is present", ErrUnexpectedMember, FormatID(mem.ID), mem.PeerURLs)
			}
		}
		return false, cause
	}
	err := retry(ctx, m.bound, "add learner "+peerURL, func(ctx context.Context) (bool, error) {
		if done, err := settle(ctx, nil); done || err != nil {
			return done, err
		}
		cctx, cancel := m.conn.callCtx(ctx)
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
func (m *membership) promote(ctx context.Context, id uint64, bound time.Duration) error {
	notReady := 0
	err := retry(ctx, bound, "promote "+FormatID(id), func(ctx context.Context) (bool, error) {
		cctx, cancel := m.conn.callCtx(ctx)
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
