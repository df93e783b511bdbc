package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cozystack/tenantkit/etcdrelocate"
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

	load := startLoad(cli, "/quickstart/load/")
	res, err := r.Execute(ctx, plan)
	acked, failed := load.stop()
	if err != nil {
		return "", err
	}
	lost, err := load.lost(ctx, cli)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w.out, "Verified after the move:\n%s", res.Verification)
	if lost > 0 {
		return "", fmt.Errorf("%d of %d acknowledged writes lost", lost, acked)
	}
	return fmt.Sprintf("%s moved %s → %s in %s under load: %d writes acknowledged (%d failed), none lost",
		moveMember, from.Node, moveTarget, res.Duration.Round(100*time.Millisecond), acked, failed), nil
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

// load is a steady write load: one writer putting <prefix><seq>, recording
// which writes etcd acknowledged.
type load struct {
	prefix string
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	acked  []int
	failed int
}

func startLoad(cli *clientv3.Client, prefix string) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{prefix: prefix, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for seq := 0; ctx.Err() == nil; seq++ {
			wctx, done := context.WithTimeout(ctx, 2*time.Second)
			_, err := cli.Put(wctx, l.key(seq), fmt.Sprint(seq))
			done()
			l.mu.Lock()
			if err == nil {
				l.acked = append(l.acked, seq)
			} else if ctx.Err() == nil {
				l.failed++
			}
			l.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return l
}

func (l *load) key(seq int) string { return fmt.Sprintf("%s%09d", l.prefix, seq) }

// stop ends the load and returns how many writes were acknowledged and
// how many failed.
func (l *load) stop() (acked, failed int) {
	l.cancel()
	<-l.done
	return len(l.acked), l.failed
}

// lost counts acknowledged writes that a linearizable read does not find.
func (l *load) lost(ctx context.Context, cli *clientv3.Client) (int, error) {
	resp, err := cli.Get(ctx, l.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("read back the load: %w", err)
	}
	got := make(map[string]string, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		got[string(kv.Key)] = string(kv.Value)
	}
	lost := 0
	for _, seq := range l.acked {
		if got[l.key(seq)] != fmt.Sprint(seq) {
			lost++
		}
	}
	return lost, nil
}
