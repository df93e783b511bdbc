package live_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/live"
)

func ExampleWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the informers
	// A cluster with one GPU node as HAMi's device plugin registers it; a
	// real one comes from kubernetes.NewForConfig.
	clientset := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{
		gpushare.AnnotationRegister: `[{"id":"GPU-a","count":10,"devmem":81920,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","mode":"hami-core","health":true}]`,
	}}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "serve"}}
	pod.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		gpushare.ResourceGPU: resource.MustParse("1"), gpushare.ResourceMemory: resource.MustParse("3000"), gpushare.ResourceCores: resource.MustParse("30"),
	}}}}

	ledger, err := gpushare.NewLedger(gpushare.Config{}) // HAMi's chart defaults
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := live.Watch(ctx, clientset, ledger); err != nil { // returns once synced
		fmt.Println(err)
		return
	}
	req, err := gpushare.NewPodRequest(pod, ledger.Config())
	if err != nil {
		fmt.Println(err)
		return
	}
	placement, err := ledger.Fit(req) // a *gpushare.FitError says why not
	fmt.Println(placement.Node, placement.Containers, err)
	// Output:
	// gpu-1 GPU-a,NVIDIA,3000,30:; <nil>
}
