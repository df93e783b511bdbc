package etcdrelocate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// uidOf returns the UID of the named pod or claim, "" if it does not exist.
func (x *run) uids(ctx context.Context) (pvcUID, podUID string, err error) {
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

// stopMember holds the old claim and deletes it, then deletes the old pod
// (both by UID, so a replacement is never touched), and waits until the pod
// is gone and the claim is deleted but held. The member's etcd stops
// gracefully (clients move to other members, no request fails); its data
// stays on the held claim, and no new pod can start on a claim being
// deleted, so nothing can start under the old member ID.
func (x *run) stopMember(ctx context.Context) (string, bool, error) {
	state, err := x.storageState(ctx, x.p.Member.PVCUID, x.p.Member.PodUID)
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
	if err := x.retainVolume(ctx); err != nil {
		return "", false, err
	}
	tl.mark("volume retained")
	if err := x.holdAndDelete(ctx, x.p.Member.PVCUID, x.p.Member.PodUID); err != nil {
		return "", false, err
	}
	tl.mark("pod gone")
	return fmt.Sprintf("pod %s deleted, claim %s deleted and held; %s", x.p.Member.Pod, x.p.Member.PVC, tl), false, nil
}

// claimOnTarget makes sure the member's claim will be provisioned on, or
// bound to a volume of, the target node: it creates the claim itself from
// the StatefulSet's template, or pins the claim the StatefulSet controller
// created if it is not bound yet.
func (x *run) claimOnTarget(ctx context.Context) (string, bool, error) {
	var msg string
	skipped := false
	claims := x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace)
	var (
		claim    *corev1.PersistentVolumeClaim
		how      string
		released string
	)
	cur, err := claims.Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && slices.Contains(cur.Finalizers, holdFinalizer)) {
		// Build the pinned claim before letting the old one go, to keep
		// the moment between the two as short as possible.
		if claim, err = x.templateClaim(ctx); err != nil {
			return "", false, err
		}
		if how, err = x.pin(ctx, claim); err != nil {
			return "", false, err
		}
		if ok, err := x.releaseHeld(ctx); err != nil {
			return "", false, err
		} else if ok {
			released = "released the old claim; "
		}
	}
	err = retry(ctx, x.r.t.Pod, "claim on the target node", func(ctx context.Context) (bool, error) {
		pvc, err := claims.Get(ctx, x.p.Member.PVC, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) && claim != nil:
			if _, err := claims.Create(ctx, claim.DeepCopy(), metav1.CreateOptions{}); err != nil {
				return false, keepTrying{err}
			}
			msg = released + "created " + claim.Name + ", " + how + x.restartPendingPod(ctx)
			return true, nil
		case apierrors.IsNotFound(err):
			return false, fmt.Errorf("%w: claim %s vanished", ErrUnexpectedMember, x.p.Member.PVC)
		case err != nil:
			return false, keepTrying{err}
		case pvc.DeletionTimestamp != nil:
			return false, keepTrying{errors.New("a deleted claim is still present")}
		case pvc.Spec.VolumeName != "":
			node, err := x.volumeNode(ctx, pvc.Spec.VolumeName)
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
			how, err := x.pinExisting(ctx, pvc)
			if err != nil {
				return false, keepTrying{err}
			}
			msg = released + "pinned the StatefulSet's claim: " + how + x.restartPendingPod(ctx)
			return true, nil
		}
	})
	if errors.Is(err, errMisplaced) {
		if err := x.relocateAgain(ctx); err != nil {
			return "", false, err
		}
		return x.claimOnTarget(ctx)
	}
	return msg, skipped, err
}

// restartPendingPod deletes the member's pod if it waits unscheduled: it
// failed to schedule while the claim was held, and the scheduler backs off
// such pods for up to seconds. The StatefulSet controller recreates it at
// once, and a new pod is scheduled without delay. It never touches a pod
// that has a node.
func (x *run) restartPendingPod(ctx context.Context) string {
	pods := x.r.cfg.Kube.CoreV1().Pods(x.p.Namespace)
	pod, err := pods.Get(ctx, x.p.Member.Pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return x.nudgeStatefulSet(ctx)
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
func (x *run) nudgeStatefulSet(ctx context.Context) string {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, "etcdrelocate.tenantkit.cozystack.io/nudged", time.Now().UTC().Format(time.RFC3339Nano))
	_, err := x.r.cfg.Kube.AppsV1().StatefulSets(x.p.Namespace).Patch(ctx, x.p.Cluster, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		x.r.log.Debug("could not nudge the StatefulSet", "err", err)
		return ""
	}
	return "; nudged the StatefulSet controller"
}

func (x *run) volumeNode(ctx context.Context, pv string) (string, error) {
	v, err := x.r.cfg.Kube.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get volume %s: %w", pv, err)
	}
	return volumeNode(v), nil
}

// templateClaim builds the member's claim as the StatefulSet controller
// would: from the volume claim template, with the selector's labels.
func (x *run) templateClaim(ctx context.Context) (*corev1.PersistentVolumeClaim, error) {
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
func (x *run) pin(ctx context.Context, claim *corev1.PersistentVolumeClaim) (string, error) {
	static, class, err := x.staticClass(ctx, claim)
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
	pv, err := x.freeVolume(ctx, class, claim)
	if err != nil {
		return "", err
	}
	claim.Spec.VolumeName = pv
	return "pre-bound to local volume " + pv + " on " + x.p.TargetNode, nil
}

// pinExisting pins an unbound claim someone else created.
func (x *run) pinExisting(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (string, error) {
	c := pvc.DeepCopy()
	how, err := x.pin(ctx, c)
	if err != nil {
		return "", err
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, annSelectedNode, x.p.TargetNode)
	if c.Spec.VolumeName != "" {
		patch = fmt.Appendf(nil, `{"spec":{"volumeName":%q}}`, c.Spec.VolumeName)
	}
	_, err = x.r.cfg.Kube.CoreV1().PersistentVolumeClaims(x.p.Namespace).Patch(ctx, pvc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", fmt.Errorf("pin claim %s: %w", pvc.Name, err)
	}
	return how, nil
}

// staticClass reports whether the claim's storage class uses statically
// created volumes (provisioner kubernetes.io/no-provisioner).
func (x *run) staticClass(ctx context.Context, claim *corev1.PersistentVolumeClaim) (bool, string, error) {
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
func (x *run) freeVolume(ctx context.Context, class string, claim *corev1.PersistentVolumeClaim) (string, error) {
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
