package gpushare

import (
	"errors"
	"fmt"
	"maps"
)

// WhatIf answers "how many more pods of this shape fit now, and how much
// free memory would they leave that no such pod can use".
type WhatIf struct {
	// Fits is how many more pods of the shape fit, placed one after the
	// other as HAMi would place them.
	Fits int
	// Limited reports that the count stopped at the limit asked for.
	Limited bool
	// ByNode counts where they would go.
	ByNode map[string]int
	// FreeMiB is the free memory now on GPUs that take new pods (healthy,
	// not cordoned, hami-core).
	FreeMiB int64
	// StrandedMiB is the free memory left on those GPUs once Fits pods are
	// placed: memory no pod of this shape can use.
	StrandedMiB int64
	// Fragmentation is StrandedMiB / FreeMiB (0 with no free memory): the
	// share of today's free memory this shape cannot use.
	Fragmentation float64
	// Next says why one more pod would not fit; nil when Limited.
	Next *FitError
}

// WhatIf places pods shaped like req one after another on a copy of the
// ledger until one does not fit or limit pods are placed (limit ≤ 0 means
// no limit; the GPUs' slots bound the count). The ledger is not changed.
func (l *Ledger) WhatIf(req PodRequest, limit int) (WhatIf, error) {
	p, err := l.compile(&req)
	if err != nil {
		return WhatIf{}, err
	}
	l.mu.RLock()
	sim := l.cloneGPUsLocked()
	l.mu.RUnlock()

	out := WhatIf{ByNode: map[string]int{}, FreeMiB: sim.schedulableFreeMiB()}
	for limit <= 0 || out.Fits < limit {
		s := req
		// The pods stay in req's namespace, so that its quota counts them.
		s.Name = fmt.Sprintf("gpushare-whatif-%d", out.Fits)
		p.req = &s
		pl, err := sim.fitLocked(&p)
		var fe *FitError
		if errors.As(err, &fe) {
			fe.Pod = req.key()
			out.Next = fe
			break
		}
		if err != nil {
			return WhatIf{}, err
		}
		if err := sim.commitLocked(pl, false); err != nil {
			return WhatIf{}, fmt.Errorf("what-if: %w", err)
		}
		out.Fits++
		out.ByNode[pl.Node]++
	}
	out.Limited = out.Next == nil
	out.StrandedMiB = sim.schedulableFreeMiB()
	if out.FreeMiB > 0 {
		out.Fragmentation = float64(out.StrandedMiB) / float64(out.FreeMiB)
	}
	return out, nil
}

// cloneGPUsLocked copies the registered nodes and their GPU usage, and the
// namespaces' quotas and usage, without the pods: enough to simulate
// placements.
func (l *Ledger) cloneGPUsLocked() *Ledger {
	c := &Ledger{cfg: l.cfg, log: l.log, nodes: make(map[string]*nodeState, len(l.nodes)),
		pods: map[podKey]*podState{}, problems: map[string]*ObjectError{},
		quotas: make(map[string]*nsQuota, len(l.quotas)), quotaObjs: map[podKey]quotaSpec{},
		nsUsed: maps.Clone(l.nsUsed)}
	for ns, q := range l.quotas {
		cq := *q
		c.quotas[ns] = &cq
	}
	for name, n := range l.nodes {
		if !n.registered || len(n.gpus) == 0 {
			continue
		}
		c.nodes[name] = &nodeState{name: name, registered: true, gpus: append([]gpu(nil), n.gpus...), nvidiaGPUs: n.nvidiaGPUs, migGPUs: n.migGPUs}
	}
	c.reindexAllLocked()
	return c
}

func (l *Ledger) schedulableFreeMiB() int64 {
	var free int64
	for _, n := range l.nodes {
		for i := range n.gpus {
			if g := &n.gpus[i]; g.schedulable() {
				free += max(int64(g.dev.MemoryMiB)-g.used.MemoryMiB, 0)
			}
		}
	}
	return free
}
