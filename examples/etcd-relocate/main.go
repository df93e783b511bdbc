// Command etcd-relocate moves one replica of a Cozystack tenant etcd to
// another node without losing quorum or data, with package etcdrelocate:
// it observes the cluster, prints the plan, executes it with a progress
// line per step and prints the verification.
//
//	go run ./examples/etcd-relocate            # embedded environment
//	go run ./examples/etcd-relocate --dry-run  # print the plan only
//	go run ./examples/etcd-relocate --kubeconfig mgmt.kubeconfig \
//	    --namespace tenant-acme --member etcd-1 --to-node worker-3
//
// Without --kubeconfig it starts tenantkit's embedded local environment with
// simulated nodes (a real kube-apiserver, controller manager and scheduler;
// pods run as real etcd processes), creates a 3-member tenant etcd in the
// aenix StatefulSet layout, and relocates a member to the free node while a
// writer keeps writing; afterwards it reads every acknowledged write back.
//
// With --kubeconfig it works on a real tenant namespace of a Cozystack
// management cluster. It reaches the members through a port-forward of the
// Kubernetes API (or directly with --direct, from inside the cluster
// network) and needs rights on pods, claims, volumes (it keeps the old
// member's volume with reclaim policy Retain until the new member is
// verified), nodes, ConfigMaps, Leases (coordination.k8s.io: one run at a
// time holds <cluster>-relocate), Secrets and, for Cozystack v1.6+, the
// EtcdCluster and EtcdMember objects.
// Run it with --dry-run first. If it stops (Ctrl-C, a lost connection), run
// the same command again: it resumes from the checkpoint in the cluster.
// While another run works on the same tenant etcd it refuses, naming the
// holder of the relocation Lease. If a relocation rolled back (the cluster
// is a replica short), --restore-to-node NODE adds the replica back on NODE.
//
// Node maintenance works on every tenant etcd at once:
//
//	etcd-relocate node worker-2 --kubeconfig mgmt.kubeconfig      # what losing worker-2 would do
//	etcd-relocate evacuate --node worker-2 --kubeconfig mgmt.kubeconfig --dry-run
//	etcd-relocate evacuate --node worker-2 --kubeconfig mgmt.kubeconfig --max-parallel 3
//	etcd-relocate spread --namespace tenant-acme --kubeconfig mgmt.kubeconfig
//
// node reports, for every tenant etcd, where its members run and the fault
// tolerance left without the node (exit 1 when a plain drain would cost a
// tenant its quorum, or a tenant cannot be observed). evacuate cordons the
// node and moves each tenant's member off it (tenants in parallel, each
// relocation under its own Lease, the evacuation under evacuate-<node> in
// kube-system); run it again to resume after an interruption. spread moves
// a tenant's co-located members apart. Without --kubeconfig, node and
// evacuate run on an embedded demo fleet of two tenant etcds.
//
// Exit codes: 0 done, 1 failed, refused or rolled back (evacuate: a move
// failed, was refused or did not run, or a dry run would refuse one; node:
// a drain is not safe), or a node, namespace or member that does not
// exist, 2 bad usage (checked before anything is contacted), 3 the
// environment or cluster could not be reached, 130 interrupted by the user.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/etcdrelocate"
)

type options struct {
	target       cli.Target
	out          io.Writer
	namespace    string
	cluster      string
	member       string
	toNode       string
	restoreNode  string
	dryRun       bool
	direct       bool
	snapshotDir  string
	skipSnapshot bool
	snapFirst    bool
	skipVersion  bool
	timeout      cli.Timeout
}

func main() { cli.Main(newCommand(&options{out: os.Stdout})) }

// newCommand returns the program's command line (main runs it; the tests
// run it in process through cli.Execute).
func newCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd-relocate",
		Short: "Move a tenant etcd replica to another node without losing quorum or data",
		Long: `etcd-relocate observes a tenant etcd (aenix StatefulSet layout or Cozystack
v1alpha2 EtcdMember layout), checks that moving the member is safe, prints the
plan (every step with its precondition and check), executes it with a progress
line per step, and prints the verification.

Without --kubeconfig it runs on the embedded local environment: simulated nodes
running a 3-member tenant etcd as real etcd processes, with a write load running
through the move.`,
		Example: `  etcd-relocate
  etcd-relocate --dry-run
  etcd-relocate --kubeconfig mgmt.kubeconfig --namespace tenant-acme --member etcd-1 --to-node worker-3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	o.target.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "tenant namespace holding the etcd (required with --kubeconfig)")
	f.StringVar(&o.cluster, "cluster", etcdrelocate.DefaultCluster, "name of the EtcdCluster or StatefulSet")
	f.StringVar(&o.member, "member", "", "member to move: pod, EtcdMember, member name or hex ID (embedded default: a follower)")
	f.StringVar(&o.toNode, "to-node", "", "node to move it to (embedded default: the free node)")
	f.StringVar(&o.restoreNode, "restore-to-node", "", "with --kubeconfig: add back, on this node, the replica a rolled-back relocation left missing")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and stop")
	f.BoolVar(&o.direct, "direct", false, "with --kubeconfig: dial members by their pod DNS names instead of a port-forward")
	f.StringVar(&o.snapshotDir, "snapshot-dir", "", "where to write the snapshot taken during the move (default: the temporary directory)")
	f.BoolVar(&o.skipSnapshot, "skip-snapshot", false, "do not take a snapshot (the old volume is still kept until the new member is verified)")
	f.BoolVar(&o.snapFirst, "snapshot-first", false, "take the snapshot before the member stops instead of while it moves (slower; keeps the snapshot's load out of the window without fault tolerance)")
	f.BoolVar(&o.skipVersion, "skip-version-hazard", false,
		"proceed on etcd 3.5.1-3.5.19 (Cozystack <= v1.5 runs 3.5.12), whose learner promotion is saved in the v2 store only (etcd #19557); upgrade to 3.5.26+ before 3.6")
	o.timeout.AddFlag(f)
	cmd.AddCommand(nodeCommands(o.out)...)
	return cmd
}

func (o *options) run(ctx context.Context) error {
	ctx, cancel := o.timeout.Context(ctx)
	defer cancel()
	if o.target.Embedded() {
		if o.namespace != "" || o.direct {
			return cli.Usage("--namespace and --direct need --kubeconfig")
		}
		if err := o.checkNames(); err != nil {
			return err
		}
		return o.runEmbedded(ctx)
	}
	if o.restoreNode != "" && (o.namespace == "" || o.member != "" || o.toNode != "") {
		return cli.Usage("--restore-to-node needs --namespace, and no --member or --to-node")
	}
	if o.restoreNode == "" && (o.namespace == "" || o.member == "" || o.toNode == "") {
		return cli.Usage("--kubeconfig needs --namespace, --member and --to-node")
	}
	if err := o.checkNames(); err != nil {
		return err
	}
	if err := o.target.Open(ctx, nil); err != nil {
		return err
	}
	dial := etcdrelocate.DialFunc(nil)
	if !o.direct {
		var err error
		if dial, err = etcdrelocate.PortForwardDialer(o.target.RESTConfig); err != nil {
			return cli.WithCode(cli.ExitUnavailable, err)
		}
	}
	r, err := o.relocator(dial)
	if err != nil {
		return err
	}
	if o.restoreNode != "" {
		return o.restore(ctx, r)
	}
	_, err = o.relocate(ctx, r, etcdrelocate.Request{Namespace: o.namespace, Cluster: o.cluster, Member: o.member, TargetNode: o.toNode})
	return err
}

// restore prints the plan that adds back the replica a rolled-back
// relocation left missing and, unless --dry-run, carries it out.
func (o *options) restore(ctx context.Context, r *etcdrelocate.Relocator) error {
	plan, err := r.PlanRestore(ctx, etcdrelocate.RestoreRequest{Namespace: o.namespace, Cluster: o.cluster, Node: o.restoreNode,
		Options: etcdrelocate.Options{SnapshotDir: o.snapshotDir, SkipSnapshot: o.skipSnapshot}})
	if err != nil {
		return err
	}
	fmt.Fprint(o.out, plan)
	if o.dryRun {
		fmt.Fprintln(o.out, "\nDry run: nothing changed.")
		return nil
	}
	res, err := r.Execute(ctx, plan)
	if err != nil {
		fmt.Fprintf(o.out, "\nStopped: %v\n", err)
		return err
	}
	fmt.Fprintf(o.out, "\nReplica restored on %s in %s.\nVerification:\n%s", o.restoreNode, res.Duration.Round(100*time.Millisecond), indent(res.Verification.String()))
	return nil
}

// relocator builds the Relocator for the target's cluster.
func (o *options) relocator(dial etcdrelocate.DialFunc) (*etcdrelocate.Relocator, error) {
	r, err := etcdrelocate.NewForConfig(o.target.RESTConfig, etcdrelocate.Config{
		Dial: dial, Logger: o.target.Logger(), Progress: newProgress(os.Stderr).event,
	})
	if err != nil {
		return nil, cli.WithCode(cli.ExitUnavailable, err)
	}
	return r, nil
}

// relocate observes, plans (printing the plan), and unless --dry-run
// executes and prints the verification.
func (o *options) relocate(ctx context.Context, r *etcdrelocate.Relocator, req etcdrelocate.Request) (*etcdrelocate.Result, error) {
	req.Options = etcdrelocate.Options{SnapshotDir: o.snapshotDir, SkipSnapshot: o.skipSnapshot, SnapshotFirst: o.snapFirst,
		SkipVersionHazard: o.skipVersion}
	s, err := r.Observe(ctx, req.Namespace, req.Cluster)
	if err != nil {
		return nil, cli.WithCode(cli.ExitUnavailable, fmt.Errorf("observe %s/%s: %w", req.Namespace, req.Cluster, err))
	}
	printMembers(o.out, s)
	plan, err := etcdrelocate.PlanFor(s, req)
	var pe *etcdrelocate.PreflightError
	if errors.As(err, &pe) {
		fmt.Fprintln(o.out, "\nRefused:")
		for _, f := range pe.Failures {
			fmt.Fprintf(o.out, "  %-13s %v\n", f.Check, f.Err)
		}
		return nil, o.refusal(pe, s, req)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(o.out)
	fmt.Fprint(o.out, plan)
	if o.dryRun {
		fmt.Fprintln(o.out, "\nDry run: nothing changed.")
		return nil, nil
	}
	fmt.Fprintln(o.out)
	res, err := r.Execute(ctx, plan)
	if err != nil {
		var (
			rb *etcdrelocate.RolledBackError
			le *etcdrelocate.LockedError
		)
		switch {
		case errors.As(err, &rb):
			fmt.Fprintf(o.out, "\nROLLED BACK: %v\nRestore the replica: %s\n", rb, withTarget(rb.Restore(), &o.target, o.direct))
		case errors.As(err, &le):
			fmt.Fprintf(o.out, "\nRefused: %v\n", le)
		default:
			fmt.Fprintf(o.out, "\nStopped: %v\nRun the same command again to resume from the checkpoint.\n", err)
		}
		return res, err
	}
	fmt.Fprintf(o.out, "\nRelocated in %s.\n", res.Duration.Round(100*time.Millisecond))
	if res.SnapshotPath != "" {
		fmt.Fprintf(o.out, "Snapshot taken during the move: %s (%d bytes)\n", res.SnapshotPath, res.SnapshotBytes)
	}
	if res.Verification != nil {
		fmt.Fprintf(o.out, "Verification:\n%s", indent(res.Verification.String()))
	}
	if after, err := r.Observe(ctx, req.Namespace, req.Cluster); err == nil {
		fmt.Fprintln(o.out)
		printMembers(o.out, after)
	}
	return res, nil
}

// checkNames refuses (ExitUsage) names that cannot name a namespace, an
// object or a node, before anything is contacted.
func (o *options) checkNames() error {
	for _, err := range []error{
		cli.CheckDNSLabel("--namespace", o.namespace),
		cli.CheckDNSSubdomain("--cluster", o.cluster),
		cli.CheckDNSSubdomain("--to-node", o.toNode),
		cli.CheckDNSSubdomain("--restore-to-node", o.restoreNode),
	} {
		if err != nil {
			return err
		}
	}
	if o.cluster == "" {
		return cli.Usage("--cluster must not be empty")
	}
	return nil
}

// refusal turns a preflight refusal (its checks printed above) into the
// program's error: a tenant etcd, member or target node that does not
// exist is a *cli.NotFoundError; any other refusal names the checks that
// failed. Both end with ExitFailure.
func (o *options) refusal(pe *etcdrelocate.PreflightError, s *etcdrelocate.State, req etcdrelocate.Request) error {
	ref := req.Namespace + "/" + req.Cluster
	switch {
	case errors.Is(pe, etcdrelocate.ErrUnknownLayout):
		return cli.NotFound("tenant etcd", req.Cluster, "namespace "+req.Namespace)
	case s.FindMember(req.Member) == nil:
		return cli.NotFound("member", req.Member, "tenant etcd "+ref)
	case req.TargetNode != "" && s.Node(req.TargetNode) == nil:
		return cli.NotFound("node", req.TargetNode, o.target.Where())
	}
	checks := make([]string, 0, len(pe.Failures))
	for _, f := range pe.Failures {
		if !slices.Contains(checks, f.Check) {
			checks = append(checks, f.Check)
		}
	}
	return cli.WithCode(cli.ExitFailure, fmt.Errorf("relocation of %s in %s refused by the preflight checks: %s (see above)",
		req.Member, ref, strings.Join(checks, ", ")))
}
