package etcdrelocate

import (
	"context"
	"fmt"
)

// verifyStep is the final check.
type verifyStep struct{}

// Info declares the step.
func (verifyStep) Info() stepInfo {
	return stepInfo{kind: StepVerify, does: "every member a voter, one leader, HashKV equal, the pod Ready on the target", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (verifyStep) Text(p *Plan) (stepText, bool) {
	if p.Restore {
		return stepText{fmt.Sprintf("check %d voters, one agreed leader, HashKV equal at a common revision, the pod Ready on %s", p.Voters, p.TargetNode),
			"the new member is a voter", "all of the above"}, true
	}
	return stepText{"check every member is a voter, one agreed leader, HashKV equal at a common revision, the pod Ready on " + p.TargetNode,
		"the new member is a voter", "all of the above"}, true
}

// Run is the executor's verify step.
func (verifyStep) Run(ctx context.Context, x *run) (string, bool, error) {
	v, err := verifyWatched(ctx, x.r, x.p, x.stall)
	x.res.Verification = v
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%d voters, HashKV equal at revision %d, pod Ready on %s", v.Voters, v.HashRevision, v.PodNode), false, nil
}
