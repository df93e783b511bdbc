package nodeagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/internal/loopnet"
	"github.com/cozystack/tenantkit/localenv/internal/simnode"
)

// Config configures an Agent.
type Config struct {
	// Client is the agent's connection to the apiserver. Required.
	Client kubernetes.Interface
	// Nodes are the simulated nodes. Required; names must be unique.
	Nodes []simnode.Config
	// Dir holds one folder per node (pods' volumes, logs, local volumes).
	// Required.
	Dir string
	// Network hands out node and pod addresses. Required.
	Network *loopnet.Network
	// EtcdBinary is the etcd server run for etcd containers. Without it,
	// etcd containers fail to start with a clear waiting reason.
	EtcdBinary string
	// DNSServer is the cluster DNS server's host:port, given to etcd
	// processes as TENANTKIT_DNS_SERVER so that they resolve cluster names.
	DNSServer string
	// HeartbeatInterval is how often each node renews its Lease. Default
	// 2s; the controller manager's --node-monitor-grace-period must be a few
	// times longer.
	HeartbeatInterval time.Duration
	// MaxProbePeriod caps the period and initial delay of startup and
	// readiness probes (zero: as in the pod spec, as the kubelet does).
	// Liveness probes always keep the spec's timing.
	MaxProbePeriod time.Duration
	// RestartBackoff is the delay before the first restart of a crashed
	// container; it doubles on every crash up to 30 times its value.
	// Default 1s (the kubelet uses 10s up to 5m).
	RestartBackoff time.Duration
	// Logger receives pod and node events. Default: discard.
	Logger *slog.Logger
}

// Agent plays the kubelet for a set of simulated nodes. Its methods are safe
// for concurrent use.
type Agent struct {
	cfg     Config
	log     *slog.Logger
	nodes   map[string]*node
	order   []string
	factory informers.SharedInformerFactory
	pods    corelisters.PodLister
	probe   *http.Client
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	stopped bool
}

// Start registers the nodes (Node objects and Leases), starts their
// heartbeats and starts running the pods bound to them.
func Start(ctx context.Context, cfg Config) (*Agent, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, nodes: map[string]*node{}, stop: make(chan struct{}),
		workers: map[types.UID]*podWorker{},
		probe: &http.Client{Transport: &http.Transport{
			// Like the kubelet: probes do not verify serving certificates
			// and open a fresh connection each time.
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // probes only
			DisableKeepAlives: true,
		}}}
	for i, nc := range cfg.Nodes {
		n := &node{agent: a, cfg: nc, subnet: cfg.Network.Subnet(i), dir: filepath.Join(cfg.Dir, nc.Name)}
		if err := os.MkdirAll(n.dir, 0o700); err != nil {
			return nil, fmt.Errorf("node %s: %w", nc.Name, err)
		}
		if err := n.register(ctx); err != nil {
			return nil, err
		}
		a.nodes[nc.Name] = n
		a.order = append(a.order, nc.Name)
	}
	a.wg.Add(1)
	go a.heartbeats()
	if err := a.watchPods(ctx); err != nil {
		_ = a.Stop()
		return nil, err
	}
	return a, nil
}

func (cfg *Config) validate() error {
	if cfg.Client == nil || cfg.Dir == "" || cfg.Network == nil || len(cfg.Nodes) == 0 {
		return fmt.Errorf("%w: Client, Nodes, Dir and Network are required", ErrInvalidConfig)
	}
	seen := map[string]bool{}
	for _, n := range cfg.Nodes {
		if n.Name == "" || seen[n.Name] {
			return fmt.Errorf("%w: node names must be unique and non-empty (%q)", ErrInvalidConfig, n.Name)
		}
		seen[n.Name] = true
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 2 * time.Second
	}
	if cfg.RestartBackoff == 0 {
		cfg.RestartBackoff = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// watchPods runs an informer on pods bound to any node and hands each pod
// of ours to its worker.
func (a *Agent) watchPods(ctx context.Context) error {
	a.factory = informers.NewSharedInformerFactoryWithOptions(a.cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}))
	inf := a.factory.Core().V1().Pods()
	a.pods = inf.Lister()
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.dispatch(obj) },
		UpdateFunc: func(_, obj any) { a.dispatch(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				a.wake(pod.UID)
			}
		},
	})
	if err != nil {
		return err
	}
	a.factory.Start(a.stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return fmt.Errorf("node agent: sync pods: %w", ctx.Err())
	}
	return nil
}

func (a *Agent) dispatch(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n := a.nodes[pod.Spec.NodeName]
	if n == nil {
		return
	}
	a.mu.Lock()
	w := a.workers[pod.UID]
	if w == nil && !a.stopped {
		w = newPodWorker(a, n, pod)
		a.workers[pod.UID] = w
		a.wg.Add(1)
		go w.run()
	}
	a.mu.Unlock()
	if w != nil {
		w.wake()
	}
}

func (a *Agent) wake(uid types.UID) {
	a.mu.Lock()
	w := a.workers[uid]
	a.mu.Unlock()
	if w != nil {
		w.wake()
	}
}

func (a *Agent) forget(w *podWorker) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.workers[w.uid] == w {
		delete(a.workers, w.uid)
	}
}

// Nodes returns the node names in configuration order.
func (a *Agent) Nodes() []string { return slices.Clone(a.order) }

// NodeAddr returns a node's host (loopback) address, the twin of its
// InternalIP, or the zero Addr for an unknown node.
func (a *Agent) NodeAddr(name string) netip.Addr {
	if n := a.nodes[name]; n != nil {
		return n.subnet.NodeAddr()
	}
	return netip.Addr{}
}

// Stop kills every container process (SIGKILL: the environment discards
// their data anyway, and etcd members shutting down together would
// otherwise wait on each other for leadership transfers) and stops the
// heartbeats. Node and Pod objects stay as they are, as they would when
// kubelets die. It is safe to call more than once.
func (a *Agent) Stop() error {
	a.once.Do(func() {
		a.mu.Lock()
		a.stopped = true
		workers := make([]*podWorker, 0, len(a.workers))
		for _, w := range a.workers {
			workers = append(workers, w)
		}
		a.mu.Unlock()
		close(a.stop)
		if a.factory != nil {
			a.factory.Shutdown()
		}
		a.wg.Wait()
		var stopping sync.WaitGroup
		for _, w := range workers {
			stopping.Go(func() { w.stopContainers(true) })
		}
		stopping.Wait()
		a.probe.CloseIdleConnections()
	})
	return nil
}

// Processes returns the running container processes of all nodes.
func (a *Agent) Processes() []*process.Process {
	var out []*process.Process
	for _, w := range a.allWorkers() {
		out = append(out, w.processes()...)
	}
	return out
}

// InUse reports whether a running container process uses dir as (part of)
// a volume; the local volume cleaner asks before wiping a volume.
func (a *Agent) InUse(dir string) bool {
	for _, w := range a.allWorkers() {
		if w.usesDir(dir) {
			return true
		}
	}
	return false
}

func (a *Agent) allWorkers() []*podWorker {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*podWorker, 0, len(a.workers))
	for _, w := range a.workers {
		out = append(out, w)
	}
	return out
}

func (a *Agent) workerFor(namespace, name string) *podWorker {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.workers {
		if w.namespace == namespace && w.name == name && !w.isDone() {
			return w
		}
	}
	return nil
}

// Pod returns what the agent knows about the current pod namespace/name;
// ok is false when no node of the agent runs it.
func (a *Agent) Pod(namespace, name string) (info simnode.Pod, ok bool) {
	w := a.workerFor(namespace, name)
	if w == nil {
		return simnode.Pod{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	info = simnode.Pod{UID: w.uid, Node: w.node.cfg.Name, IP: w.ip, PodIP: a.cfg.Network.ClusterAddr(w.ip), Dir: w.dir}
	for _, c := range w.containers {
		if !c.runs {
			continue
		}
		ci := simnode.Container{Name: c.name, Restarts: c.restarts,
			LogPath: filepath.Join(w.dir, "containers", c.name+".log")}
		if c.proc != nil && c.proc.Running() {
			ci.PID = c.proc.PID()
		}
		info.Containers = append(info.Containers, ci)
	}
	slices.SortFunc(info.Containers, func(x, y simnode.Container) int { return strings.Compare(x.Name, y.Name) })
	return info, true
}
