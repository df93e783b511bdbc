package etcdrelocate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The old member's volume outlives its claim: stop-member sets its reclaim
// policy to Retain before the claim is deleted, so that releasing the claim
// (which the new claim of the same name needs) does not delete the data.
// release-volume deletes it once the replacement is verified and the
// snapshot, which streams meanwhile, has verified. A rollback keeps it.

// oldVolume returns the old member's volume if it still belongs to the old
// claim (by UID), else nil.
func (x *run) oldVolume(ctx context.Context) (*corev1.PersistentVolume, error) {
	if x.p.Member.PV == "" {
		return nil, nil
	}
	pv, err := x.r.cfg.Kube.CoreV1().PersistentVolumes().Get(ctx, x.p.Member.PV, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get volume %s: %w", x.p.Member.PV, err)
	}
	if pv.Spec.ClaimRef == nil || string(pv.Spec.ClaimRef.UID) != x.p.Member.PVCUID {
		return nil, nil
	}
	return pv, nil
}

// retainVolume records, then sets, reclaim policy Retain on the old
// volume. A volume that is Retain already is left as it is (and deleted by
// release-volume, as the relocation deletes its claim).
func (x *run) retainVolume(ctx context.Context) error {
	pv, err := x.oldVolume(ctx)
	if err != nil || pv == nil {
		return err
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain && x.cp.RetainedVolume != pv.Name {
		return nil
	}
	if x.cp.RetainedVolume != pv.Name {
		// Record first: a crash between the two writes then at worst sets
		// Delete on a volume that had it anyway.
		x.cp.RetainedVolume = pv.Name
		if err := x.saveCheckpoint(ctx); err != nil {
			return err
		}
	}
	return x.setReclaim(ctx, pv.Name, corev1.PersistentVolumeReclaimRetain)
}

func (x *run) setReclaim(ctx context.Context, pv string, policy corev1.PersistentVolumeReclaimPolicy) error {
	patch := fmt.Appendf(nil, `{"spec":{"persistentVolumeReclaimPolicy":%q}}`, policy)
	_, err := x.r.cfg.Kube.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("set reclaim policy %s on volume %s: %w", policy, pv, err)
	}
	return nil
}

// releaseVolume is the release-volume step: it makes sure the snapshot has
// verified (waiting for the background one, or taking it now if that
// failed or a resumed run has none), then lets the old volume go.
func (x *run) releaseVolume(ctx context.Context) (string, bool, error) {
	msg := ""
	if !x.p.Options.SkipSnapshot && x.cp.SnapshotPath == "" {
		if x.snap != nil {
			select {
			case <-x.snap.done:
			case <-ctx.Done():
				return "", false, ctx.Err()
			}
			_ = x.finishSnapshot(ctx)
		}
		if x.cp.SnapshotPath == "" {
			if _, _, err := x.snapshotNow(ctx); err != nil {
				return "", false, err
			}
		}
		msg = "snapshot " + x.cp.SnapshotPath + " verified; "
	}
	pv, err := x.oldVolume(ctx)
	switch {
	case err != nil:
		return "", false, err
	case pv == nil:
		return msg + "the old volume is gone", msg == "", nil
	case pv.Name == x.cp.RetainedVolume:
		if err := x.setReclaim(ctx, pv.Name, corev1.PersistentVolumeReclaimDelete); err != nil {
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

// snapshotNow takes the snapshot synchronously.
func (x *run) snapshotNow(ctx context.Context) (string, int64, error) {
	src, err := x.snapshotSource(ctx)
	if err != nil {
		return "", 0, err
	}
	dir := x.p.Options.SnapshotDir
	if dir == "" {
		dir = defaultSnapshotDir()
	}
	path, n, err := takeSnapshot(ctx, x.conn, src.ClientURLs[0], dir, snapshotName(x.p))
	if err != nil {
		return "", 0, err
	}
	return path, n, x.recordSnapshot(ctx, path, n)
}
