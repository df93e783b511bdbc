package gpushare

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Annotations returns the pod annotations HAMi's scheduler writes when it
// decides this placement (at Filter time): the node, the decision's Unix
// time, and the allocation string HAMi writes (the entries of the
// containers that got GPUs, see EmptyEntries) in both -to-allocate and
// -allocated.
func (p Placement) Annotations(now time.Time) map[string]string {
	alloc := EncodePodDevices(p.written())
	return map[string]string{
		AnnotationNode:       p.Node,
		annotationTime:       strconv.FormatInt(now.Unix(), 10),
		AnnotationToAllocate: alloc,
		AnnotationAllocated:  alloc,
	}
}

// written returns the allocation as HAMi writes it: the entries of the
// containers that got GPUs, in order, and an empty entry for a GPU-less
// container only when EmptyEntries is set. HAMi's scoreNode appends those
// placeholders under the node's device types (the models) while
// PatchAnnotations writes the "NVIDIA" list (pkg/scheduler/score.go:
// 233-281, pkg/device/nvidia/device.go:505@v2.10.0), so they survive only
// on a node that registers a device of type exactly "NVIDIA". HAMi then
// reads the entries by position: the first InitContainers are taken as
// init containers' (see Ledger.SetPod).
func (p Placement) written() PodAllocation {
	if p.EmptyEntries {
		return p.Containers
	}
	out := make(PodAllocation, 0, len(p.Containers))
	for _, c := range p.Containers {
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// AllocationError reports a placement Allocate refuses because one GPU
// share breaks a rule Fit applies. It wraps ErrOverAllocation when the GPU
// lacks room (slots, memory, cores), ErrQuotaExceeded when the namespace's
// quota does, and ErrGPUConflict otherwise.
type AllocationError struct {
	// Pod is "namespace/name"; Node the placement's node.
	Pod, Node string
	// Container is the position of the container in the placement.
	Container int
	// GPU is the GPU's UUID.
	GPU string
	// Reason is the rule broken, in HAMi's words.
	Reason Reason
	// Used is the GPU's usage the share was checked against (with the
	// placement's earlier containers); Share is the share.
	Used, Share Amount
	// Quota names the quota exceeded, for ReasonResourceQuotaNotFit.
	Quota *QuotaExceeded
}

// Error describes the failure in one line.
func (e *AllocationError) Error() string {
	if e.Quota != nil {
		return fmt.Sprintf("allocate %s on %s: container %d: GPU %s: %s (%s)", e.Pod, e.Node, e.Container, e.GPU, e.Reason, e.Quota)
	}
	return fmt.Sprintf("allocate %s on %s: container %d: GPU %s: %s (share %d MiB, %d cores; GPU has %d slots, %d MiB, %d cores in use)",
		e.Pod, e.Node, e.Container, e.GPU, e.Reason, e.Share.MemoryMiB, e.Share.Cores, e.Used.Slots, e.Used.MemoryMiB, e.Used.Cores)
}

// Unwrap returns ErrOverAllocation, ErrQuotaExceeded or ErrGPUConflict.
func (e *AllocationError) Unwrap() error {
	if e.Reason == ReasonResourceQuotaNotFit {
		return ErrQuotaExceeded
	}
	if capacityReason(e.Reason) {
		return ErrOverAllocation
	}
	return ErrGPUConflict
}

// Allocate records a placement (from Fit, or decided elsewhere) as a pod's
// allocation, the commit half of Fit-then-Allocate. Every per-GPU rule Fit
// applies must still hold, container by container against the usage the
// earlier containers leave (with CollapseInitContainers, init containers
// each against the node as it is): the GPU is healthy and not cordoned,
// has a free slot, the memory and cores, is idle for a 100-core share on a
// 100-core card, has unallocated cores for a 0-core share, is idle under
// the placement's mutex policy, and appears once per container; and the
// namespace's quota, checked share by share as HAMi's Fit checks it, holds
// (see SetResourceQuota). Otherwise
// Allocate changes nothing and returns an *AllocationError (wrapping
// ErrOverAllocation or ErrGPUConflict), or ErrPodExists, ErrUnknownNode,
// ErrUnknownGPU.
func (l *Ledger) Allocate(p Placement) error {
	c := p
	c.Containers = make(PodAllocation, len(p.Containers))
	for i, ctr := range p.Containers {
		c.Containers[i] = append(ContainerAllocation(nil), ctr...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.commitLocked(c, true)
}

// commitLocked adds a placement; check applies the rules first (Place,
// which has just fitted under the same lock, skips them).
func (l *Ledger) commitLocked(p Placement, check bool) error {
	key := podKey{p.Namespace, p.Name}
	if l.pods[key] != nil {
		return fmt.Errorf("allocate %s: %w", key, ErrPodExists)
	}
	n := l.nodes[p.Node]
	if n == nil || !n.registered || len(n.gpus) == 0 {
		return fmt.Errorf("allocate %s on %s: %w", key, p.Node, ErrUnknownNode)
	}
	if check {
		if err := l.admitLocked(n, key, p); err != nil {
			return err
		}
	}
	ps := &podState{podKey: key, node: p.Node, alloc: p.written(),
		initCount: p.InitContainers, ctrCount: len(p.Containers)}
	ps.contrib = contributions(ps, l.cfg.CollapseInitContainers)
	for _, c := range ps.contrib {
		g := n.gpu(c.id)
		if g == nil {
			return fmt.Errorf("allocate %s on %s: GPU %s: %w", key, p.Node, c.id, ErrUnknownGPU)
		}
		if after := g.used.Add(c.used); after.exceeds(g.capacity()) {
			return fmt.Errorf("allocate %s on %s: GPU %s would use %+v of %+v: %w",
				key, p.Node, c.id, after, g.capacity(), ErrOverAllocation)
		}
	}
	l.addPodLocked(ps)
	return nil
}

// admitLocked applies the per-GPU rules to every share of p.
func (l *Ledger) admitLocked(n *nodeState, key podKey, p Placement) error {
	var pol gpuPolicy
	if p.GPUPolicy != "" {
		var err error
		if pol, err = compileGPUPolicy(p.GPUPolicy); err != nil {
			return fmt.Errorf("allocate %s: %w", key, err)
		}
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	s.work, _ = resetWork(n, s.work, s.order)
	qc := l.quotaCheckLocked(p.Namespace)
	if qc != nil {
		s.q.reset(l.cfg.CollapseInitContainers, p.EmptyEntries, p.InitContainers)
	}
	for ci, ctr := range p.Containers {
		isolated := l.cfg.CollapseInitContainers && ci < p.InitContainers
		s.sel = s.sel[:0]
		if qc != nil {
			s.q.beginAt(isolated, placementPos(p, ci))
		}
		for _, d := range ctr {
			gi := n.gpuIndex(d.DeviceID())
			if gi < 0 {
				return fmt.Errorf("allocate %s on %s: GPU %s: %w", key, p.Node, d.UUID, ErrUnknownGPU)
			}
			w := &s.work[gi]
			used := w.used
			if isolated {
				used = w.g.used
			}
			share := Amount{1, int64(d.MemoryMiB), int64(d.Cores)}
			r := admitGPU(w.g, used, share.MemoryMiB, share.Cores, pol.mutex)
			if slices.Contains(s.sel, gi) {
				r = ReasonDuplicateGPU
			}
			if r == "" && qc != nil {
				r = s.quotaRule(qc, d.DeviceID(), share.MemoryMiB, share.Cores)
			}
			if r != "" {
				e := &AllocationError{Pod: key.String(), Node: p.Node, Container: ci, GPU: d.UUID, Reason: r, Used: used, Share: share}
				if r == ReasonResourceQuotaNotFit {
					e.Quota = s.qfail
				}
				return e
			}
			if qc != nil {
				s.q.add(d.DeviceID(), share.MemoryMiB, share.Cores)
			}
			s.sel = append(s.sel, gi)
		}
		if qc != nil {
			s.q.end()
		}
		if isolated {
			continue
		}
		for k, gi := range s.sel {
			s.work[gi].used = s.work[gi].used.Add(Amount{1, int64(ctr[k].MemoryMiB), int64(ctr[k].Cores)})
		}
	}
	return nil
}

// Release removes a pod's allocation; it is DeletePod.
func (l *Ledger) Release(namespace, name string) { l.DeletePod(namespace, name) }

// placementPos is the position of container ci's entry among the app
// entries HAMi's fitQuota sees (see podQuota): the app containers before
// it that take an entry.
func placementPos(p Placement, ci int) int {
	pos := 0
	for j := p.InitContainers; j < ci; j++ {
		if p.EmptyEntries || len(p.Containers[j]) > 0 {
			pos++
		}
	}
	return pos
}
