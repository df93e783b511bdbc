package gpushare

import (
	"fmt"
	"sort"
)

// GPUUsage is one GPU's registration, allocation and holders.
type GPUUsage struct {
	Device
	// Cordoned marks a GPU listed in hami.io/device-cordon: its usage
	// counts, new pods do not land on it.
	Cordoned bool
	// Capacity is the registered slots, memory and cores; Used what counted
	// pods hold; Free is Capacity - Used, never below 0.
	Capacity, Used, Free Amount
	// Overcommitted reports usage beyond capacity, which pods placed
	// outside this ledger can cause (a node re-registered smaller, say).
	Overcommitted bool
	// Pods holds each counted pod's share of this GPU, by namespace/name.
	Pods []PodShare
}

// PodShare is one pod's share of one GPU.
type PodShare struct {
	// Namespace and Name identify the pod.
	Namespace, Name string
	// Used is what the pod holds on the GPU.
	Used Amount
}

// NodeUsage is one node's GPUs and totals.
type NodeUsage struct {
	// Name is the node's name.
	Name string
	// GPUs lists the registered GPUs by NVML index.
	GPUs []GPUUsage
	// Capacity, Used and Free sum the GPUs.
	Capacity, Used, Free Amount
	// Score is HAMi's node score (see NodeScore).
	Score float32
	// Pods is the number of counted pods on the node.
	Pods int
	// Err is the node's registration problem, if any.
	Err error
}

// MemoryRatio is used / registered memory (0..1), HAMi's
// hami_node_gpu_memory_allocated_ratio.
func (n NodeUsage) MemoryRatio() float64 {
	if n.Capacity.MemoryMiB == 0 {
		return 0
	}
	return float64(n.Used.MemoryMiB) / float64(n.Capacity.MemoryMiB)
}

// NamespaceUsage is what one namespace's pods hold, summed over their GPUs.
type NamespaceUsage struct {
	// Namespace is the namespace's name.
	Namespace string
	// Pods is the number of counted pods.
	Pods int
	// GPUs is the number of distinct GPUs they use.
	GPUs int
	// Used is the sum of their shares (memory × GPUs, as HAMi's quota
	// counts it).
	Used Amount
}

// PodUsage is one counted pod's allocation.
type PodUsage struct {
	// Namespace and Name identify the pod; Node is hami.io/vgpu-node.
	Namespace, Name, Node string
	// Allocation is the decoded hami.io/vgpu-devices-allocated.
	Allocation PodAllocation
	// Used is what the pod adds to its GPUs, summed.
	Used Amount
}

// Summary is the cluster's totals.
type Summary struct {
	// Nodes with registered GPUs, GPUs, and counted pods.
	Nodes, GPUs, Pods int
	// Capacity and Used sum every registered GPU; Free sums each GPU's
	// free amount (never below 0).
	Capacity, Used, Free Amount
}

// String returns the usage in a few words, used of capacity:
// "69360/194560 MiB, 100/400 cores, 4/40 slots used".
func (s Summary) String() string {
	return fmt.Sprintf("%d/%d MiB, %d/%d cores, %d/%d slots used",
		s.Used.MemoryMiB, s.Capacity.MemoryMiB, s.Used.Cores, s.Capacity.Cores, s.Used.Slots, s.Capacity.Slots)
}

// Nodes returns every node with registered GPUs or counted pods, by name.
func (l *Ledger) Nodes() []NodeUsage {
	l.mu.RLock()
	defer l.mu.RUnlock()
	names := l.nodeNamesLocked()
	out := make([]NodeUsage, 0, len(names))
	for _, name := range names {
		out = append(out, l.nodeUsageLocked(l.nodes[name]))
	}
	return out
}

// Node returns one node's usage.
func (l *Ledger) Node(name string) (NodeUsage, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	n := l.nodes[name]
	if n == nil {
		return NodeUsage{}, false
	}
	return l.nodeUsageLocked(n), true
}

func (l *Ledger) nodeUsageLocked(n *nodeState) NodeUsage {
	u := NodeUsage{Name: n.name, Pods: len(n.pods), Err: l.problem("node/" + n.name)}
	for i := range n.gpus {
		g := &n.gpus[i]
		gu := GPUUsage{Device: g.dev, Cordoned: g.cordoned, Capacity: g.capacity(), Used: g.used}
		gu.Device.MIGProfiles = cloneDevices([]Device{g.dev})[0].MIGProfiles
		gu.Free = gu.Capacity.Sub(gu.Used).floor0()
		gu.Overcommitted = gu.Used.exceeds(gu.Capacity)
		u.GPUs = append(u.GPUs, gu)
		u.Capacity, u.Used, u.Free = u.Capacity.Add(gu.Capacity), u.Used.Add(gu.Used), u.Free.Add(gu.Free)
	}
	pods := append([]*podState(nil), n.pods...)
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].namespace != pods[j].namespace {
			return pods[i].namespace < pods[j].namespace
		}
		return pods[i].name < pods[j].name
	})
	for _, p := range pods {
		for _, c := range p.contrib {
			for i := range u.GPUs {
				if u.GPUs[i].ID == c.id {
					u.GPUs[i].Pods = append(u.GPUs[i].Pods, PodShare{Namespace: p.namespace, Name: p.name, Used: c.used})
				}
			}
		}
	}
	sort.SliceStable(u.GPUs, func(i, j int) bool { return u.GPUs[i].Index < u.GPUs[j].Index })
	u.Score = NodeScore(u.Capacity, u.Used)
	return u
}

// Namespaces returns per-namespace totals, by namespace.
func (l *Ledger) Namespaces() []NamespaceUsage {
	l.mu.RLock()
	defer l.mu.RUnlock()
	byNS := map[string]*NamespaceUsage{}
	gpus := map[string]map[string]struct{}{}
	for _, p := range l.pods {
		nu := byNS[p.namespace]
		if nu == nil {
			nu = &NamespaceUsage{Namespace: p.namespace}
			byNS[p.namespace], gpus[p.namespace] = nu, map[string]struct{}{}
		}
		nu.Pods++
		for _, c := range p.contrib {
			nu.Used = nu.Used.Add(c.used)
			gpus[p.namespace][p.node+"/"+c.id] = struct{}{}
		}
	}
	out := make([]NamespaceUsage, 0, len(byNS))
	for ns, nu := range byNS {
		nu.GPUs = len(gpus[ns])
		out = append(out, *nu)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out
}

// Pods returns every counted pod, by namespace and name.
func (l *Ledger) Pods() []PodUsage {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]PodUsage, 0, len(l.pods))
	for _, p := range l.pods {
		out = append(out, podUsage(p))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Pod returns one counted pod's allocation.
func (l *Ledger) Pod(namespace, name string) (PodUsage, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	p := l.pods[podKey{namespace, name}]
	if p == nil {
		return PodUsage{}, false
	}
	return podUsage(p), true
}

func podUsage(p *podState) PodUsage {
	u := PodUsage{Namespace: p.namespace, Name: p.name, Node: p.node}
	u.Allocation = make(PodAllocation, len(p.alloc))
	for i, c := range p.alloc {
		u.Allocation[i] = append(ContainerAllocation{}, c...)
	}
	for _, c := range p.contrib {
		u.Used = u.Used.Add(c.used)
	}
	return u
}

// Summary returns the cluster's totals over registered GPUs.
func (l *Ledger) Summary() Summary {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s := Summary{Pods: len(l.pods)}
	for _, n := range l.nodes {
		if len(n.gpus) > 0 {
			s.Nodes++
		}
		for i := range n.gpus {
			g := &n.gpus[i]
			s.GPUs++
			s.Capacity, s.Used = s.Capacity.Add(g.capacity()), s.Used.Add(g.used)
			s.Free = s.Free.Add(g.capacity().Sub(g.used).floor0())
		}
	}
	return s
}
