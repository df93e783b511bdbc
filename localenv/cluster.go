package localenv

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/localenv/internal/clusterdns"
	"github.com/cozystack/tenantkit/localenv/internal/localvolume"
	"github.com/cozystack/tenantkit/localenv/internal/loopnet"
)

// ClusterConfig turns the environment into a small simulated cluster:
// kube-controller-manager, kube-scheduler, nodes played by a node agent or
// by real kubelets (NodeKind), node-local storage and cluster DNS. Set
// Config.Cluster to use it; the zero value gives three nodes node-a,
// node-b and node-c.
type ClusterConfig struct {
	// Nodes are the simulated nodes. Default: node-a, node-b, node-c.
	Nodes []NodeConfig
	// NodeKind picks what plays the nodes: NodeAgent (tenantkit's
	// stand-in for the kubelet) or NodeKubelet (real kubelets). Default:
	// the value of $TENANTKIT_NODE_KIND, else NodeAgent.
	NodeKind NodeKind
	// EtcdImages are the image names under which kubelet nodes have
	// tenantkit's etcd (nothing is pulled; pods naming other images cannot
	// start there). Default: DefaultEtcdImages. The node agent recognizes
	// etcd images by name and ignores this.
	EtcdImages []string
	// Domain is the cluster domain. Default "cluster.local".
	Domain string
	// StorageClass names the default StorageClass of local volumes.
	// Default "local", as in Cozystack.
	StorageClass string
	// VolumesPerNode is the number of local PersistentVolumes per node.
	// Default 4.
	VolumesPerNode int
	// VolumeCapacity is the nominal size of every local volume. Default
	// 10Gi.
	VolumeCapacity resource.Quantity
	// NodeMonitorGracePeriod is how long a node may miss heartbeats before
	// the node lifecycle controller marks it NotReady. Default 15s (the
	// upstream default is 50s; much shorter risks false alarms on a loaded
	// machine); nodes renew their Lease every fifth of it.
	NodeMonitorGracePeriod time.Duration
	// MaxProbePeriod caps the period of pods' startup and readiness probes,
	// to keep tests quick (liveness probes keep their spec timing). Default
	// 1s; negative means the periods in the pod specs. Kubelet nodes always
	// probe as the pod specs say.
	MaxProbePeriod time.Duration
	// RestartBackoff is the delay before a crashed container's first
	// restart; it doubles on every crash up to 30 times its value (as the
	// kubelet's CrashLoopBackOff does from 10s to 5m). Default 1s. Tests
	// that crash the same container many times set it lower. Kubelet nodes
	// keep the kubelet's own back-off, capped at 30 times this value
	// (crashLoopBackOff.maxContainerRestartPeriod): their first restart
	// waits 10s or that cap, whichever is less.
	RestartBackoff time.Duration
}

func (cc ClusterConfig) withDefaults() (ClusterConfig, error) {
	if len(cc.Nodes) == 0 {
		cc.Nodes = []NodeConfig{{Name: "node-a"}, {Name: "node-b"}, {Name: "node-c"}}
	}
	if len(cc.Nodes) > 254 {
		return cc, fmt.Errorf("%w: %d nodes (at most 254)", ErrInvalidConfig, len(cc.Nodes))
	}
	if cc.Domain == "" {
		cc.Domain = "cluster.local"
	}
	var err error
	if cc.NodeKind, err = nodeKind(cc.NodeKind); err != nil {
		return cc, err
	}
	if len(cc.EtcdImages) == 0 {
		cc.EtcdImages = DefaultEtcdImages
	}
	if cc.NodeMonitorGracePeriod == 0 {
		cc.NodeMonitorGracePeriod = 15 * time.Second
	}
	if cc.NodeMonitorGracePeriod < 5*time.Second {
		return cc, fmt.Errorf("%w: NodeMonitorGracePeriod %s is below 5s", ErrInvalidConfig, cc.NodeMonitorGracePeriod)
	}
	switch {
	case cc.MaxProbePeriod == 0:
		cc.MaxProbePeriod = time.Second
	case cc.MaxProbePeriod < 0:
		cc.MaxProbePeriod = 0
	}
	return cc, nil
}

// restartBackoff is RestartBackoff or its default.
func (cc ClusterConfig) restartBackoff() time.Duration {
	if cc.RestartBackoff > 0 {
		return cc.RestartBackoff
	}
	return time.Second
}

// heartbeat is the Lease renewal interval for a grace period.
func (cc ClusterConfig) heartbeat() time.Duration { return cc.NodeMonitorGracePeriod / 5 }

// Cluster is the simulated cluster of an environment: real
// kube-controller-manager and kube-scheduler, simulated nodes, local
// volumes and cluster DNS. Its methods are safe for concurrent use.
type Cluster struct {
	cfg     ClusterConfig
	network *loopnet.Network
	dns     *clusterdns.Server
	volumes *localvolume.Manager
	// nodes plays the nodes: the node agent or the kubelet pool.
	nodes nodeRunner
}

// StartCluster adds a simulated cluster to the environment's first
// apiserver (see ClusterConfig) and waits until its nodes are schedulable;
// Config.Cluster does the same during Start. The apiserver must have been
// started with the ServiceAccount admission plugin
// (Config.APIServer.ServiceAccountAdmission), and an environment has at
// most one cluster. It lets a program start serving from the control plane
// while the controllers' binaries are still being built.
func (e *Env) StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if e.isStopped() {
		return nil, ErrStopped
	}
	as := e.APIServers()
	if e.etcd == nil || len(as) == 0 {
		return nil, fmt.Errorf("%w: a cluster needs the local provider and an apiserver", ErrUnsupported)
	}
	if !e.cfg.APIServer.ServiceAccountAdmission {
		return nil, fmt.Errorf("%w: StartCluster needs Config.APIServer.ServiceAccountAdmission (or Config.Cluster)", ErrInvalidConfig)
	}
	if e.Cluster() != nil {
		return nil, fmt.Errorf("%w: the environment has a cluster already", ErrInvalidConfig)
	}
	cc, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return e.startCluster(ctx, as[0], cc)
}

// startCluster starts the simulated cluster on apiserver a. Everything is
// stopped by Env.Stop, newest first: the node agent (and with it every pod
// process) before the controllers.
func (e *Env) startCluster(ctx context.Context, a *APIServer, cc ClusterConfig) (*Cluster, error) {
	if err := e.startControllers(ctx, a, cc); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(a.RESTConfig())
	if err != nil {
		return nil, fmt.Errorf("localenv: %w", err)
	}
	c := &Cluster{cfg: cc}
	if c.network, err = loopnet.Reserve(); err != nil {
		return nil, err
	}
	e.OnStop(c.network.Release)
	c.dns, err = clusterdns.Start(ctx, clusterdns.Config{Client: cs, Addr: c.network.ServiceAddr(10),
		Domain: cc.Domain, HostAddr: c.network.HostAddr, Logger: e.log})
	if err != nil {
		return nil, err
	}
	e.OnStop(func() error { c.dns.Stop(); return nil })
	nodesDir := filepath.Join(e.dir, "nodes")
	names := make([]string, len(cc.Nodes))
	for i, n := range cc.Nodes {
		names[i] = n.Name
	}
	inUse, err := e.startNodes(ctx, a, cs, c, nodesDir)
	if err != nil {
		return nil, err
	}
	c.volumes, err = localvolume.Start(ctx, localvolume.Config{
		Client: cs, Nodes: names, StorageClass: cc.StorageClass, PerNode: cc.VolumesPerNode,
		Capacity: cc.VolumeCapacity, InUse: inUse, Logger: e.log,
		Dir: func(node string) string { return filepath.Join(nodesDir, node, "volumes") },
	})
	if err != nil {
		return nil, err
	}
	e.OnStop(func() error { c.volumes.Stop(); return nil })
	if err := waitSchedulable(ctx, cs, names, e.cfg.StartTimeout); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.cluster = c
	e.mu.Unlock()
	e.log.Info("simulated cluster ready", "nodes", names, "kind", cc.NodeKind, "network", c.network.Prefix(), "dns", c.dns.Addr())
	return c, nil
}

// Cluster returns the simulated cluster, nil unless Config.Cluster was set.
func (e *Env) Cluster() *Cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cluster
}

// NodeKind returns what plays the nodes: NodeAgent or NodeKubelet.
func (c *Cluster) NodeKind() NodeKind { return c.cfg.NodeKind }

// Nodes returns the node names.
func (c *Cluster) Nodes() []string { return c.nodes.Nodes() }

// Domain returns the cluster domain.
func (c *Cluster) Domain() string { return c.cfg.Domain }

// StorageClass returns the name of the local volumes' StorageClass.
func (c *Cluster) StorageClass() string { return c.volumes.StorageClass() }

// Cordon marks a node unschedulable, as kubectl cordon does.
func (c *Cluster) Cordon(ctx context.Context, node string) error { return c.nodes.Cordon(ctx, node) }

// Uncordon makes a node schedulable again.
func (c *Cluster) Uncordon(ctx context.Context, node string) error {
	return c.nodes.Uncordon(ctx, node)
}

// Down takes a node down like a power loss: its pod processes are killed
// (on kubelet nodes: the kubelet, containerd and every container) and it
// stops heartbeating, so the node lifecycle controller marks it and its
// pods not ready after NodeMonitorGracePeriod.
func (c *Cluster) Down(ctx context.Context, node string) error { return c.nodes.Down(ctx, node) }

// Up brings a node back: it reports Ready again and restarts its pods'
// containers.
func (c *Cluster) Up(ctx context.Context, node string) error { return c.nodes.Up(ctx, node) }

// KillContainer kills a pod's container process with SIGKILL, as a crash
// would; the node restarts it per the pod's restart policy.
func (c *Cluster) KillContainer(namespace, pod, container string) error {
	return c.nodes.KillContainer(namespace, pod, container)
}

// Pod returns what the node knows about a running pod: node, IP, container
// processes. ok is false when no node runs it. On kubelet nodes it asks
// the apiserver and containerd; IP and PodIP are then both the node's
// address (pods use the host network).
func (c *Cluster) Pod(namespace, name string) (info PodInfo, ok bool) {
	return c.nodes.Pod(namespace, name)
}

// Processes returns the running pod processes (real etcd servers) of
// node-agent nodes; nil on kubelet nodes, whose containers containerd runs
// (see Pod for their PIDs).
func (c *Cluster) Processes() []*Process { return c.nodes.Processes() }

// NodeAddr returns a node's loopback address, the twin of its InternalIP
// (see HostAddr; on kubelet nodes the InternalIP itself), or the zero Addr
// for an unknown node.
func (c *Cluster) NodeAddr(node string) netip.Addr { return c.nodes.NodeAddr(node) }

// Resolver returns a resolver that asks the cluster DNS, so the test process
// can resolve names like etcd-0.etcd-headless.tenant-demo.svc.
func (c *Cluster) Resolver() *net.Resolver { return c.dns.Resolver() }

// DialContext dials an address whose host is a cluster name (resolved
// through the cluster DNS) or a pod IP (mapped to the loopback address the
// pod listens on), so the test process reaches pods directly.
func (c *Cluster) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return c.dns.DialContext(ctx, network, address)
}

// HostAddr maps a pod or node IP as the cluster sees it (10.X.Y.Z, see
// package loopnet) to the loopback address its processes listen on
// (127.X.Y.Z), which the test process can dial. Other addresses are
// returned unchanged.
func (c *Cluster) HostAddr(ip netip.Addr) netip.Addr { return c.network.HostAddr(ip) }

// Recycled returns how many released local volumes have been wiped and put
// back so far.
func (c *Cluster) Recycled() int { return c.volumes.Recycled() }

// waitSchedulable waits until the node lifecycle controller has seen every
// node Ready and removed the not-ready taint that admission puts on new
// nodes; until then the scheduler skips them.
func waitSchedulable(ctx context.Context, cs kubernetes.Interface, names []string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, t := range n.Spec.Taints {
				if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for schedulable nodes: %w", err)
	}
	return nil
}
