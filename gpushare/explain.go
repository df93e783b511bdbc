package gpushare

import (
	"fmt"
	"sort"
	"strings"
)

// Reason is why a GPU or node cannot take a container. The names are
// HAMi's, as they appear in its scheduling events, plus CardCordoned,
// CardMigUnsupported and NodeNotRegistered.
type Reason string

// Reasons, in the order HAMi checks them.
const (
	// ReasonCardNotHealth: the GPU is registered unhealthy.
	ReasonCardNotHealth Reason = "CardNotHealth"
	// ReasonCardCordoned: the GPU is listed in hami.io/device-cordon.
	ReasonCardCordoned Reason = "CardCordoned"
	// ReasonCardTypeMismatch: the GPU's type or vgpu mode is not one the
	// pod's type selectors allow.
	ReasonCardTypeMismatch Reason = "CardTypeMismatch"
	// ReasonNUMANotFit: numa-bind gave the GPU up: its NUMA node cannot hold
	// the whole container.
	ReasonNUMANotFit Reason = "NumaNotFit"
	// ReasonCardUUIDMismatch: the pod's UUID selectors exclude the GPU.
	ReasonCardUUIDMismatch Reason = "CardUuidMismatch"
	// ReasonCardTimeSlicingExhausted: all the GPU's slots are used.
	ReasonCardTimeSlicingExhausted Reason = "CardTimeSlicingExhausted"
	// ReasonExclusiveDeviceAllocateConflict: an exclusive request (100 cores,
	// or the mutex policy) needs an idle GPU.
	ReasonExclusiveDeviceAllocateConflict Reason = "ExclusiveDeviceAllocateConflict"
	// ReasonResourceQuotaNotFit: the pod's usage with this GPU would pass
	// a limit of its namespace's ResourceQuota (GPUFailure.Quota names it).
	ReasonResourceQuotaNotFit Reason = "ResourceQuotaNotFit"
	// ReasonCardInsufficientMemory: the GPU has less free memory than asked.
	ReasonCardInsufficientMemory Reason = "CardInsufficientMemory"
	// ReasonCardInsufficientCore: the GPU has fewer free cores than asked.
	ReasonCardInsufficientCore Reason = "CardInsufficientCore"
	// ReasonCardComputeUnitsExhausted: a 0-core share cannot join a GPU whose
	// cores are all allocated.
	ReasonCardComputeUnitsExhausted Reason = "CardComputeUnitsExhausted"
	// ReasonCardMIGUnsupported: the GPU is in MIG mode, which gpushare counts
	// but never chooses.
	ReasonCardMIGUnsupported Reason = "CardMigUnsupported"
	// ReasonNodeInsufficientDevice: the node registers fewer NVIDIA GPUs than
	// the container asks.
	ReasonNodeInsufficientDevice Reason = "NodeInsufficientDevice"
	// ReasonAllocatedCardsInsufficientRequest: fewer of the node's GPUs
	// passed the checks than the container asks; its GPUs say why.
	ReasonAllocatedCardsInsufficientRequest Reason = "AllocatedCardsInsufficientRequest"
	// ReasonNodeNotRegistered: the node registers no GPU, or its
	// registration cannot be read.
	ReasonNodeNotRegistered Reason = "NodeNotRegistered"
	// ReasonDuplicateGPU is Allocate's: a placement names one GPU twice
	// for one container, which HAMi's Fit never does.
	ReasonDuplicateGPU Reason = "DuplicateGPU"
)

// GPUFailure says why one GPU could not take a container.
type GPUFailure struct {
	// ID is the GPU UUID.
	ID string
	// Reason is the first check the GPU failed.
	Reason Reason
	// Detail has the numbers, e.g. "2048 MiB free < 3000 requested".
	Detail string
	// Quota names the quota exceeded, for ReasonResourceQuotaNotFit.
	Quota *QuotaExceeded
}

// NodeFailure says why a pod does not fit on one node.
type NodeFailure struct {
	// Node is the node's name.
	Node string
	// Container is the first container that did not fit.
	Container string
	// Reason is why: a node-level reason, or
	// ReasonAllocatedCardsInsufficientRequest with GPUs saying why.
	Reason Reason
	// Detail has the numbers, e.g. "1 of 2 GPUs fit".
	Detail string
	// GPUs has a failure per GPU checked for Container.
	GPUs []GPUFailure
}

// String reads "node-3: GPU-1a2b: 2048 MiB free < 3000 requested
// (container main: 0 of 1 GPUs fit)".
func (f NodeFailure) String() string {
	var b strings.Builder
	b.WriteString(f.Node)
	b.WriteString(": ")
	ctr := f.Detail
	if f.Container != "" {
		ctr = "container " + f.Container + ": " + f.Detail
	}
	if len(f.GPUs) == 0 {
		b.WriteString(ctr)
		return b.String()
	}
	for i, g := range f.GPUs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(g.ID + ": " + g.Detail)
	}
	b.WriteString(" (" + ctr + ")")
	return b.String()
}

// FitError reports a pod that fits no node: what blocks it, seen over all
// nodes, then the reason per node and per GPU. It wraps ErrNoFit.
type FitError struct {
	// Pod is "namespace/name".
	Pod string
	// Blocker is what keeps the pod off every node; branch on its Kind.
	Blocker Blocker
	// Nodes has one entry per GPU node, in name order.
	Nodes []NodeFailure
}

// maxNodesInMessage bounds Error's length on large clusters; Nodes has all.
const maxNodesInMessage = 5

// Error reads "pod web/big fits none of 1 GPU nodes: no GPU has 3000 MiB
// free (largest: 2048); 1/1 CardInsufficientMemory: node-3: GPU-1a2b: 2048
// MiB free < 3000 requested (container main: 0 of 1 GPUs fit)".
func (e *FitError) Error() string {
	if len(e.Nodes) == 0 {
		return fmt.Sprintf("pod %s fits no node: %s", e.Pod, e.Blocker.Detail)
	}
	parts := make([]string, 0, maxNodesInMessage+1)
	for i, n := range e.Nodes {
		if i == maxNodesInMessage {
			parts = append(parts, fmt.Sprintf("and %d more nodes", len(e.Nodes)-i))
			break
		}
		parts = append(parts, n.String())
	}
	return fmt.Sprintf("pod %s fits none of %d GPU nodes: %s; %s: %s", e.Pod, len(e.Nodes), e.Blocker.Detail, e.Summary(), strings.Join(parts, " | "))
}

// Unwrap returns ErrNoFit.
func (e *FitError) Unwrap() error { return ErrNoFit }

// Summary aggregates GPU reasons as HAMi's events do, "N/M Reason" with M
// the number of GPUs checked, most frequent first.
func (e *FitError) Summary() string {
	counts := map[Reason]int{}
	total := 0
	for _, n := range e.Nodes {
		if len(n.GPUs) == 0 {
			counts[n.Reason]++
			total++
		}
		for _, g := range n.GPUs {
			counts[g.Reason]++
			total++
		}
	}
	reasons := make([]Reason, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if counts[reasons[i]] != counts[reasons[j]] {
			return counts[reasons[i]] > counts[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d/%d %s", counts[r], total, r)
	}
	return strings.Join(parts, ", ")
}

// gpuDetail writes the numbers behind a GPU reason.
func gpuDetail(r Reason, w *workGPU, c *ContainerRequest, sel *Selectors) string {
	d := &w.g.dev
	switch r {
	case ReasonCardNotHealth:
		return "unhealthy"
	case ReasonCardCordoned:
		return "cordoned by " + AnnotationCordon
	case ReasonCardTypeMismatch:
		return sel.typeAllowed(d)
	case ReasonCardUUIDMismatch:
		return sel.uuidAllowed(d.ID)
	case ReasonCardTimeSlicingExhausted:
		return fmt.Sprintf("all %d slots used", d.Count)
	case ReasonExclusiveDeviceAllocateConflict:
		if c.Cores == 100 {
			return fmt.Sprintf("exclusive request (100 cores) needs an idle card; %d tasks use it", w.used.Slots)
		}
		return fmt.Sprintf("mutex policy needs an idle card; %d tasks use it", w.used.Slots)
	case ReasonCardInsufficientMemory:
		return fmt.Sprintf("%d MiB free < %d requested", int64(d.MemoryMiB)-w.used.MemoryMiB, c.memoryOn(d.MemoryMiB))
	case ReasonCardInsufficientCore:
		return fmt.Sprintf("%d cores free < %d requested", int64(d.Cores)-w.used.Cores, c.Cores)
	case ReasonCardComputeUnitsExhausted:
		return fmt.Sprintf("all %d cores allocated; a 0-core request cannot join", d.Cores)
	case ReasonCardMIGUnsupported:
		return "dynamic MIG placement is not modelled by gpushare"
	}
	return string(r)
}

// explainLocked finds the pod's blocker and fits it on every GPU node,
// recording why each fails.
func (l *Ledger) explainLocked(p *plan, s *scratch) error {
	fe := &FitError{Pod: p.req.key(), Blocker: l.blockerLocked(p)}
	for _, name := range l.nodeNamesLocked() {
		n := l.nodes[name]
		if !n.registered || len(n.gpus) == 0 {
			if err := l.problem("node/" + name); err != nil {
				fe.Nodes = append(fe.Nodes, NodeFailure{Node: name, Reason: ReasonNodeNotRegistered, Detail: err.Error()})
			}
			continue
		}
		var f NodeFailure
		if fitNode(n, p, s, &f) {
			// Cannot happen while the index holds every GPU node; say so
			// rather than claim a reason.
			f = NodeFailure{Node: name, Detail: "fits now (ledger changed during the fit)"}
		}
		fe.Nodes = append(fe.Nodes, f)
	}
	if p.quota != nil {
		fe.Blocker = l.quotaBlockerLocked(p, s, fe)
	}
	return fe
}

// quotaBlockerLocked returns BlockQuota when the pod fits some node once
// its namespace's quota is left out, else fe's blocker.
func (l *Ledger) quotaBlockerLocked(p *plan, s *scratch, fe *FitError) Blocker {
	var first *QuotaExceeded
	for _, n := range fe.Nodes {
		for _, g := range n.GPUs {
			if first == nil && g.Quota != nil {
				first = g.Quota
			}
		}
	}
	if first == nil {
		return fe.Blocker
	}
	qc := p.quota
	p.quota = nil
	defer func() { p.quota = qc }()
	fits := false
	l.index.visit(p.nodePolicy, func(e *indexEntry) bool {
		fits = fitNode(e.n, p, s, nil)
		return !fits
	})
	if !fits {
		return fe.Blocker
	}
	return Blocker{Kind: BlockQuota, Need: first.Asked, Best: max(first.Limit-first.Used, 0),
		Detail: "over quota: " + first.String(), Quota: first}
}
