package localenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/cozystack/tenantkit/internal/kindnode"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// KindConfig configures the kind cluster of the Kind provider.
type KindConfig struct {
	// Workers is the number of worker nodes beside the one control plane
	// node. Negative values are invalid.
	Workers int
	// NodeImage is the node image. Default: $TENANTKIT_KIND_NODE_IMAGE,
	// else tenantkit's own node image (`make kind-node-image`), which
	// Start builds offline when the engine lacks it and this process may
	// (root, debootstrap). Start never pulls an image.
	NodeImage string
	// ReadyTimeout bounds the wait for every node to be Ready after kind
	// created the cluster. Default 5 minutes.
	ReadyTimeout time.Duration
	// AuthenticationConfig, when not nil, is the structured authentication
	// configuration (an AuthenticationConfiguration document) the control
	// plane's kube-apiserver starts with (--authentication-config, as
	// package oidc renders it for a tenant cluster). It lives in a folder
	// of the environment mounted into the control-plane node (kind's
	// extraMounts, then kubeadm's apiServer extraVolumes);
	// Env.SetKindAuthenticationConfig replaces it on the running cluster
	// and waits for the apiserver's reload. Issuers must be reachable from
	// the node: start with a configuration without JWT issuers (apiVersion
	// apiserver.config.k8s.io/v1 and kind only) and set the real one once
	// the issuer runs, as StartDex on KindHostAddress. Nil: the apiserver
	// has no --authentication-config.
	AuthenticationConfig []byte
	// ControlPlaneWorkloads lets the control-plane node run workloads, as
	// kind's own one-node clusters do: kubeadm registers it without the
	// node-role.kubernetes.io/control-plane:NoSchedule taint. With Workers
	// 3 a three-member tenant etcd then has a fourth node to move to.
	ControlPlaneWorkloads bool
}

// kindNetworkPrefix names the docker network of each tenantkit kind
// cluster: one per cluster, removed with it.
const kindNetworkPrefix = "tenantkit-kind-"

// kindEnvMu serializes the process-wide environment that kind's own
// docker calls read (PATH, KIND_EXPERIMENTAL_DOCKER_NETWORK).
var kindEnvMu sync.Mutex

// startKind creates a kind cluster owned by this process and points the
// environment at it.
func (e *Env) startKind(ctx context.Context) error {
	kc := e.cfg.KindCluster
	if err := exec.CommandContext(ctx, "docker", "info").Run(); err != nil {
		return fmt.Errorf("%w: %w", ErrKindUnavailable, errNoEngine)
	}
	if err := checkInotify(1 + kc.Workers); err != nil {
		return err
	}
	image, err := e.kindImage(ctx)
	if err != nil {
		return err
	}
	mode, err := probeEngine(ctx, image)
	if err != nil {
		return err
	}
	provider := cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindLogger{e.log}))
	if err := cleanKindLeftovers(ctx, provider, e.log); err != nil {
		e.log.Warn("kind leftovers", "err", err)
	}
	name, err := kindClusterName()
	if err != nil {
		return err
	}
	// The environment's CA signs the certificates of servers added to the
	// cluster's environment (StartDex, StartS3), not the cluster's own.
	if e.ca, err = pki.NewCA("tenantkit-ca"); err != nil {
		return err
	}
	e.kubecfg, e.kindName = filepath.Join(e.dir, "kind.kubeconfig"), name
	e.OnStop(func() error { return deleteKindCluster(provider, name, e.kubecfg) })
	e.log.Info("creating kind cluster", "name", name, "image", image, "workers", kc.Workers,
		"refusesPrivileged", mode.refusesPrivileged, "cgroupV1", mode.cgroupV1)
	if err := e.createKind(provider, name, image, mode); err != nil {
		return err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", e.kubecfg)
	if err != nil {
		return fmt.Errorf("localenv: kind kubeconfig: %w", err)
	}
	e.rest = rc
	return waitNodesReady(ctx, rc, 1+kc.Workers, kc.ReadyTimeout)
}

// kindImage returns the node image, building tenantkit's when missing.
func (e *Env) kindImage(ctx context.Context) (string, error) {
	img := e.cfg.KindCluster.NodeImage
	if img == "" {
		img = os.Getenv("TENANTKIT_KIND_NODE_IMAGE")
	}
	if img != "" {
		if exec.CommandContext(ctx, "docker", "image", "inspect", img).Run() != nil {
			return "", fmt.Errorf("%w: node image %s is not in docker's image store (Start never pulls; docker pull or load it)", ErrKindUnavailable, img)
		}
		return img, nil
	}
	b := &kindnode.Builder{Progress: e.cfg.BuildProgress}
	img, err := b.Ensure(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: tenantkit's node image (make kind-node-image): %w", ErrKindUnavailable, err)
	}
	return img, nil
}

// createKind runs kind's Create with the adaptations mode asks for: the
// docker wrapper first on PATH, the cluster's own network, on cgroup v1
// hosts the kubelet's failCgroupV1: false, the untainted control plane of
// KindConfig.ControlPlaneWorkloads, and the apiserver's authentication
// configuration when KindConfig.AuthenticationConfig is set.
func (e *Env) createKind(provider *cluster.Provider, name, image string, mode engineMode) error {
	cfg := &v1alpha4.Cluster{Nodes: []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: image}}}
	for range e.cfg.KindCluster.Workers {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: image})
	}
	if mode.cgroupV1 {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches,
			"kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nfailCgroupV1: false\n")
	}
	if e.cfg.KindCluster.ControlPlaneWorkloads {
		cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches,
			"kind: InitConfiguration\nnodeRegistration:\n  taints: []\n")
	}
	if err := e.addKindAuthn(cfg); err != nil {
		return err
	}
	kindEnvMu.Lock()
	defer kindEnvMu.Unlock()
	restore := setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", kindNetworkPrefix+name)
	defer restore()
	if mode.refusesPrivileged {
		dir, err := os.MkdirTemp("", "tenantkit-kind-docker-")
		if err != nil {
			return fmt.Errorf("localenv: %w", err)
		}
		defer os.RemoveAll(dir)
		if err := writeDockerWrapper(dir); err != nil {
			return fmt.Errorf("localenv: docker wrapper: %w", err)
		}
		defer setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))()
	}
	err := provider.Create(name, cluster.CreateWithV1Alpha4Config(cfg), cluster.CreateWithKubeconfigPath(e.kubecfg),
		cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false))
	if err != nil {
		return fmt.Errorf("localenv: create kind cluster %s: %w (%s)", name, err, kindNodesState(name))
	}
	return nil
}

// kindNodesState describes the cluster's node containers, for an error:
// each one's state, exit code and restarts, and the last lines of its
// output (what a node that stopped early said).
func kindNodesState(name string) string {
	ids, err := kindNodeContainers(name)
	if err != nil {
		return "node containers: " + err.Error()
	}
	var b strings.Builder
	for _, id := range ids {
		st, _ := exec.Command("docker", "inspect", "-f", "{{.Name}}: {{.State.Status}}, exit code {{.State.ExitCode}}, {{.RestartCount}} restarts {{.State.Error}}", id).CombinedOutput()
		logs, _ := exec.Command("docker", "logs", "--tail", "5", id).CombinedOutput()
		fmt.Fprintf(&b, "%s; output: %s; ", strings.TrimSpace(string(st)), tailString(strings.TrimSpace(string(logs)), 600))
	}
	if b.Len() == 0 {
		return "no node containers"
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// kindNodeContainers returns the IDs of the cluster's node containers,
// stopped ones included.
func kindNodeContainers(name string) ([]string, error) {
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=io.x-k8s.kind.cluster="+name).Output()
	return strings.Fields(string(out)), err
}

// KindClusterName returns the name of the environment's kind cluster ("" for
// the local provider). Its nodes are the containers labelled
// io.x-k8s.kind.cluster=<name>, on the docker network
// tenantkit-kind-<name>.
func (e *Env) KindClusterName() string { return e.kindName }

// setenv sets k to v and returns what restores its previous value.
func setenv(k, v string) func() {
	old, had := os.LookupEnv(k)
	os.Setenv(k, v)
	return func() {
		if had {
			os.Setenv(k, old)
		} else {
			os.Unsetenv(k)
		}
	}
}

// deleteKindCluster deletes the cluster's nodes (containers with their
// volumes) and its network.
// kubeconfig is the file kind removes the cluster's entries from.
func deleteKindCluster(provider *cluster.Provider, name, kubeconfig string) error {
	var errs []error
	err := provider.Delete(name, kubeconfig)
	if thawNodes(name) > 0 {
		// A node whose frozen cgroup kept it from exiting: again.
		err = provider.Delete(name, kubeconfig)
	}
	if err != nil {
		errs = append(errs, err)
	}
	out, err := exec.Command("docker", "network", "rm", kindNetworkPrefix+name).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "No such network") && !strings.Contains(string(out), "not found") {
		errs = append(errs, fmt.Errorf("docker network rm: %s", strings.TrimSpace(string(out))))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("localenv: delete kind cluster %s: %w", name, err)
	}
	return nil
}
