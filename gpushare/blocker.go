package gpushare

import (
	"fmt"
	"strconv"
)

// BlockerKind names what keeps a pod off every node.
type BlockerKind string

// What can keep a pod off every node, from the coarsest to the finest; a
// FitError names the first one that holds for some container.
const (
	// BlockNoGPUNodes: no node registers GPUs.
	BlockNoGPUNodes BlockerKind = "NoGPUNodes"
	// BlockTooFewGPUs: no node has as many GPUs as a container asks.
	BlockTooFewGPUs BlockerKind = "TooFewGPUs"
	// BlockNoEligibleGPUs: no node has enough healthy, uncordoned,
	// hami-core GPUs matching the pod's selectors.
	BlockNoEligibleGPUs BlockerKind = "NoEligibleGPUs"
	// BlockNoFreeSlots: no node has enough of those with a free slot.
	BlockNoFreeSlots BlockerKind = "NoFreeSlots"
	// BlockNoIdleCards: a container needs idle cards (100 cores on
	// 100-core cards, or the mutex policy) and no node has enough.
	BlockNoIdleCards BlockerKind = "NoIdleCards"
	// BlockNoMemory: no node has enough GPUs with the memory free.
	BlockNoMemory BlockerKind = "NoMemory"
	// BlockNoCores: no node has enough GPUs with the cores free.
	BlockNoCores BlockerKind = "NoCores"
	// BlockSaturatedCards: a 0-core container cannot join cards whose
	// cores are all allocated, and no node has enough others.
	BlockSaturatedCards BlockerKind = "SaturatedCards"
	// BlockNoNUMANode: numa-bind, and no node has enough fitting GPUs on
	// one NUMA node.
	BlockNoNUMANode BlockerKind = "NoNUMANode"
	// BlockNotTogether: each container fits on some node on its own, but
	// no node takes them all.
	BlockNotTogether BlockerKind = "NotTogether"
	// BlockQuota: the pod would fit but for its namespace's ResourceQuota
	// (Blocker.Quota names the limit, what is used and what the pod asks).
	BlockQuota BlockerKind = "Quota"
)

// Blocker is what keeps a pod off every node, found by looking at all
// nodes together: for the first container that no node can take on its
// own, the first of HAMi's per-GPU checks that no node has enough GPUs
// passing.
type Blocker struct {
	// Kind is what blocks.
	Kind BlockerKind
	// Container is the container blocked; empty for BlockNoGPUNodes and
	// BlockNotTogether.
	Container string
	// Need is what the container needs, in the kind's unit: GPUs, or MiB
	// or cores on one GPU for a single-GPU container short of memory or
	// cores.
	Need int64
	// Best is the closest the cluster comes: the most such GPUs on one
	// node, or the most MiB or cores free on one GPU.
	Best int64
	// Detail says it in words, e.g. "no node has 2 idle cards (most: 1)"
	// or "no GPU has 30000 MiB free (largest: 24576)".
	Detail string
	// Quota is the quota exceeded, for BlockQuota: the first one a GPU
	// failed, in node name order.
	Quota *QuotaExceeded
}

// funnel counts, per node, the GPUs passing each of HAMi's per-GPU checks
// in turn for one container, on the node's usage before the pod.
type funnel struct {
	eligible, slots, idle, memory, cores, joinable, numa int64
	// largest free memory and cores among GPUs that reach the check.
	freeMem, freeCores int64
}

// blockerLocked finds the pod's blocker over the ledger's GPU nodes.
func (l *Ledger) blockerLocked(p *plan) Blocker {
	var nodes []*nodeState
	for _, n := range l.nodes {
		if n.registered && len(n.gpus) > 0 {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return Blocker{Kind: BlockNoGPUNodes, Detail: "no node registers GPUs"}
	}
	for i := range p.req.Containers {
		c := &p.req.Containers[i]
		if c.Count == 0 {
			continue
		}
		if b, ok := p.containerBlocker(c, nodes); ok {
			return b
		}
	}
	return Blocker{Kind: BlockNotTogether, Detail: "each container fits on some node, but no node takes them all together"}
}

// containerBlocker finds what keeps c off every node, if anything.
func (p *plan) containerBlocker(c *ContainerRequest, nodes []*nodeState) (Blocker, bool) {
	need := int64(c.Count)
	var most funnel
	gpus := 0
	for _, n := range nodes {
		gpus = max(gpus, n.nvidiaGPUs)
		f := p.funnelOn(c, n)
		most.eligible, most.slots, most.idle = max(most.eligible, f.eligible), max(most.slots, f.slots), max(most.idle, f.idle)
		most.memory, most.cores = max(most.memory, f.memory), max(most.cores, f.cores)
		most.joinable, most.numa = max(most.joinable, f.joinable), max(most.numa, f.numa)
		most.freeMem, most.freeCores = max(most.freeMem, f.freeMem), max(most.freeCores, f.freeCores)
	}
	b := Blocker{Container: c.Name, Need: need}
	sel := &p.req.Selectors
	matching := ""
	if len(sel.UseTypes)+len(sel.NoUseTypes)+len(sel.UseUUIDs)+len(sel.NoUseUUIDs) > 0 || sel.Mode != "" {
		matching = " matching the pod's selectors"
	}
	perGPU := c.Count == 1
	switch {
	case int64(gpus) < need:
		b.Kind, b.Best = BlockTooFewGPUs, int64(gpus)
		b.Detail = fmt.Sprintf("no node has %s (largest: %d)", plural(need, "GPU"), gpus)
	case most.eligible < need:
		b.Kind, b.Best = BlockNoEligibleGPUs, most.eligible
		b.Detail = fmt.Sprintf("no node has %s%s (most: %d)", plural(need, "healthy, uncordoned GPU"), matching, most.eligible)
	case most.slots < need:
		b.Kind, b.Best = BlockNoFreeSlots, most.slots
		b.Detail = fmt.Sprintf("no node has %s with a free slot (most: %d)", plural(need, "GPU"), most.slots)
	case p.gpu.mutex && most.idle < need:
		b.Kind, b.Best = BlockNoIdleCards, most.idle
		b.Detail = fmt.Sprintf("no node has %s (most: %d; the mutex policy takes idle cards only)", plural(need, "idle card"), most.idle)
	case most.memory < need && perGPU && c.MemoryMiB > 0:
		b.Kind, b.Need, b.Best = BlockNoMemory, int64(c.MemoryMiB), most.freeMem
		b.Detail = fmt.Sprintf("no GPU has %d MiB free (largest: %d)", c.MemoryMiB, most.freeMem)
	case most.memory < need:
		b.Kind, b.Best = BlockNoMemory, most.memory
		b.Detail = fmt.Sprintf("no node has %s with %s free (most: %d)", plural(need, "GPU"), memoryWords(c), most.memory)
	case most.joinable < need && c.Cores == 100:
		b.Kind, b.Best = BlockNoIdleCards, most.joinable
		b.Detail = fmt.Sprintf("no node has %s (most: %d; 100 cores asks for a card of its own)", plural(need, "idle card"), most.joinable)
	case most.cores < need && perGPU:
		b.Kind, b.Need, b.Best = BlockNoCores, int64(c.Cores), most.freeCores
		b.Detail = fmt.Sprintf("no GPU has %d cores free (largest: %d)", c.Cores, most.freeCores)
	case most.cores < need:
		b.Kind, b.Best = BlockNoCores, most.cores
		b.Detail = fmt.Sprintf("no node has %s with %d cores free (most: %d)", plural(need, "GPU"), c.Cores, most.cores)
	case most.joinable < need:
		b.Kind, b.Best = BlockSaturatedCards, most.joinable
		b.Detail = fmt.Sprintf("no node has %s with unallocated cores (most: %d; a 0-core container cannot join a card whose cores are all allocated)",
			plural(need, "GPU"), most.joinable)
	case p.numaBind && most.numa < need:
		b.Kind, b.Best = BlockNoNUMANode, most.numa
		b.Detail = fmt.Sprintf("no node has %s on one NUMA node (most: %d; %s)", plural(need, "fitting GPU"), most.numa, AnnotationNUMABind)
	default:
		return Blocker{}, false
	}
	return b, true
}

// funnelOn counts c's funnel on node n.
func (p *plan) funnelOn(c *ContainerRequest, n *nodeState) funnel {
	var f funnel
	sel := &p.req.Selectors
	perNUMA := map[int]int64{}
	for i := range n.gpus {
		g := &n.gpus[i]
		d, u := &g.dev, g.used
		if !g.nvidia || gpuState(g) != "" || d.Mode == ModeMIG || sel.typeAllowed(d) != "" || sel.uuidAllowed(d.ID) != "" {
			continue
		}
		f.eligible++
		if int64(d.Count) <= u.Slots {
			continue
		}
		f.slots++
		if p.gpu.mutex && u.Slots > 0 {
			continue
		}
		f.idle++
		free := int64(d.MemoryMiB) - u.MemoryMiB
		f.freeMem = max(f.freeMem, free)
		if free < int64(c.memoryOn(d.MemoryMiB)) {
			continue
		}
		f.memory++
		f.freeCores = max(f.freeCores, int64(d.Cores)-u.Cores)
		if int64(d.Cores)-u.Cores < int64(c.Cores) {
			continue
		}
		f.cores++
		if usageRule(g, u, int64(c.memoryOn(d.MemoryMiB)), int64(c.Cores), p.gpu.mutex) != "" {
			continue
		}
		f.joinable++
		perNUMA[d.NUMA]++
		f.numa = max(f.numa, perNUMA[d.NUMA])
	}
	return f
}

func memoryWords(c *ContainerRequest) string {
	switch {
	case c.MemoryMiB > 0:
		return strconv.Itoa(int(c.MemoryMiB)) + " MiB"
	case c.MemoryPercent > 0 && c.MemoryPercent < 100:
		return strconv.Itoa(int(c.MemoryPercent)) + "% of its memory"
	}
	return "all of its memory"
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}
