package etcdrelocate

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// uncordonStep uncordons the source node if this relocation cordoned it.
type uncordonStep struct{}

// Info declares the step.
func (uncordonStep) Info() stepInfo {
	return stepInfo{kind: StepUncordon, does: "uncordon the source node if this relocation cordoned it", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (uncordonStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	return stepText{fmt.Sprintf("uncordon %s (only if this relocation cordoned it)", m.Node), "none", m.Node + " is schedulable again"}, p.cordons()
}

func (uncordonStep) Run(ctx context.Context, x *run) (string, bool, error) {
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
