// Package hamisim plays HAMi's device plugin and scheduler on an apiserver
// without GPUs, for demonstrations and tests of tools built on package
// gpushare (tenantkit's gpu-share and quickstart examples use it):
// RegisterNode writes a node as HAMi's device plugin registers it, Bind
// decides a pod with package gpushare (HAMi's rules) and writes the
// decision as HAMi's scheduler does.
//
//	err := hamisim.RegisterNode(ctx, cs, "gpu-a100", hamisim.GPUs("a100", 2, "NVIDIA A100-SXM4-80GB", 81920))
//	ledger, err := gpushare.NewLedger(gpushare.Config{})
//	err = live.Watch(ctx, cs, ledger)
//	placement, err := hamisim.Bind(ctx, cs, ledger, pod)
//
// Nothing runs: pods are API objects marked Running, as the kubelet would
// report them. It is not HAMi: nothing enforces the limits it writes, and
// it places pods only through gpushare's rules.
package hamisim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamnode"
)

// RegisterNode creates node name as HAMi's device plugin leaves it, in HAMi
// v2.10's JSON: labelled gpu=on, with devs in the
// hami.io/node-nvidia-register annotation and GPUs × slots of
// nvidia.com/gpu in its capacity and allocatable (gpusharetest.NodeIn
// builds the same node). An encoding error wraps gpushare.ErrUnencodable.
func RegisterNode(ctx context.Context, cs kubernetes.Interface, name string, devs []gpushare.Device) error {
	node, err := hamnode.Node(gpushare.FormatJSON, name, devs...)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register node %s: %w", name, err)
	}
	return nil
}

// Bind does for pod what HAMi's scheduler and the kubelet would: fit it
// with HAMi's rules on l, write the decision into its annotations, bind it
// to the node, create it (and its namespace) and mark it Running. It
// returns once l, fed by its informers, counts the pod. A pod that fits
// nowhere returns gpushare's *FitError and is not created.
func Bind(ctx context.Context, cs kubernetes.Interface, l *gpushare.Ledger, pod *corev1.Pod) (gpushare.Placement, error) {
	req, err := gpushare.NewPodRequest(pod, l.Config())
	if err != nil {
		return gpushare.Placement{}, err
	}
	p, err := l.Fit(req)
	if err != nil {
		return p, fmt.Errorf("place %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range p.Annotations(time.Now()) {
		pod.Annotations[k] = v
	}
	pod.Annotations[gpushare.AnnotationBindPhase] = string(gpushare.BindSuccess)
	pod.Spec.NodeName = p.Node
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return p, fmt.Errorf("create namespace %s: %w", pod.Namespace, err)
	}
	created, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return p, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	created.Status.Phase = corev1.PodRunning
	if _, err := cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return p, fmt.Errorf("mark pod %s/%s running: %w", pod.Namespace, pod.Name, err)
	}
	for {
		if _, ok := l.Pod(pod.Namespace, pod.Name); ok {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
