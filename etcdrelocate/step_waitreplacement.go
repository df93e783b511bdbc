package etcdrelocate

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// waitReplacementStep waits for the operator's replacement learner.
type waitReplacementStep struct{}

// Info declares the step.
func (waitReplacementStep) Info() stepInfo {
	return stepInfo{kind: StepWaitReplacement, does: "v1alpha2: wait for the operator's replacement learner on the target", effect: effectAddLearner, rollsBack: true}
}

// Text is the step in p's words.
func (waitReplacementStep) Text(p *Plan) (stepText, bool) {
	return stepText{fmt.Sprintf("wait for the operator's replacement EtcdMember to join as a learner on %s", p.TargetNode),
		"the old member is gone", "a new learner runs on " + p.TargetNode}, p.operatorSteps()
}

func (waitReplacementStep) Run(ctx context.Context, x *run) (string, bool, error) {
	var msg string
	err := x.stall.retry(ctx, x.r.t.Pod, "the operator's replacement member", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		nm := x.newMember(ms)
		if nm == nil || len(nm.PeerURLs) == 0 {
			return false, keepTrying{errors.New("no replacement member yet")}
		}
		x.learner, x.res.NewMemberID = nm.ID, nm.ID
		pod, err := replacementPod(ctx, x, nm.PeerURLs[0])
		switch {
		case err != nil:
			return false, keepTrying{err}
		case pod == nil || pod.Spec.NodeName == "":
			return false, keepTrying{errors.New("the replacement's pod is not scheduled yet")}
		case pod.Spec.NodeName != x.p.TargetNode:
			return false, fmt.Errorf("%w: the operator placed the replacement %s on %s", ErrTargetNode, pod.Name, pod.Spec.NodeName)
		case pod.Status.Phase != corev1.PodRunning:
			return false, keepTrying{fmt.Errorf("pod %s is %s", pod.Name, pod.Status.Phase)}
		}
		msg = fmt.Sprintf("member %s (pod %s) joined on %s (learner=%t)", FormatID(nm.ID), pod.Name, pod.Spec.NodeName, nm.IsLearner)
		return true, nil
	})
	return msg, false, err
}
