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
func oldVolume(ctx context.Context, x *run) (*corev1.PersistentVolume, error) {
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
func retainVolume(ctx context.Context, x *run) error {
	pv, err := oldVolume(ctx, x)
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
	return setReclaim(ctx, x, pv.Name, corev1.PersistentVolumeReclaimRetain)
}

func setReclaim(ctx context.Context, x *run, pv string, policy corev1.PersistentVolumeReclaimPolicy) error {
	patch := fmt.Appendf(nil, `{"spec":{"persistentVolumeReclaimPolicy":%q}}`, policy)
	_, err := x.r.cfg.Kube.CoreV1().PersistentVolumes().Patch(ctx, pv, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("set reclaim policy %s on volume %s: %w", policy, pv, err)
	}
	return nil
}

// snapshotNow takes the snapshot synchronously.
func snapshotNow(ctx context.Context, x *run) (string, int64, error) {
	src, err := snapshotSource(ctx, x)
	if err != nil {
		return "", 0, err
	}
	dir := x.p.Options.SnapshotDir
	if dir == "" {
		dir = defaultSnapshotDir()
	}
	f, err := takeSnapshot(ctx, x.conn, src.ClientURLs[0], dir, snapshotName(x.p))
	if err != nil {
		return "", 0, err
	}
	return f.path, f.bytes, recordSnapshot(ctx, x, f)
}
