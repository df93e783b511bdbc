package main

import (
	"context"
	"fmt"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
)

// gpu registers cluster A's GPU nodes as HAMi's device plugin does (two
// cards each, the chart's defaults: 10 slots and 100 cores per card),
// places pods with HAMi's rules through the cluster's ledger, and prints
// where each landed and the ledger's totals. The gpu-share example tours
// the rest: the ledger per GPU, why a pod does not fit, the what-if.
func (w *world) gpu(ctx context.Context) (string, error) {
	a := w.clusters[0]
	cs, err := a.Clientset(ctx)
	if err != nil {
		return "", err
	}
	if err := hamisim.RegisterNode(ctx, cs, "gpu-a100", hamisim.GPUs("a100", 2, "NVIDIA A100-PCIE-80GB", 81920)); err != nil {
		return "", err
	}
	if err := hamisim.RegisterNode(ctx, cs, "gpu-t4", hamisim.GPUs("t4", 2, "NVIDIA-Tesla T4", 15360)); err != nil {
		return "", err
	}
	ledgerCtx, stop := context.WithCancel(ctx)
	defer stop()
	ledger, err := a.GPULedger(ledgerCtx, gpushare.Config{}) // HAMi settings from the application
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range []struct {
		namespace, name        string
		gpus, memoryMiB, cores int64
		onT4                   bool
	}{
		{"ml", "train", 1, 40000, 50, false},
		{"ml", "notebook", 1, 8000, 20, false},
		{"web", "ocr", 1, 6000, 30, true},
		{"web", "transcode", 1, 0, 0, true}, // nvidia.com/gpu alone: a whole card
	} {
		pod := gpusharetest.Pod(p.namespace, p.name, gpusharetest.Container("main", p.gpus, p.memoryMiB, p.cores))
		asks := "a whole card"
		if p.memoryMiB > 0 {
			asks = fmt.Sprintf("%d MiB, %d%% cores", p.memoryMiB, p.cores)
		}
		if p.onT4 {
			pod.Annotations = map[string]string{gpushare.AnnotationUseGPUType: "T4"}
			asks += " on a T4"
		}
		placed, err := hamisim.Bind(ctx, cs, ledger, pod) // HAMi's scheduler, played
		if err != nil {
			return "", err
		}
		rows = append(rows, []string{p.namespace + "/" + p.name, asks, placed.Node, placed.Containers.String()})
	}
	cli.Table(w.out, []string{"POD", "ASKS PER GPU", "NODE", "hami.io/vgpu-devices-allocated"}, rows)
	s := ledger.Summary()
	fmt.Fprintf(w.out, "\nThe ledger of %s: %d GPU nodes, %d GPUs, %d pods; %s\n", a.Ref(), s.Nodes, s.GPUs, s.Pods, s)
	return fmt.Sprintf("%d pods placed by HAMi's rules; ledger: %s", s.Pods, s), nil
}
