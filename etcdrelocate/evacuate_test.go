package etcdrelocate_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cozystack/tenantkit/etcdrelocate"
	"github.com/cozystack/tenantkit/etcdrelocate/etcdrelocatetest"
	"github.com/cozystack/tenantkit/localenv"
	"github.com/cozystack/tenantkit/localenv/etcdlayout"
)

const evacuateChildEnv = "TENANTKIT_EVACUATE_CHILD"

// evacuationOptions are the options of every evacuation in these tests.
func evacuationOptions(t testing.TB) etcdrelocate.EvacuationOptions {
	return etcdrelocate.EvacuationOptions{MaxParallel: 3, Relocation: etcdrelocate.Options{SnapshotDir: t.TempDir()}}
}

// apiDialer reaches a member from another process: the pod named by the
// host of <pod>.<service>.<ns>.svc, its pod IP read from the API, mapped to
// the loopback address the simulated node serves it on (10.X.Y.Z →
// 127.X.Y.Z).
func apiDialer(kube kubernetes.Interface) etcdrelocate.DialFunc {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		f := strings.Split(host, ".")
		if len(f) < 3 {
			return nil, fmt.Errorf("not a pod name: %s", host)
		}
		pod, err := kube.CoreV1().Pods(f[2]).Get(ctx, f[0], metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		ip, err := netip.ParseAddr(pod.Status.PodIP)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: no IP yet", f[2], f[0])
		}
		b := ip.As4()
		b[0] = 127
		var d net.Dialer
		return d.DialContext(ctx, "tcp", net.JoinHostPort(netip.AddrFrom4(b).String(), port))
	}
}

// TestEvacuate_child evacuates a node of the environment whose kubeconfig
// $TENANTKIT_EVACUATE_CHILD names, printing each step; it runs only as the
// child of TestEvacuateNode, which kills it with SIGKILL midway.
func TestEvacuate_child(t *testing.T) {
	kubeconfig := os.Getenv(evacuateChildEnv)
	if kubeconfig == "" {
		t.Skip("runs as the child of TestEvacuateNode")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	rc.QPS, rc.Burst = 50, 100
	kube, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	r, err := etcdrelocate.NewForConfig(rc, etcdrelocate.Config{Kube: kube, Dial: apiDialer(kube), Identity: "evacuate-child"})
	require.NoError(t, err)
	p, err := r.PlanEvacuation(t.Context(), "node-a", evacuationOptions(t))
	require.NoError(t, err)
	fmt.Print(p)
	_, err = r.Evacuate(t.Context(), p, func(e etcdrelocate.EvacuationEvent) {
		if e.Step != nil {
			fmt.Printf("STEP %s %s %s\n", e.Move.Namespace, e.Step.Step, e.Step.Phase)
		}
	})
	require.NoError(t, err)
	fmt.Println("DONE")
}

// evacuationTenant is a tenant etcd of TestEvacuateNode with a writer and
// a fault-tolerance monitor running through the evacuation.
type evacuationTenant struct {
	tn   *etcdlayout.Tenant
	cli  *clientv3.Client
	load *etcdrelocatetest.Load
	mon  *etcdrelocatetest.Monitor
}

// placeTenant starts the tenant etcd cfg describes with its members on
// exactly the given nodes (all others cordoned meanwhile; with three nodes
// the spread is strict, with fewer two members share one).
func placeTenant(t testing.TB, env *localenv.Env, cfg etcdlayout.Config, nodes ...string) *etcdlayout.Tenant {
	t.Helper()
	ctx := context.Background()
	on := map[string]bool{}
	for _, n := range nodes {
		on[n] = true
	}
	var cordoned []string
	for _, n := range env.Cluster().Nodes() {
		if !on[n] {
			require.NoError(t, env.Cluster().Cordon(ctx, n))
			cordoned = append(cordoned, n)
		}
	}
	cfg.StrictSpread = len(on) == 3
	tn := etcdlayout.StartT(t, env, cfg)
	for _, n := range cordoned {
		require.NoError(t, env.Cluster().Uncordon(ctx, n))
	}
	return tn
}

// TestEvacuateNode empties node-a of four tenants' etcd members (each has
// one there; a writer and a monitor run on each) while a fifth tenant,
// degraded by an alarm, is refused and left as it is: the first evacuation
// runs in a child process that is killed with SIGKILL midway; a second
// evacuation started meanwhile is refused, naming the child's Lease; the
// same call then resumes and finishes (the dead child's Leases are taken
// over as soon as it is proven gone). Every acknowledged write reads back,
// every tenant ends with 3 voters, equal HashKV and none on node-a, and no
// tenant's fault tolerance went below 0. A sixth tenant with two members on
// one node is spread apart.
func TestEvacuateNode(t *testing.T) {
	var nodes []localenv.NodeConfig
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d", "node-e", "node-f", "node-g"} {
		nodes = append(nodes, localenv.NodeConfig{Name: n})
	}
	env := localenv.StartT(t, localenv.Config{Cluster: &localenv.ClusterConfig{Nodes: nodes, VolumesPerNode: 8}})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var tenants []*evacuationTenant
	for i, on := range [][]string{{"node-a", "node-b", "node-c"}, {"node-a", "node-d", "node-e"}, {"node-a", "node-b", "node-f"}, {"node-a", "node-c", "node-d"}} {
		tn := placeTenant(t, env, etcdlayout.Config{Tenant: fmt.Sprintf("ev%d", i)}, on...)
		cli, err := tn.Client(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { cli.Close() })
		mcli, err := tn.Client(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { mcli.Close() })
		tenants = append(tenants, &evacuationTenant{tn: tn, cli: cli,
			load: etcdrelocatetest.StartLoadT(t, cli, etcdrelocatetest.LoadConfig{Prefix: "/evacuate/"}),
			mon:  etcdrelocatetest.StartMonitorT(t, mcli, etcdrelocatetest.MonitorConfig{})})
	}
	degraded := placeTenant(t, env, etcdlayout.Config{Tenant: "evdeg"}, "node-a", "node-e", "node-f")
	dcli, err := degraded.Client(ctx)
	require.NoError(t, err)
	defer dcli.Close()
	etcdrelocatetest.RaiseAlarmT(t, ctx, dcli, 0, pb.AlarmType_NOSPACE)
	coLocated := placeTenant(t, env, etcdlayout.Config{Tenant: "evcol"}, "node-e", "node-g")

	dyn, err := dynamic.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	kube, err := kubernetes.NewForConfig(env.RESTConfig())
	require.NoError(t, err)
	r, err := etcdrelocate.New(etcdrelocate.Config{Kube: kube, Dynamic: dyn, Dial: func(ctx context.Context, addr string) (net.Conn, error) {
		return env.Cluster().DialContext(ctx, "tcp", addr)
	}, Logger: testLogger(t)})
	require.NoError(t, err)

	// The report before: node-a's loss leaves every tenant at fault
	// tolerance 0; the co-located tenant is flagged.
	rep, err := r.ReportNode(ctx, "node-a")
	require.NoError(t, err)
	t.Logf("\n%s", rep)
	require.True(t, rep.DrainSafe)
	require.Len(t, rep.Clusters, 6)
	for _, c := range rep.Clusters {
		if c.Namespace == coLocated.Namespace {
			require.Len(t, c.CoLocated, 1)
			continue
		}
		require.Len(t, c.OnNode, 1, c.Namespace)
		require.Equal(t, 0, c.After, c.Namespace)
	}

	killed := evacuateInChild(t, env, r)
	t.Logf("child killed after %s", killed)

	// The same call again: it resumes what the dead child left.
	t0 := time.Now()
	plan, err := r.PlanEvacuation(ctx, "node-a", evacuationOptions(t))
	require.NoError(t, err)
	t.Logf("\n%s", plan)
	require.Len(t, plan.Refused, 1)
	require.Equal(t, degraded.Namespace, plan.Refused[0].Namespace)
	require.Contains(t, strings.Join(plan.Refused[0].Reasons, "; "), "alarm")
	done, err := r.Evacuate(ctx, plan, func(e etcdrelocate.EvacuationEvent) {
		switch {
		case e.Step == nil:
			t.Logf("%s %s %s → %s: %s %v", e.Move.Namespace, e.Move.Member, e.Move.From, e.Move.To, e.Phase, e.Err)
		case e.Step.Phase != etcdrelocate.EventStarted:
			t.Logf("%s step %s %s after %s since the kill", e.Move.Namespace, e.Step.Step, e.Step.Phase, time.Since(t0).Round(100*time.Millisecond))
		}
	})
	require.NoError(t, err)
	t.Logf("resumed in %s\n%s", time.Since(t0).Round(time.Second), done)
	require.Empty(t, done.Failed)
	require.Empty(t, done.NotRun)
	require.Len(t, done.Refused, 1)

	for _, et := range tenants {
		load, mon := et.load.Stop(), et.mon.Stop()
		et.load.CheckT(t, ctx, et.cli)
		requireSettledOff(t, r, et.tn.Namespace, "node-a")
		t.Logf("%s: %d writes acknowledged (all read back), %d failed, longest gap %s; fault tolerance: lowest sample %d, %s at ≤0, %s lost (two samples in a row)",
			et.tn.Namespace, load.Acked, load.Failed, load.LongestGap.Round(time.Millisecond), mon.MinFaultTolerance,
			mon.AtZero.Round(100*time.Millisecond), mon.AtLoss)
		// The monitor counts a loss of quorum once two samples in a row
		// show it (one starved sample is not one): never below 0.
		require.Zero(t, mon.AtLoss, "%s lost quorum", et.tn.Namespace)
		require.LessOrEqual(t, mon.MaxVoters, 3, "%s: more than 3 voters at once", et.tn.Namespace)
	}
	node, err := kube.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	require.NoError(t, err)
	require.True(t, node.Spec.Unschedulable, "the evacuated node stays cordoned for its maintenance")
	s, err := r.Observe(ctx, degraded.Namespace, "etcd")
	require.NoError(t, err)
	require.Equal(t, "node-a", s.FindMember(plan.Refused[0].Member).Node(), "the refused tenant is left as it was")

	// Spread: the co-located tenant's members end on three nodes.
	f, err := r.ObserveFleet(ctx)
	require.NoError(t, err)
	sp, err := etcdrelocate.PlanSpreadFor(f, etcdrelocate.ClusterRef{Namespace: coLocated.Namespace, Cluster: "etcd"}, evacuationOptions(t))
	require.NoError(t, err)
	require.Len(t, sp.Moves, 1, "%s", sp)
	spread, err := r.Evacuate(ctx, sp, nil)
	require.NoError(t, err)
	require.Len(t, spread.Moved, 1, "%s", spread)
	im := etcdrelocate.NodeReportFor(mustFleet(t, r), "node-e")
	for _, c := range im.Clusters {
		require.Empty(t, c.CoLocated, "%s still has co-located members", c.ClusterRef)
	}
}

// evacuateInChild starts the evacuation of node-a in a child process,
// checks that a second evacuation of node-a is refused naming the child
// while it runs, and kills the child with SIGKILL once a relocation has
// added its learner (the member is out: fault tolerance 0). It returns how
// long the child ran.
func evacuateInChild(t *testing.T, env *localenv.Env, r *etcdrelocate.Relocator) time.Duration {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestEvacuate_child$", "-test.timeout=10m", "-test.v")
	child.Env = append(os.Environ(), evacuateChildEnv+"="+env.KubeconfigPath())
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	child.Stderr = child.Stdout
	start := time.Now()
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	started, midway := make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		var once, twice bool
		for sc.Scan() {
			line := sc.Text()
			t.Logf("child: %s", line)
			if strings.HasPrefix(line, "STEP ") && !once {
				once = true
				close(started)
			}
			if strings.HasSuffix(line, " add-learner done") && !twice {
				twice = true
				close(midway)
			}
		}
	}()
	wait := func(ch chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(5 * time.Minute):
			t.Fatalf("the child did not reach %s", what)
		}
	}
	wait(started, "its first step")
	p, err := r.PlanEvacuation(context.Background(), "node-a", evacuationOptions(t))
	require.NoError(t, err)
	_, err = r.Evacuate(context.Background(), p, nil)
	var le *etcdrelocate.LockedError
	require.ErrorAs(t, err, &le, "a second evacuation of node-a while the child runs")
	require.Contains(t, le.Holder, fmt.Sprintf("evacuate-child/%d/", child.Process.Pid))
	require.Equal(t, "evacuate-node-a", le.Lease)
	t.Logf("second evacuation refused: %v", err)
	wait(midway, "a relocation's add-learner")
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()
	return time.Since(start)
}

// requireSettledOff waits until the tenant etcd in ns has 3 healthy
// voters, no learner, equal HashKV and no member on node.
func requireSettledOff(t *testing.T, r *etcdrelocate.Relocator, ns, node string) {
	t.Helper()
	settled := func() string {
		s, err := r.Observe(context.Background(), ns, "etcd")
		if err != nil {
			return err.Error()
		}
		hashes := map[uint32]bool{}
		for _, m := range s.Members {
			if m.Node() == node || !m.Healthy() || !m.HashOK {
				return fmt.Sprintf("member %s on %s healthy %t hash %t", m.Label(), m.Node(), m.Healthy(), m.HashOK)
			}
			hashes[m.Hash] = true
		}
		if len(s.Voters()) != 3 || len(s.Learners()) != 0 || len(hashes) != 1 || s.Checkpoint != nil {
			return fmt.Sprintf("%d voters, %d learners, %d hashes, checkpoint %v", len(s.Voters()), len(s.Learners()), len(hashes), s.Checkpoint != nil)
		}
		return ""
	}
	var last string
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if last = settled(); last == "" {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s did not settle off %s: %s", ns, node, last)
	}
}

func mustFleet(t *testing.T, r *etcdrelocate.Relocator) *etcdrelocate.Fleet {
	t.Helper()
	f, err := r.ObserveFleet(context.Background())
	require.NoError(t, err)
	return f
}
