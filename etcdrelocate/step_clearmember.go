package etcdrelocate

import (
	"context"
	"fmt"
)

// clearMemberStep clears, for a restore, what a failed attempt left of the removed member.
type clearMemberStep struct{}

// Info declares the step.
func (clearMemberStep) Info() stepInfo {
	return stepInfo{kind: StepClearMember, does: "restore only: hold and delete what is left of the removed member's pod and claim", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (clearMemberStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	return stepText{fmt.Sprintf("hold and delete what is left of pod %s and claim %s (by UID)", m.Pod, m.PVC),
		"no member with peer URL " + m.PeerURL + " yet", "the pod is gone and the claim is gone or held"}, p.Restore
}

// Run deletes the pod and claim that a failed attempt left under
// the member's names, unless the restored member is registered already
// (then they are its own).
func (clearMemberStep) Run(ctx context.Context, x *run) (string, bool, error) {
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if m := x.newMember(ms); m != nil {
		return "member " + FormatID(m.ID) + " is registered already", true, nil
	}
	pvcUID, podUID, err := uids(ctx, x)
	if err != nil {
		return "", false, err
	}
	if pvcUID == "" && podUID == "" {
		return "no pod or claim left", true, nil
	}
	if err := holdAndDelete(ctx, x, pvcUID, podUID); err != nil {
		return "", false, err
	}
	return fmt.Sprintf("deleted pod %s and claim %s (held)", x.p.Member.Pod, x.p.Member.PVC), false, nil
}
