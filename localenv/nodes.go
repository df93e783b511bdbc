package localenv

import (
	"context"
	"net/netip"

	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/kindnode"
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/internal/kubeletnode"
	"github.com/cozystack/tenantkit/localenv/internal/nodeagent"
	"github.com/cozystack/tenantkit/localenv/internal/simnode"
)

// DefaultEtcdImages are the etcd images kubelet nodes have by default, and
// that tenantkit's kind node image holds (tenantkit's etcd under each
// name): the aenix operator's (package etcdlayout's default image) and the
// one kubeadm-style control planes name.
var DefaultEtcdImages = kindnode.TenantEtcdImages

// NodeConfig describes one simulated node of ClusterConfig.Nodes: Name (the
// node name, also its kubernetes.io/hostname label), Labels (added to the
// node's standard labels), GPU (adds the label gpu=on, which GPU workloads
// select on) and Capacity (overrides or extends the default capacity of
// node-agent nodes, cpu 8, memory 32Gi, pods 110, ephemeral-storage 100Gi,
// for example with nvidia.com/gpu; kubelet nodes report the machine's).
// Like PodInfo and ContainerInfo, it is defined once by the environment's
// internal node package, which both node kinds use, and named here.
type NodeConfig = simnode.Config

// PodInfo is what the simulated node knows about a pod it runs
// (Cluster.Pod): UID, Node (the node it runs on), IP (the address the pod's
// processes listen on, a loopback address the test process can dial),
// PodIP (the pod IP the cluster sees, status.podIP, IP's twin in
// 10.X.0.0/16), Dir (the pod's folder: volumes, container root directories,
// logs) and Containers (the containers the node runs as processes).
type PodInfo = simnode.Pod

// ContainerInfo describes a container process of PodInfo: Name, PID (the
// current process ID, 0 while the container is not running), Restarts
// (restarts after crashes) and LogPath (the container's log file, all
// restarts appended).
type ContainerInfo = simnode.Container

// nodeRunner is what plays the nodes: the node agent or the kubelet pool.
// Cluster's node methods go through it.
type nodeRunner interface {
	Nodes() []string
	Cordon(ctx context.Context, node string) error
	Uncordon(ctx context.Context, node string) error
	Down(ctx context.Context, node string) error
	Up(ctx context.Context, node string) error
	KillContainer(namespace, pod, container string) error
	NodeAddr(node string) netip.Addr
	Pod(namespace, name string) (PodInfo, bool)
	Processes() []*process.Process
}

var (
	_ nodeRunner = (*nodeagent.Agent)(nil)
	_ nodeRunner = (*kubeletnode.Pool)(nil)
)

// startNodes starts what plays the cluster's nodes (ClusterConfig.NodeKind)
// in folder dir and sets c.nodes. inUse is what the local volume cleaner
// asks before wiping a volume, nil where the nodes do not tell.
func (e *Env) startNodes(ctx context.Context, a *APIServer, cs kubernetes.Interface, c *Cluster, dir string) (inUse func(string) bool, err error) {
	etcdBin, err := e.bins.podEtcd(ctx)
	if err != nil {
		return nil, err
	}
	if c.cfg.NodeKind == NodeKubelet {
		return nil, e.startKubelets(ctx, a, cs, c, dir)
	}
	cc := c.cfg
	agent, err := nodeagent.Start(ctx, nodeagent.Config{
		Client: cs, Nodes: cc.Nodes, Dir: dir, Network: c.network,
		EtcdBinary: etcdBin, DNSServer: c.dns.Addr(),
		HeartbeatInterval: cc.heartbeat(), MaxProbePeriod: cc.MaxProbePeriod, RestartBackoff: cc.RestartBackoff, Logger: e.log,
	})
	if err != nil {
		return nil, err
	}
	e.OnStop(agent.Stop)
	c.nodes = agent
	return agent.InUse, nil
}
