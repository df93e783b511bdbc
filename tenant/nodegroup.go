package tenant

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// Node group defaults of the chart.
const (
	// DefaultNodeGroupName is the name of the group the chart emits when
	// nodeGroups is empty.
	DefaultNodeGroupName = "md0"
	// DefaultMaxReplicas is a node group's default maxReplicas.
	DefaultMaxReplicas = 10
	// DefaultInstanceType is a node group's default KubeVirt instance type.
	DefaultInstanceType = "u1.medium"
)

// DefaultDiskSize is a node group's default system disk size, 20Gi.
func DefaultDiskSize() resource.Quantity { return resource.MustParse("20Gi") }

// NodeGroup is a group of worker VMs (KubeVirt VMs running Talos), scaled by
// the cluster autoscaler between MinReplicas and MaxReplicas.
type NodeGroup struct {
	// MinReplicas is the smallest size of the group. Default 0.
	MinReplicas int `json:"minReplicas,omitempty"`
	// MaxReplicas is the largest size of the group. Nil means
	// DefaultMaxReplicas.
	MaxReplicas *int `json:"maxReplicas,omitempty"`
	// InstanceType is the KubeVirt cluster instance type sizing each VM.
	// Default DefaultInstanceType. Ignored when Resources sets both CPU and
	// memory.
	InstanceType string `json:"instanceType,omitempty"`
	// DiskSize is the system disk of each VM. Nil means DefaultDiskSize.
	DiskSize *resource.Quantity `json:"diskSize,omitempty"`
	// StorageClass of the worker disks; empty falls back to the
	// application's StorageClass.
	StorageClass string `json:"storageClass,omitempty"`
	// Roles become node-role.kubernetes.io/<role> labels, for example
	// "ingress-nginx".
	Roles []string `json:"roles,omitempty"`
	// Resources sizes each VM explicitly instead of InstanceType; set both
	// CPU and memory or neither.
	Resources Resources `json:"resources,omitzero"`
	// GPUs are passed through to each VM, such as
	// {Name: "nvidia.com/AD102GL_L40S"}. GPU nodes get the label gpu=on,
	// which HAMi's device plugin selects. The NVIDIA driver needs at least
	// 4 GiB of RAM.
	GPUs []GPU `json:"gpus,omitempty"`
	// Kubelet sets the kubelet's resource reservations.
	Kubelet Kubelet `json:"kubelet,omitzero"`
	// PodCPULimit is the default CPU limit of pods on the group's nodes.
	PodCPULimit *resource.Quantity `json:"podCpuLimit,omitempty"`
	// PodCPURequest is the default CPU request of pods on the group's nodes.
	PodCPURequest *resource.Quantity `json:"podCpuRequest,omitempty"`
	// LogSerialConsole streams the VMs' serial console to the logs.
	LogSerialConsole bool `json:"logSerialConsole,omitempty"`
	// MaxUnhealthy overrides NodeHealthCheck.MaxUnhealthy for this group.
	MaxUnhealthy string `json:"maxUnhealthy,omitempty"`
	// NodeStartupTimeout overrides NodeHealthCheck.NodeStartupTimeout for
	// this group.
	NodeStartupTimeout string `json:"nodeStartupTimeout,omitempty"`
}

// Resources sets CPU and memory explicitly.
type Resources struct {
	// CPU is the number of cores, such as 4 or "500m".
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// Memory is the amount of RAM, such as "8Gi".
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// GPU is a GPU passed through to a worker VM.
type GPU struct {
	// Name is the KubeVirt permitted host device name, such as
	// "nvidia.com/GA102GL_A10".
	Name string `json:"name"`
}

// Kubelet sets a node group's kubelet reservations. Empty fields are
// computed by the chart from the node's size (5% of memory within
// [256Mi, 1Gi], 5% of CPU within [50m, 500m]).
type Kubelet struct {
	// SystemReservedMemory is memory reserved for the host OS.
	SystemReservedMemory string `json:"systemReservedMemory,omitempty"`
	// KubeReservedMemory is memory reserved for kubelet and the runtime.
	KubeReservedMemory string `json:"kubeReservedMemory,omitempty"`
	// SystemReservedCPU is CPU reserved for the host OS.
	SystemReservedCPU string `json:"systemReservedCpu,omitempty"`
	// KubeReservedCPU is CPU reserved for kubelet and the runtime.
	KubeReservedCPU string `json:"kubeReservedCpu,omitempty"`
	// EvictionHardMemory is the hard eviction threshold ("7%" or "200Mi").
	// Default "7%".
	EvictionHardMemory string `json:"evictionHardMemory,omitempty"`
	// EvictionSoftMemory is the soft eviction threshold ("10%" or "1Gi").
	// Default "10%".
	EvictionSoftMemory string `json:"evictionSoftMemory,omitempty"`
}

// DefaultNodeGroup returns the group the chart emits as md0 when nodeGroups
// is empty: 0 to 10 u1.medium VMs with 20Gi disks and the ingress-nginx role.
func DefaultNodeGroup() NodeGroup {
	return NodeGroup{
		MinReplicas:  0,
		MaxReplicas:  new(DefaultMaxReplicas),
		InstanceType: DefaultInstanceType,
		DiskSize:     new(DefaultDiskSize()),
		Roles:        []string{"ingress-nginx"},
	}
}

// WithDefaults returns g with the chart's field defaults filled in.
func (g NodeGroup) WithDefaults() NodeGroup {
	if g.MaxReplicas == nil {
		g.MaxReplicas = new(DefaultMaxReplicas)
	}
	if g.InstanceType == "" {
		g.InstanceType = DefaultInstanceType
	}
	if g.DiskSize == nil {
		g.DiskSize = new(DefaultDiskSize())
	}
	if g.Kubelet.EvictionHardMemory == "" {
		g.Kubelet.EvictionHardMemory = "7%"
	}
	if g.Kubelet.EvictionSoftMemory == "" {
		g.Kubelet.EvictionSoftMemory = "10%"
	}
	return g
}

// HasGPUs reports whether the group's VMs get GPUs.
func (g NodeGroup) HasGPUs() bool { return len(g.GPUs) > 0 }
