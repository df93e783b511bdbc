package etcdrelocate

import (
	"context"
	"fmt"
	"time"
)

// removeMemberStep removes the stopped member from etcd.
type removeMemberStep struct{}

// Info declares the step.
func (removeMemberStep) Info() stepInfo {
	return stepInfo{kind: StepRemoveMember, does: "StatefulSet: MemberRemove the stopped member", effect: effectRemoveStopped, rollsBack: false}
}

// Text is the step in p's words.
func (removeMemberStep) Text(p *Plan) (stepText, bool) {
	return stepText{fmt.Sprintf("MemberRemove %s; retry \"unhealthy cluster\"; settle an ambiguous result by re-reading MemberList", FormatID(p.Member.ID)),
		"the member is stopped; every other voter healthy",
		"the ID is gone from MemberList and the remaining voters agree on a leader"}, p.statefulSetSteps()
}

func (removeMemberStep) Run(ctx context.Context, x *run) (string, bool, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if !x.oldPresent(ms) {
		return "already removed", true, nil
	}
	if err := x.othersHealthy(ctx); err != nil {
		return "", false, err
	}
	// Leadership may have come back since move-leader (an election after
	// a crash).
	if _, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID); err != nil {
		return "", false, err
	}
	if err := x.mem.remove(ctx, x.p.Member.ID); err != nil {
		return "", false, err
	}
	if x.res.RemovedAt.IsZero() {
		x.res.RemovedAt = time.Now()
	}
	if err := x.othersHealthy(ctx); err != nil {
		return "", false, fmt.Errorf("after removal: %w", err)
	}
	return "removed member " + FormatID(x.p.Member.ID), false, nil
}
