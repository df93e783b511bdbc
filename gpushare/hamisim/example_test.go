package hamisim_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
	"github.com/cozystack/tenantkit/gpushare/live"
)

// A node with two A100s registered as HAMi's device plugin would, and a pod
// asking for 20 GiB of one GPU placed as HAMi's scheduler would. Here the
// apiserver is client-go's fake; a tool runs the same calls against a real
// one (the gpu-share example, on the embedded local environment).
func ExampleBind() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := fake.NewClientset()
	if err := hamisim.RegisterNode(ctx, cs, "gpu-a100", hamisim.GPUs("a100", 2, "NVIDIA A100-SXM4-80GB", 81920)); err != nil {
		panic(err)
	}
	ledger, err := gpushare.NewLedger(gpushare.Config{})
	if err != nil {
		panic(err)
	}
	if err := live.Watch(ctx, cs, ledger); err != nil {
		panic(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "train"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{
				"nvidia.com/gpu":    resource.MustParse("1"),
				"nvidia.com/gpumem": resource.MustParse("20480"),
			}}}}},
	}
	placed, err := hamisim.Bind(ctx, cs, ledger, pod)
	if err != nil {
		panic(err)
	}
	fmt.Println("node:", placed.Node)
	// Output:
	// node: gpu-a100
}
