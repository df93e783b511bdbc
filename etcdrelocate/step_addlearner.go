package etcdrelocate

import (
	"context"
	"fmt"
)

// addLearnerStep adds the member's peer URL as a learner.
type addLearnerStep struct{}

// Info declares the step.
func (addLearnerStep) Info() stepInfo {
	return stepInfo{kind: StepAddLearner, does: "StatefulSet: MemberAddAsLearner the member's peer URL", effect: effectAddLearner, rollsBack: false}
}

// Text is the step in p's words.
func (addLearnerStep) Text(p *Plan) (stepText, bool) {
	if p.Restore {
		return stepText{fmt.Sprintf("MemberAddAsLearner %s; settle \"peer URL exists\" by MemberList", p.Member.PeerURL),
			"no learner in the cluster", "MemberList shows the URL as a learner with a new ID"}, true
	}
	return stepText{fmt.Sprintf("MemberAddAsLearner %s; retry \"unhealthy cluster\"; settle \"peer URL exists\" by MemberList", p.Member.PeerURL),
		"no learner in the cluster; the old ID is absent", "MemberList shows the URL as a learner with a new ID"}, p.statefulSetSteps()
}

func (addLearnerStep) Run(ctx context.Context, x *run) (string, bool, error) {
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
