package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// oldPresent reports whether the old member is still in ms.
func (x *run) oldPresent(ms []*pb.Member) bool { return byID(ms, x.p.Member.ID) != nil }

// newMember returns the member that replaces the old one: for fixed names
// the member with the old peer URL and another ID, else a member that was
// not there when the plan was made.
func (x *run) newMember(ms []*pb.Member) *pb.Member {
	if !x.p.Layout.operatorManaged() {
		if m := byPeerURL(ms, x.p.Member.PeerURL); m != nil && m.ID != x.p.Member.ID {
			return m
		}
		return nil
	}
	for _, m := range ms {
		if m.ID != x.p.Member.ID && !slices.Contains(x.p.Peers, m.ID) {
			return m
		}
	}
	return nil
}

func memberLabel(m *pb.Member) string {
	if m.Name != "" {
		return m.Name
	}
	return FormatID(m.ID)
}

// setUnschedulable cordons (on) or uncordons node.
func setUnschedulable(ctx context.Context, kube kubernetes.Interface, node string, on bool) error {
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, on)
	_, err := kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("set node %s unschedulable=%t: %w", node, on, err)
	}
	return nil
}

// syncSlack is how many raft entries a voter may trail the leader's commit
// index and still count as in sync (a member that just restarted replays
// its log and catches up first).
const syncSlack = 100

// othersHealthy waits until every voter other than the moved member answers
// Status without errors, they agree on a leader, and each has applied the
// leader's committed index within syncSlack.
func (x *run) othersHealthy(ctx context.Context) error {
	return x.stall.retry(ctx, x.r.t.Membership, "wait for the other voters to be healthy", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		sts := x.mem.voterStatuses(ctx, ms, x.p.Member.ID)
		for _, m := range ms {
			if m.IsLearner || m.ID == x.p.Member.ID {
				continue
			}
			if st := sts[m.ID]; st == nil || len(st.Errors) > 0 {
				return false, keepTrying{fmt.Errorf("%w: voter %s is not healthy", ErrQuorumAtRisk, memberLabel(m))}
			}
		}
		if agreedLeader(sts) == 0 {
			return false, keepTrying{fmt.Errorf("%w: no agreed leader (%s)", ErrQuorumAtRisk, leadersSeen(ms, sts))}
		}
		// The leader may be the moved member, which is not asked: compare
		// with the highest committed index the others know.
		var committed uint64
		for _, st := range sts {
			committed = max(committed, st.RaftIndex)
		}
		for id, st := range sts {
			if st.RaftAppliedIndex+syncSlack < committed {
				return false, keepTrying{fmt.Errorf("%w: voter %s has applied %d of %d", ErrQuorumAtRisk, FormatID(id), st.RaftAppliedIndex, committed)}
			}
		}
		return true, nil
	})
}

// learnerID finds the new member's ID (a resumed run has not seen it).
func (x *run) learnerID(ctx context.Context) (*pb.Member, []*pb.Member, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return nil, nil, err
	}
	m := x.newMember(ms)
	if m == nil {
		return nil, ms, fmt.Errorf("%w: no new member with peer URL %s", ErrUnexpectedMember, x.p.Member.PeerURL)
	}
	x.learner, x.res.NewMemberID = m.ID, m.ID
	return m, ms, nil
}

// agreedLeader waits (within Timeouts.Membership, and for a stalled voter
// within the stall budget) until the voters other than skip agree on a
// leader, and returns the leader's Status. A member that resumed after a
// stall, or an election, leaves them disagreeing for a moment. Running out
// is ErrQuorumAtRisk, not ErrTimeout: the new member is not to blame, so
// no rollback follows.
func (x *run) agreedLeader(ctx context.Context, ms []*pb.Member, skip uint64) (*MemberStatus, error) {
	var leader *MemberStatus
	var seen string
	err := x.stall.retry(ctx, x.r.t.Membership, "an agreed leader", func(ctx context.Context) (bool, error) {
		if ms == nil {
			var err error
			if ms, err = x.mem.list(ctx); err != nil {
				return false, err
			}
		}
		sts := x.mem.voterStatuses(ctx, ms, skip)
		if leader = sts[agreedLeader(sts)]; leader == nil {
			seen, ms = leadersSeen(ms, sts), nil
			return false, keepTrying{fmt.Errorf("%w: no agreed leader (%s)", ErrQuorumAtRisk, seen)}
		}
		return true, nil
	})
	if errors.Is(err, ErrTimeout) {
		return nil, fmt.Errorf("%w: no agreed leader within %s (%s)", ErrQuorumAtRisk, x.r.t.Membership, seen)
	}
	return leader, err
}

// memberStatus asks one member for its Status on its own client URL.
func (x *run) memberStatus(ctx context.Context, m *pb.Member) (*MemberStatus, error) {
	return memberStatusWithin(ctx, x, m, statusCall)
}

// clientURLFromPeer turns https://host:2380 into https://host:2379.
func clientURLFromPeer(peer string) string {
	h := hostOf(peer)
	if h == "" {
		return ""
	}
	return "https://" + h + ":" + clientPort
}

// leadersSeen describes which leader each voter reports, for errors.
func leadersSeen(ms []*pb.Member, sts map[uint64]*MemberStatus) string {
	var parts []string
	for _, m := range ms {
		if m.IsLearner {
			continue
		}
		if st := sts[m.ID]; st != nil {
			parts = append(parts, fmt.Sprintf("%s sees leader %s", memberLabel(m), FormatID(st.Leader)))
		} else {
			parts = append(parts, memberLabel(m)+" does not answer")
		}
	}
	return strings.Join(parts, ", ")
}

// memberStatusWithin is memberStatus with a bound of its own: a member that
// is not serving yet answers the moment it starts.
func memberStatusWithin(ctx context.Context, x *run, m *pb.Member, d time.Duration) (*MemberStatus, error) {
	urls := m.ClientURLs
	if len(urls) == 0 && x.p.Member.Pod != "" {
		// A learner that has not published its attributes yet: use the
		// URL its pod will serve.
		urls = []string{clientURLFromPeer(x.p.Member.PeerURL)}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("member %s has no client URL yet", FormatID(m.ID))
	}
	return x.mem.statusWithin(ctx, urls[0], d)
}
