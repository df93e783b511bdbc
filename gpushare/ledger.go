package gpushare

import (
	"errors"
	"log/slog"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// Ledger is the cluster's GPU accounting as HAMi's scheduler sees it: per
// GPU, node and namespace, what is registered, allocated and free, and which
// pods hold what. It is built from Node and Pod objects (SetNode, SetPod,
// Load), kept current from a cluster by package live, and answers Fit, Place and
// WhatIf. Allocations it makes itself (Allocate, Place) never exceed a GPU's
// capacity. A Ledger is safe for concurrent use.
type Ledger struct {
	cfg Config
	log *slog.Logger

	mu       sync.RWMutex
	nodes    map[string]*nodeState
	pods     map[podKey]*podState
	problems map[string]*ObjectError
	index    nodeIndex
	bulk     bool
	// quotas, quotaObjs and nsUsed are HAMi's QuotaManager (quota.go).
	quotas    map[string]*nsQuota
	quotaObjs map[podKey]quotaSpec
	nsUsed    map[string]Amount
}

// gpu is one registered GPU and its usage.
type gpu struct {
	dev      Device
	cordoned bool
	// nvidia reports a type HAMi's scheduler takes for an NVIDIA GPU
	// (Device.IsNVIDIA); others are counted but never chosen.
	nvidia bool
	used   Amount
}

func (g *gpu) capacity() Amount {
	return Amount{int64(g.dev.Count), int64(g.dev.MemoryMiB), int64(g.dev.Cores)}
}

// schedulable reports whether new work may land on g at all.
func (g *gpu) schedulable() bool {
	return g.dev.Health && !g.cordoned && g.dev.Mode != ModeMIG
}

// nodeState is one node: its GPUs (when registered) and the pods HAMi
// placed on it.
type nodeState struct {
	name        string
	registered  bool
	registerRaw string
	cordonRaw   string
	gpus        []gpu
	nvidiaGPUs  int
	// migGPUs counts healthy, uncordoned NVIDIA GPUs in MIG mode.
	migGPUs int
	// pods are the counted pods on the node; a pod knows its slot.
	pods []*podState

	score   float32
	indexed bool
}

// podKey identifies a pod.
type podKey struct{ namespace, name string }

func (k podKey) String() string { return k.namespace + "/" + k.name }

// podState is one counted pod: its allocation and what it adds per GPU.
type podState struct {
	podKey
	node                string
	slot                int
	raw                 string
	alloc               PodAllocation
	initCount, ctrCount int
	initDone            bool
	contrib             []contribution
}

// contribution is what one pod adds to one GPU.
type contribution struct {
	id   string
	used Amount
}

// NewLedger returns an empty ledger. The config is checked; errors wrap
// ErrInvalidConfig.
func NewLedger(cfg Config) (*Ledger, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Ledger{
		cfg:       cfg,
		log:       cfg.Logger,
		nodes:     map[string]*nodeState{},
		pods:      map[podKey]*podState{},
		problems:  map[string]*ObjectError{},
		quotas:    map[string]*nsQuota{},
		quotaObjs: map[podKey]quotaSpec{},
		nsUsed:    map[string]Amount{},
	}, nil
}

// Config returns the ledger's config with defaults filled in.
func (l *Ledger) Config() Config { return l.cfg }

// Load applies many nodes and pods at once, faster than one by one. It
// returns the problems met (decode errors, joined); every valid object is
// applied regardless.
func (l *Ledger) Load(nodes []corev1.Node, pods []corev1.Pod) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bulk = true
	var errs []error
	for i := range nodes {
		if err := l.setNodeLocked(&nodes[i]); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range pods {
		if err := l.setPodLocked(&pods[i]); err != nil {
			errs = append(errs, err)
		}
	}
	l.bulk = false
	l.reindexAllLocked()
	return errors.Join(errs...)
}

// SetNode applies a Node: its registration (hami.io/node-nvidia-register)
// and cordon list (hami.io/device-cordon). A node without registration has
// no GPUs. A registration that does not decode leaves the node without GPUs
// (as HAMi does), is recorded in Problems, and is returned.
func (l *Ledger) SetNode(node *corev1.Node) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.setNodeLocked(node)
}

func (l *Ledger) setNodeLocked(node *corev1.Node) error {
	reg, hasReg := node.Annotations[AnnotationRegister]
	cordon := node.Annotations[AnnotationCordon]
	n := l.nodes[node.Name]
	if n != nil && n.registered == hasReg && n.registerRaw == reg && n.cordonRaw == cordon {
		return l.problem("node/" + node.Name)
	}
	if n == nil {
		n = &nodeState{name: node.Name}
		l.nodes[node.Name] = n
	}
	n.registered, n.registerRaw, n.cordonRaw = hasReg, reg, cordon
	n.gpus = nil
	pkey := "node/" + node.Name
	delete(l.problems, pkey)
	var err error
	if hasReg {
		var devs []Device
		devs, err = DecodeNodeDevices(reg)
		if err == nil {
			n.gpus = make([]gpu, len(devs))
			for i := range devs {
				n.gpus[i].dev, n.gpus[i].nvidia = devs[i], devs[i].IsNVIDIA()
			}
			err = n.applyCordon(cordon)
		}
	}
	n.nvidiaGPUs, n.migGPUs = 0, 0
	for i := range n.gpus {
		if g := &n.gpus[i]; g.nvidia {
			n.nvidiaGPUs++
			if g.dev.Mode == ModeMIG && g.dev.Health && !g.cordoned {
				n.migGPUs++
			}
		}
	}
	n.recount()
	l.reindexLocked(n)
	if err != nil {
		pe := &ObjectError{Object: pkey, Reason: DropMalformedRegistration, Err: err}
		l.problems[pkey] = pe
		l.log.Debug("gpushare: node registration", "node", node.Name, "err", err)
		return pe
	}
	return nil
}

func (n *nodeState) applyCordon(value string) error {
	ids, err := DecodeCordon(value)
	for _, id := range ids {
		for i := range n.gpus {
			if n.gpus[i].dev.ID == id {
				n.gpus[i].cordoned = true
			}
		}
	}
	return err
}

// recount rebuilds the node's usage from its pods.
func (n *nodeState) recount() {
	for i := range n.gpus {
		n.gpus[i].used = Amount{}
	}
	for _, p := range n.pods {
		n.apply(p.contrib, 1)
	}
}

// apply adds (sign 1) or removes (sign -1) contributions. Contributions to
// GPUs the node does not register are ignored, as HAMi does.
func (n *nodeState) apply(cs []contribution, sign int64) {
	for _, c := range cs {
		if g := n.gpu(c.id); g != nil {
			g.used.Slots += sign * c.used.Slots
			g.used.MemoryMiB += sign * c.used.MemoryMiB
			g.used.Cores += sign * c.used.Cores
		}
	}
}

func (n *nodeState) gpu(id string) *gpu {
	if i := n.gpuIndex(id); i >= 0 {
		return &n.gpus[i]
	}
	return nil
}

func (n *nodeState) gpuIndex(id string) int {
	for i := range n.gpus {
		if n.gpus[i].dev.ID == id {
			return i
		}
	}
	return -1
}

// DeleteNode forgets a node's GPUs. Pods HAMi placed on it stay counted
// until they are deleted or finish, and count again if it comes back.
func (l *Ledger) DeleteNode(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.nodes[name]
	if n == nil {
		return
	}
	delete(l.problems, "node/"+name)
	n.registered, n.registerRaw, n.cordonRaw, n.gpus = false, "", "", nil
	l.reindexLocked(n)
	if len(n.pods) == 0 {
		delete(l.nodes, name)
	}
}

// nodeNames returns the ledger's node names in order.
func (l *Ledger) nodeNamesLocked() []string {
	names := make([]string, 0, len(l.nodes))
	for name := range l.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
