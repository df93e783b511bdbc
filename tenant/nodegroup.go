package tenant

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Node group defaults of the chart.
const (
	// defaultNodeGroupName is the name of the group the chart emits when
	// nodeGroups is empty.
	defaultNodeGroupName = "md0"
	// defaultMaxReplicas is the schema's default maxReplicas, written when
	// NodeGroup.MaxReplicas is nil.
	defaultMaxReplicas = 10
	// defaultInstanceType is the instance type of the default group md0
	// (and the schema's suggestion for new groups).
	defaultInstanceType = "u1.medium"
)

// defaultDiskSize is the schema's default system disk size, 20Gi, written
// when NodeGroup.DiskSize is nil.
func defaultDiskSize() resource.Quantity { return resource.MustParse("20Gi") }

// NodeGroup is a group of worker VMs (KubeVirt VMs running Talos), scaled by
// the cluster autoscaler between MinReplicas and MaxReplicas.
//
// The chart's schema requires minReplicas, maxReplicas, instanceType and
// diskSize in every group and its values give groups no defaults, so a
// document without one of them is refused (ErrRequiredField) and encoding
// always writes all four: MinReplicas and InstanceType as they are (0 and
// "" are values), MaxReplicas and DiskSize as the schema's defaults, 10
// and 20Gi, when nil.
type NodeGroup struct {
	// MinReplicas is the smallest size of the group.
	MinReplicas int `json:"minReplicas" chart:"required,missing=S-nodegroup-required"`
	// MaxReplicas is the largest size of the group. Nil means the
	// schema's default, 10.
	MaxReplicas *int `json:"maxReplicas,omitempty" chart:"required,missing=S-nodegroup-required"`
	// InstanceType is the KubeVirt cluster instance type sizing each VM,
	// such as "u1.medium" (the default group's). "" gives the VM no instance type: size it
	// with Resources (Check warns of a group with neither). An instance type
	// is dropped from the VM when Resources sets both CPU and memory.
	InstanceType string `json:"instanceType" chart:"required,missing=S-nodegroup-required"`
	// DiskSize is the system disk of each VM. Nil means the schema's
	// default, 20Gi.
	DiskSize *resource.Quantity `json:"diskSize,omitempty" chart:"required,missing=S-nodegroup-required"`
	// StorageClass of the worker disks; empty falls back to the
	// application's StorageClass.
	StorageClass string `json:"storageClass,omitempty"`
	// Roles become node-role.kubernetes.io/<role> labels, for example
	// "ingress-nginx".
	Roles []string `json:"roles,omitempty"`
	// Resources sizes each VM explicitly instead of InstanceType; with an
	// instance type set both CPU and memory or neither. A document's
	// integer 0 decodes as unset (the chart's templates take it as false).
	Resources Resources `json:"resources,omitzero"`
	// GPUs are passed through to each VM, such as
	// {Name: "nvidia.com/AD102GL_L40S"}. GPU nodes get the label gpu=on,
	// which HAMi's device plugin selects. The NVIDIA driver needs at least
	// 4 GiB of RAM.
	GPUs []GPU `json:"gpus,omitempty"`
	// Kubelet sets the kubelet's resource reservations.
	Kubelet Kubelet `json:"kubelet,omitzero"`
	// PodCPULimit is the CPU limit of each worker VM's Pod. Set, even to 0,
	// it needs a group sized by Resources; 0 removes the ceiling and needs
	// PodCPURequest 0 beside it.
	PodCPULimit *resource.Quantity `json:"podCpuLimit,omitempty"`
	// PodCPURequest is the CPU request of each worker VM's Pod, at most
	// PodCPULimit.
	PodCPURequest *resource.Quantity `json:"podCpuRequest,omitempty"`
	// LogSerialConsole streams the VMs' serial console to the logs.
	LogSerialConsole bool `json:"logSerialConsole,omitempty"`
	// MaxUnhealthy overrides NodeHealthCheck.MaxUnhealthy for this group;
	// empty keeps the cluster's.
	MaxUnhealthy string `json:"maxUnhealthy,omitempty" chart:"empty=T-maxunhealthy-format"`
	// NodeStartupTimeout overrides NodeHealthCheck.NodeStartupTimeout for
	// this group.
	NodeStartupTimeout string `json:"nodeStartupTimeout,omitempty"`
}

// MarshalJSON encodes g with the four keys the chart requires always
// present: nil MaxReplicas and DiskSize as their defaults.
func (g NodeGroup) MarshalJSON() ([]byte, error) {
	type plain NodeGroup
	p := plain(g)
	if p.MaxReplicas == nil {
		p.MaxReplicas = new(defaultMaxReplicas)
	}
	if p.DiskSize == nil {
		p.DiskSize = new(defaultDiskSize())
	}
	return json.Marshal(p)
}

// Resources sets CPU and memory explicitly.
type Resources struct {
	// CPU is the number of cores, such as 4 or "500m".
	CPU *resource.Quantity `json:"cpu,omitempty" chart:"nodefault"`
	// Memory is the amount of RAM, such as "8Gi".
	Memory *resource.Quantity `json:"memory,omitempty" chart:"nodefault"`
}

// GPU is a GPU passed through to a worker VM.
type GPU struct {
	// Name is the KubeVirt permitted host device name, such as
	// "nvidia.com/GA102GL_A10".
	Name string `json:"name" chart:"required,missing=S-nodegroup-gpus"`
}

// Kubelet sets a node group's kubelet reservations. Empty fields are
// computed by the chart from the node's size (5% of memory within
// [256Mi, 1Gi], 5% of CPU within [50m, 500m]); see ErrKubeletReservation,
// ErrKubeletEviction and ErrKubeletTotal for what the chart accepts.
type Kubelet struct {
	// SystemReservedMemory is memory reserved for the host OS, such as
	// "512Mi" or "5e8".
	SystemReservedMemory string `json:"systemReservedMemory,omitempty"`
	// KubeReservedMemory is memory reserved for kubelet and the runtime.
	KubeReservedMemory string `json:"kubeReservedMemory,omitempty"`
	// SystemReservedCPU is CPU reserved for the host OS: millicores
	// ("100m") or decimal cores ("0.5").
	SystemReservedCPU string `json:"systemReservedCpu,omitempty"`
	// KubeReservedCPU is CPU reserved for kubelet and the runtime.
	KubeReservedCPU string `json:"kubeReservedCpu,omitempty"`
	// EvictionHardMemory is the hard eviction threshold ("7%" or "200Mi").
	// Default "7%".
	EvictionHardMemory string `json:"evictionHardMemory,omitempty"`
	// EvictionSoftMemory is the soft eviction threshold ("10%" or "1Gi"),
	// of the same kind as the hard one and above it. Default "10%".
	EvictionSoftMemory string `json:"evictionSoftMemory,omitempty"`
}

// Default eviction thresholds of the chart.
const (
	defaultEvictionHardMemory = "7%"
	defaultEvictionSoftMemory = "10%"
)

// defaultNodeGroup returns the group the chart emits as md0 when nodeGroups
// is empty: 0 to 10 u1.medium VMs with 20Gi disks and the ingress-nginx role.
func defaultNodeGroup() NodeGroup {
	return NodeGroup{
		MinReplicas:  0,
		MaxReplicas:  new(defaultMaxReplicas),
		InstanceType: defaultInstanceType,
		DiskSize:     new(defaultDiskSize()),
		Roles:        []string{"ingress-nginx"},
	}
}

// withDefaults returns g with the chart's field defaults filled in:
// MaxReplicas, DiskSize and the eviction thresholds. InstanceType is kept:
// "" is a value (no instance type).
func (g NodeGroup) withDefaults() NodeGroup {
	if g.MaxReplicas == nil {
		g.MaxReplicas = new(defaultMaxReplicas)
	}
	if g.DiskSize == nil {
		g.DiskSize = new(defaultDiskSize())
	}
	if g.Kubelet.EvictionHardMemory == "" {
		g.Kubelet.EvictionHardMemory = defaultEvictionHardMemory
	}
	if g.Kubelet.EvictionSoftMemory == "" {
		g.Kubelet.EvictionSoftMemory = defaultEvictionSoftMemory
	}
	return g
}

// hasGPUs reports whether the group's VMs get GPUs.
func (g NodeGroup) hasGPUs() bool { return len(g.GPUs) > 0 }

// sizedByResources reports whether the group's VMs are sized by
// Resources (both CPU and memory), which drops the instance type from the
// VM.
func (g NodeGroup) sizedByResources() bool {
	return g.Resources.CPU != nil && g.Resources.Memory != nil
}
