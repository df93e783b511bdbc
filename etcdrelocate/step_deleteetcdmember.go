package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deleteEtcdMemberStep deletes the EtcdMember; the operator removes the member.
type deleteEtcdMemberStep struct{}

// Info declares the step.
func (deleteEtcdMemberStep) Info() stepInfo {
	return stepInfo{kind: StepDeleteEtcdMember, does: "v1alpha2: delete the EtcdMember; the operator removes the member", effect: effectRemoveVoter, rollsBack: false}
}

// Text is the step in p's words.
func (deleteEtcdMemberStep) Text(p *Plan) (stepText, bool) {
	return stepText{fmt.Sprintf("delete EtcdMember %s; the operator's finalizer runs MemberRemove, then its pod and claim are collected", p.Member.EtcdMember),
		"every other voter healthy; the PodDisruptionBudget allows a disruption", "the member ID is gone from MemberList"}, p.operatorSteps()
}

func (deleteEtcdMemberStep) Run(ctx context.Context, x *run) (string, bool, error) {
	d, err := dyn(x)
	if err != nil {
		return "", false, err
	}
	members := d.Resource(gvrEtcdMember).Namespace(x.p.Namespace)
	ms, err := x.mem.list(ctx)
	if err != nil {
		return "", false, err
	}
	_, getErr := members.Get(ctx, x.p.Member.EtcdMember, metav1.GetOptions{})
	if !x.oldPresent(ms) && apierrors.IsNotFound(getErr) {
		return "already deleted", true, nil
	}
	if x.oldPresent(ms) {
		if err := x.othersHealthy(ctx); err != nil {
			return "", false, err
		}
		if err := pdbAllows(ctx, x); err != nil {
			return "", false, err
		}
		if _, err := x.mem.moveLeaderAway(ctx, x.p.Member.ID); err != nil {
			return "", false, err
		}
	}
	if _, err := deleteEtcdMemberGuarded(ctx, members, x.p.Namespace, x.p.Member.EtcdMember); err != nil {
		return "", false, err
	}
	err = x.stall.retry(ctx, x.r.t.Membership+x.r.t.Storage, "the operator to remove the member", func(ctx context.Context) (bool, error) {
		ms, err := x.mem.list(ctx)
		if err != nil {
			return false, err
		}
		if x.oldPresent(ms) {
			return false, keepTrying{errors.New("the member is still in MemberList")}
		}
		if x.res.RemovedAt.IsZero() {
			x.res.RemovedAt = time.Now()
		}
		if _, err := members.Get(ctx, x.p.Member.EtcdMember, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, keepTrying{errors.New("the EtcdMember still exists")}
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	return "EtcdMember " + x.p.Member.EtcdMember + " deleted; the operator removed member " + FormatID(x.p.Member.ID), false, nil
}
