package main

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/cli"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

// TestKubeconfig_kind runs the example as a user runs it against their
// management cluster, with --kubeconfig, on a kind cluster (tenantkit's
// offline node image; one control plane that runs workloads too, and three
// workers): two tenant etcds in the StatefulSet layout, their pods on the
// pod network with pod IPs, members of both on one node. One relocation
// while a writer writes, then `evacuate` of a node holding both tenants'
// members; every acknowledged write reads back, each tenant ends with 3
// voters and equal HashKV, and its fault tolerance never went below 0.
// Opt-in with TENANTKIT_KIND=1 (make test runs it where Docker answers).
func TestKubeconfig_kind(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: creates a kind cluster")
	}
	if os.Getenv("TENANTKIT_KIND") == "" {
		t.Skip("set TENANTKIT_KIND=1 to run the example against a kind cluster")
	}
	env, err := localenv.Start(t.Context(), localenv.Config{Provider: localenv.Kind, KindCluster: localenv.KindConfig{Workers: 3, ControlPlaneWorkloads: true}})
	if errors.Is(err, localenv.ErrKindUnavailable) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)

	a := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "kind-a"})
	b := etcdlayout.StartT(t, env, etcdlayout.Config{Tenant: "kind-b"})
	onA, onB := memberNodes(t, ctx, kube, a.Namespace), memberNodes(t, ctx, kube, b.Namespace)
	t.Logf("%s: %v; %s: %v", a.Namespace, onA, b.Namespace, onB)
	shared := sharedNode(onA, onB)
	require.NotEmpty(t, shared, "6 members on 4 nodes: one node holds both tenants' members")

	// One relocation, with --kubeconfig, of tenant a's member on the
	// shared node to the node that holds none of a's.
	wa := startWriter(t, ctx, a)
	member := podOn(onA, shared)
	free := freeNode(t, ctx, kube, onA)
	out := runExample(t, ctx, "--kubeconfig", env.KubeconfigPath(), "--namespace", a.Namespace,
		"--member", member, "--to-node", free, "--timeout", "10m")
	require.Contains(t, out, "HashKV equal on every voter")
	wa.check(t, ctx)
	require.Equal(t, free, memberNodes(t, ctx, kube, a.Namespace)[member])

	// evacuate: both tenants have a member on the node; both move.
	onA = memberNodes(t, ctx, kube, a.Namespace)
	node := sharedNode(onA, onB)
	require.NotEmpty(t, node)
	wa, wb := startWriter(t, ctx, a), startWriter(t, ctx, b)
	out = runExample(t, ctx, "evacuate", "--node", node, "--max-parallel", "2", "--kubeconfig", env.KubeconfigPath(), "--timeout", "15m")
	require.Contains(t, out, "evacuation of "+node+": 2 moved, 0 failed, 0 refused, 0 not run")
	wa.check(t, ctx)
	wb.check(t, ctx)
	for _, tn := range []*etcdlayout.Tenant{a, b} {
		on := memberNodes(t, ctx, kube, tn.Namespace)
		require.NotContains(t, slices.Collect(maps.Values(on)), node, "%s still has a member on %s", tn.Namespace, node)
	}
	out = runExample(t, ctx, "node", node, "--kubeconfig", env.KubeconfigPath())
	t.Log(out)
}

// runExample runs the example's command line in process, as main does,
// and requires it to succeed.
func runExample(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := newCommand(&options{out: &out})
	cmd.SetArgs(args)
	begin := time.Now()
	code := cli.Execute(ctx, cmd)
	t.Logf("etcd-relocate %v → exit %d after %s\n%s", args, code, time.Since(begin).Round(time.Second), out.String())
	require.Equal(t, cli.ExitOK, code)
	return out.String()
}

// memberNodes maps each etcd pod of ns to its node.
func memberNodes(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=etcd"})
	require.NoError(t, err)
	on := map[string]string{}
	for _, p := range pods.Items {
		on[p.Name] = p.Spec.NodeName
	}
	return on
}

// sharedNode returns a node holding a member of both (sorted; "" if none).
func sharedNode(a, b map[string]string) string {
	var both []string
	for _, n := range a {
		if slices.Contains(slices.Collect(maps.Values(b)), n) {
			both = append(both, n)
		}
	}
	slices.Sort(both)
	if len(both) == 0 {
		return ""
	}
	return both[0]
}

// podOn returns the pod of on that runs on node.
func podOn(on map[string]string, node string) string {
	for p, n := range on {
		if n == node {
			return p
		}
	}
	return ""
}

// freeNode returns a node that holds none of the tenant's members.
func freeNode(t *testing.T, ctx context.Context, kube kubernetes.Interface, on map[string]string) string {
	t.Helper()
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, n := range nodes.Items {
		if !slices.Contains(slices.Collect(maps.Values(on)), n.Name) {
			return n.Name
		}
	}
	t.Fatal("no free node")
	return ""
}

// writer is a write load and a fault-tolerance monitor on a tenant etcd,
// through the API's port-forward (the host has no route to pod IPs).
type writer struct {
	tn   *etcdlayout.Tenant
	cli  *clientv3.Client
	load *etcdrelocatetest.Load
	mon  *etcdrelocatetest.Monitor
}

func startWriter(t *testing.T, ctx context.Context, tn *etcdlayout.Tenant) *writer {
	t.Helper()
	cli, err := tn.Client(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	mcli, err := tn.Client(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { mcli.Close() })
	return &writer{tn: tn, cli: cli,
		load: etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/kind/"}),
		mon:  etcdrelocatetest.StartMonitorT(t, mcli, etcdrelocatetest.MonitorConfig{})}
}

// check stops the load and the monitor: every acknowledged write reads
// back, quorum was never lost, and the tenant has 3 voters with equal
// HashKV.
func (w *writer) check(t *testing.T, ctx context.Context) {
	t.Helper()
	load, mon := w.load.Stop(), w.mon.Stop()
	w.load.CheckT(t, ctx, w.cli)
	t.Logf("%s: %d writes acknowledged (all read back), %d failed; fault tolerance: lowest sample %d, %s at ≤0, %s lost",
		w.tn.Namespace, load.Acked, load.Failed, mon.MinFaultTolerance, mon.AtZero.Round(100*time.Millisecond), mon.AtLoss)
	require.Positive(t, load.Acked)
	require.Zero(t, mon.AtLoss, "%s lost quorum", w.tn.Namespace)
	require.NoError(t, etcdrelocatetest.Converged(ctx, w.cli))
}
