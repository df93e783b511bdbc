package gpushare

import (
	"fmt"
	"strings"
	"sync"
)

// Placement is where a pod goes and which GPU shares each container gets.
type Placement struct {
	// Namespace and Name identify the pod.
	Namespace, Name string
	// Node is the chosen node.
	Node string
	// Containers has one entry per container of the request, init
	// containers first: the allocation HAMi would write.
	Containers PodAllocation
	// InitContainers is the number of init containers at the front of
	// Containers.
	InitContainers int
}

// plan is a PodRequest compiled for fitting.
type plan struct {
	req        *PodRequest
	nodePolicy NodePolicy
	gpu        gpuPolicy
	weights    Weights
	// Quick-check needs: the most GPUs, absolute MiB and cores any
	// container asks for.
	needCount          int32
	needMem, needCores int64
}

func (l *Ledger) compile(req *PodRequest) (plan, error) {
	if err := req.Validate(); err != nil {
		return plan{}, err
	}
	p := plan{req: req, nodePolicy: l.cfg.NodePolicy, weights: req.Weights}
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
	if p.weights == (Weights{}) {
		p.weights = DefaultWeights
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
// finds enough GPUs that pass the usage checks on their own, ignoring
// selectors, policy order and the pod's other containers.
func (p *plan) mayFit(n *nodeState) bool {
	for i := range p.req.Containers {
		c := &p.req.Containers[i]
		if c.Count == 0 {
			continue
		}
		var ok int32
		for j := range n.gpus {
			g := &n.gpus[j]
			if g.schedulable() && usageFits(g, g.used, c, p.gpu.mutex) {
				ok++
			}
		}
		if ok < c.Count {
			return false
		}
	}
	return true
}

// usageFits is checkUsage as a predicate on a GPU and a usage.
func usageFits(g *gpu, used Amount, c *ContainerRequest, mutex bool) bool {
	d := &g.dev
	return int64(d.Count) > used.Slots &&
		!(mutex && used.Slots > 0) &&
		int64(d.MemoryMiB)-used.MemoryMiB >= int64(c.memoryOn(d.MemoryMiB)) &&
		int64(d.Cores)-used.Cores >= int64(c.Cores) &&
		!(d.Cores == 100 && c.Cores == 100 && used.Slots > 0) &&
		!(d.Cores != 0 && used.Cores == int64(d.Cores) && c.Cores == 0)
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
	work  []workGPU
	order []int
	sel   []int
	picks []pick
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Fit finds where HAMi would place the pod, without allocating: the node
// chosen by the node policy among those where every container fits, and
// for each container the GPUs chosen by the GPU policy. When nothing fits
// it returns a *FitError with the reason per node and per GPU. Requests are
// checked by PodRequest.Validate.
func (l *Ledger) Fit(req PodRequest) (Placement, error) {
	p, err := l.compile(&req)
	if err != nil {
		return Placement{}, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.fitLocked(&p)
}

// Place fits the pod and allocates it in one step.
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
	if err := l.allocateLocked(pl); err != nil {
		return Placement{}, err
	}
	return pl, nil
}

func (l *Ledger) fitLocked(p *plan) (Placement, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	var found *nodeState
	l.index.visit(p.nodePolicy, func(e *indexEntry) bool {
		if p.quickOK(e) && p.mayFit(e.n) && fitNode(e.n, p, s, nil) {
			found = e.n
			return false
		}
		return true
	})
	if found == nil {
		return Placement{}, l.explainLocked(p, s)
	}
	return placementFrom(found, p.req, s.picks), nil
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
	return pl
}

// fitNode places every container of the pod on n's GPUs in a working copy,
// as HAMi's Filter does, leaving the picks in s. With exp set it records why
// it failed.
func fitNode(n *nodeState, p *plan, s *scratch, exp *NodeFailure) bool {
	s.work = s.work[:0]
	for i := range n.gpus {
		s.work = append(s.work, workGPU{g: &n.gpus[i], used: n.gpus[i].used})
	}
	s.picks = s.picks[:0]
	for ci := range p.req.Containers {
		c := &p.req.Containers[ci]
		if c.Count == 0 {
			continue
		}
		if int(c.Count) > len(n.gpus) {
			if exp != nil {
				*exp = NodeFailure{Node: n.name, Container: c.Name, Reason: ReasonNodeInsufficientDevice,
					Detail: fmt.Sprintf("needs %d GPUs, node has %d", c.Count, len(n.gpus))}
			}
			return false
		}
		if !fitContainer(c, p, s, n.name, exp) {
			return false
		}
		for _, wi := range s.sel {
			w := &s.work[wi]
			mem := c.memoryOn(w.g.dev.MemoryMiB)
			w.used = w.used.Add(Amount{1, int64(mem), int64(c.Cores)})
			s.picks = append(s.picks, pick{ctr: ci, gpu: wi, mem: mem})
		}
	}
	return true
}

// fitContainer chooses c.Count GPUs for one container in s.sel.
func fitContainer(c *ContainerRequest, p *plan, s *scratch, node string, exp *NodeFailure) bool {
	sel := &p.req.Selectors
	numaBind := sel.NUMABind && c.Count > 1
	s.orderGPUs(p, numaBind)
	s.sel = s.sel[:0]
	need := c.Count
	prevNUMA := -1
	var gpus []GPUFailure
	for _, wi := range s.order {
		w := &s.work[wi]
		r := checkGPU(w, c, p, sel)
		if r == "" && numaBind {
			if prevNUMA >= 0 && w.g.dev.NUMA != prevNUMA {
				s.sel, need = s.sel[:0], c.Count
			}
			prevNUMA = w.g.dev.NUMA
		}
		if r == "" && sel.uuidAllowed(w.g.dev.ID) != "" {
			r = ReasonCardUUIDMismatch
		}
		if r == "" {
			r = checkUsage(w, c, p)
		}
		if r != "" {
			if exp != nil {
				gpus = append(gpus, GPUFailure{ID: w.g.dev.ID, Reason: r, Detail: gpuDetail(r, w, c, sel)})
			}
			continue
		}
		s.sel = append(s.sel, wi)
		if need--; need == 0 {
			return true
		}
	}
	if exp != nil {
		detail := fmt.Sprintf("%d of %d GPUs fit", len(s.sel), c.Count)
		if numaBind {
			detail += " on one NUMA node (" + AnnotationNUMABind + ")"
		}
		*exp = NodeFailure{Node: node, Container: c.Name, Reason: ReasonAllocatedCardsInsufficientRequest,
			Detail: detail, GPUs: gpus}
	}
	return false
}

// checkGPU applies HAMi's checks that do not depend on usage: health,
// cordon, type and mode.
func checkGPU(w *workGPU, c *ContainerRequest, p *plan, sel *Selectors) Reason {
	g := w.g
	switch {
	case !g.dev.Health:
		return ReasonCardNotHealth
	case g.cordoned:
		return ReasonCardCordoned
	case (len(sel.UseTypes) > 0 || len(sel.NoUseTypes) > 0 || sel.Mode != "") && sel.typeAllowed(&g.dev) != "":
		return ReasonCardTypeMismatch
	}
	return ""
}

// checkUsage applies HAMi's checks against the GPU's usage, in HAMi's
// order.
func checkUsage(w *workGPU, c *ContainerRequest, p *plan) Reason {
	d := &w.g.dev
	switch {
	case int64(d.Count) <= w.used.Slots:
		return ReasonCardTimeSlicingExhausted
	case p.gpu.mutex && w.used.Slots > 0:
		return ReasonExclusiveDeviceAllocateConflict
	case int64(d.MemoryMiB)-w.used.MemoryMiB < int64(c.memoryOn(d.MemoryMiB)):
		return ReasonCardInsufficientMemory
	case int64(d.Cores)-w.used.Cores < int64(c.Cores):
		return ReasonCardInsufficientCore
	case d.Cores == 100 && c.Cores == 100 && w.used.Slots > 0:
		return ReasonExclusiveDeviceAllocateConflict
	case d.Cores != 0 && w.used.Cores == int64(d.Cores) && c.Cores == 0:
		return ReasonCardComputeUnitsExhausted
	case d.Mode == ModeMIG:
		return ReasonCardMIGUnsupported
	}
	return ""
}

// orderGPUs sorts s.work's indexes into s.order by the GPU policy: the GPU
// tried first comes first. Scores use existing usage only (see
// DeviceScore). Ties go to the lower NUMA node, then the lower index.
func (s *scratch) orderGPUs(p *plan, numaBind bool) {
	s.order = s.order[:0]
	for i := range s.work {
		w := &s.work[i]
		w.score = DeviceScore(w.g.capacity(), w.used, Amount{}, p.weights)
		s.order = append(s.order, i)
	}
	keys := p.gpu.keys
	if len(keys) == 0 {
		keys = []sortKey{keySpread}
	}
	before := func(a, b *workGPU) bool {
		if numaBind && a.g.dev.NUMA != b.g.dev.NUMA {
			return a.g.dev.NUMA < b.g.dev.NUMA
		}
		for _, k := range keys {
			switch {
			case k == keyNUMA && a.g.dev.NUMA != b.g.dev.NUMA:
				return a.g.dev.NUMA < b.g.dev.NUMA
			case k == keySpread && a.score != b.score:
				return a.score < b.score
			case k == keyBinpack && a.score != b.score:
				return a.score > b.score
			}
		}
		if a.g.dev.NUMA != b.g.dev.NUMA {
			return a.g.dev.NUMA < b.g.dev.NUMA
		}
		if a.g.dev.Index != b.g.dev.Index {
			return a.g.dev.Index < b.g.dev.Index
		}
		return strings.Compare(a.g.dev.ID, b.g.dev.ID) < 0
	}
	for i := 1; i < len(s.order); i++ {
		for j := i; j > 0 && before(&s.work[s.order[j]], &s.work[s.order[j-1]]); j-- {
			s.order[j], s.order[j-1] = s.order[j-1], s.order[j]
		}
	}
}

// explainLocked fits the pod on every GPU node, recording why each fails.
func (l *Ledger) explainLocked(p *plan, s *scratch) error {
	fe := &FitError{Pod: p.req.key()}
	for _, name := range l.nodeNamesLocked() {
		n := l.nodes[name]
		if !n.registered || len(n.gpus) == 0 {
			if err := l.problems["node/"+name]; err != nil {
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
	return fe
}
