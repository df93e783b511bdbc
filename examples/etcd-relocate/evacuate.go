package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// nodeOptions are the flags of the node-level commands: node, evacuate
// and spread.
type nodeOptions struct {
	target      cli.Target
	out         io.Writer
	node        string
	namespace   string
	cluster     string
	dryRun      bool
	direct      bool
	jsonOut     bool
	maxParallel int
	skipCordon  bool
	stopOnFail  bool
	timeout     cli.Timeout
}

// nodeCommands returns the node-level commands.
func nodeCommands(out io.Writer) []*cobra.Command {
	report := &nodeOptions{out: out, maxParallel: 1}
	node := &cobra.Command{
		Use:   "node NODE",
		Short: "Report what losing NODE now would do to every tenant etcd (exit 1 if a plain drain is not safe)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			report.node = args[0]
			if err := cli.CheckDNSSubdomain("NODE", report.node); err != nil {
				return err
			}
			return report.run(cmd.Context(), report.report)
		},
	}
	report.flags(node, false)
	evac := &nodeOptions{out: out}
	evacuate := &cobra.Command{
		Use:   "evacuate --node NODE",
		Short: "Move every tenant etcd member off NODE, tenants in parallel, each relocation safe and resumable",
		Example: `  etcd-relocate evacuate --node node-a              # embedded environment
  etcd-relocate evacuate --kubeconfig mgmt.kubeconfig --node worker-2 --dry-run
  etcd-relocate evacuate --kubeconfig mgmt.kubeconfig --node worker-2 --max-parallel 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if evac.node == "" {
				return cli.Usage("evacuate needs --node")
			}
			if err := cli.CheckDNSSubdomain("--node", evac.node); err != nil {
				return err
			}
			return evac.run(cmd.Context(), evac.evacuate)
		},
	}
	evac.flags(evacuate, true)
	evacuate.Flags().StringVar(&evac.node, "node", "", "node to empty of tenant etcd members")
	spr := &nodeOptions{out: out}
	spread := &cobra.Command{
		Use:   "spread --kubeconfig K --namespace NS",
		Short: "Move co-located members of one tenant etcd apart (two members on one node lose quorum together)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if spr.target.Embedded() || spr.namespace == "" {
				return cli.Usage("spread needs --kubeconfig and --namespace")
			}
			if err := errors.Join(cli.CheckDNSLabel("--namespace", spr.namespace), cli.CheckDNSSubdomain("--cluster", spr.cluster)); err != nil {
				return err
			}
			return spr.run(cmd.Context(), spr.spread)
		},
	}
	spr.flags(spread, true)
	spread.Flags().StringVarP(&spr.namespace, "namespace", "n", "", "tenant namespace holding the etcd")
	spread.Flags().StringVar(&spr.cluster, "cluster", etcdrelocate.DefaultCluster, "name of the EtcdCluster or StatefulSet")
	return []*cobra.Command{node, evacuate, spread}
}

func (o *nodeOptions) flags(cmd *cobra.Command, moves bool) {
	o.target.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.BoolVar(&o.direct, "direct", false, "with --kubeconfig: dial members by their pod DNS names instead of a port-forward")
	f.BoolVar(&o.jsonOut, "json", false, "print JSON instead of text")
	o.timeout.AddFlag(f)
	if moves {
		f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and stop")
		f.IntVar(&o.maxParallel, "max-parallel", 1, "relocations running at once (never two of one tenant etcd)")
		f.BoolVar(&o.skipCordon, "skip-cordon", false, "leave the node schedulable (by default it is cordoned first and stays cordoned)")
		f.BoolVar(&o.stopOnFail, "stop-on-failure", false, "start no further relocation once one failed")
	}
}

// run opens the target (the embedded demo fleet without --kubeconfig),
// builds the Relocator and runs fn.
func (o *nodeOptions) run(ctx context.Context, fn func(context.Context, *etcdrelocate.Relocator) error) error {
	ctx, cancel := o.timeout.Context(ctx)
	defer cancel()
	if o.maxParallel < 1 {
		return cli.Usage("--max-parallel must be at least 1")
	}
	var dial etcdrelocate.DialFunc
	if o.target.Embedded() {
		if o.direct {
			return cli.Usage("--direct needs --kubeconfig")
		}
		env, err := o.demoFleet(ctx)
		if err != nil {
			return err
		}
		defer o.target.Close()
		dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return env.Cluster().DialContext(ctx, "tcp", addr)
		}
	} else {
		if err := o.target.Open(ctx, nil); err != nil {
			return err
		}
		if !o.direct {
			var err error
			if dial, err = etcdrelocate.PortForwardDialer(o.target.RESTConfig); err != nil {
				return cli.WithCode(cli.ExitUnavailable, err)
			}
		}
	}
	r, err := etcdrelocate.NewForConfig(o.target.RESTConfig, etcdrelocate.Config{Dial: dial, Logger: o.target.Logger()})
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	return fn(ctx, r)
}

// demoFleet starts the embedded environment with five nodes and two
// tenant etcds, each with a member on node-a.
func (o *nodeOptions) demoFleet(ctx context.Context) (*localenv.Env, error) {
	var ns []localenv.NodeConfig
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d", "node-e"} {
		ns = append(ns, localenv.NodeConfig{Name: n})
	}
	env, err := localenv.OpenTarget(ctx, &o.target, simulatedCluster, localenv.Config{Cluster: &localenv.ClusterConfig{Nodes: ns}})
	if err != nil {
		return nil, err
	}
	for i, on := range [][]string{{"node-a", "node-b", "node-c"}, {"node-a", "node-d", "node-e"}} {
		step := cli.Step(os.Stderr, fmt.Sprintf("creating tenant etcd tenant-demo%d on %s", i+1, strings.Join(on, ", ")))
		err := placeTenant(ctx, env, fmt.Sprintf("demo%d", i+1), on)
		step.Done(err)
		if err != nil {
			o.target.Close()
			return nil, cli.WithCode(cli.ExitUnavailable, err)
		}
	}
	if o.node == "" {
		o.node = "node-a"
	}
	return env, nil
}

// placeTenant starts a tenant etcd on exactly the nodes on (the others
// cordoned meanwhile).
func placeTenant(ctx context.Context, env *localenv.Env, name string, on []string) error {
	var cordoned []string
	for _, n := range env.Cluster().Nodes() {
		if !slices.Contains(on, n) {
			if err := env.Cluster().Cordon(ctx, n); err != nil {
				return err
			}
			cordoned = append(cordoned, n)
		}
	}
	_, err := etcdlayout.Start(ctx, env, etcdlayout.Config{Tenant: name, StrictSpread: true})
	for _, n := range cordoned {
		err = errors.Join(err, env.Cluster().Uncordon(ctx, n))
	}
	return err
}

// report prints what losing the node would do; exit 1 when a plain drain
// is not safe.
func (o *nodeOptions) report(ctx context.Context, r *etcdrelocate.Relocator) error {
	f, err := o.fleet(ctx, r)
	if err != nil {
		return err
	}
	rep := etcdrelocate.NodeReportFor(f, o.node)
	if err := o.print(rep); err != nil {
		return err
	}
	if !rep.DrainSafe {
		return cli.WithCode(cli.ExitFailure, fmt.Errorf("a plain drain of %s is not safe for the tenant etcds", o.node))
	}
	return nil
}

func (o *nodeOptions) evacuationOptions() etcdrelocate.EvacuationOptions {
	return etcdrelocate.EvacuationOptions{MaxParallel: o.maxParallel, SkipCordon: o.skipCordon, StopOnFailure: o.stopOnFail}
}

// evacuate plans the evacuation, prints it and, unless --dry-run,
// carries it out with a progress line per move and step.
func (o *nodeOptions) evacuate(ctx context.Context, r *etcdrelocate.Relocator) error {
	f, err := o.fleet(ctx, r)
	if err != nil {
		return err
	}
	p, err := etcdrelocate.PlanEvacuationFor(f, o.node, o.evacuationOptions())
	if err != nil {
		return err
	}
	return o.execute(ctx, r, p)
}

// fleet observes every tenant etcd and checks that the node exists: a
// node the cluster does not have is a *cli.NotFoundError (exit 1), not a
// report that losing it is harmless.
func (o *nodeOptions) fleet(ctx context.Context, r *etcdrelocate.Relocator) (*etcdrelocate.Fleet, error) {
	f, err := r.ObserveFleet(ctx)
	if err != nil {
		return nil, cli.WithCode(cli.ExitUnavailable, err)
	}
	if !slices.ContainsFunc(f.Nodes, func(n etcdrelocate.Node) bool { return n.Name == o.node }) {
		return nil, cli.NotFound("node", o.node, o.target.Where())
	}
	return f, nil
}

// spread plans moving a tenant etcd's co-located members apart and, unless
// --dry-run, carries it out.
func (o *nodeOptions) spread(ctx context.Context, r *etcdrelocate.Relocator) error {
	f, err := r.ObserveFleet(ctx)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	p, err := etcdrelocate.PlanSpreadFor(f, etcdrelocate.ClusterRef{Namespace: o.namespace, Cluster: o.cluster}, o.evacuationOptions())
	if err != nil {
		return err
	}
	return o.execute(ctx, r, p)
}

func (o *nodeOptions) execute(ctx context.Context, r *etcdrelocate.Relocator, p *etcdrelocate.EvacuationPlan) error {
	if err := o.print(p); err != nil {
		return err
	}
	if o.dryRun {
		if len(p.Refused) > 0 { // the run would end with exit 1 too
			return cli.WithCode(cli.ExitFailure, fmt.Errorf("dry run: the run would refuse %d (see above) and fail", len(p.Refused)))
		}
		return nil
	}
	rep, err := r.Evacuate(ctx, p, progressLine(os.Stderr))
	if rep != nil {
		for i := range rep.Failed {
			rep.Failed[i].Resume = withTarget(rep.Failed[i].Resume, &o.target, o.direct)
		}
		if perr := o.print(rep); perr != nil {
			return perr
		}
	}
	var le *etcdrelocate.LockedError
	switch {
	case errors.As(err, &le):
		return fmt.Errorf("refused: %w", err)
	case err != nil:
		return err
	case len(rep.Failed) > 0 || len(rep.Refused) > 0 || len(rep.NotRun) > 0:
		return fmt.Errorf("%d failed, %d refused, %d not run: run the same command again to resume", len(rep.Failed), len(rep.Refused), len(rep.NotRun))
	}
	return nil
}

// print writes v as text or, with --json, as JSON.
func (o *nodeOptions) print(v fmt.Stringer) error {
	if o.jsonOut {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	fmt.Fprint(o.out, v)
	return nil
}

// progressLine prints a line per move started or ended and per step ended
// (moves run at once, so each line names its tenant and member).
func progressLine(w io.Writer) func(etcdrelocate.EvacuationEvent) {
	return func(e etcdrelocate.EvacuationEvent) {
		who := fmt.Sprintf("%s %s", e.Move.ClusterRef, e.Move.Member)
		switch {
		case e.Step == nil && e.Err != nil:
			fmt.Fprintf(w, "%s: %s → %s %s: %v\n", who, e.Move.From, e.Move.To, e.Phase, e.Err)
		case e.Step == nil:
			fmt.Fprintf(w, "%s: %s → %s %s\n", who, e.Move.From, e.Move.To, e.Phase)
		case e.Step.Phase != etcdrelocate.EventStarted:
			fmt.Fprintf(w, "%s: %2d/%d %-16s %s %s\n", who, e.Step.Index+1, e.Step.Total, e.Step.Step, e.Step.Phase, e.Step.Message)
		}
	}
}
