package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
)

// gpuNodes are cluster A's GPU workers, as HAMi's device plugin registers
// them (10 slots and 100 cores per card, the chart's defaults).
var gpuNodes = []struct {
	name, model string
	gpus        int
	memoryMiB   int32
}{
	{"gpu-a100", "NVIDIA A100-PCIE-80GB", 2, 81920},
	{"gpu-t4", "NVIDIA-Tesla T4", 2, 15360},
}

// gpuPod is a pod of the story and what it asks of each GPU.
type gpuPod struct {
	namespace, name  string
	gpus, mem, cores int64
	gpuType          string // hami.io/use-gputype
}

var gpuPods = []gpuPod{
	{"ml", "train", 1, 40000, 50, ""},
	{"ml", "notebook", 1, 8000, 20, ""},
	{"web", "ocr", 1, 6000, 30, "T4"},
	{"web", "transcode", 1, 0, 0, "T4"}, // nvidia.com/gpu alone: a whole card
}

// gpu registers cluster A's GPU nodes, places the pods with HAMi's rules
// through the cluster's ledger, and prints the ledger.
func (w *world) gpu(ctx context.Context) (string, error) {
	a := w.clusters[0]
	cs, err := a.Clientset(ctx)
	if err != nil {
		return "", err
	}
	if err := registerGPUNodes(ctx, cs); err != nil {
		return "", err
	}
	ledgerCtx, stop := context.WithCancel(ctx)
	defer stop()
	ledger, err := a.GPULedger(ledgerCtx, gpushare.Config{}) // HAMi settings from the application
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range gpuPods {
		placed, err := hamisim.Bind(ctx, cs, ledger, p.pod()) // HAMi's scheduler, played
		if err != nil {
			return "", err
		}
		rows = append(rows, []string{p.namespace + "/" + p.name, p.asks(), placed.Node, placed.Containers.String()})
	}
	cli.Table(w.out, []string{"POD", "ASKS PER GPU", "NODE", "hami.io/vgpu-devices-allocated"}, rows)
	fmt.Fprintln(w.out)
	printLedger(w.out, ledger)
	s := ledger.Summary()
	return fmt.Sprintf("%d pods placed by HAMi's rules; ledger: %s", s.Pods, usage(s)), nil
}

// registerGPUNodes creates the nodes as HAMi's device plugin registers
// them.
func registerGPUNodes(ctx context.Context, cs kubernetes.Interface) error {
	for _, n := range gpuNodes {
		if err := hamisim.RegisterNode(ctx, cs, n.name, hamisim.GPUs(n.name[4:], n.gpus, n.model, n.memoryMiB)); err != nil {
			return err
		}
	}
	return nil
}

func (g gpuPod) pod() *corev1.Pod {
	limits := corev1.ResourceList{gpushare.ResourceGPU: *resource.NewQuantity(g.gpus, resource.DecimalSI)}
	if g.mem > 0 {
		limits[gpushare.ResourceMemory] = *resource.NewQuantity(g.mem, resource.DecimalSI)
	}
	if g.cores > 0 {
		limits[gpushare.ResourceCores] = *resource.NewQuantity(g.cores, resource.DecimalSI)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: g.namespace, Name: g.name, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: "hami-scheduler", Containers: []corev1.Container{{
			Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Limits: limits}}}}}
	if g.gpuType != "" {
		pod.Annotations[gpushare.AnnotationUseGPUType] = g.gpuType
	}
	return pod
}

func (g gpuPod) asks() string {
	s := "a whole card"
	if g.mem > 0 {
		s = fmt.Sprintf("%d MiB, %d%% cores", g.mem, g.cores)
	}
	if g.gpuType != "" {
		s += " on a " + g.gpuType
	}
	return s
}

// usage sums up a ledger in a few words.
func usage(s gpushare.Summary) string {
	return fmt.Sprintf("%d/%d MiB, %d/%d cores, %d/%d slots used",
		s.Used.MemoryMiB, s.Capacity.MemoryMiB, s.Used.Cores, s.Capacity.Cores, s.Used.Slots, s.Capacity.Slots)
}

func printLedger(out io.Writer, l *gpushare.Ledger) {
	var rows [][]string
	for _, n := range l.Nodes() {
		for _, g := range n.GPUs {
			var pods []string
			for _, p := range g.Pods {
				pods = append(pods, p.Namespace+"/"+p.Name)
			}
			rows = append(rows, []string{n.Name, g.ID, g.Type,
				fmt.Sprintf("%d/%d MiB", g.Used.MemoryMiB, g.Capacity.MemoryMiB),
				fmt.Sprintf("%d/%d", g.Used.Cores, g.Capacity.Cores),
				fmt.Sprintf("%d/%d", g.Used.Slots, g.Capacity.Slots), strings.Join(pods, ", ")})
		}
	}
	cli.Table(out, []string{"NODE", "GPU", "TYPE", "MEMORY", "CORES", "SLOTS", "PODS"}, rows)
}
