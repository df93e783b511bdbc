package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitPod waits until the member's pod runs on the target node and answers
// Status as the new member, of the same cluster. It wakes on every event of
// the pod. etcd serves clients only once it has joined and applied the data
// the leader sent, so the Status call on the running pod is given the full
// call timeout: it returns the moment the member starts serving.
func (x *run) waitPod(ctx context.Context) (string, bool, error) {
	pods := x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace)
	var msg string
	var nudged time.Time
	tl := newTimeline()
	wake, stop := wakeOn(ctx, x.podWatch())
	defer stop()
	err := retryWake(ctx, x.r.t.Pod, "pod "+x.p.Member.Pod+" on "+x.p.TargetNode, wake, func(ctx context.Context) (bool, error) {
		pod, err := pods.Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// The StatefulSet controller may be backing off after the
			// claim was held (a resumed run did not nudge it yet).
			if time.Since(nudged) > 2*time.Second {
				x.nudgeStatefulSet(ctx)
				nudged = time.Now()
			}
			return false, keepTrying{err}
		case err != nil:
			return false, keepTrying{err}
		case string(pod.UID) == x.p.Member.PodUID:
			return false, keepTrying{errors.New("the old pod is still present")}
		}
		tl.mark("pod created")
		switch {
		case pod.Spec.NodeName == "":
			return false, keepTrying{errors.New("the pod is not scheduled yet")}
		case pod.Spec.NodeName != x.p.TargetNode:
			return false, fmt.Errorf("pod %s: %w (%s)", pod.Name, errMisplaced, pod.Spec.NodeName)
		}
		tl.mark("scheduled")
		if pod.Status.Phase != corev1.PodRunning {
			return false, keepTrying{fmt.Errorf("the pod is %s", pod.Status.Phase)}
		}
		tl.mark("running")
		m, _, err := x.learnerID(ctx)
		if err != nil {
			return false, err
		}
		st, err := x.memberStatusWithin(ctx, m, x.r.t.Call)
		if err != nil {
			x.r.log.Debug("the new member does not answer yet", "err", err)
			return false, keepTrying{err}
		}
		if st.MemberID != m.ID {
			return false, keepTrying{fmt.Errorf("the pod answers as member %s", FormatID(st.MemberID))}
		}
		if x.p.ClusterID != 0 && st.ClusterID != x.p.ClusterID {
			return false, fmt.Errorf("%w: the new pod reports cluster %s, not %s", ErrUnexpectedMember, FormatID(st.ClusterID), FormatID(x.p.ClusterID))
		}
		tl.mark("serving")
		// From now on the new member must answer: a silence in catch-up
		// (a node cut off, starved or frozen) is a stall, reported and
		// bounded by the stall budget.
		stallWatchFrom(ctx).heard(m.ID)
		msg = fmt.Sprintf("pod %s runs on %s as member %s (learner=%t); %s", pod.Name, pod.Spec.NodeName, FormatID(m.ID), st.IsLearner, tl)
		return true, nil
	})
	if errors.Is(err, errMisplaced) {
		if err := x.relocateAgain(ctx); err != nil {
			return "", false, err
		}
		if _, _, err := x.claimOnTarget(ctx); err != nil {
			return "", false, err
		}
		return x.waitPod(ctx)
	}
	return msg, false, err
}

// timeline records when each phase of a wait was first seen.
type timeline struct {
	start time.Time
	names []string
	at    []time.Duration
}

func newTimeline() *timeline { return &timeline{start: time.Now()} }

// mark records phase name the first time it is seen.
func (t *timeline) mark(name string) {
	if slices.Contains(t.names, name) {
		return
	}
	t.names = append(t.names, name)
	t.at = append(t.at, time.Since(t.start))
}

func (t *timeline) String() string {
	parts := make([]string, len(t.names))
	for i, n := range t.names {
		parts[i] = fmt.Sprintf("%s +%s", n, t.at[i].Round(10*time.Millisecond))
	}
	return strings.Join(parts, ", ")
}

// relocateAgain undoes a misplaced start: it removes the new learner (a
// learner may always be removed), deletes the misplaced claim and pod, and
// adds the learner again, so that the next claim can be pinned. It gives up
// after two attempts.
func (x *run) relocateAgain(ctx context.Context) error {
	x.misplaced++
	if x.misplaced > 2 {
		return fmt.Errorf("%w: the new pod keeps landing on another node than %s", ErrTargetNode, x.p.TargetNode)
	}
	x.r.log.Warn("new member placed on the wrong node; removing its learner and trying again", "attempt", x.misplaced)
	ms, err := x.mem.list(ctx)
	if err != nil {
		return err
	}
	if m := x.newMember(ms); m != nil {
		if !m.IsLearner {
			return fmt.Errorf("%w: the misplaced member %s is already a voter", ErrTargetNode, FormatID(m.ID))
		}
		if err := x.mem.remove(ctx, m.ID); err != nil {
			return err
		}
	}
	pvcUID, podUID, err := x.uids(ctx)
	if err != nil {
		return err
	}
	if err := x.holdAndDelete(ctx, pvcUID, podUID); err != nil {
		return err
	}
	_, _, err = x.addLearner(ctx)
	return err
}
