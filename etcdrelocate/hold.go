package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// holdFinalizer keeps a deleted claim from disappearing until the
// relocation lets it go. While the old claim is held the StatefulSet
// controller cannot create the new one (it would bind wherever the scheduler
// first looks), so the relocation can release the old claim and create the
// pinned one itself a moment later.
const holdFinalizer = "etcdrelocate.tenantkit.cozystack.io/hold"

// storage is where a claim and a pod (given by UID) stand.
type storage struct {
	claimPresent, claimHeld, claimDeleting bool
	podPresent                             bool
}

// done reports that the pod is gone and the claim is gone or deleted and
// held.
func (st storage) done() bool {
	return !st.podPresent && (!st.claimPresent || (st.claimHeld && st.claimDeleting))
}

func (st storage) claim() string {
	if st.claimPresent {
		return "is held"
	}
	return "is gone"
}

// releaseHeld lets go of a claim of the member's name that this relocation
// holds, waits until it is gone, and reports whether there was one.
func (x *run) releaseHeld(ctx context.Context) (bool, error) {
	claims := x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace)
	pvc, err := claims.Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get claim %s: %w", x.p.Member.PVC, err)
	}
	if !slices.Contains(pvc.Finalizers, holdFinalizer) {
		return false, nil
	}
	uid := string(pvc.UID)
	if err := setHold(ctx, x, uid, false); err != nil {
		return false, err
	}
	wake, stop := wakeOn(ctx, claimWatch(x))
	defer stop()
	err = x.stall.retryWake(ctx, x.r.t.Storage, "the released claim to disappear", wake, func(ctx context.Context) (bool, error) {
		c, err := claims.Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && string(c.UID) != uid) {
			return true, nil
		}
		return false, keepTrying{errors.New("the released claim is still there")}
	})
	return true, err
}

// storageState reads the claim and pod with the given UIDs.
func storageState(ctx context.Context, x *run, pvcUID, podUID string) (storage, error) {
	var st storage
	core := x.r.cfg.Kube.CoreV1()
	pvc, err := core.PersistentVolumeClaims(x.p.Namespace).Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
	switch {
	case err == nil && string(pvc.UID) == pvcUID:
		st.claimPresent = true
		st.claimHeld = slices.Contains(pvc.Finalizers, holdFinalizer)
		st.claimDeleting = pvc.DeletionTimestamp != nil
	case err != nil && !apierrors.IsNotFound(err):
		return st, fmt.Errorf("get claim %s: %w", x.p.Member.PVC, err)
	}
	pod, err := core.Pods(x.p.Namespace).Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
	switch {
	case err == nil && string(pod.UID) == podUID:
		st.podPresent = true
	case err != nil && !apierrors.IsNotFound(err):
		return st, fmt.Errorf("get pod %s: %w", x.p.Member.Pod, err)
	}
	return st, nil
}

// holdAndDelete puts the hold on the claim, deletes the claim and then the
// pod, and waits until the pod is gone.
func holdAndDelete(ctx context.Context, x *run, pvcUID, podUID string) error {
	core := x.r.cfg.Kube.CoreV1()
	claims := core.PersistentVolumeClaims(x.p.Namespace)
	if pvcUID != "" {
		if err := setHold(ctx, x, pvcUID, true); err != nil {
			return err
		}
		uid := types.UID(pvcUID)
		err := claims.Delete(ctx, x.p.Member.PVC, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete claim %s: %w", x.p.Member.PVC, err)
		}
	}
	if podUID != "" {
		uid := types.UID(podUID)
		err := core.Pods(x.p.Namespace).Delete(ctx, x.p.Member.Pod, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete pod %s: %w", x.p.Member.Pod, err)
		}
	}
	wake, stop := wakeOn(ctx, podWatch(x), claimWatch(x))
	defer stop()
	return x.stall.retryWake(ctx, x.r.t.Storage, "the old pod to go", wake, func(ctx context.Context) (bool, error) {
		st, err := storageState(ctx, x, pvcUID, podUID)
		if err != nil {
			return false, keepTrying{err}
		}
		if !st.done() {
			return false, keepTrying{fmt.Errorf("pod present %t, claim present %t", st.podPresent, st.claimPresent)}
		}
		return true, nil
	})
}

// setHold adds or removes the hold finalizer on the claim with the UID.
func setHold(ctx context.Context, x *run, pvcUID string, on bool) error {
	claims := x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace)
	return x.stall.retry(ctx, x.r.t.Call*3, "update the claim's finalizers", func(ctx context.Context) (bool, error) {
		pvc, err := claims.Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && string(pvc.UID) != pvcUID) {
			return true, nil
		}
		if err != nil {
			return false, keepTrying{err}
		}
		has := slices.Contains(pvc.Finalizers, holdFinalizer)
		switch {
		case on && !has:
			pvc.Finalizers = append(pvc.Finalizers, holdFinalizer)
		case !on && has:
			pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == holdFinalizer })
		default:
			return true, nil
		}
		_, err = claims.Update(ctx, pvc, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, keepTrying{err}
		}
		return err == nil, err
	})
}
