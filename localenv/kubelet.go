package localenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv/internal/kubeletnode"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// NodeKind selects what plays a cluster's nodes (ClusterConfig.NodeKind).
type NodeKind string

const (
	// NodeAgent nodes are played by tenantkit's node agent, a stand-in for
	// the kubelet that runs etcd containers as plain processes (see
	// ClusterConfig). It starts in about a second, runs as any user and is
	// the default.
	NodeAgent NodeKind = "agent"
	// NodeKubelet nodes are real kubelets v1.37.2, each with its own
	// containerd running pods with runc (see the package documentation:
	// needs root, containerd and runc; costs about 150 MB and a few
	// seconds per node).
	NodeKubelet NodeKind = "kubelet"
)

// NodeKindEnv names the environment variable that picks the node kind of
// clusters whose ClusterConfig.NodeKind is empty ("agent" or "kubelet"), so
// that a whole test suite can run on either kind unchanged.
const NodeKindEnv = "TENANTKIT_NODE_KIND"

// ErrKubeletUnavailable is returned when NodeKubelet is selected but this
// machine cannot run kubelets: the process is not root, or containerd,
// its runc shim, runc or ctr is missing (Debian: apt-get install containerd
// runc).
var ErrKubeletUnavailable = errors.New("localenv: kubelet nodes unavailable")

// nodeKind resolves an empty kind from NodeKindEnv.
func nodeKind(k NodeKind) (NodeKind, error) {
	if k == "" {
		k = NodeKind(os.Getenv(NodeKindEnv))
	}
	switch k {
	case "", NodeAgent:
		return NodeAgent, nil
	case NodeKubelet:
		return NodeKubelet, nil
	}
	return "", fmt.Errorf("%w: node kind %q (want %q or %q)", ErrInvalidConfig, k, NodeAgent, NodeKubelet)
}

// KubeletAvailable reports why kubelet nodes cannot run here, wrapping
// ErrKubeletUnavailable, or nil when they can. Tests skip on it.
func KubeletAvailable() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: kubelet nodes need root (mounts, cgroups)", ErrKubeletUnavailable)
	}
	for _, bin := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "unshare"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%w: %s not found (Debian: apt-get install containerd runc)", ErrKubeletUnavailable, bin)
		}
	}
	return nil
}

// kubeletBinaries finds or builds everything a kubelet node runs.
func (e *Env) kubeletBinaries(ctx context.Context) (kubeletnode.Binaries, error) {
	var b kubeletnode.Binaries
	var err error
	look := func(name string) string {
		if err != nil {
			return ""
		}
		var p string
		p, err = exec.LookPath(name)
		return p
	}
	b.Containerd, b.Runc, b.Ctr = look("containerd"), look("runc"), look("ctr")
	if err != nil {
		return b, fmt.Errorf("%w: %w", ErrKubeletUnavailable, err)
	}
	for _, s := range []struct {
		server serverbin.Server
		path   *string
	}{{serverbin.Kubelet, &b.Kubelet}, {serverbin.Pause, &b.Pause}, {serverbin.ImageTool, &b.ImageTool}} {
		if *s.path, err = e.bins.path(ctx, s.server); err != nil {
			return b, err
		}
	}
	b.Etcd, err = e.bins.podEtcd(ctx)
	return b, err
}

// startKubelets starts the cluster's nodes as real kubelets and sets
// c.nodes.
func (e *Env) startKubelets(ctx context.Context, a *APIServer, cs kubernetes.Interface, c *Cluster, dir string) error {
	if err := KubeletAvailable(); err != nil {
		return err
	}
	for _, n := range c.cfg.Nodes {
		if len(n.Capacity) > 0 {
			return fmt.Errorf("%w: node %s: Capacity is not supported on kubelet nodes (they report the machine's)", ErrInvalidConfig, n.Name)
		}
	}
	bins, err := e.kubeletBinaries(ctx)
	if err != nil {
		return err
	}
	kubeconfig, err := e.kubeletKubeconfig(a)
	if err != nil {
		return err
	}
	if err := installHostNetworkPolicy(ctx, cs, e.cfg.StartTimeout); err != nil {
		return err
	}
	pool, err := kubeletnode.Start(ctx, kubeletnode.Config{
		ID: strconv.Itoa(os.Getpid()) + "-" + filepath.Base(e.dir), Client: cs, Kubeconfig: kubeconfig,
		Nodes: c.cfg.Nodes, Network: c.network, Dir: dir, Binaries: bins, EtcdImages: c.cfg.EtcdImages, DNSServer: c.dns.Addr(),
		LeaseDuration: c.cfg.NodeMonitorGracePeriod * 4 / 5, MaxRestartPeriod: max(time.Second, 30*c.cfg.restartBackoff()), Logger: e.log,
	})
	if pool != nil {
		e.OnStop(pool.Stop)
	}
	if err != nil {
		return err
	}
	c.nodes = pool
	return nil
}

// kubeletKubeconfig writes the kubeconfig the kubelets connect with. The
// apiserver authorizes with RBAC only (no Node authorizer), so the kubelets
// are cluster admins here.
func (e *Env) kubeletKubeconfig(a *APIServer) (string, error) {
	kp, err := e.ca.Issue(pki.Spec{CommonName: "tenantkit:kubelet", Organization: []string{"system:masters"}, Usage: pki.Client})
	if err != nil {
		return "", err
	}
	rc := a.RESTConfig()
	rc.CertData, rc.KeyData = kp.CertPEM, kp.KeyPEM
	path := filepath.Join(e.dir, "kubelet.kubeconfig")
	return path, writeKubeconfig(path, "kubelet", rc)
}
