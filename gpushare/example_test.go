package gpushare_test

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/tenantkit/gpushare"
)

func Example() {
	// A node as HAMi's device plugin registers it, and a pod as HAMi's
	// scheduler annotated it.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{
		gpushare.AnnotationRegister: `[{"id":"GPU-a","count":10,"devmem":81920,"devcore":100,"type":"NVIDIA A100-SXM4-80GB","mode":"hami-core","health":true}]`,
	}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train", Annotations: map[string]string{
		gpushare.AnnotationNode:      "gpu-1",
		gpushare.AnnotationAllocated: "GPU-a,NVIDIA,20000,30:;",
	}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}

	l, _ := gpushare.NewLedger(gpushare.Config{})
	_ = l.Load([]corev1.Node{*node}, []corev1.Pod{*pod})
	n, _ := l.Node("gpu-1")
	g := n.GPUs[0]
	fmt.Printf("%s: %d/%d MiB, %d/%d cores, %d/%d slots used\n", g.ID,
		g.Used.MemoryMiB, g.Capacity.MemoryMiB, g.Used.Cores, g.Capacity.Cores, g.Used.Slots, g.Capacity.Slots)

	// Does a pod asking 3000 MiB and 30 % of a GPU fit, and where?
	next := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "serve"}}
	next.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		gpushare.ResourceGPU: resource.MustParse("1"), gpushare.ResourceMemory: resource.MustParse("3000"), gpushare.ResourceCores: resource.MustParse("30"),
	}}}}
	req, _ := gpushare.NewPodRequest(next, l.Config())
	p, _ := l.Fit(req)
	fmt.Println(p.Node, p.Containers)
	// Output:
	// GPU-a: 20000/81920 MiB, 30/100 cores, 1/10 slots used
	// gpu-1 GPU-a,NVIDIA,3000,30:;
}

func ExampleLedger_Fit_explain() {
	l, _ := gpushare.NewLedger(gpushare.Config{})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-3", Annotations: map[string]string{
		gpushare.AnnotationRegister: "GPU-1a2b,10,4096,100,NVIDIA-Tesla T4,0,true,0,hami-core:",
	}}}
	_ = l.SetNode(node)
	_ = l.Allocate(gpushare.Placement{Namespace: "web", Name: "thumbs", Node: "node-3",
		Containers: gpushare.PodAllocation{{{UUID: "GPU-1a2b", Type: "NVIDIA", MemoryMiB: 2048}}}})

	_, err := l.Fit(gpushare.PodRequest{Namespace: "web", Name: "big",
		Containers: []gpushare.ContainerRequest{{Name: "main", Count: 1, MemoryMiB: 3000}}})
	var fe *gpushare.FitError
	if errors.As(err, &fe) {
		fmt.Println(fe.Blocker.Kind+":", fe.Blocker.Detail)
		for _, n := range fe.Nodes {
			fmt.Println(n)
		}
	}
	// Output:
	// NoMemory: no GPU has 3000 MiB free (largest: 2048)
	// node-3: GPU-1a2b: 2048 MiB free < 3000 requested (container main: 0 of 1 GPUs fit)
}

func ExampleLedger_WhatIf() {
	l, _ := gpushare.NewLedger(gpushare.Config{})
	_ = l.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
		gpushare.AnnotationRegister: `[{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}]`,
	}}})
	w, _ := l.WhatIf(gpushare.PodRequest{Containers: []gpushare.ContainerRequest{{Name: "main", Count: 1, MemoryMiB: 4000}}}, 0)
	fmt.Printf("%d more fit; %d of %d free MiB stranded (%.0f%%)\n", w.Fits, w.StrandedMiB, w.FreeMiB, 100*w.Fragmentation)
	// Output:
	// 3 more fit; 3360 of 15360 free MiB stranded (22%)
}

func ExampleDecodeNodeDevices() {
	// A v2.5–v2.7 registration; v2.8+ writes JSON. Both decode.
	devs, _ := gpushare.DecodeNodeDevices("GPU-0fc3,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true,0,hami-core:")
	js, _ := gpushare.EncodeNodeDevices(devs, gpushare.FormatJSON)
	fmt.Println(js)
	// Output:
	// [{"id":"GPU-0fc3","count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-PCIE-32GB","mode":"hami-core","health":true}]
}

func ExampleDecodePodDevices() {
	p, _ := gpushare.DecodePodDevices("GPU-aaaa,NVIDIA,8000,0:GPU-bbbb,NVIDIA,8000,0:;GPU-aaaa,NVIDIA,16384,0:;")
	for i, c := range p {
		for _, d := range c {
			fmt.Printf("container %d: %s %d MiB %d cores\n", i, d.UUID, d.MemoryMiB, d.Cores)
		}
	}
	// Output:
	// container 0: GPU-aaaa 8000 MiB 0 cores
	// container 0: GPU-bbbb 8000 MiB 0 cores
	// container 1: GPU-aaaa 16384 MiB 0 cores
}

func ExampleHAMiSettings_Values() {
	values, err := gpushare.HAMiSettings{NodePolicy: gpushare.NodeSpread}.Values()
	if err != nil {
		fmt.Println(err)
		return
	}
	y, _ := yaml.Marshal(values)
	fmt.Print(string(y))
	// Output:
	// hami:
	//   devicePlugin:
	//     deviceCoreScaling: 1
	//     deviceMemoryScaling: 1
	//     deviceSplitCount: 10
	//   scheduler:
	//     defaultSchedulerPolicy:
	//       gpuSchedulerPolicy: spread
	//       nodeSchedulerPolicy: spread
}

func ExampleImageIsolation() {
	for _, image := range []string{"ubuntu:20.04", "nvidia/cuda:12.4.1-runtime-ubuntu22.04", "ubuntu:24.04", "python:3.12-alpine"} {
		iso, _ := gpushare.ImageIsolation(image)
		fmt.Printf("%s: %s\n", image, iso)
	}
	// Output:
	// ubuntu:20.04: full (memory and compute)
	// nvidia/cuda:12.4.1-runtime-ubuntu22.04: memory only (compute limits fail silently)
	// ubuntu:24.04: none (HAMi-core does not load)
	// python:3.12-alpine: incompatible (musl)
}

// A request HAMi bends is read as HAMi's scheduler reads it (here gpucores
// 150 counts as 100) and reported in Warnings; StrictRequests refuses it.
func ExampleNewPodRequest_bentAsHAMi() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "greedy"}}
	pod.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		gpushare.ResourceGPU: resource.MustParse("1"), gpushare.ResourceMemory: resource.MustParse("3000"), gpushare.ResourceCores: resource.MustParse("150"),
	}}}}
	req, err := gpushare.NewPodRequest(pod, gpushare.Config{})
	fmt.Println(err, req.Containers[0].Cores)
	for _, w := range req.Warnings {
		fmt.Println("warning:", w.Resource)
	}

	_, err = gpushare.NewPodRequest(pod, gpushare.Config{StrictRequests: true})
	var re *gpushare.RequestError
	fmt.Println(errors.As(err, &re), re.Resource)
	// Output:
	// <nil> 100
	// warning: nvidia.com/gpucores
	// true nvidia.com/gpucores
}

// HAMi's admission webhook, in the path as Cozystack deploys HAMi, refuses
// a memory percentage over 100: NewPodRequest refuses the pod too, so it
// never fits. Without the webhook HAMi's scheduler clamps it to 100.
func ExampleNewPodRequest_webhookRefuses() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "over"}}
	pod.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		gpushare.ResourceGPU: resource.MustParse("1"), gpushare.ResourceMemoryPercentage: resource.MustParse("101"),
	}}}}
	_, err := gpushare.NewPodRequest(pod, gpushare.Config{})
	fmt.Println(errors.Is(err, gpushare.ErrWebhookRefused))
	fmt.Println(err)

	req, _ := gpushare.NewPodRequest(pod, gpushare.Config{SkipWebhook: true})
	fmt.Println(req.Containers[0].MemoryPercent, req.Warnings[0].Reason)
	// Output:
	// true
	// ml/over: HAMi's admission webhook refuses the pod: container main: nvidia.com/gpumem-percentage: 101 (101) is not an integer between 0 and 100
	// 100 101 is over 100: HAMi clamps it to 100
}

// A scheduler extender decides in one call (Fit, at filter time) and
// commits in another (Allocate, at bind time). Allocate checks every
// per-GPU rule again: a placement that went stale meanwhile is refused and
// the ledger is left unchanged.
func ExampleLedger_Allocate() {
	l, _ := gpushare.NewLedger(gpushare.Config{})
	_ = l.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{
		gpushare.AnnotationRegister: `[{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}]`,
	}}})
	ask := func(name string) gpushare.PodRequest {
		return gpushare.PodRequest{Namespace: "ml", Name: name,
			Containers: []gpushare.ContainerRequest{{Name: "main", Count: 1, MemoryMiB: 10000}}}
	}
	first, _ := l.Fit(ask("first"))
	second, _ := l.Fit(ask("second")) // decided before first is committed

	// Later, at bind time:
	fmt.Println(l.Allocate(first))
	err := l.Allocate(second)
	fmt.Println(errors.Is(err, gpushare.ErrOverAllocation))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "first"}}
	pod.Annotations = first.Annotations(time.Date(2026, 8, 21, 10, 0, 0, 0, time.UTC)) // as HAMi's scheduler writes them
	fmt.Println(pod.Annotations[gpushare.AnnotationAllocated])
	// Output:
	// <nil>
	// true
	// GPU-a,NVIDIA,10000,0:;
}
