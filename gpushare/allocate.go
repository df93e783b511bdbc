package gpushare

import (
	"fmt"
	"strconv"
	"time"
)

// Annotations returns the pod annotations HAMi's scheduler writes when it
// decides this placement (at Filter time): the node, the decision's Unix
// time, and the allocation string in both -to-allocate and -allocated.
func (p Placement) Annotations(now time.Time) map[string]string {
	alloc := EncodePodDevices(p.Containers)
	return map[string]string{
		AnnotationNode:       p.Node,
		AnnotationTime:       strconv.FormatInt(now.Unix(), 10),
		AnnotationToAllocate: alloc,
		AnnotationAllocated:  alloc,
	}
}

// Allocate records a placement (from Fit, or read elsewhere) as a pod's
// allocation. It refuses, changing nothing, when the pod is already
// allocated (ErrPodExists), the node or a GPU is unknown (ErrUnknownNode,
// ErrUnknownGPU), or any GPU would exceed its memory, cores or slots
// (ErrOverAllocation).
func (l *Ledger) Allocate(p Placement) error {
	c := p
	c.Containers = make(PodAllocation, len(p.Containers))
	for i, ctr := range p.Containers {
		c.Containers[i] = append(ContainerAllocation(nil), ctr...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.allocateLocked(c)
}

func (l *Ledger) allocateLocked(p Placement) error {
	key := podKey{p.Namespace, p.Name}
	if l.pods[key] != nil {
		return fmt.Errorf("allocate %s: %w", key, ErrPodExists)
	}
	n := l.nodes[p.Node]
	if n == nil || !n.registered || len(n.gpus) == 0 {
		return fmt.Errorf("allocate %s on %s: %w", key, p.Node, ErrUnknownNode)
	}
	ps := &podState{podKey: key, node: p.Node, alloc: p.Containers,
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

// Release removes a pod's allocation; it is DeletePod.
func (l *Ledger) Release(namespace, name string) { l.DeletePod(namespace, name) }
