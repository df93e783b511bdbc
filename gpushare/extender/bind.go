package extender

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/cozystack/tenantkit/gpushare"
)

// annotationBindTime is the Unix time HAMi's Bind writes beside the bind
// phase.
const annotationBindTime = "hami.io/bind-time"

// bind decides a bind call: fit the pod on args.Node, allocate it in the
// ledger, write HAMi's annotations and create the Binding. Any failure
// after the allocation releases it.
func (x *Extender) bind(ctx context.Context, args *extenderv1.ExtenderBindingArgs) error {
	pod, err := x.client.CoreV1().Pods(args.PodNamespace).Get(ctx, args.PodName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get pod %s/%s: %w", args.PodNamespace, args.PodName, err)
	}
	if args.PodUID != "" && pod.UID != args.PodUID {
		return fmt.Errorf("pod %s/%s: UID %s, not %s (recreated)", args.PodNamespace, args.PodName, pod.UID, args.PodUID)
	}
	req, err := gpushare.NewPodRequest(pod, x.ledger.Config())
	if err != nil {
		return err
	}
	if req.GPUs() == 0 {
		return x.createBinding(ctx, pod, args.Node)
	}
	pl, err := x.fitAmong(req, []string{args.Node})
	if err != nil {
		return err
	}
	key := pod.Namespace + "/" + pod.Name
	x.mu.Lock()
	err = x.ledger.Allocate(pl)
	if err == nil {
		x.assumed[key] = true
	}
	x.mu.Unlock()
	if err != nil {
		return err
	}
	if err := x.commit(ctx, pod, pl); err != nil {
		x.mu.Lock()
		delete(x.assumed, key)
		x.ledger.Release(pod.Namespace, pod.Name)
		x.mu.Unlock()
		return err
	}
	return nil
}

// commit writes HAMi's annotations and binds the pod; if binding fails it
// takes the annotations back.
func (x *Extender) commit(ctx context.Context, pod *corev1.Pod, pl gpushare.Placement) error {
	now := time.Now()
	ann := map[string]*string{}
	for k, v := range pl.Annotations(now) {
		ann[k] = &v
	}
	phase, at := string(gpushare.BindAllocating), strconv.FormatInt(now.Unix(), 10)
	ann[gpushare.AnnotationBindPhase], ann[annotationBindTime] = &phase, &at
	node := pl.Node
	if err := x.patchMeta(ctx, pod, ann, &node); err != nil {
		return err
	}
	if err := x.createBinding(ctx, pod, pl.Node); err != nil {
		for k := range ann {
			ann[k] = nil
		}
		if uerr := x.patchMeta(context.WithoutCancel(ctx), pod, ann, nil); uerr != nil {
			x.cfg.Logger.Warn("gpushare extender: taking annotations back", "pod", pod.Namespace+"/"+pod.Name, "err", uerr)
		}
		return err
	}
	return nil
}

// patchMeta merge-patches the pod's annotations (nil values delete) and
// its hami.io/vgpu-node label (nil deletes).
func (x *Extender) patchMeta(ctx context.Context, pod *corev1.Pod, ann map[string]*string, node *string) error {
	patch := map[string]any{"metadata": map[string]any{
		"annotations": ann,
		"labels":      map[string]*string{gpushare.AnnotationNode: node},
	}}
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("patch pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if _, err := x.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func (x *Extender) createBinding(ctx context.Context, pod *corev1.Pod, node string) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := x.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind pod %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	return nil
}
