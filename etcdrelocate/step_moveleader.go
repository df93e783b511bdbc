package etcdrelocate

import (
	"context"
	"fmt"
)

// moveLeaderStep moves leadership away from the member.
type moveLeaderStep struct{}

// Info declares the step.
func (moveLeaderStep) Info() stepInfo {
	return stepInfo{kind: StepMoveLeader, does: "move leadership away from the member", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (moveLeaderStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	lead := fmt.Sprintf("%s does not lead; keep it so", m.label())
	if m.Leader {
		lead = fmt.Sprintf("MoveLeader from %s to the most up-to-date other voter", m.label())
	}
	return stepText{lead, "the transferee is a healthy voter", fmt.Sprintf("two members agree the leader is not %s", m.label())}, !p.Restore
}

func (moveLeaderStep) Run(ctx context.Context, x *run) (string, bool, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if !x.oldPresent(ms) {
		return "the member is already removed", true, nil
	}
	moved, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID)
	if err != nil {
		return "", false, err
	}
	if moved {
		x.res.LeaderMoved = true
		return "leadership moved to another voter", false, nil
	}
	return "the member does not lead", true, nil
}
