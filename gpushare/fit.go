package gpushare

import (
	"fmt"
	"sync"
)

// Placement is where a pod goes and which GPU shares each container gets.
type Placement struct {
	// Namespace and Name identify the pod.
	Namespace, Name string
	// Node is the chosen node.
	Node string
	// Score is the chosen node's score when it was chosen: HAMi's node
	// score (see NodeScore) from the node's usage before the pod, 0 for an
	// idle node up to 30 for a node whose slots, cores and memory are all
	// allocated. Binpack took the highest, spread the lowest.
	Score float32
	// GPUPolicy is the GPU policy the placement was decided with. Allocate
	// applies its filter again: under mutex every GPU must still be idle.
	GPUPolicy GPUPolicy
	// Containers has one entry per container of the request, init
	// containers first: the allocation HAMi would write.
	Containers PodAllocation
	// InitContainers is the number of init containers at the front of
	// Containers.
	InitContainers int
	// EmptyEntries says HAMi writes an empty entry for each GPU-less
	// container: the node registers a device of type exactly "NVIDIA"
	// (HAMi's allocation string then lists them). Fit sets it.
	EmptyEntries bool
}

// plan is a PodRequest compiled for fitting.
type plan struct {
	req        *PodRequest
	nodePolicy NodePolicy
	gpu        gpuPolicy
	ord        gpuOrder
	numaBind   bool
	collapse   bool
	weights    Weights
	// quota is the namespace's quota, nil when none is set; fitLocked
	// fills it in under the ledger's lock.
	quota *quotaCheck
	// Quick-check needs: the most GPUs, absolute MiB and cores any
	// container asks for.
	needCount          int32
	needMem, needCores int64
}

func (l *Ledger) compile(req *PodRequest) (plan, error) {
	if err := req.validate(); err != nil {
		return plan{}, err
	}
	p := plan{req: req, nodePolicy: l.cfg.NodePolicy, weights: req.Weights,
		numaBind: req.Selectors.NUMABind, collapse: l.cfg.CollapseInitContainers}
	if req.NodePolicy != "" {
		p.nodePolicy = req.NodePolicy
	}
	gp := l.cfg.GPUPolicy
	if req.GPUPolicy != "" {
		gp = req.GPUPolicy
	}
	var err error
	if p.gpu, err = compileGPUPolicy(gp); err != nil {
		return plan{}, err
	}
	p.ord = newGPUOrder(&p.gpu, p.numaBind)
	if p.weights == (Weights{}) {
		p.weights = DefaultWeights()
	}
	for i := range req.Containers {
		c := &req.Containers[i]
		if c.Count == 0 {
			continue
		}
		p.needCount = max(p.needCount, c.Count)
		p.needMem = max(p.needMem, int64(c.MemoryMiB))
		p.needCores = max(p.needCores, int64(c.Cores))
	}
	return p, nil
}

func (p *plan) quickOK(e *indexEntry) bool {
	return e.eligible >= p.needCount && e.maxFreeMem >= p.needMem && e.maxFreeCores >= p.needCores
}

// mayFit is a cheaper necessary condition than fitNode: every container
// finds enough GPUs that pass the per-GPU rules on their own, ignoring
// selectors, order and the pod's other containers. (The rules only get
// stricter as usage grows, so what fails here fails in fitNode.)
func (p *plan) mayFit(n *nodeState) bool {
	for i := range p.req.Containers {
		c := &p.req.Containers[i]
		if c.Count == 0 {
			continue
		}
		var ok int32
		for j := range n.gpus {
			g := &n.gpus[j]
			if g.nvidia && admitGPU(g, g.used, int64(c.memoryOn(g.dev.MemoryMiB)), int64(c.Cores), p.gpu.mutex) == "" {
				ok++
			}
		}
		if ok < c.Count {
			return false
		}
	}
	return true
}

// workGPU is a GPU's usage while a pod's containers are being placed.
type workGPU struct {
	g     *gpu
	used  Amount
	score float32
}

// pick is a chosen GPU for a container.
type pick struct {
	ctr, gpu int
	mem      int32
}

type scratch struct {
	work, initWork   []workGPU
	order, initOrder []int
	sel              []int
	picks            []pick
	sorter           gpuSorter
	q                podQuota
	// ambiguous names a node where the topology-aware policy found more
	// GPUs than a container asks.
	ambiguous string
	// qfail is the quota a GPU failed, for the explanation.
	qfail *QuotaExceeded
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Fit finds where HAMi would place the pod, without allocating: the node
// chosen by the node policy among those where every container fits, and
// for each container the GPUs chosen by the GPU policy. When nothing fits
// it returns a *FitError saying what blocks the pod, then why per node and
// per GPU. It checks the request's ranges first (errors wrap
// ErrInvalidRequest).
func (l *Ledger) Fit(req PodRequest) (Placement, error) {
	p, err := l.compile(&req)
	if err != nil {
		return Placement{}, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.fitLocked(&p)
}

// Place fits the pod and allocates it in one step, under one lock.
func (l *Ledger) Place(req PodRequest) (Placement, error) {
	p, err := l.compile(&req)
	if err != nil {
		return Placement{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	pl, err := l.fitLocked(&p)
	if err != nil {
		return Placement{}, err
	}
	if err := l.commitLocked(pl, false); err != nil {
		return Placement{}, err
	}
	return pl, nil
}

func (l *Ledger) fitLocked(p *plan) (Placement, error) {
	p.quota = l.quotaCheckLocked(p.req.Namespace)
	if p.gpu.topology && p.quota != nil {
		return Placement{}, &NotModelledError{Pod: p.req.key(), Feature: FeatureTopologyAware,
			Detail: "with a quota in namespace " + p.req.Namespace}
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	var found *indexEntry
	mig := ""
	s.ambiguous = ""
	l.index.visit(p.nodePolicy, func(e *indexEntry) bool {
		if e.n.migGPUs > 0 && mig == "" {
			mig = e.n.name
		}
		if p.quickOK(e) && p.mayFit(e.n) && fitNode(e.n, p, s, nil) {
			found = e
			return false
		}
		return true
	})
	switch {
	case mig != "":
		return Placement{}, &NotModelledError{Pod: p.req.key(), Feature: FeatureDynamicMIG, Node: mig,
			Detail: "a GPU in MIG mode ranks at or before the node chosen"}
	case s.ambiguous != "":
		return Placement{}, &NotModelledError{Pod: p.req.key(), Feature: FeatureTopologyAware, Node: s.ambiguous,
			Detail: "more GPUs fit a container than it asks"}
	}
	if found == nil {
		return Placement{}, l.explainLocked(p, s)
	}
	pl := placementFrom(found.n, p.req, s.picks)
	// The policy comes from the request or the config, not from p, so that
	// p (and the request it points to) can stay on the stack.
	pl.Score, pl.GPUPolicy = found.score, p.req.GPUPolicy
	if pl.GPUPolicy == "" {
		pl.GPUPolicy = l.cfg.GPUPolicy
	}
	return pl, nil
}

func placementFrom(n *nodeState, req *PodRequest, picks []pick) Placement {
	pl := Placement{Namespace: req.Namespace, Name: req.Name, Node: n.name,
		Containers: make(PodAllocation, len(req.Containers))}
	devs := make([]DeviceAllocation, len(picks))
	for i, pk := range picks {
		devs[i] = DeviceAllocation{UUID: n.gpus[pk.gpu].dev.ID, Type: VendorNVIDIA,
			MemoryMiB: pk.mem, Cores: req.Containers[pk.ctr].Cores}
	}
	for ci := range req.Containers {
		start := 0
		for start < len(picks) && picks[start].ctr < ci {
			start++
		}
		end := start
		for end < len(picks) && picks[end].ctr == ci {
			end++
		}
		pl.Containers[ci] = devs[start:end:end]
		if req.Containers[ci].Init {
			pl.InitContainers++
		}
	}
	for i := range n.gpus {
		pl.EmptyEntries = pl.EmptyEntries || n.gpus[i].dev.Type == VendorNVIDIA
	}
	return pl
}

// resetWork loads the node's GPUs into work and order in registration
// order.
func resetWork(n *nodeState, work []workGPU, order []int) ([]workGPU, []int) {
	work, order = work[:0], order[:0]
	for i := range n.gpus {
		work = append(work, workGPU{g: &n.gpus[i], used: n.gpus[i].used})
		order = append(order, i)
	}
	return work, order
}

// fitNode places every container of the pod on n's GPUs as HAMi's
// scoreNode does, leaving the picks in s: the app containers one after
// another on one working copy, whose GPU order carries over from one to
// the next; with CollapseInitContainers (v2.10) each init container on a
// fresh copy of the node, since init containers run one at a time (without
// it, init containers are placed in sequence with the others, as they are
// counted). With exp set it records why the pod does not fit.
func fitNode(n *nodeState, p *plan, s *scratch, exp *NodeFailure) bool {
	s.work, s.order = resetWork(n, s.work, s.order)
	s.picks = s.picks[:0]
	if p.quota != nil {
		s.q.reset(p.collapse, emptyEntries(n), numInit(p.req.Containers))
	}
	for ci := range p.req.Containers {
		c := &p.req.Containers[ci]
		if c.Count == 0 {
			continue
		}
		if p.quota != nil {
			s.q.begin(p.req.Containers, ci)
		}
		work, order := s.work, s.order
		isolated := p.collapse && c.Init
		if isolated {
			s.initWork, s.initOrder = resetWork(n, s.initWork, s.initOrder)
			work, order = s.initWork, s.initOrder
		}
		s.sortGPUs(p, c, work, order)
		if int(c.Count) > n.nvidiaGPUs {
			if exp != nil {
				*exp = NodeFailure{Node: n.name, Container: c.Name, Reason: ReasonNodeInsufficientDevice,
					Detail: fmt.Sprintf("needs %d GPUs, node has %d", c.Count, n.nvidiaGPUs)}
			}
			return false
		}
		if !fitContainer(c, p, s, work, order, n.name, exp) {
			return false
		}
		if p.quota != nil {
			s.q.end()
		}
		for _, wi := range s.sel {
			w := &work[wi]
			mem := c.memoryOn(w.g.dev.MemoryMiB)
			if !isolated {
				w.used = w.used.Add(Amount{1, int64(mem), int64(c.Cores)})
			}
			s.picks = append(s.picks, pick{ctr: ci, gpu: wi, mem: mem})
		}
	}
	return true
}

// fitContainer is HAMi's NVIDIA Fit: it walks order from the last GPU to
// the first and chooses c.Count GPUs in s.sel.
func fitContainer(c *ContainerRequest, p *plan, s *scratch, work []workGPU, order []int, node string, exp *NodeFailure) bool {
	sel := &p.req.Selectors
	typed := len(sel.UseTypes) > 0 || len(sel.NoUseTypes) > 0 || sel.Mode != ""
	uuids := len(sel.UseUUIDs) > 0 || len(sel.NoUseUUIDs) > 0
	s.sel = s.sel[:0]
	need := c.Count
	prevNUMA := -1
	var gpus []GPUFailure
	for k := len(order) - 1; k >= 0; k-- {
		wi := order[k]
		w := &work[wi]
		if !w.g.nvidia {
			continue // not among the NVIDIA devices HAMi's Fit is given
		}
		r := gpuState(w.g)
		if r == "" && typed && sel.typeAllowed(&w.g.dev) != "" {
			r = ReasonCardTypeMismatch
		}
		if r == "" && p.numaBind && w.g.dev.NUMA != prevNUMA {
			// numa-bind: a GPU on another NUMA node starts over; HAMi
			// counts NumaNotFit once per GPU given up
			// (pkg/device/nvidia/device.go:746-748@v2.10.0).
			if exp != nil {
				for _, gi := range s.sel {
					g := work[gi].g
					gpus = append(gpus, GPUFailure{ID: g.dev.ID, Reason: ReasonNUMANotFit,
						Detail: fmt.Sprintf("fits, but only %d of %d GPUs fit on NUMA node %d", len(s.sel), c.Count, g.dev.NUMA)})
				}
			}
			s.sel, need, prevNUMA = s.sel[:0], c.Count, w.g.dev.NUMA
			s.q.cur = s.q.cur[:0]
		}
		if r == "" && uuids && sel.uuidAllowed(w.g.dev.ID) != "" {
			r = ReasonCardUUIDMismatch
		}
		mem := int64(c.memoryOn(w.g.dev.MemoryMiB))
		if r == "" {
			r = slotRule(w.g, w.used, p.gpu.mutex)
		}
		if r == "" && p.quota != nil {
			r = s.quotaRule(p.quota, w.g.dev.ID, mem, int64(c.Cores))
		}
		if r == "" {
			r = capacityRule(w.g, w.used, mem, int64(c.Cores))
		}
		if r != "" {
			if exp != nil {
				f := GPUFailure{ID: w.g.dev.ID, Reason: r, Detail: gpuDetail(r, w, c, sel)}
				if r == ReasonResourceQuotaNotFit {
					f.Quota, f.Detail = s.qfail, s.qfail.String()
				}
				gpus = append(gpus, f)
			}
			continue
		}
		if need == 0 {
			// topology-aware: one GPU more than asked fits.
			s.ambiguous = node
			return true
		}
		if p.quota != nil {
			s.q.add(w.g.dev.ID, mem, int64(c.Cores))
		}
		s.sel = append(s.sel, wi)
		if need--; need == 0 && !p.gpu.topology {
			return true
		}
	}
	if need == 0 {
		return true
	}
	if exp != nil {
		detail := fmt.Sprintf("%d of %d GPUs fit", len(s.sel), c.Count)
		if p.numaBind {
			detail += " on one NUMA node (" + AnnotationNUMABind + ")"
		}
		*exp = NodeFailure{Node: node, Container: c.Name, Reason: ReasonAllocatedCardsInsufficientRequest,
			Detail: detail, GPUs: gpus}
	}
	return false
}

// quotaRule is HAMi's fitQuota for one candidate GPU: the namespace's
// quota against the pod's usage with a share of mem and cores on it.
func (s *scratch) quotaRule(qc *quotaCheck, id string, mem, cores int64) Reason {
	m, c := s.q.with(id, mem, cores)
	if s.qfail = qc.exceeds(m, c); s.qfail != nil {
		return ReasonResourceQuotaNotFit
	}
	return ""
}
