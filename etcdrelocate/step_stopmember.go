package etcdrelocate

import (
	"context"
	"fmt"
	"time"
)

// stopMemberStep stops the old member of a StatefulSet.
type stopMemberStep struct{}

// Info declares the step.
func (stopMemberStep) Info() stepInfo {
	return stepInfo{kind: StepStopMember, does: "StatefulSet: retain the volume, hold and delete the claim, delete the pod", effect: effectStopVoter, rollsBack: false}
}

// Text is the step in p's words.
func (stopMemberStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	return stepText{fmt.Sprintf("set the reclaim policy of the old volume to Retain, put a hold finalizer on PVC %s and delete it, then delete pod %s (etcd stops gracefully); the held claim keeps any new pod from starting", m.PVC, m.Pod),
		fmt.Sprintf("every other voter healthy; %s not the leader", m.label()),
		"the old pod is gone (by UID) and the old claim is deleted but held"}, p.statefulSetSteps()
}

// Run holds the old claim and deletes it, then deletes the old pod
// (both by UID, so a replacement is never touched), and waits until the pod
// is gone and the claim is deleted but held. The member's etcd stops
// gracefully (clients move to other members, no request fails); its data
// stays on the held claim, and no new pod can start on a claim being
// deleted, so nothing can start under the old member ID.
func (stopMemberStep) Run(ctx context.Context, x *run) (string, bool, error) {
	state, err := storageState(ctx, x, x.p.Member.PVCUID, x.p.Member.PodUID)
	if err != nil {
		return "", false, err
	}
	if state.done() {
		return "the old pod is gone and its claim " + state.claim(), true, nil
	}
	tl := newTimeline()
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	if x.oldPresent(ms) {
		if err := x.othersHealthy(ctx); err != nil {
			return "", false, err
		}
		tl.mark("others healthy")
		if _, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID); err != nil {
			return "", false, err
		}
		tl.mark("not leading")
		x.res.RemovedAt = time.Now()
	}
	if err := retainVolume(ctx, x); err != nil {
		return "", false, err
	}
	tl.mark("volume retained")
	if err := holdAndDelete(ctx, x, x.p.Member.PVCUID, x.p.Member.PodUID); err != nil {
		return "", false, err
	}
	tl.mark("pod gone")
	return fmt.Sprintf("pod %s deleted, claim %s deleted and held; %s", x.p.Member.Pod, x.p.Member.PVC, tl), false, nil
}
