package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitPodStep waits for the new pod on the target node.
type waitPodStep struct{}

// Info declares the step.
func (waitPodStep) Info() stepInfo {
	return stepInfo{kind: StepWaitPod, does: "StatefulSet: wait for the new pod running on the target", effect: effectNone, rollsBack: true}
}

// Text is the step in p's words.
func (waitPodStep) Text(p *Plan) (stepText, bool) {
	return stepText{fmt.Sprintf("wait for pod %s running on %s", p.Member.Pod, p.TargetNode),
		"the learner is registered", "Status on the pod reports a learner with the new member ID and the same cluster ID"}, p.Restore || p.statefulSetSteps()
}

// Run waits until the member's pod runs on the target node and answers
// Status as the new member, of the same cluster. It wakes on every event of
// the pod. etcd serves clients only once it has joined and applied the data
// the leader sent, so the Status call on the running pod is given the full
// call timeout: it returns the moment the member starts serving.
func (waitPodStep) Run(ctx context.Context, x *run) (string, bool, error) {
	pods := x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace)
	var msg string
	var nudged time.Time
	tl := newTimeline()
	wake, stop := wakeOn(ctx, podWatch(x))
	defer stop()
	err := x.stall.retryWake(ctx, x.r.t.Pod, "pod "+x.p.Member.Pod+" on "+x.p.TargetNode, wake, func(ctx context.Context) (bool, error) {
		pod, err := pods.Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// The StatefulSet controller may be backing off after the
			// claim was held (a resumed run did not nudge it yet).
			if time.Since(nudged) > 2*time.Second {
				nudgeStatefulSet(ctx, x)
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
		st, err := memberStatusWithin(ctx, x, m, x.r.t.Call)
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
		x.stall.heard(m.ID)
		msg = fmt.Sprintf("pod %s runs on %s as member %s (learner=%t); %s", pod.Name, pod.Spec.NodeName, FormatID(m.ID), st.IsLearner, tl)
		return true, nil
	})
	if errors.Is(err, errMisplaced) {
		if err := relocateAgain(ctx, x); err != nil {
			return "", false, err
		}
		if _, _, err := (claimOnTargetStep{}).Run(ctx, x); err != nil {
			return "", false, err
		}
		return waitPodStep{}.Run(ctx, x)
	}
	return msg, false, err
}
