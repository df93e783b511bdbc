package extender

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/cozystack/tenantkit/gpushare"
)

// Extender decides filter, prioritize and bind calls with gpushare on a
// ledger it keeps current from the apiserver. It is safe for concurrent
// use.
type Extender struct {
	cfg    Config
	client kubernetes.Interface
	ledger *gpushare.Ledger
	synced chan struct{}

	watchOnce sync.Once
	watchErr  error

	// mu orders the ledger's pod updates against binds: assumed holds the
	// pods a bind allocated whose annotations the informer has not shown
	// yet, so that an older event of the pod does not drop the allocation.
	mu      sync.Mutex
	assumed map[string]bool
}

// New returns an Extender for client's cluster. Start fills its ledger.
func New(client kubernetes.Interface, cfg Config) (*Extender, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: no client", ErrInvalidConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := gpushare.NewLedger(cfg.Ledger)
	if err != nil {
		return nil, err
	}
	return &Extender{cfg: cfg, client: client, ledger: l, synced: make(chan struct{}), assumed: map[string]bool{}}, nil
}

// Ledger returns the ledger the extender decides on.
func (x *Extender) Ledger() *gpushare.Ledger { return x.ledger }

// Watch fills the ledger from the cluster's Nodes and Pods through
// informers and keeps it current until ctx is done. It returns once the
// initial lists are applied; until then the extender answers 503. It runs
// once: later calls (Start's too) return the first call's result.
func (x *Extender) Watch(ctx context.Context) error {
	x.watchOnce.Do(func() { x.watchErr = x.watch(ctx) })
	return x.watchErr
}

func (x *Extender) watch(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(x.client, 0, informers.WithTransform(trim))
	nodes, err := factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    x.onNode,
		UpdateFunc: func(_, obj any) { x.onNode(obj) },
		DeleteFunc: func(obj any) {
			if n, ok := untombstone(obj).(*corev1.Node); ok {
				x.ledger.DeleteNode(n.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	pods, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    x.onPod,
		UpdateFunc: func(_, obj any) { x.onPod(obj) },
		DeleteFunc: func(obj any) {
			if p, ok := untombstone(obj).(*corev1.Pod); ok {
				x.mu.Lock()
				delete(x.assumed, p.Namespace+"/"+p.Name)
				x.ledger.DeletePod(p.Namespace, p.Name)
				x.mu.Unlock()
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	go func() { <-ctx.Done(); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), nodes.HasSynced, pods.HasSynced) {
		return fmt.Errorf("sync nodes and pods: %w", context.Cause(ctx))
	}
	close(x.synced)
	return nil
}

func (x *Extender) ready() bool {
	select {
	case <-x.synced:
		return true
	default:
		return false
	}
}

func (x *Extender) onNode(obj any) {
	if n, ok := obj.(*corev1.Node); ok {
		if err := x.ledger.SetNode(n); err != nil {
			x.cfg.Logger.Warn("gpushare extender: skipping node registration", "node", n.Name, "err", err)
		}
	}
}

func (x *Extender) onPod(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.assumed[key] {
		if !gpushare.Counts(p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return // older than the bind's patch: keep the allocation
		}
		delete(x.assumed, key)
	}
	if err := x.ledger.SetPod(p); err != nil {
		x.cfg.Logger.Warn("gpushare extender: skipping pod allocation", "pod", key, "err", err)
	}
}

func untombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// trim keeps what accounting reads: names, annotations, container names,
// phase and init container results.
func trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		t := &corev1.Pod{ObjectMeta: trimMeta(&o.ObjectMeta)}
		t.Spec.InitContainers = names(o.Spec.InitContainers)
		t.Spec.Containers = names(o.Spec.Containers)
		t.Status.Phase = o.Status.Phase
		for _, s := range o.Status.InitContainerStatuses {
			t.Status.InitContainerStatuses = append(t.Status.InitContainerStatuses,
				corev1.ContainerStatus{Name: s.Name, State: corev1.ContainerState{Terminated: s.State.Terminated}})
		}
		return t, nil
	case *corev1.Node:
		return &corev1.Node{ObjectMeta: trimMeta(&o.ObjectMeta)}, nil
	}
	return obj, nil
}

func trimMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID,
		ResourceVersion: m.ResourceVersion, DeletionTimestamp: m.DeletionTimestamp, Annotations: m.Annotations}
}

func names(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		out[i].Name = cs[i].Name
	}
	return out
}
