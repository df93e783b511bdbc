// Package simnode holds the types shared by everything that plays the
// nodes of tenantkit's local environment (the node agent, the kubelet
// pool): what a node is configured with (Config) and what it reports about
// a pod it runs (Pod, Container). Package localenv names them NodeConfig,
// PodInfo and ContainerInfo; they are defined here, once, so that the node
// implementations return them as they are, without converters.
//
// The package has types only: no behaviour, no I/O.
package simnode

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Config describes one simulated node.
type Config struct {
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

// Pod is what the simulated node knows about a pod it runs.
type Pod struct {
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
	Containers []Container
}

// Container describes a container process of Pod.
type Container struct {
	// Name is the container name.
	Name string
	// PID is the current process ID, 0 while the container is not running.
	PID int
	// Restarts counts restarts after crashes.
	Restarts int32
	// LogPath is the container's log file (all restarts appended).
	LogPath string
}
