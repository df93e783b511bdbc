package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// waitVoterStep waits for the operator to promote the replacement.
type waitVoterStep struct{}

// Info declares the step.
func (waitVoterStep) Info() stepInfo {
	return stepInfo{kind: StepWaitVoter, does: "v1alpha2: wait for the operator to promote the replacement", effect: effectPromote, rollsBack: true}
}

// Text is the step in p's words.
func (waitVoterStep) Text(p *Plan) (stepText, bool) {
	return stepText{"wait for the operator to promote the replacement",
		"the replacement runs", "MemberList shows it as a voter"}, p.operatorSteps()
}

func (waitVoterStep) Run(ctx context.Context, x *run) (string, bool, error) {
	err := x.stall.retry(ctx, x.r.t.catchUp(0), "the operator to promote the replacement", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		nm := x.newMember(ms)
		if nm == nil {
			return false, fmt.Errorf("%w: the replacement member left", ErrUnexpectedMember)
		}
		if nm.IsLearner {
			return false, keepTrying{errors.New("still a learner")}
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	x.res.PromotedAt = time.Now()
	return "member " + FormatID(x.learner) + " is a voter", false, nil
}
