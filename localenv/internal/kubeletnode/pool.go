package kubeletnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/localenv/internal/loopnet"
	"github.com/cozystack/tenantkit/localenv/internal/simnode"
)

// ErrInvalidConfig is returned by Start for a configuration that cannot
// work.
var ErrInvalidConfig = errors.New("kubeletnode: invalid configuration")

// ErrUnknownNode is returned by node operations for a name the pool does
// not run.
var ErrUnknownNode = errors.New("kubeletnode: unknown node")

// ErrNotRunning is returned by KillContainer when there is nothing to kill.
var ErrNotRunning = errors.New("kubeletnode: container not running")

// Config configures a Pool.
type Config struct {
	// ID names the pool's cgroup folder (tenantkit/<ID>) and its record;
	// unique among the machine's running environments. Required.
	ID string
	// Client reaches the apiserver; the pool plays the cloud controller
	// (node addresses) with it. Required.
	Client kubernetes.Interface
	// Kubeconfig is the file the kubelets connect with. Required.
	Kubeconfig string
	// Nodes are the nodes. Required; names unique. Labels are set on the
	// Node, with gpu=on for GPU nodes; Capacity is ignored (the kubelets
	// report the machine's).
	Nodes []simnode.Config
	// Network hands out the nodes' addresses: node i's is
	// Network.Subnet(i).NodeAddr(), where its kubelet listens; it is the
	// node's InternalIP and the IP of its (host-network) pods. Required.
	Network *loopnet.Network
	// Dir holds one folder per node. Required; not under /run, /var/lib or
	// /var/log, which the nodes hide behind their own tmpfs.
	Dir string
	// Binaries are the programs the nodes run. Required.
	Binaries Binaries
	// EtcdImages are the image names under which tenantkit's etcd is
	// imported on every node (pods naming another image cannot start).
	EtcdImages []string
	// DNSServer is the cluster DNS's host:port, given to etcd through its
	// image's environment (TENANTKIT_DNS_SERVER).
	DNSServer string
	// LeaseDuration is the kubelets' node lease duration; they renew it
	// every quarter of it. Default 40s (the kubelet's).
	LeaseDuration time.Duration
	// MaxRestartPeriod caps the kubelets' crash loop back-off
	// (crashLoopBackOff.maxContainerRestartPeriod; the first restart waits
	// the lesser of it and 10s). Default 5m, the kubelet's.
	MaxRestartPeriod time.Duration
	// Logger receives node events. Default: discard.
	Logger *slog.Logger
}

// Binaries are the programs a node runs.
type Binaries struct {
	Kubelet, Containerd, Runc, Ctr string
	// ImageTool is tenantkit-image; Pause and Etcd are packed into images.
	ImageTool, Pause, Etcd string
}

// Pool runs real kubelets as nodes. Its methods are safe for concurrent
// use.
type Pool struct {
	cfg    Config
	log    *slog.Logger
	roots  []string
	rel    string
	record string
	order  []string
	nodes  map[string]*node
	// stopWatch stops the image tagger.
	stopWatch context.CancelFunc
}

// node is one node's process and folders.
type node struct {
	cfg   simnode.Config
	addr  netip.Addr // see Config.Network
	paths paths
	rel   string
	procs []string
	args  []string

	mu   sync.Mutex
	proc *process.Process
}

func (c Config) validate() error {
	if c.ID == "" || c.Client == nil || c.Kubeconfig == "" || c.Dir == "" || len(c.Nodes) == 0 || c.Network == nil {
		return fmt.Errorf("%w: ID, Client, Kubeconfig, Dir, Nodes and Network are required", ErrInvalidConfig)
	}
	b := c.Binaries
	for _, f := range []string{b.Kubelet, b.Containerd, b.Runc, b.Ctr, b.ImageTool, b.Pause, b.Etcd} {
		if f == "" {
			return fmt.Errorf("%w: every binary is required", ErrInvalidConfig)
		}
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	for _, hidden := range []string{"/run", "/var/run", "/var/lib", "/var/log"} {
		if abs == hidden || strings.HasPrefix(abs, hidden+"/") {
			return fmt.Errorf("%w: Dir %s is under %s, which the nodes hide", ErrInvalidConfig, abs, hidden)
		}
	}
	seen := map[string]bool{}
	for _, n := range c.Nodes {
		if n.Name == "" || seen[n.Name] {
			return fmt.Errorf("%w: node %q: names must be unique and non-empty", ErrInvalidConfig, n.Name)
		}
		seen[n.Name] = true
	}
	return nil
}

// Start cleans up what dead environments left, then starts every node:
// its cgroups, images, containerd and kubelet, and waits until each Node is
// registered and has its address. Stop undoes it all.
func Start(ctx context.Context, cfg Config) (*Pool, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = 40 * time.Second
	}
	if cfg.MaxRestartPeriod == 0 {
		cfg.MaxRestartPeriod = 5 * time.Minute
	}
	if err := CleanLeftovers(cfg.Logger); err != nil {
		cfg.Logger.Warn("leftovers of a dead environment remain", "err", err)
	}
	roots, err := hierarchies()
	if err != nil {
		return nil, fmt.Errorf("kubeletnode: %w", err)
	}
	p := &Pool{cfg: cfg, log: cfg.Logger, roots: roots, rel: cgroupBase + "/" + cfg.ID, nodes: map[string]*node{}}
	if p.record, err = register(cfg.ID, p.rel, cfg.Dir); err != nil {
		return nil, fmt.Errorf("kubeletnode: %w", err)
	}
	for i, nc := range cfg.Nodes {
		n, err := p.prepare(ctx, nc, cfg.Network.Subnet(i).NodeAddr())
		if err != nil {
			return p, err
		}
		p.nodes[nc.Name] = n
		p.order = append(p.order, nc.Name)
	}
	for _, name := range p.order {
		if err := p.nodes[name].start(); err != nil {
			return p, err
		}
	}
	for _, name := range p.order {
		if err := p.initialize(ctx, p.nodes[name]); err != nil {
			return p, err
		}
	}
	watch, cancel := context.WithCancel(context.Background())
	p.stopWatch = cancel
	if err := p.watchImages(watch); err != nil {
		return p, fmt.Errorf("kubeletnode: %w", err)
	}
	return p, nil
}

// prepare writes a node's files and images and creates its cgroups.
func (p *Pool) prepare(ctx context.Context, nc simnode.Config, addr netip.Addr) (*node, error) {
	n := &node{cfg: nc, addr: addr, paths: paths{dir: filepath.Join(p.cfg.Dir, nc.Name)}, rel: p.rel + "/" + nc.Name}
	var err error
	if n.procs, err = createCgroup(p.roots, n.rel); err != nil {
		return nil, fmt.Errorf("kubeletnode: node %s: %w", nc.Name, err)
	}
	n.args = []string{
		"--config=" + n.paths.kubeletConf(), "--kubeconfig=" + p.cfg.Kubeconfig,
		"--hostname-override=" + nc.Name, "--root-dir=" + n.paths.kubeletRoot(),
		"--cert-dir=" + filepath.Join(n.paths.kubeletRoot(), "pki"), "--cloud-provider=external", "--v=1",
	}
	files := map[string]string{
		n.paths.containerdConf(): containerdConfig(n.paths),
		n.paths.kubeletConf():    kubeletConfig(n.paths, addr, "/"+n.rel, p.cfg.LeaseDuration, p.cfg.MaxRestartPeriod),
		filepath.Join(n.paths.dir, "cni", "conf", "10-tenantkit.conflist"): cniConfig,
		n.paths.script(): nodeScript(n.paths, nc.Name, p.cfg.Binaries, n.procs, n.args),
	}
	if err := writeFiles(n.paths, files); err != nil {
		return nil, fmt.Errorf("kubeletnode: node %s: %w", nc.Name, err)
	}
	if err := p.buildImages(ctx, n); err != nil {
		return nil, fmt.Errorf("kubeletnode: node %s: %w", nc.Name, err)
	}
	return n, nil
}

// buildImages packs the pause and etcd images the node imports. The etcd
// image's environment tells tenantkit's etcd the node's address (listening
// on 0.0.0.0 means listening there: pods share the machine's network) and
// the cluster DNS.
func (p *Pool) buildImages(ctx context.Context, n *node) error {
	b := p.cfg.Binaries
	pause := []string{"-o", filepath.Join(n.paths.images(), "pause.tar"), "-tag", PauseImage,
		"-add", b.Pause + "=/pause", "-entrypoint", "/pause"}
	etcd := []string{"-o", filepath.Join(n.paths.images(), "etcd.tar"), "-tag", etcdBaseImage,
		"-add", b.Etcd + "=/usr/local/bin/etcd", "-entrypoint", "/usr/local/bin/etcd",
		"-env", "PATH=/usr/local/bin:/usr/bin:/bin", "-env", "TENANTKIT_LISTEN_HOST=" + n.addr.String()}
	if p.cfg.DNSServer != "" {
		etcd = append(etcd, "-env", "TENANTKIT_DNS_SERVER="+p.cfg.DNSServer)
	}
	for _, img := range p.cfg.EtcdImages {
		etcd = append(etcd, "-tag", img)
	}
	for _, args := range [][]string{pause, etcd} {
		out, err := exec.CommandContext(ctx, b.ImageTool, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w: %s", b.ImageTool, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// start runs the node's script in new mount and UTS namespaces.
func (n *node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	proc, err := process.Start(process.Config{
		Name: "kubelet " + n.cfg.Name, Path: "unshare",
		Args:    []string{"--mount", "--uts", "--propagation", "private", "/bin/sh", n.paths.script()},
		LogPath: n.paths.log("kubelet"), StopGrace: 3 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("kubeletnode: %w", err)
	}
	n.proc = proc
	return nil
}

// Nodes returns the node names in configuration order.
func (p *Pool) Nodes() []string { return append([]string(nil), p.order...) }

// NodeAddr returns a node's address, the zero Addr for an unknown node.
func (p *Pool) NodeAddr(name string) netip.Addr {
	if n, ok := p.nodes[name]; ok {
		return n.addr
	}
	return netip.Addr{}
}

// Down takes a node down like a power loss: every process of the node
// (kubelet, containerd, shims, containers) is killed.
func (p *Pool) Down(_ context.Context, name string) error {
	n, ok := p.nodes[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, name)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := killCgroup(p.roots, n.rel, 30*time.Second); err != nil {
		return fmt.Errorf("kubeletnode: %w", err)
	}
	if n.proc != nil {
		<-n.proc.Done()
		n.proc = nil
	}
	p.log.Info("node down", "node", name)
	return nil
}

// Up starts a node that is down again; its kubelet restarts its pods.
func (p *Pool) Up(_ context.Context, name string) error {
	n, ok := p.nodes[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, name)
	}
	n.mu.Lock()
	running := n.proc != nil
	n.mu.Unlock()
	if running {
		return nil
	}
	p.log.Info("node up", "node", name)
	return n.start()
}

// Stop kills every node's processes and removes the pool's cgroups and
// record. The node folders stay for the caller to remove.
func (p *Pool) Stop() error {
	if p.stopWatch != nil {
		p.stopWatch()
	}
	var errs []error
	if err := killCgroup(p.roots, p.rel, 30*time.Second); err != nil {
		errs = append(errs, fmt.Errorf("kubeletnode: %w", err))
	}
	for _, n := range p.nodes {
		n.mu.Lock()
		if n.proc != nil {
			<-n.proc.Done()
			n.proc = nil
		}
		n.mu.Unlock()
	}
	if err := removeCgroup(p.roots, p.rel); err != nil {
		errs = append(errs, fmt.Errorf("kubeletnode: %w", err))
	}
	if len(errs) == 0 && p.record != "" {
		_ = os.Remove(p.record)
	}
	return errors.Join(errs...)
}
