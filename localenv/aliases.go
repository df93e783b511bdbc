package localenv

import (
	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/internal/nodeagent"
)

// The types below are defined by the environment's internal machinery and
// named here so that programs using the environment can name them too.

// Process is a server process of the environment (Component.Process,
// Cluster.Processes): Name, PID, LogPath, Running, Done, Stop (SIGTERM,
// then SIGKILL after a grace period), Kill and LogTail.
type Process = process.Process

// NodeConfig describes one simulated node of ClusterConfig.Nodes: its
// Name, and optionally Labels, GPU (the label gpu=on) and Capacity.
type NodeConfig = nodeagent.NodeConfig

// PodInfo is what the simulated node knows about a pod it runs
// (Cluster.Pod): UID, Node, IP (the loopback address its processes listen
// on), PodIP (the twin the cluster sees), Dir and Containers.
type PodInfo = nodeagent.PodInfo

// ContainerInfo describes a container process of PodInfo: Name, PID (0
// while not running), Restarts and LogPath.
type ContainerInfo = nodeagent.ContainerInfo
