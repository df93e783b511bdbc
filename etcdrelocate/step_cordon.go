package etcdrelocate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cordonStep cordons the member's node.
type cordonStep struct{}

// Info declares the step.
func (cordonStep) Info() stepInfo {
	return stepInfo{kind: StepCordon, does: "cordon the member's node", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (cordonStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	return stepText{fmt.Sprintf("cordon %s so the new pod cannot land there again", m.Node),
		"none (a node cordoned before is left cordoned afterwards)", fmt.Sprintf("%s is unschedulable", m.Node)}, p.cordons()
}

func (cordonStep) Run(ctx context.Context, x *run) (string, bool, error) {
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
