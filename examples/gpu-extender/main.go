// Command gpu-extender runs gpushare as a scheduler extender behind
// kube-scheduler, speaking HAMi's extender protocol (filter and bind), so
// HAMi's device plugin and HAMi-core run unchanged on the nodes.
//
//	go run ./examples/gpu-extender
//
// Without --kubeconfig it starts the embedded local environment (etcd and a
// real kube-apiserver on loopback), registers two GPU nodes as HAMi's
// device plugin would, serves the extender on loopback,
// starts a real kube-scheduler configured with it as HAMi's chart
// configures hami-scheduler, creates three pods, and prints where
// kube-scheduler bound each one, or why it could not.
//
// With --kubeconfig it serves the extender for that cluster on --addr
// (TLS with --cert and --key; plain HTTP only on loopback) until
// interrupted, and prints the extenders: entry for kube-scheduler's
// KubeSchedulerConfiguration.
//
//	gpu-extender --kubeconfig tenant.kubeconfig --addr 0.0.0.0:8443 --cert tls.crt --key tls.key
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
	"github.com/cozystack/tenantkit/gpushare/extender"
	"github.com/cozystack/tenantkit/localenv"
)

type options struct {
	target    cli.Target
	out       io.Writer // results
	progress  io.Writer // progress lines
	addr      string
	cert, key string
	scores    bool
	timeout   cli.Timeout
}

func main() { cli.Main(newCommand(&options{out: os.Stdout, progress: os.Stderr})) }

func newCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gpu-extender",
		Short: "gpushare as a HAMi-compatible kube-scheduler extender (filter, bind)",
		Long: `gpu-extender serves gpushare's decisions to kube-scheduler with HAMi's extender
protocol: POST /filter keeps the node HAMi would pick (or, with --scores, every
node the pod fits on, scored by POST /prioritize), POST /bind writes HAMi's
annotations and binds the pod.

Without --kubeconfig it runs a tour: an embedded apiserver, two GPU nodes, the
extender, a real kube-scheduler configured with it, and three pods.

With --kubeconfig it serves that cluster until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.cert == "") != (o.key == "") {
				return cli.Usage("--cert and --key go together")
			}
			ctx, cancel := o.timeout.Context(cmd.Context())
			defer cancel()
			return run(ctx, o)
		},
	}
	f := cmd.Flags()
	o.target.AddFlags(f)
	f.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen address (plain HTTP only on loopback)")
	f.StringVar(&o.cert, "cert", "", "TLS certificate file")
	f.StringVar(&o.key, "key", "", "TLS key file")
	f.BoolVar(&o.scores, "scores", false, "keep every feasible node and serve /prioritize (default: HAMi's single pick)")
	o.timeout.AddFlag(f)
	return cmd
}

func (o *options) config() extender.Config {
	cfg := extender.Config{Addr: o.addr, CertFile: o.cert, KeyFile: o.key, Logger: o.target.Logger()}
	if o.scores {
		cfg.Mode = extender.ModeScores
	}
	return cfg
}

func run(ctx context.Context, o *options) error {
	env, err := localenv.OpenTarget(ctx, &o.target, "etcd, kube-apiserver, kube-scheduler", localenv.Config{EtcdMembers: 1})
	if err != nil {
		return err
	}
	defer o.target.Close()
	cs, err := kubernetes.NewForConfig(o.target.RESTConfig)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	x, err := extender.New(cs, o.config())
	if err != nil {
		return cli.Usage("%v", err)
	}
	if o.target.Embedded() {
		return tour(ctx, env, cs, x, o)
	}
	step := cli.Step(o.progress, "reading Nodes and Pods through informers")
	addr, err := x.Start(ctx)
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	fmt.Fprintf(o.out, "serving on %s; kube-scheduler's KubeSchedulerConfiguration:\n\n%s", addr, schedulerConfig(urlPrefix(o, addr.String()), o.scores))
	<-ctx.Done()
	return nil
}

func urlPrefix(o *options, addr string) string {
	if o.cert != "" {
		return "https://" + addr
	}
	return "http://" + addr
}
