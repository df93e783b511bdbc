package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// errMisplaced reports a new claim or pod on another node than the target.
var errMisplaced = errors.New("etcdrelocate: placed on the wrong node")

// replaceHeld polls every replacePoll for up to replaceWindow (the old
// claim's protection finalizer may take a moment to go).
const (
	replacePoll   = 10 * time.Millisecond
	replaceWindow = 5 * time.Second
)

// uidOf returns the UID of the named pod or claim, "" if it does not exist.
func uids(ctx context.Context, x *run) (pvcUID, podUID string, err error) {
	core := x.r.cfg.Kube.CoreV1()
	pvc, err := core.PersistentVolumeClaims(x.p.Namespace).Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
	switch {
	case err == nil:
		pvcUID = string(pvc.UID)
	case !apierrors.IsNotFound(err):
		return "", "", fmt.Errorf("get claim %s: %w", x.p.Member.PVC, err)
	}
	pod, err := core.Pods(x.p.Namespace).Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
	switch {
	case err == nil:
		podUID = string(pod.UID)
	case !apierrors.IsNotFound(err):
		return "", "", fmt.Errorf("get pod %s: %w", x.p.Member.Pod, err)
	}
	return pvcUID, podUID, nil
}

// misplacedPod returns the node of the member's pod if a new pod is
// placed on another node than the target, else "".
func misplacedPod(ctx context.Context, x *run) string {
	pod, err := x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace).Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
	if err != nil || string(pod.UID) == x.p.Member.PodUID || pod.DeletionTimestamp != nil ||
		pod.Spec.NodeName == "" || pod.Spec.NodeName == x.p.TargetNode {
		return ""
	}
	return pod.Spec.NodeName
}

// replaceHeld lets the held claim old (nil: none) go and creates claim in
// its place the instant the name is free, retrying every few milliseconds:
// the StatefulSet controller, which would create an unpinned claim, only
// gets a moment. It reports false if another claim took the name (or the
// old one stays, in use), for the caller to look at.
func replaceHeld(ctx context.Context, x *run, old, claim *corev1.PersistentVolumeClaim) (bool, error) {
	claims := x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace)
	if old != nil {
		if err := setHold(ctx, x, string(old.UID), false); err != nil {
			return false, err
		}
	}
	deadline := time.Now().Add(replaceWindow)
	for {
		_, err := claims.Create(ctx, claim.DeepCopy(), metav1.CreateOptions{})
		if err == nil {
			return true, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		cur, err := claims.Get(ctx, claim.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return false, err
		case old == nil || cur.UID != old.UID || time.Now().After(deadline):
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(replacePoll):
		}
	}
}

// holdAndDeleteClaim puts the hold on the claim with the UID and deletes
// it.
func holdAndDeleteClaim(ctx context.Context, x *run, uid string) error {
	if err := setHold(ctx, x, uid, true); err != nil {
		return err
	}
	u := types.UID(uid)
	err := x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace).Delete(ctx, x.p.Member.PVC,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete claim %s: %w", x.p.Member.PVC, err)
	}
	return nil
}

// restartPendingPod deletes the member's pod if it waits unscheduled: it
// failed to schedule while the claim was held, and the scheduler backs off
// such pods for up to seconds. The StatefulSet controller recreates it at
// once, and a new pod is scheduled without delay. It never touches a pod
// that has a node.
func restartPendingPod(ctx context.Context, x *run) string {
	pods := x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace)
	pod, err := pods.Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nudgeStatefulSet(ctx, x)
	}
	if err != nil || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || string(pod.UID) == x.p.Member.PodUID {
		return ""
	}
	uid := pod.UID
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		return ""
	}
	return "; restarted the unscheduled pod"
}

// nudgeStatefulSet touches an annotation of the StatefulSet so that its
// controller syncs now: it failed to recreate the pod while the claim was
// held ("pvc is being deleted") and retries with a growing back-off.
// Metadata changes do not roll the pods.
func nudgeStatefulSet(ctx context.Context, x *run) string {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, "etcdrelocate.tenantkit.cozystack.io/nudged", time.Now().UTC().Format(time.RFC3339Nano))
	_, err := x.r.cfg.Kube.AppsV1().StatefulSets(x.p.Namespace).Patch(ctx, x.p.Cluster, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		x.r.log.Debug("could not nudge the StatefulSet", "err", err)
		return ""
	}
	return "; nudged the StatefulSet controller"
}

func claimVolumeNode(ctx context.Context, x *run, pv string) (string, error) {
	v, err := x.r.cfg.Kube.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get volume %s: %w", pv, err)
	}
	return volumeNode(v), nil
}

// templateClaim builds the member's claim as the StatefulSet controller
// would: from the volume claim template, with the selector's labels.
func templateClaim(ctx context.Context, x *run) (*corev1.PersistentVolumeClaim, error) {
	sts, err := x.r.cfg.Kube.AppsV1().StatefulSets(x.p.Namespace).Get(ctx, x.p.Cluster, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get statefulset: %w", err)
	}
	tmplName := strings.TrimSuffix(x.p.Member.PVC, "-"+x.p.Member.Pod)
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name != tmplName {
			continue
		}
		lbls := map[string]string{}
		maps.Copy(lbls, t.Labels)
		if sts.Spec.Selector != nil {
			maps.Copy(lbls, sts.Spec.Selector.MatchLabels)
		}
		ann := map[string]string{}
		maps.Copy(ann, t.Annotations)
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: x.p.Member.PVC, Namespace: x.p.Namespace, Labels: lbls, Annotations: ann},
			Spec:       *t.Spec.DeepCopy(),
		}, nil
	}
	return nil, fmt.Errorf("statefulset %s has no volume claim template %q", sts.Name, tmplName)
}

// pin steers a new claim to the target: pre-bound to a free local volume
// there when the class has no provisioner, else annotated with the
// selected node for the provisioner.
func pin(ctx context.Context, x *run, claim *corev1.PersistentVolumeClaim) (string, error) {
	static, class, err := staticClass(ctx, x, claim)
	if err != nil {
		return "", err
	}
	if !static {
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		claim.Annotations[annSelectedNode] = x.p.TargetNode
		return "annotated " + annSelectedNode + "=" + x.p.TargetNode, nil
	}
	pv, err := freeVolume(ctx, x, class, claim)
	if err != nil {
		return "", err
	}
	claim.Spec.VolumeName = pv
	return "pre-bound to local volume " + pv + " on " + x.p.TargetNode, nil
}

// staticClass reports whether the claim's storage class uses statically
// created volumes (provisioner kubernetes.io/no-provisioner).
func staticClass(ctx context.Context, x *run, claim *corev1.PersistentVolumeClaim) (bool, string, error) {
	scs := x.r.cfg.Kube.StorageV1().StorageClasses()
	name := ""
	if claim.Spec.StorageClassName != nil {
		name = *claim.Spec.StorageClassName
	} else {
		list, err := scs.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", fmt.Errorf("list storage classes: %w", err)
		}
		for _, sc := range list.Items {
			if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
				name = sc.Name
			}
		}
	}
	if name == "" {
		return false, "", nil
	}
	sc, err := scs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("get storage class %s: %w", name, err)
	}
	return sc.Provisioner == "kubernetes.io/no-provisioner", name, nil
}

// freeVolume returns the smallest Available volume of the class on the
// target node that satisfies the claim.
func freeVolume(ctx context.Context, x *run, class string, claim *corev1.PersistentVolumeClaim) (string, error) {
	list, err := x.r.cfg.Kube.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list volumes: %w", err)
	}
	want := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	best, bestSize := "", resource.Quantity{}
	for _, pv := range list.Items {
		size := pv.Spec.Capacity[corev1.ResourceStorage]
		if pv.Status.Phase != corev1.VolumeAvailable || pv.Spec.ClaimRef != nil || pv.Spec.StorageClassName != class ||
			volumeNode(&pv) != x.p.TargetNode || size.Cmp(want) < 0 {
			continue
		}
		if best == "" || size.Cmp(bestSize) < 0 {
			best, bestSize = pv.Name, size
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w: no free %s volume of %s on %s", ErrTargetNode, class, want.String(), x.p.TargetNode)
	}
	return best, nil
}
