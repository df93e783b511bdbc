package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/extender"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
	"github.com/cozystack/tenantkit/localenv"
)

const schedulerName = "gpushare-scheduler"

// schedulerConfig is the KubeSchedulerConfiguration HAMi's chart gives
// hami-scheduler (charts/hami/templates/scheduler/configmapnew.yaml), the
// extender at urlPrefix.
func schedulerConfig(urlPrefix string, scores bool) string {
	prioritize := ""
	if scores {
		prioritize = "  prioritizeVerb: prioritize\n"
	}
	tls := ""
	if strings.HasPrefix(urlPrefix, "https://") {
		tls = "  enableHTTPS: true\n  tlsConfig: {insecure: true}  # or caData\n"
	}
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ` + schedulerName + `
extenders:
- urlPrefix: "` + urlPrefix + `"
  filterVerb: filter
` + prioritize + `  bindVerb: bind
  nodeCacheCapable: true
  weight: 1
  httpTimeout: 30s
` + tls + `  managedResources:
  - {name: nvidia.com/gpu, ignoredByScheduler: true}
  - {name: nvidia.com/gpumem, ignoredByScheduler: true}
  - {name: nvidia.com/gpucores, ignoredByScheduler: true}
  - {name: nvidia.com/gpumem-percentage, ignoredByScheduler: true}
  - {name: nvidia.com/priority, ignoredByScheduler: true}
`
}

// tour registers two GPU nodes, serves the extender, starts kube-scheduler
// with it and shows where three pods go.
func tour(ctx context.Context, env *localenv.Env, cs kubernetes.Interface, x *extender.Extender, o *options) error {
	step := cli.Step(o.progress, "registering two GPU nodes as HAMi's device plugin does")
	err := registerNodes(ctx, cs)
	step.Done(err)
	if err != nil {
		return err
	}
	addr, err := x.Start(ctx)
	if err != nil {
		return err
	}
	step = cli.Step(o.progress, "starting kube-scheduler with the extender")
	err = env.StartScheduler(ctx, "gpushare", []byte(schedulerConfig("http://"+addr.String(), o.scores)))
	step.Done(err)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, p := range []struct {
		name   string
		memMiB int64
	}{{"small", 4000}, {"large", 30000}, {"huge", 90000}} {
		pod := gpuPod(p.name, p.memMiB)
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fail("create pod %s: %v", p.name, err)
		}
		res, err := outcome(ctx, cs, p.name)
		if err != nil {
			return err
		}
		rows = append(rows, []string{p.name, fmt.Sprintf("1 GPU, %d MiB", p.memMiB), res})
	}
	cli.Table(o.out, []string{"POD", "ASKS", "RESULT"}, rows)
	return nil
}

func registerNodes(ctx context.Context, cs kubernetes.Interface) error {
	for _, n := range []struct {
		name, model string
		mem         int32
	}{{"gpu-t4", "NVIDIA-Tesla T4", 15360}, {"gpu-a100", "NVIDIA A100-SXM4-80GB", 81920}} {
		if err := hamisim.RegisterNode(ctx, cs, n.name, hamisim.GPUs(n.name[4:], 2, n.model, n.mem)); err != nil {
			return err
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, l := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
			l[corev1.ResourceCPU], l[corev1.ResourceMemory], l[corev1.ResourcePods] =
				resource.MustParse("8"), resource.MustParse("64Gi"), resource.MustParse("110")
		}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func gpuPod(name string, memMiB int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{SchedulerName: schedulerName, Containers: []corev1.Container{{Name: "main", Image: "cuda",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpushare.ResourceGPU: resource.MustParse("1"),
				gpushare.ResourceMemory: *resource.NewQuantity(memMiB, resource.DecimalSI)}}}}}}
}

// outcome waits until kube-scheduler bound the pod ("gpu-t4: GPU-…") or
// reported why not (its FailedScheduling event).
func outcome(ctx context.Context, cs kubernetes.Interface, name string) (string, error) {
	var res string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			res = "bound to " + p.Spec.NodeName + ": " + p.Annotations[gpushare.AnnotationAllocated]
			return true, nil
		}
		evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "FailedScheduling" {
				res = "pending: " + e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fail("pod %s: %v", name, err)
	}
	return res, nil
}

func fail(format string, args ...any) error {
	return cli.WithCode(cli.ExitFailure, fmt.Errorf(format, args...))
}
