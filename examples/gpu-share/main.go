// Command gpu-share shows HAMi's fractional GPU accounting the way HAMi's
// scheduler sees it, with package gpushare doing the work.
//
//	go run ./examples/gpu-share
//
// Without --kubeconfig it starts the embedded local environment (etcd and a
// real kube-apiserver on loopback), registers three GPU nodes of different
// models as HAMi's device plugin would (A100, L40S, T4), places a series of
// pods the way HAMi's scheduler would and writes its annotations, prints
// the ledger built from the cluster through informers, explains a pod that
// does not fit, and answers a what-if: how many more pods of a shape fit,
// and how much free memory they would strand.
//
// With --kubeconfig it reads a real tenant cluster running HAMi and prints
// its live ledger, per-namespace totals, objects it could not read, and the
// what-if for the shape given by --gpus, --gpumem and --gpucores. It only
// reads.
//
//	gpu-share --kubeconfig tenant.kubeconfig --gpus 1 --gpumem 8000 --gpucores 20
//
// Exit codes: 0 done, 1 failed, 2 bad command line, 3 cluster unreachable,
// 130 interrupted.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/gpushare"
	"github.com/cozystack/tenantkit/gpushare/live"
	"github.com/cozystack/tenantkit/localenv"
)

type options struct {
	target     cli.Target
	out        io.Writer // results
	progress   io.Writer // progress lines
	gpus       int32
	gpumem     int32
	gpucores   int32
	nodePolicy string
	gpuPolicy  string
	collapse   bool
	timeout    cli.Timeout
}

func main() { cli.Main(newCommand(&options{out: os.Stdout, progress: os.Stderr})) }

// newCommand returns the program's command line (main runs it; the tests
// run it in process through cli.Execute).
func newCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gpu-share",
		Short: "Fractional GPU accounting with HAMi's rules: ledger, placement, explain, what-if",
		Long: `gpu-share builds the GPU ledger of a cluster running HAMi from its Node and Pod
objects (hami.io/node-nvidia-register, hami.io/vgpu-devices-allocated) and answers
with HAMi's own rules: what is allocated where, what is free, where a pod would go,
and why it would not fit.

Without --kubeconfig it runs a tour on an embedded local environment: three GPU
nodes of different models, a series of placed pods, the ledger, an explanation
of a pod that does not fit, and a what-if.

With --kubeconfig it prints the live ledger of that cluster and the what-if for
the shape given by --gpus, --gpumem and --gpucores. It changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.gpus < 1 || o.gpumem < 0 || o.gpucores < 0 || o.gpucores > 100 {
				return cli.Usage("--gpus must be at least 1, --gpumem at least 0, --gpucores within 0–100")
			}
			ctx, cancel := o.timeout.Context(cmd.Context())
			defer cancel()
			return run(ctx, o)
		},
	}
	f := cmd.Flags()
	o.target.AddFlags(f)
	f.Int32Var(&o.gpus, "gpus", 1, "what-if shape: GPUs per pod (nvidia.com/gpu)")
	f.Int32Var(&o.gpumem, "gpumem", 8000, "what-if shape: MiB per GPU (nvidia.com/gpumem; 0 means the whole card)")
	f.Int32Var(&o.gpucores, "gpucores", 20, "what-if shape: percent of each GPU's compute (nvidia.com/gpucores)")
	f.StringVar(&o.nodePolicy, "node-policy", "binpack", "HAMi's default node policy: binpack or spread")
	f.StringVar(&o.gpuPolicy, "gpu-policy", "spread", "HAMi's default GPU policy: spread, binpack, or a v2.10 chain such as mutex,binpack")
	f.BoolVar(&o.collapse, "hami-v2.10-counting", false, "count init containers as HAMi v2.10 does (default: v2.9, Cozystack's chart)")
	o.timeout.AddFlag(f)
	return cmd
}

func (o *options) config() (gpushare.Config, error) {
	np, err := gpushare.ParseNodePolicy(o.nodePolicy)
	if err != nil {
		return gpushare.Config{}, cli.Usage("--node-policy: %v", err)
	}
	gp, err := gpushare.ParseGPUPolicy(o.gpuPolicy)
	if err != nil {
		return gpushare.Config{}, cli.Usage("--gpu-policy: %v", err)
	}
	return gpushare.Config{NodePolicy: np, GPUPolicy: gp, CollapseInitContainers: o.collapse,
		Logger: o.target.Logger()}, nil
}

// shape is the what-if pod of the flags.
func (o *options) shape() gpushare.PodRequest {
	c := gpushare.ContainerRequest{Name: "main", Count: o.gpus, MemoryMiB: o.gpumem, Cores: o.gpucores}
	return gpushare.PodRequest{Namespace: "what-if", Name: "shape", Containers: []gpushare.ContainerRequest{c}}
}

func run(ctx context.Context, o *options) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	if _, err := localenv.OpenTarget(ctx, &o.target, "etcd, kube-apiserver", localenv.Config{EtcdMembers: 1}); err != nil {
		return err
	}
	defer o.target.Close()
	cs, err := kubernetes.NewForConfig(o.target.RESTConfig)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	if o.target.Embedded() {
		if err := registerNodes(ctx, cs, o.progress); err != nil {
			return err
		}
	}
	ledger, err := gpushare.NewLedger(cfg)
	if err != nil {
		return err
	}
	step := cli.Step(o.progress, "reading Nodes and Pods through informers")
	err = live.Watch(ctx, cs, ledger)
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	if o.target.Embedded() {
		return tour(ctx, cs, ledger, o)
	}
	printLedger(o.out, ledger)
	printProblems(o.out, ledger)
	return printWhatIf(o.out, ledger, o.shape())
}

func fail(format string, args ...any) error {
	return cli.WithCode(cli.ExitFailure, fmt.Errorf(format, args...))
}
