package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// claimOnTargetStep makes the member's claim on the target node.
type claimOnTargetStep struct{}

// Info declares the step.
func (claimOnTargetStep) Info() stepInfo {
	return stepInfo{kind: StepClaimOnTarget, does: "StatefulSet: create the member's claim pinned to the target node", effect: effectNone, rollsBack: true}
}

// Text is the step in p's words.
func (claimOnTargetStep) Text(p *Plan) (stepText, bool) {
	m := p.Member
	if p.Restore {
		return stepText{fmt.Sprintf("release the held claim and create PVC %s pinned to %s", m.PVC, p.TargetNode),
			"the learner is registered", fmt.Sprintf("the claim exists and targets %s", p.TargetNode)}, true
	}
	return stepText{fmt.Sprintf("release the old claim (its volume stays, Released) and create PVC %s pinned to %s (pre-bound to a local volume there, or annotated volume.kubernetes.io/selected-node)", m.PVC, p.TargetNode),
		"the old ID is out of etcd and the learner is registered", fmt.Sprintf("the claim exists and targets %s", p.TargetNode)}, p.statefulSetSteps()
}

// Run makes sure the member's claim will be provisioned on, or
// bound to a volume of, the target node. The StatefulSet controller cannot
// create the claim while the old one is held; the moment the hold is let
// go it may, and the scheduler would then bind it wherever it first looks.
// So the pinned claim is built first and created the instant the name is
// free (replaceHeld), and a claim the controller still managed to create
// unpinned is taken over (held and deleted, then replaced) before it
// binds. A claim bound elsewhere anyway is errMisplaced: its learner is
// removed and the move starts again (relocateAgain).
func (claimOnTargetStep) Run(ctx context.Context, x *run) (string, bool, error) {
	var (
		msg, released string
		skipped       bool
		claim         *corev1.PersistentVolumeClaim
		how           string
	)
	claims := x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace)
	pinned := func(ctx context.Context) (*corev1.PersistentVolumeClaim, error) {
		if claim != nil {
			return claim, nil
		}
		c, err := templateClaim(ctx, x)
		if err != nil {
			return nil, err
		}
		if how, err = pin(ctx, x, c); err != nil {
			return nil, err
		}
		claim = c
		return claim, nil
	}
	err := x.stall.retry(ctx, x.r.t.Pod, "claim on the target node", func(ctx context.Context) (bool, error) {
		pvc, err := claims.Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err), err == nil && pvc.DeletionTimestamp != nil && slices.Contains(pvc.Finalizers, holdFinalizer):
			if node := misplacedPod(ctx, x); node != "" {
				// A claim taken over too late: its pod was placed already.
				return false, fmt.Errorf("pod %s: %w (%s)", x.p.Member.Pod, errMisplaced, node)
			}
			var old *corev1.PersistentVolumeClaim
			if err == nil {
				old, released = pvc, "released the held claim; "
			}
			c, err := pinned(ctx)
			if err != nil {
				return false, err
			}
			created, err := replaceHeld(ctx, x, old, c)
			if err != nil || !created {
				return false, keepTrying{lastErr(err)}
			}
			msg = released + "created " + c.Name + ", " + how + restartPendingPod(ctx, x)
			return true, nil
		case err != nil:
			return false, keepTrying{err}
		case pvc.DeletionTimestamp != nil:
			return false, keepTrying{errors.New("a deleted claim is still present")}
		case pvc.Spec.VolumeName != "":
			node, err := claimVolumeNode(ctx, x, pvc.Spec.VolumeName)
			if err != nil {
				return false, keepTrying{err}
			}
			if node != "" && node != x.p.TargetNode {
				return false, fmt.Errorf("claim %s: %w (%s)", pvc.Name, errMisplaced, node)
			}
			msg, skipped = "claim bound on "+x.p.TargetNode, true
			return true, nil
		case pvc.Annotations[annSelectedNode] == x.p.TargetNode:
			msg, skipped = "claim already pinned to "+x.p.TargetNode, true
			return true, nil
		default:
			// The StatefulSet controller's claim, not bound yet: hold and
			// delete it (the scheduler does not place a pod whose claim
			// is being deleted), then replace it with the pinned one.
			x.r.log.Info("taking over the StatefulSet's unpinned claim", "claim", pvc.Name)
			if err := holdAndDeleteClaim(ctx, x, string(pvc.UID)); err != nil {
				return false, keepTrying{err}
			}
			return false, keepTrying{errors.New("took over an unpinned claim")}
		}
	})
	if errors.Is(err, errMisplaced) {
		if err := relocateAgain(ctx, x); err != nil {
			return "", false, err
		}
		return claimOnTargetStep{}.Run(ctx, x)
	}
	return msg, skipped, err
}
