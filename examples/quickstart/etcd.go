package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// The member that moves, and where to: node-d is kept free of members.
const moveMember, moveTarget = "etcd-0", "node-d"

// etcd starts the tenant etcd that stores cluster A (three members on the
// simulated nodes, laid out as Cozystack's etcd operator lays them out),
// puts a steady write load on it, moves one member to the free node with
// package etcdrelocate, and checks that every acknowledged write is there.
func (w *world) etcd(ctx context.Context) (string, error) {
	a := w.clusters[0]
	ns, err := a.EtcdNamespace(ctx) // the tenant etcd the cluster's datastore points at
	if err != nil {
		return "", err
	}
	tn, err := w.startTenantEtcd(ctx, ns)
	if err != nil {
		return "", err
	}
	cli, err := tn.Client(ctx)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	from, _ := w.env.Cluster().Pod(ns, moveMember)

	req, err := a.EtcdRelocation(ctx, moveMember, moveTarget)
	if err != nil {
		return "", err
	}
	req.Options.SnapshotDir = w.env.Dir()
	r, err := a.Relocator(etcdrelocate.Config{Dial: tn.DialContext, Progress: w.showRelocation})
	if err != nil {
		return "", err
	}
	plan, err := r.Plan(ctx, req) // observe, preflight, plan: a printable dry run
	if err != nil {
		return "", err
	}
	showPlan(w, plan)

	load := etcdrelocatetest.StartLoad(cli, etcdrelocatetest.LoadConfig{Prefix: "/quickstart/load/"})
	res, err := r.Execute(ctx, plan)
	written := load.Stop()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w.out, "Verified after the move:\n%s", res.Verification)
	if err := load.Check(ctx, cli); err != nil { // every acknowledged write, read back
		return "", err
	}
	return fmt.Sprintf("%s moved %s → %s in %s under load: %d writes acknowledged (%d failed), none lost",
		moveMember, from.Node, moveTarget, res.Duration.Round(100*time.Millisecond), written.Acked, written.Failed), nil
}

// startTenantEtcd runs the tenant etcd as the etcd operator would, its
// members on node-a to node-c (node-d is cordoned meanwhile).
func (w *world) startTenantEtcd(ctx context.Context, ns string) (*etcdlayout.Tenant, error) {
	step := w.step("starting the simulated cluster: controller manager, scheduler, nodes node-a to node-d")
	c, err := w.env.StartCluster(ctx, localenv.ClusterConfig{Nodes: nodes})
	step.Done(err)
	if err != nil {
		return nil, err
	}
	step = w.step("starting tenant etcd in " + ns + ": three members on the simulated nodes")
	tn, err := func() (*etcdlayout.Tenant, error) {
		if err := c.Cordon(ctx, moveTarget); err != nil {
			return nil, err
		}
		tn, err := etcdlayout.Start(ctx, w.env, etcdlayout.Config{Namespace: ns})
		if err != nil {
			return nil, err
		}
		return tn, c.Uncordon(ctx, moveTarget)
	}()
	step.Done(err)
	return tn, err
}

func showPlan(w *world, p *etcdrelocate.Plan) {
	fmt.Fprintf(w.out, "Relocate %s of %s/%s from %s to %s (%d voters, layout %s); the plan:\n",
		moveMember, p.Namespace, p.Cluster, p.Member.Node, p.TargetNode, p.Voters, p.Layout)
	for i, s := range p.Steps {
		fmt.Fprintf(w.out, "  %2d. %-16s %s\n", i+1, s.Kind, s.Action)
	}
	fmt.Fprintln(w.out)
}

func (w *world) showRelocation(e etcdrelocate.Event) {
	if e.Phase == etcdrelocate.EventStarted {
		return
	}
	fmt.Fprintf(w.progress, "    step %2d/%d %-16s %-8s %s (%s)\n", e.Index+1, e.Total, e.Step, e.Phase, e.Message, e.Elapsed.Round(time.Millisecond))
}
