package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// simulatedCluster is what the embedded environment of a simulated cluster
// starts, for the progress line.
const simulatedCluster = "etcd, kube-apiserver, controller manager, scheduler, simulated nodes"

// nodes of the embedded cluster: three hold the members, one stays free.
var nodes = []localenv.NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}, {Name: "node-d"}}

// runEmbedded starts the embedded environment with simulated nodes, creates
// a tenant etcd, and relocates a member under a write load.
func (o *options) runEmbedded(ctx context.Context) error {
	env, err := localenv.OpenTarget(ctx, &o.target, simulatedCluster, localenv.Config{Cluster: &localenv.ClusterConfig{Nodes: nodes}})
	if err != nil {
		return err
	}
	defer o.target.Close()
	step := cli.Step(os.Stderr, "creating tenant etcd tenant-demo (StatefulSet layout, 3 members)")
	// Keep node-c free while the members are placed, as the target.
	err = env.Cluster().Cordon(ctx, "node-c")
	var tn *etcdlayout.Tenant
	if err == nil {
		tn, err = etcdlayout.Start(ctx, env, etcdlayout.Config{Tenant: "demo"})
	}
	if err == nil {
		err = env.Cluster().Uncordon(ctx, "node-c")
	}
	step.Done(err)
	if err != nil {
		return cli.WithCode(cli.ExitUnavailable, err)
	}
	r, err := o.relocator(tn.DialContext)
	if err != nil {
		return err
	}
	if o.snapshotDir == "" {
		o.snapshotDir = env.Dir() // removed with the environment
	}
	req := etcdrelocate.Request{Namespace: tn.Namespace, Cluster: o.cluster, Member: o.member, TargetNode: o.toNode}
	if req.Member == "" || req.TargetNode == "" {
		if err := o.defaults(ctx, r, &req); err != nil {
			return err
		}
	}
	etcdc, err := tn.Client(ctx)
	if err != nil {
		return err
	}
	defer etcdc.Close()
	load := etcdrelocatetest.StartLoad(etcdc, etcdrelocatetest.LoadConfig{Prefix: "/example/"})
	res, err := o.relocate(ctx, r, req)
	rep := load.Stop()
	if err != nil || res == nil {
		return err
	}
	if err := load.Check(ctx, etcdc); err != nil { // every acknowledged write, read back
		return err
	}
	fmt.Fprintf(o.out, "\nWrite load through the move: %d writes acknowledged, all read back; %d failed; longest gap %s.\n",
		rep.Acked, rep.Failed, rep.LongestGap.Round(time.Millisecond))
	return nil
}

// defaults picks a follower and the free node.
func (o *options) defaults(ctx context.Context, r *etcdrelocate.Relocator, req *etcdrelocate.Request) error {
	s, err := r.Observe(ctx, req.Namespace, req.Cluster)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, m := range s.Members {
		used[m.Node()] = true
		if req.Member == "" && m.ID != s.Leader() && m.Pod != nil {
			req.Member = m.Pod.Name
		}
	}
	for _, n := range s.Nodes {
		if req.TargetNode == "" && !used[n.Name] {
			req.TargetNode = n.Name
		}
	}
	return nil
}
