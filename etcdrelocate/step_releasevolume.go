package etcdrelocate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// releaseVolumeStep lets the old member's volume go once the snapshot verified.
type releaseVolumeStep struct{}

// Info declares the step.
func (releaseVolumeStep) Info() stepInfo {
	return stepInfo{kind: StepReleaseVolume, does: "StatefulSet: once the snapshot verified, let the old volume go", effect: effectNone, rollsBack: false}
}

// Text is the step in p's words.
func (releaseVolumeStep) Text(p *Plan) (stepText, bool) {
	const pre, check = "verify passed", "the snapshot is recorded; the old volume is gone or being reclaimed"
	if p.Restore {
		return stepText{"let the old member's retained volume " + p.Member.PV + " go (reclaim policy back to Delete)", pre, check}, p.Member.PV != ""
	}
	act := "delete the old volume, kept since stop-member (reclaim policy back to Delete, so its provisioner reclaims it)"
	if !p.Options.SkipSnapshot && !p.snapshotFirst() {
		act = "wait for the snapshot to verify (take it now if it failed), then " + act
	}
	return stepText{act, pre, check}, p.statefulSetSteps()
}

// Run is the release-volume step: it makes sure the snapshot has
// verified (waiting for the background one, or taking it now if that
// failed, or the file a resumed run finds recorded no longer has the
// recorded size and SHA-256), then lets the old volume go.
func (releaseVolumeStep) Run(ctx context.Context, x *run) (string, bool, error) {
	msg := ""
	if !x.p.Options.SkipSnapshot {
		why, err := proveSnapshot(ctx, x)
		if err != nil {
			return "", false, err
		}
		if why != "" {
			msg = why + "; "
		}
	}
	if !x.p.Options.SkipSnapshot && x.cp.SnapshotPath == "" {
		if x.snap != nil {
			select {
			case <-x.snap.done:
			case <-ctx.Done():
				return "", false, ctx.Err()
			}
			_ = finishSnapshot(ctx, x)
		}
		if x.cp.SnapshotPath == "" {
			if _, _, err := snapshotNow(ctx, x); err != nil {
				return "", false, err
			}
		}
		msg += "snapshot " + x.cp.SnapshotPath + " verified; "
	}
	pv, err := oldVolume(ctx, x)
	switch {
	case err != nil:
		return "", false, err
	case pv == nil:
		return msg + "the old volume is gone", msg == "", nil
	case pv.Name == x.cp.RetainedVolume:
		if err := setReclaim(ctx, x, pv.Name, corev1.PersistentVolumeReclaimDelete); err != nil {
			return "", false, err
		}
		return msg + "volume " + pv.Name + " back to reclaim policy Delete; its provisioner deletes it", false, nil
	case pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain:
		// Retain was the volume's own policy: delete the volume object, as
		// the relocation deleted its claim.
		err := x.r.cfg.Kube.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return "", false, fmt.Errorf("delete volume %s: %w", pv.Name, err)
		}
		return msg + "retained volume " + pv.Name + " deleted", false, nil
	}
	return msg + "volume " + pv.Name + " is reclaimed by its provisioner", msg == "", nil
}
