// Package gpusharetest builds the Kubernetes objects HAMi leaves behind, for
// tests of code that uses package gpushare: GPU nodes with the registration
// annotation HAMi's device plugin writes, pods with the allocation
// annotations HAMi's scheduler writes, pod specs that ask for GPU shares,
// and whole synthetic clusters.
//
//	node := gpusharetest.NodeT(t, "gpu-1", gpusharetest.GPU("GPU-a", 0, "NVIDIA A100-SXM4-80GB", 81920))
//	pod := gpusharetest.AllocatedPodT(t, placement)
//
// Helpers that can fail come in two forms: X returns an error and needs no
// test (benchmarks set-up, tools, examples), XT takes a testing.TB first and
// fails the test instead. None panics.
package gpusharetest

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/internal/hamnode"
)

// Epoch returns the decision time AllocatedPod writes in hami.io/vgpu-time
// (2026-08-21 10:00 UTC), so fixtures are reproducible.
func Epoch() time.Time { return time.Date(2026, 8, 21, 10, 0, 0, 0, time.UTC) }

// GPU returns a healthy hami-core GPU registered with HAMi's chart
// defaults: gpushare.DefaultDeviceSplitCount slots (10),
// gpushare.DefaultDeviceCores cores (100).
func GPU(id string, index uint, model string, memoryMiB int32) gpushare.Device {
	return hamnode.GPU(id, index, model, memoryMiB)
}

// GPUs returns n GPUs of one model with UUIDs "GPU-<prefix>-<i>".
func GPUs(prefix string, n int, model string, memoryMiB int32) []gpushare.Device {
	return hamnode.GPUs(prefix, n, model, memoryMiB)
}

// Node returns a node labelled gpu=on whose hami.io/node-nvidia-register
// holds devs in HAMi v2.10's JSON, and whose allocatable nvidia.com/gpu is
// GPUs × slots, as the device plugin leaves it. Errors wrap
// gpushare.ErrUnencodable.
func Node(name string, devs ...gpushare.Device) (*corev1.Node, error) {
	return NodeIn(gpushare.FormatJSON, name, devs...)
}

// NodeT is Node that fails t on error.
func NodeT(t testing.TB, name string, devs ...gpushare.Device) *corev1.Node {
	t.Helper()
	n, err := Node(name, devs...)
	return must(t, n, err)
}

// NodeIn is Node with the registration written in format
// (hamisim.RegisterNode creates the same node: one renderer behind both).
func NodeIn(format gpushare.RegistrationFormat, name string, devs ...gpushare.Device) (*corev1.Node, error) {
	return hamnode.Node(format, name, devs...)
}

// NodeInT is NodeIn that fails t on error.
func NodeInT(t testing.TB, format gpushare.RegistrationFormat, name string, devs ...gpushare.Device) *corev1.Node {
	t.Helper()
	n, err := NodeIn(format, name, devs...)
	return must(t, n, err)
}

func must[T any](t testing.TB, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Container returns a container asking, in its limits, for gpus GPUs with
// memoryMiB and cores each; a zero memoryMiB or cores leaves that resource
// out (HAMi's defaults apply).
func Container(name string, gpus, memoryMiB, cores int64) corev1.Container {
	l := corev1.ResourceList{gpushare.ResourceGPU: *resource.NewQuantity(gpus, resource.DecimalSI)}
	if memoryMiB > 0 {
		l[gpushare.ResourceMemory] = *resource.NewQuantity(memoryMiB, resource.DecimalSI)
	}
	if cores > 0 {
		l[gpushare.ResourceCores] = *resource.NewQuantity(cores, resource.DecimalSI)
	}
	return corev1.Container{Name: name, Image: "registry.k8s.io/pause:3.10",
		Resources: corev1.ResourceRequirements{Limits: l}}
}

// Pod returns a pending pod with the given containers, scheduled by
// hami-scheduler as HAMi's webhook leaves it.
func Pod(namespace, name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.PodSpec{SchedulerName: "hami-scheduler", Containers: containers},
	}
}

// ErrIncompletePlacement is returned by AllocatedPod for a placement
// without a node or a name.
var ErrIncompletePlacement = errors.New("gpusharetest: placement without node or name")

// AllocatedPod returns the pod HAMi's scheduler leaves after deciding p: a
// container per entry of p.Containers (the first p.InitContainers as init
// containers, named "init-<i>", the others "main-<i>"), spec.nodeName set,
// the Filter annotations (at Epoch()) with bind-phase success, phase Running.
func AllocatedPod(p gpushare.Placement) (*corev1.Pod, error) {
	if p.Node == "" || p.Name == "" {
		return nil, fmt.Errorf("%+v: %w", p, ErrIncompletePlacement)
	}
	pod := Pod(p.Namespace, p.Name)
	for i := range p.Containers {
		if i < p.InitContainers {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers,
				corev1.Container{Name: "init-" + strconv.Itoa(i), Image: "registry.k8s.io/pause:3.10"})
			continue
		}
		pod.Spec.Containers = append(pod.Spec.Containers,
			corev1.Container{Name: "main-" + strconv.Itoa(i), Image: "registry.k8s.io/pause:3.10"})
	}
	pod.Spec.NodeName = p.Node
	pod.Annotations = p.Annotations(Epoch())
	pod.Annotations[gpushare.AnnotationBindPhase] = string(gpushare.BindSuccess)
	pod.Labels = map[string]string{gpushare.AnnotationNode: p.Node}
	pod.Status.Phase = corev1.PodRunning
	return pod, nil
}

// AllocatedPodT is AllocatedPod that fails t on error.
func AllocatedPodT(t testing.TB, p gpushare.Placement) *corev1.Pod {
	t.Helper()
	pod, err := AllocatedPod(p)
	return must(t, pod, err)
}
