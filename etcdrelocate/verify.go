package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verification is what Verify found after a relocation.
type Verification struct {
	// Voters and Learners count the members.
	Voters, Learners int
	// Leader is the agreed leader.
	Leader uint64
	// HashRevision is the revision of the HashKV comparison; HashesEqual
	// reports that every voter had the same hash there.
	HashRevision int64
	HashesEqual  bool
	// StartRevision is the revision when the relocation began (from the
	// checkpoint, 0 if unknown); KeysAtStart is the number of keys every
	// voter holds at that revision (-1 if it could not be checked, for
	// example after compaction).
	StartRevision int64
	KeysAtStart   int64
	// NewMemberID is the replacement's ID, PodNode where its pod runs and
	// PodReady whether the pod is Ready.
	NewMemberID uint64
	PodNode     string
	PodReady    bool
	// Problems lists what does not hold (empty when verified).
	Problems []string
	// Unobserved lists what could not be checked (a voter that did not
	// answer HashKV, a key count that could not be read); empty when
	// everything was observed. Not a problem, and not a pass either.
	Unobserved []string

	// etcdProblems are the problems on etcd's side (Problems without the
	// pod's).
	etcdProblems []string
}

// err returns the verification's verdict: nil, or an error wrapping
// ErrVerify (problems) and/or ErrNotObserved (what could not be checked).
func (v *Verification) err() error {
	p, u := strings.Join(v.Problems, "; "), strings.Join(v.Unobserved, "; ")
	switch {
	case p != "" && u != "":
		return fmt.Errorf("%w: %s; %w: %s", ErrVerify, p, ErrNotObserved, u)
	case p != "":
		return fmt.Errorf("%w: %s", ErrVerify, p)
	case u != "":
		return fmt.Errorf("%w: %s", ErrNotObserved, u)
	}
	return nil
}

// String renders the verification as a few lines of text.
func (v *Verification) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "voters %d, learners %d, leader %s\n", v.Voters, v.Learners, FormatID(v.Leader))
	fmt.Fprintf(&b, "HashKV equal on every voter at revision %d: %t\n", v.HashRevision, v.HashesEqual)
	if v.KeysAtStart >= 0 && v.StartRevision > 0 {
		fmt.Fprintf(&b, "keys at the starting revision %d: %d on every voter\n", v.StartRevision, v.KeysAtStart)
	}
	fmt.Fprintf(&b, "new member %s: pod on %s, ready %t\n", FormatID(v.NewMemberID), orNone(v.PodNode), v.PodReady)
	for _, p := range v.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	for _, u := range v.Unobserved {
		fmt.Fprintf(&b, "not observed: %s\n", u)
	}
	return b.String()
}

// Verify checks the outcome of plan p: every member a voter and as many as
// before, one agreed leader, HashKV equal at a common revision, every voter
// holding the same keys at the revision the relocation started from, and
// the new member's pod Ready on the target node. A pod becomes Ready only
// after promotion: once etcd's side holds, Verify re-reads only the pod, on
// its events, instead of observing etcd again. It retries for up to the
// pod timeout while something does not hold, and returns an error wrapping
// ErrVerify with the problems, or ErrNotObserved with what could not be
// checked, if that persists.
func (r *Relocator) Verify(ctx context.Context, p *Plan) (*Verification, error) {
	if err := r.usable(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errNil("*Plan")
	}
	return verifyWatched(ctx, r, p, nil)
}

// verifyWatched is Verify whose wait consults sw (the verify step's).
func verifyWatched(ctx context.Context, r *Relocator, p *Plan, sw *stallWatch) (*Verification, error) {
	var wake <-chan struct{}
	podOnly := !p.Layout.operatorManaged() && p.Member.Pod != ""
	if podOnly {
		w, stop := wakeOn(ctx, watched{r.cfg.Kube.CoreV1().Pods(p.Namespace).Watch, p.Member.Pod})
		defer stop()
		wake = w
	}
	var v *Verification
	err := sw.retryWake(ctx, r.t.Pod, "verification", wake, func(ctx context.Context) (bool, error) {
		if podOnly && v != nil && v.etcdHeld() {
			if err := r.verifyPod(ctx, p, v); err != nil {
				return false, keepTrying{err}
			}
		} else {
			nv, err := r.verifyOnce(ctx, p)
			if err != nil {
				return false, keepTrying{err}
			}
			v = nv
		}
		if err := v.err(); err != nil {
			return false, keepTrying{err}
		}
		return true, nil
	})
	if err != nil && v != nil && v.err() != nil {
		return v, v.err()
	}
	return v, err
}

// etcdHeld reports that everything but the pod was verified.
func (v *Verification) etcdHeld() bool { return len(v.etcdProblems) == 0 && len(v.Unobserved) == 0 }

// judge sets Problems from etcd's problems and the pod's state.
func (v *Verification) judge(p *Plan) {
	v.Problems = slices.Clone(v.etcdProblems)
	if v.NewMemberID == 0 {
		return
	}
	if v.PodNode != p.TargetNode {
		v.Problems = append(v.Problems, fmt.Sprintf("the new member runs on %q, not %s", v.PodNode, p.TargetNode))
	}
	if !v.PodReady {
		v.Problems = append(v.Problems, "the new member's pod is not Ready")
	}
}

// verifyPod re-reads the new member's pod into v.
func (r *Relocator) verifyPod(ctx context.Context, p *Plan, v *Verification) error {
	pod, err := r.cfg.Kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Member.Pod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get pod %s: %w", p.Member.Pod, err)
	}
	v.PodNode, v.PodReady = "", false
	if string(pod.UID) != p.Member.PodUID {
		po := podOf(pod)
		v.PodNode, v.PodReady = po.Node, po.Ready
	}
	v.judge(p)
	return nil
}

func (r *Relocator) verifyOnce(ctx context.Context, p *Plan) (*Verification, error) {
	s, err := r.Observe(ctx, p.Namespace, p.Cluster)
	if err != nil {
		return nil, err
	}
	v := &Verification{Leader: s.Leader(), HashRevision: s.HashRevision, HashesEqual: true, KeysAtStart: -1}
	problem := func(format string, args ...any) {
		v.etcdProblems = append(v.etcdProblems, fmt.Sprintf(format, args...))
	}
	v.Voters, v.Learners = len(s.Voters()), len(s.Learners())
	if v.Learners > 0 {
		problem("%d learner(s) left", v.Learners)
	}
	if v.Voters != p.Voters {
		problem("%d voters, %d before", v.Voters, p.Voters)
	}
	if v.Leader == 0 {
		problem("no agreed leader")
	}
	for _, m := range s.Voters() {
		switch {
		case !m.Healthy():
			problem("voter %s unhealthy: %s", m.Label(), m.StatusError)
		case !m.HashOK:
			v.Unobserved = append(v.Unobserved, fmt.Sprintf("no HashKV from %s: %s", m.Label(), orUnknown(m.HashError)))
			v.HashesEqual = false
		case m.Hash != s.Voters()[0].Hash:
			problem("HashKV of %s differs", m.Label())
			v.HashesEqual = false
		}
	}
	if nm := replacement(s, p); nm == nil {
		problem("no replacement member found")
	} else {
		v.NewMemberID = nm.ID
		if nm.Pod != nil {
			v.PodNode, v.PodReady = nm.Pod.Node, nm.Pod.Ready
		}
	}
	if s.Checkpoint != nil && s.Checkpoint.Revision > 0 {
		v.StartRevision = s.Checkpoint.Revision
		if n, err := r.keysAt(ctx, p.Namespace, s.Voters(), v.StartRevision); errors.Is(err, ErrNotObserved) {
			v.Unobserved = append(v.Unobserved, err.Error())
		} else if err != nil {
			problem("%s", err.Error())
		} else {
			v.KeysAtStart = n
		}
	}
	v.judge(p)
	return v, nil
}

// replacement returns the member that took the moved member's place.
func replacement(s *State, p *Plan) *Member {
	for i := range s.Members {
		m := &s.Members[i]
		if m.ID == p.Member.ID {
			continue
		}
		if p.Layout.operatorManaged() {
			if !slices.Contains(p.Peers, m.ID) {
				return m
			}
		} else if sameURL(m.PeerURL(), p.Member.PeerURL) {
			return m
		}
	}
	return nil
}

// keysAt counts the keys each voter holds at rev (serializable reads on each
// member) and returns the count if all agree. -1 without error means rev
// was compacted.
func (r *Relocator) keysAt(ctx context.Context, namespace string, voters []Member, rev int64) (int64, error) {
	conn, err := r.connector(ctx, namespace)
	if err != nil {
		return 0, err
	}
	defer conn.close()
	count := int64(-1)
	for _, m := range voters {
		if len(m.ClientURLs) == 0 {
			continue
		}
		c, err := conn.member(m.ClientURLs[0])
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrNotObserved, err)
		}
		cctx, cancel := conn.callCtx(ctx)
		resp, err := c.Get(cctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly(), clientv3.WithRev(rev), clientv3.WithSerializable())
		cancel()
		if errors.Is(err, rpctypes.ErrCompacted) {
			return -1, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%w: count keys on %s at revision %d: %w", ErrNotObserved, m.Label(), rev, err)
		}
		if count >= 0 && resp.Count != count {
			return 0, fmt.Errorf("%s holds %d keys at revision %d, another voter %d", m.Label(), resp.Count, rev, count)
		}
		count = resp.Count
	}
	return count, nil
}
