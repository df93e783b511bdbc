package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

func (x *run) moveLeader(ctx context.Context) (string, bool, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if !x.oldPresent(ms) {
		return "the member is already removed", true, nil
	}
	moved, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID)
	if err != nil {
		return "", false, err
	}
	if moved {
		x.res.LeaderMoved = true
		return "leadership moved to another voter", false, nil
	}
	return "the member does not lead", true, nil
}

func (x *run) cordon(ctx context.Context) (string, bool, error) {
	nodes := x.r.cfg.Kube.CoreV1().Nodes()
	node, err := nodes.Get(ctx, x.p.Member.Node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "node " + x.p.Member.Node + " is gone", true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("get node: %w", err)
	}
	if node.Spec.Unschedulable {
		if x.cp.CordonedSource {
			return "cordoned by this relocation earlier", true, nil
		}
		return "was cordoned before; it stays cordoned afterwards", true, nil
	}
	// Record the intent first: a crash between the two writes then at worst
	// uncordons a node that is schedulable anyway.
	x.cp.CordonedSource = true
	if err := x.saveCheckpoint(ctx); err != nil {
		return "", false, err
	}
	if err := setUnschedulable(ctx, x.r.cfg.Kube, x.p.Member.Node, true); err != nil {
		return "", false, err
	}
	return "cordoned " + x.p.Member.Node, false, nil
}

func (x *run) uncordon(ctx context.Context) (string, bool, error) {
	if x.cp == nil || !x.cp.CordonedSource {
		return "the source node was not cordoned by this relocation", true, nil
	}
	err := setUnschedulable(ctx, x.r.cfg.Kube, x.p.Member.Node, false)
	if apierrors.IsNotFound(err) {
		return "node " + x.p.Member.Node + " is gone", true, nil
	}
	if err != nil {
		return "", false, err
	}
	return "uncordoned " + x.p.Member.Node, false, nil
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
	return retry(ctx, x.r.t.Membership, "wait for the other voters to be healthy", func(ctx context.Context) (bool, error) {
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

func (x *run) removeMember(ctx context.Context) (string, bool, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if !x.oldPresent(ms) {
		return "already removed", true, nil
	}
	if err := x.othersHealthy(ctx); err != nil {
		return "", false, err
	}
	// Leadership may have come back since move-leader (an election after
	// a crash).
	if _, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID); err != nil {
		return "", false, err
	}
	if err := x.mem.remove(ctx, x.p.Member.ID); err != nil {
		return "", false, err
	}
	if x.res.RemovedAt.IsZero() {
		x.res.RemovedAt = time.Now()
	}
	if err := x.othersHealthy(ctx); err != nil {
		return "", false, fmt.Errorf("after removal: %w", err)
	}
	return "removed member " + FormatID(x.p.Member.ID), false, nil
}

func (x *run) addLearner(ctx context.Context) (string, bool, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if m := x.newMember(ms); m != nil {
		x.learner, x.res.NewMemberID = m.ID, m.ID
		return "already added as " + FormatID(m.ID), true, nil
	}
	id, err := x.mem.addLearner(ctx, x.p.Member.PeerURL, x.p.Member.ID)
	if err != nil {
		return "", false, err
	}
	x.learner, x.res.NewMemberID = id, id
	return "learner " + FormatID(id) + " added", false, nil
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

// catchUp waits until the learner has applied the leader's committed index
// as sampled when the wait began.
func (x *run) catchUp(ctx context.Context) (string, bool, error) {
	m, ms, err := x.learnerID(ctx)
	if err != nil {
		return "", false, err
	}
	if !m.IsLearner {
		return "already a voter", true, nil
	}
	leader, err := x.agreedLeader(ctx, ms, m.ID)
	if err != nil {
		return "", false, err
	}
	target := leader.RaftIndex
	bound := x.r.t.catchUp(leader.DBSize)
	var applied uint64
	last := time.Now()
	err = retry(ctx, bound, "learner catch-up", func(ctx context.Context) (bool, error) {
		st, err := x.memberStatus(ctx, m)
		if err != nil {
			return false, keepTrying{err}
		}
		applied = st.RaftAppliedIndex
		if time.Since(last) > 2*time.Second {
			x.r.log.Info("learner catching up", "applied", applied, "target", target, "dbSize", st.DBSize)
			last = time.Now()
		}
		if applied >= target {
			return true, nil
		}
		return false, keepTrying{fmt.Errorf("learner applied %d of %d", applied, target)}
	})
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("applied index %d ≥ leader's %d", applied, target), false, nil
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
	err := retry(ctx, x.r.t.Membership, "an agreed leader", func(ctx context.Context) (bool, error) {
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
	return x.memberStatusWithin(ctx, m, statusCall)
}

// memberStatusWithin is memberStatus with a bound of its own: a member that
// is not serving yet answers the moment it starts.
func (x *run) memberStatusWithin(ctx context.Context, m *pb.Member, d time.Duration) (*MemberStatus, error) {
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

// clientURLFromPeer turns https://host:2380 into https://host:2379.
func clientURLFromPeer(peer string) string {
	h := hostOf(peer)
	if h == "" {
		return ""
	}
	return "https://" + h + ":" + clientPort
}

func (x *run) promote(ctx context.Context) (string, bool, error) {
	m, _, err := x.learnerID(ctx)
	if err != nil {
		return "", false, err
	}
	if !m.IsLearner {
		x.res.PromotedAt = time.Now()
		return "already a voter", true, nil
	}
	if err := x.mem.promote(ctx, m.ID, x.r.t.catchUp(0)); err != nil {
		return "", false, err
	}
	x.res.PromotedAt = time.Now()
	// Check on the member itself (etcd #18347: "member remains learner").
	err = retry(ctx, x.r.t.Membership, "the member reports itself a voter", func(ctx context.Context) (bool, error) {
		st, err := x.memberStatus(ctx, m)
		if err != nil {
			return false, keepTrying{err}
		}
		if st.IsLearner {
			return false, keepTrying{errors.New("the member still reports IsLearner")}
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	return "member " + FormatID(m.ID) + " is a voter", false, nil
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
