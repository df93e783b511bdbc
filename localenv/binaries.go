package localenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/cozystack/tenantkit/internal/serverbin"
)

// Binaries names server binaries to run instead of the ones tenantkit
// builds. Each field is a path to an executable; an empty field falls back,
// in order, to:
//
//  1. the environment variable TENANTKIT_<NAME>_BIN, for example
//     TENANTKIT_KUBE_APISERVER_BIN or TENANTKIT_VELERO_PLUGIN_FOR_AWS_BIN;
//  2. envtest's conventions: TEST_ASSET_<NAME>, then <name> in the folder
//     $KUBEBUILDER_ASSETS, which `setup-envtest use -p path` prints and
//     which holds etcd and kube-apiserver;
//  3. tenantkit's build of the pinned version, cached under
//     $TENANTKIT_CACHE_DIR (default ~/.cache/tenantkit/servers) and built on
//     first use (minutes for kube-apiserver; see Config.BuildProgress).
//
// A binary from 1 or 2 must report the same major version as the pinned
// one, and not an older one than the environment's flags need (Kubernetes
// v1.20, etcd v3.4); Start refuses it otherwise (ErrIncompatibleBinary) and
// logs any other difference from the pinned version at warning level.
//
// Etcd also runs the members of tenant etcd clusters in a simulated
// cluster (Config.Cluster), which resolve cluster DNS names through
// tenantkit's build only; there, Etcd and TENANTKIT_ETCD_BIN apply but
// envtest's etcd does not (the control plane still uses it).
type Binaries struct {
	// Etcd is etcd (pinned v3.7.3).
	Etcd string
	// KubeAPIServer is kube-apiserver (pinned v1.37.2).
	KubeAPIServer string
	// KubeControllerManager is kube-controller-manager (pinned v1.37.2),
	// run with Config.Cluster.
	KubeControllerManager string
	// KubeScheduler is kube-scheduler (pinned v1.37.2), run with
	// Config.Cluster.
	KubeScheduler string
	// Kubelet is the kubelet (pinned v1.37.2), run for clusters of kubelet
	// nodes (ClusterConfig.NodeKind).
	Kubelet string
	// Dex is dex (pinned v2.45.1), run by Env.StartDex.
	Dex string
	// VersityGW is the Versity S3 gateway (pinned v1.8.0), run by
	// Env.StartS3.
	VersityGW string
	// SeaweedFS is SeaweedFS's weed (pinned 4.53), run by Env.StartS3 with
	// the SeaweedFS backend.
	SeaweedFS string
	// Velero is the velero command (pinned v1.18.3), run by
	// Env.StartVelero.
	Velero string
	// VeleroPluginAWS is velero-plugin-for-aws (pinned v1.14.3), run by
	// Velero.
	VeleroPluginAWS string
}

// field returns the field of b for s.
func (b Binaries) field(s serverbin.Server) string {
	switch s.Name {
	case serverbin.Etcd.Name:
		return b.Etcd
	case serverbin.KubeAPIServer.Name:
		return b.KubeAPIServer
	case serverbin.KubeControllerManager.Name:
		return b.KubeControllerManager
	case serverbin.KubeScheduler.Name:
		return b.KubeScheduler
	case serverbin.Kubelet.Name:
		return b.Kubelet
	case serverbin.Dex.Name:
		return b.Dex
	case serverbin.VersityGW.Name:
		return b.VersityGW
	case serverbin.SeaweedFS.Name:
		return b.SeaweedFS
	case serverbin.Velero.Name:
		return b.Velero
	case serverbin.VeleroPluginAWS.Name:
		return b.VeleroPluginAWS
	}
	return ""
}

// binaries finds the environment's binaries, each once.
type binaries struct {
	cfg     Binaries
	log     *slog.Logger
	builder *serverbin.Builder

	mu    sync.Mutex
	found map[binaryUse]foundBinary
}

// binaryUse is a server and whether an upstream (envtest) binary may serve.
type binaryUse struct {
	name     string
	upstream bool
}

type foundBinary struct{ path, version string }

func newBinaries(cfg Binaries, log *slog.Logger, progress io.Writer) *binaries {
	return &binaries{cfg: cfg, log: log, builder: &serverbin.Builder{Progress: progress},
		found: map[binaryUse]foundBinary{}}
}

// path returns the binary to run for s (see Binaries).
func (b *binaries) path(ctx context.Context, s serverbin.Server) (string, error) {
	f, err := b.find(ctx, s, true)
	return f.path, err
}

// prepare builds together, in one go build where they share a module, the
// servers that no field or environment variable overrides and the cache
// lacks (kube-controller-manager with kube-scheduler, velero with its
// plugin), so that path finds them built.
func (b *binaries) prepare(ctx context.Context, servers ...serverbin.Server) error {
	var build []serverbin.Server
	for _, s := range servers {
		if b.cfg.field(s) != "" {
			continue
		}
		if _, _, ok := serverbin.Override(s, true); !ok {
			build = append(build, s)
		}
	}
	if len(build) < 2 {
		return nil // path builds a lone server itself
	}
	if _, err := b.builder.Build(ctx, build...); err != nil {
		return fmt.Errorf("localenv: %w", err)
	}
	return nil
}

// podEtcd returns tenantkit's etcd for simulated pods.
func (b *binaries) podEtcd(ctx context.Context) (string, error) {
	f, err := b.find(ctx, serverbin.Etcd, false)
	return f.path, err
}

// version returns the version of the binary found for s: the one it
// reported when it overrides the build, else the pinned one.
func (b *binaries) version(s serverbin.Server) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f, ok := b.found[binaryUse{s.Name, true}]; ok && f.version != "" {
		return f.version
	}
	return s.Version
}

func (b *binaries) find(ctx context.Context, s serverbin.Server, upstream bool) (foundBinary, error) {
	use := binaryUse{s.Name, upstream}
	b.mu.Lock()
	f, ok := b.found[use]
	b.mu.Unlock()
	if ok {
		return f, nil
	}
	path, source := b.cfg.field(s), "localenv.Binaries"
	if path == "" {
		path, source, _ = serverbin.Override(s, upstream)
	}
	if path == "" {
		p, err := b.builder.Path(ctx, s)
		if err != nil {
			return f, fmt.Errorf("localenv: %s: %w", s.Name, err)
		}
		f = foundBinary{path: p, version: s.Version}
	} else {
		v, err := serverbin.CheckBinary(ctx, s, path)
		if err != nil {
			return f, fmt.Errorf("%w: %s from %s: %w", ErrIncompatibleBinary, s.Name, source, err)
		}
		f = foundBinary{path: path, version: v}
		switch v {
		case s.Version:
			b.log.Info("using a binary instead of the build", "server", s.Name, "path", path, "from", source, "version", v)
		case "":
			b.log.Info("using a binary whose version is not checked", "server", s.Name, "path", path, "from", source, "pinned", s.Version)
		default:
			b.log.Warn("using a binary of another version than the pinned one", "server", s.Name, "path", path, "from", source, "version", v, "pinned", s.Version)
		}
	}
	b.mu.Lock()
	b.found[use] = f
	b.mu.Unlock()
	return f, nil
}
