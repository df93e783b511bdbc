package etcdrelocate

import (
	"context"
	"errors"
	"time"
)

// promoteStep promotes the learner.
type promoteStep struct{}

// Info declares the step.
func (promoteStep) Info() stepInfo {
	return stepInfo{kind: StepPromote, does: "StatefulSet: MemberPromote the learner", effect: effectPromote, rollsBack: true}
}

// Text is the step in p's words.
func (promoteStep) Text(p *Plan) (stepText, bool) {
	const check = "MemberList shows a voter and the member's own Status says it is not a learner"
	if p.Restore {
		return stepText{"MemberPromote; retry while etcd answers \"not in sync\"", "the learner has caught up", check}, true
	}
	return stepText{"MemberPromote; retry while etcd answers \"not in sync\"; settle \"not a learner\" by MemberList",
		"the learner has caught up", check}, p.statefulSetSteps()
}

func (promoteStep) Run(ctx context.Context, x *run) (string, bool, error) {
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
	err = x.stall.retry(ctx, x.r.t.Membership, "the member reports itself a voter", func(ctx context.Context) (bool, error) {
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
