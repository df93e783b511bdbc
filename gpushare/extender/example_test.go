package extender_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/extender"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
)

// An extender answers kube-scheduler's filter call: of the nodes
// kube-scheduler sent, it keeps the one HAMi would pick and says why the
// others cannot take the pod. In a deployment, Start serves it (TLS with
// Config.CertFile and Config.KeyFile) and kube-scheduler's
// KubeSchedulerConfiguration names it under extenders.
func Example() {
	ctx := context.Background()
	cs := fake.NewClientset() // kubernetes.NewForConfig(...) in a cluster
	_ = hamisim.RegisterNode(ctx, cs, "gpu-1", hamisim.GPUs("t4", 2, "NVIDIA-Tesla T4", 15360))
	_ = hamisim.RegisterNode(ctx, cs, "gpu-2", hamisim.GPUs("a100", 1, "NVIDIA A100-SXM4-80GB", 81920))

	x, err := extender.New(cs, extender.Config{}) // HAMi's mode, loopback
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := x.Watch(ctx); err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(x.Handler())
	defer srv.Close()

	filter := func(memMiB string) extenderv1.ExtenderFilterResult {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{gpushare.ResourceGPU: resource.MustParse("1"),
					gpushare.ResourceMemory: resource.MustParse(memMiB)}}}}}}
		nodes := []string{"gpu-1", "gpu-2"}
		body, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: pod, NodeNames: &nodes})
		var res extenderv1.ExtenderFilterResult
		resp, err := http.Post(srv.URL+"/filter", "application/json", bytes.NewReader(body))
		if err != nil {
			res.Error = err.Error()
			return res
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(&res)
		return res
	}
	fmt.Println("20000 MiB, kept:", *filter("20000").NodeNames)
	res := filter("90000")
	fmt.Println("90000 MiB, kept:", *res.NodeNames)
	fmt.Println("gpu-2:", res.FailedNodes["gpu-2"])
	// Output:
	// 20000 MiB, kept: [gpu-2]
	// 90000 MiB, kept: []
	// gpu-2: CardInsufficientMemory: GPU-a100-0: 81920 MiB free < 90000 requested (container main: 0 of 1 GPUs fit)
}
