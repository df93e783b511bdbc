package localenv

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cozystack/tenantkit/internal/kindnode"
	"github.com/cozystack/tenantkit/localenv/internal/kubeletnode"
	"github.com/cozystack/tenantkit/localenv/internal/nodeagent"
)

// DefaultEtcdImages are the etcd images kubelet nodes have by default, and
// that tenantkit's kind node image holds (tenantkit's etcd under each
// name): the aenix operator's (package etcdlayout's DefaultImage) and the
// one kubeadm-style control planes name.
var DefaultEtcdImages = kindnode.TenantEtcdImages

// NodeConfig describes one simulated node of ClusterConfig.Nodes.
type NodeConfig struct {
	// Name is the node name, also its kubernetes.io/hostname label.
	Name string
	// Labels are added to the node's standard labels.
	Labels map[string]string
	// GPU adds the label gpu=on, which GPU workloads select on.
	GPU bool
	// Capacity overrides or extends the default capacity (cpu 8, memory
	// 32Gi, pods 110, ephemeral-storage 100Gi), for example with
	// nvidia.com/gpu.
	Capacity corev1.ResourceList
}

// PodInfo is what the simulated node knows about a pod it runs
// (Cluster.Pod).
type PodInfo struct {
	// UID is the pod's UID.
	UID types.UID
	// Node is the node the pod runs on.
	Node string
	// IP is the address the pod's processes listen on, a loopback address
	// the test process can dial.
	IP netip.Addr
	// PodIP is the pod IP the cluster sees (status.podIP), IP's twin in
	// 10.X.0.0/16.
	PodIP netip.Addr
	// Dir is the pod's folder (volumes, container root directories, logs).
	Dir string
	// Containers are the containers the node runs as processes.
	Containers []ContainerInfo
}

// ContainerInfo describes a container process of PodInfo.
type ContainerInfo struct {
	// Name is the container name.
	Name string
	// PID is the current process ID, 0 while the container is not running.
	PID int
	// Restarts counts restarts after crashes.
	Restarts int32
	// LogPath is the container's log file (all restarts appended).
	LogPath string
}

// agentNodes converts the nodes for the node agent.
func agentNodes(nodes []NodeConfig) []nodeagent.NodeConfig {
	out := make([]nodeagent.NodeConfig, len(nodes))
	for i, n := range nodes {
		out[i] = nodeagent.NodeConfig(n)
	}
	return out
}

// podInfo converts the node agent's PodInfo.
func podInfo(in nodeagent.PodInfo) PodInfo {
	out := PodInfo{UID: in.UID, Node: in.Node, IP: in.IP, PodIP: in.PodIP, Dir: in.Dir}
	for _, c := range in.Containers {
		out.Containers = append(out.Containers, ContainerInfo(c))
	}
	return out
}

// kubeletPodInfo converts the kubelet pool's PodInfo.
func kubeletPodInfo(in kubeletnode.PodInfo) PodInfo {
	out := PodInfo{UID: in.UID, Node: in.Node, IP: in.IP, PodIP: in.IP, Dir: in.Dir}
	for _, c := range in.Containers {
		out.Containers = append(out.Containers, ContainerInfo(c))
	}
	return out
}
