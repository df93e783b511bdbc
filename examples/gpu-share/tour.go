package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/gpusharetest"
	"github.com/cozystack/tenantkit/gpushare/hamisim"
)

// nodes are the tour's GPU nodes: three models, registered in HAMi v2.10's
// JSON with the chart's defaults (10 slots per GPU, 100 cores).
var nodes = []struct {
	name, model string
	gpus        int
	memoryMiB   int32
}{
	{"gpu-a100", "NVIDIA A100-SXM4-80GB", 2, 81920},
	{"gpu-l40s", "NVIDIA L40S", 2, 46068},
	{"gpu-t4", "NVIDIA-Tesla T4", 4, 15360},
}

// registerNodes creates the nodes with the annotation HAMi's device plugin
// writes, as the plugin would on a real cluster.
func registerNodes(ctx context.Context, cs kubernetes.Interface, progress io.Writer) error {
	step := cli.Step(progress, "registering three GPU nodes as HAMi's device plugin does")
	err := func() error {
		for _, n := range nodes {
			if err := hamisim.RegisterNode(ctx, cs, n.name, hamisim.GPUs(n.name[4:], n.gpus, n.model, n.memoryMiB)); err != nil {
				return err
			}
		}
		return nil
	}()
	step.Done(err)
	return err
}

// demoPod is one pod of the tour: what it asks per GPU.
type demoPod struct {
	namespace, name    string
	gpus, mem, cores   int64
	useType, gpuPolicy string
}

var series = []demoPod{
	{namespace: "ml", name: "train", gpus: 2, mem: 40000, cores: 50},
	{namespace: "ml", name: "finetune", gpus: 1, mem: 30000, cores: 30},
	{namespace: "ml", name: "notebook", gpus: 1, mem: 8000},
	{namespace: "web", name: "thumbnails", gpus: 1, mem: 3000, cores: 30, useType: "T4"},
	{namespace: "web", name: "ocr", gpus: 1, mem: 6000, cores: 20, useType: "T4"},
	{namespace: "web", name: "embeddings", gpus: 1, mem: 20000, cores: 25, useType: "L40S"},
	{namespace: "web", name: "transcode", gpus: 1, cores: 100, useType: "L40S"}, // nvidia.com/gpu alone: an exclusive card
	{namespace: "ml", name: "batch", gpus: 2, mem: 10000, cores: 10, gpuPolicy: "binpack"},
}

// tooBig does not fit anywhere: two GPUs with 60000 MiB each.
var tooBig = demoPod{namespace: "ml", name: "too-big", gpus: 2, mem: 60000, cores: 50}

// pod is the pod as a user writes it: limits per GPU (an exclusive card
// asks nvidia.com/gpu alone), HAMi's annotations for the card type and the
// GPU policy.
func (d demoPod) pod() *corev1.Pod {
	cores := d.cores
	if cores >= 100 {
		cores = 0
	}
	p := gpusharetest.Pod(d.namespace, d.name, gpusharetest.Container("main", d.gpus, d.mem, cores))
	p.Annotations = map[string]string{}
	if d.useType != "" {
		p.Annotations[gpushare.AnnotationUseGPUType] = d.useType
	}
	if d.gpuPolicy != "" {
		p.Annotations[gpushare.AnnotationGPUPolicy] = d.gpuPolicy
	}
	return p
}

func (d demoPod) asks() string {
	mem := "whole card"
	if d.mem > 0 {
		mem = fmt.Sprintf("%d MiB", d.mem)
	}
	s := fmt.Sprintf("%d × (%s, %d%% cores)", d.gpus, mem, d.cores)
	if d.useType != "" {
		s += " on " + d.useType
	}
	if d.gpuPolicy != "" {
		s += ", GPU " + d.gpuPolicy
	}
	return s
}

// tour places the series, prints the ledger, explains tooBig and answers
// the what-if.
func tour(ctx context.Context, cs kubernetes.Interface, l *gpushare.Ledger, o *options) error {
	fmt.Fprintln(o.out, "\nPlacing pods as HAMi's scheduler would (node binpack, GPU spread unless the pod says otherwise):")
	var rows [][]string
	for _, d := range series {
		p, err := schedule(ctx, cs, l, d)
		if err != nil {
			return err
		}
		rows = append(rows, []string{d.namespace + "/" + d.name, d.asks(), p.Node, p.Containers.String()})
	}
	cli.Table(o.out, []string{"POD", "ASKS", "NODE", "hami.io/vgpu-devices-allocated"}, rows)

	printLedger(o.out, l)

	fmt.Fprintf(o.out, "\nWhy %s/%s (%s) does not fit:\n", tooBig.namespace, tooBig.name, tooBig.asks())
	req, err := gpushare.NewPodRequest(tooBig.pod(), l.Config())
	if err != nil {
		return err
	}
	_, err = l.Fit(req)
	var fe *gpushare.FitError
	if !errors.As(err, &fe) {
		return fail("expected %s not to fit, got %v", tooBig.name, err)
	}
	printFitError(o.out, fe)
	return printWhatIf(o.out, l, o.shape())
}

// schedule does what HAMi's scheduler and the kubelet would: decide, write
// the annotations, bind, run (package hamisim). It returns once the
// informers have brought the pod into the ledger.
func schedule(ctx context.Context, cs kubernetes.Interface, l *gpushare.Ledger, d demoPod) (gpushare.Placement, error) {
	p, err := hamisim.Bind(ctx, cs, l, d.pod())
	if errors.Is(err, gpushare.ErrNoFit) {
		return p, cli.WithCode(cli.ExitFailure, err)
	}
	return p, err
}
