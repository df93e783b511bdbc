package localenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/cozystack/tenantkit/internal/process"
	"github.com/cozystack/tenantkit/internal/serverbin"
	"github.com/cozystack/tenantkit/localenv/pki"
)

// Provider selects what backs an environment.
type Provider string

const (
	// Local runs etcd and kube-apiserver processes on loopback (default).
	Local Provider = "local"
	// Kind creates a kind cluster (needs a container runtime).
	Kind Provider = "kind"
)

// Config configures an environment. The zero value starts one etcd member
// and one kube-apiserver, as envtest does, in a new temporary directory; the other
// fields opt into more (a simulated cluster with controllers and nodes) or
// change defaults. Dex, S3 servers and Velero are started on a running
// environment by Env.StartDex, Env.StartS3 and Env.StartVelero.
type Config struct {
	// Provider selects the backend. Default: $TENANTKIT_CLUSTER, else Local.
	Provider Provider
	// KindCluster configures the cluster of the Kind provider: its
	// workers and node image.
	KindCluster KindConfig
	// Dir is the environment's working directory, removed by Stop. Default:
	// a new directory under os.TempDir.
	Dir string
	// EtcdMembers is the size of the etcd cluster. Zero means 1, as in
	// envtest; ask for 3 to test what happens when a member fails (Env.Etcd
	// kills, restarts, adds and removes members). Negative values are
	// invalid.
	EtcdMembers int
	// APIServer configures the environment's first apiserver.
	APIServer APIServerConfig
	// SkipAPIServer starts only the etcd cluster.
	SkipAPIServer bool
	// Cluster, when set, adds a simulated cluster to the first apiserver:
	// kube-controller-manager, kube-scheduler, simulated nodes that run
	// etcd pods as real processes, local volumes and cluster DNS (see
	// ClusterConfig and Env.Cluster). It turns the apiserver's
	// ServiceAccount admission plugin on. Env.StartCluster adds one later
	// instead.
	Cluster *ClusterConfig
	// Binaries names binaries to run instead of tenantkit's builds. Empty
	// fields fall back to environment variables (TENANTKIT_<NAME>_BIN,
	// envtest's KUBEBUILDER_ASSETS and TEST_ASSET_<NAME>), then to a cached
	// build; see Binaries.
	Binaries Binaries
	// BuildProgress receives a line when a server build starts, every 30
	// seconds while it runs, and when it ends: a cold build of
	// kube-apiserver takes minutes, once per machine. Default: os.Stderr;
	// io.Discard silences it.
	BuildProgress io.Writer
	// StartTimeout bounds the wait for each server to become ready.
	// Default 60s.
	StartTimeout time.Duration
	// Logger receives progress messages, and a warning for each binary of
	// another version than the pinned one. Default: discard.
	Logger *slog.Logger
}

// Env is a running environment. Its methods are safe for concurrent use.
type Env struct {
	cfg      Config
	dir      string
	ownsDir  bool
	log      *slog.Logger
	ca       *pki.CA
	etcd     *EtcdCluster
	bins     *binaries
	etcdBin  string
	started  time.Duration
	provider Provider
	rest     *rest.Config
	kubecfg  string
	kindName string

	mu         sync.Mutex
	stopped    bool
	apiservers []*APIServer
	cluster    *Cluster
	components []Component
	cleanups   []func() error
}

// Component describes a server process of the environment, for display and
// measurement.
type Component struct {
	// Name is unique in the environment, for example "etcd-0" or
	// "kube-apiserver".
	Name string
	// Version is the upstream version of the server.
	Version string
	// Endpoint is where it serves.
	Endpoint string
	// LogPath is its log file.
	LogPath string
	// Process is its process; nil for components not run as a process.
	Process *Process
}

// Start starts an environment. On error, everything already started is
// stopped again.
func Start(ctx context.Context, cfg Config) (*Env, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	e := &Env{cfg: cfg, log: cfg.Logger, provider: cfg.Provider,
		bins: newBinaries(cfg.Binaries, cfg.Logger, cfg.BuildProgress)}
	if err := e.makeDir(); err != nil {
		return nil, err
	}
	if cfg.Provider == Kind {
		err = e.startKind(ctx)
	} else {
		err = e.startLocal(ctx)
	}
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	e.started = time.Since(begin)
	e.log.Info("environment started", "dir", e.dir, "took", e.started)
	return e, nil
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Provider == "" {
		cfg.Provider = Provider(os.Getenv("TENANTKIT_CLUSTER"))
	}
	if cfg.Provider == "" {
		cfg.Provider = Local
	}
	if cfg.Provider != Local && cfg.Provider != Kind {
		return cfg, fmt.Errorf("%w: unknown provider %q (want %q or %q)", ErrInvalidConfig, cfg.Provider, Local, Kind)
	}
	if cfg.KindCluster.Workers < 0 {
		return cfg, fmt.Errorf("%w: KindCluster.Workers is %d", ErrInvalidConfig, cfg.KindCluster.Workers)
	}
	if cfg.EtcdMembers < 0 {
		return cfg, fmt.Errorf("%w: EtcdMembers is %d; an etcd cluster needs at least one member", ErrInvalidConfig, cfg.EtcdMembers)
	}
	if cfg.EtcdMembers == 0 {
		cfg.EtcdMembers = 1
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Cluster != nil {
		if cfg.Provider == Kind || cfg.SkipAPIServer {
			return cfg, fmt.Errorf("%w: Cluster needs the local provider and an apiserver", ErrInvalidConfig)
		}
		cc, err := cfg.Cluster.withDefaults()
		if err != nil {
			return cfg, err
		}
		cfg.Cluster = &cc
		cfg.APIServer.ServiceAccountAdmission = true
	}
	return cfg, nil
}

func (e *Env) makeDir() error {
	if e.cfg.Dir != "" {
		e.dir = e.cfg.Dir
		return os.MkdirAll(e.dir, 0o700)
	}
	dir, err := os.MkdirTemp("", "tenantkit-env-")
	if err != nil {
		return fmt.Errorf("localenv: %w", err)
	}
	e.dir, e.ownsDir = dir, true
	return nil
}

func (e *Env) startLocal(ctx context.Context) error {
	var err error
	if e.ca, err = pki.NewCA("tenantkit-ca"); err != nil {
		return err
	}
	if e.etcdBin, err = e.bins.path(ctx, serverbin.Etcd); err != nil {
		return err
	}
	if !e.cfg.SkipAPIServer {
		if _, err = e.bins.path(ctx, serverbin.KubeAPIServer); err != nil {
			return err
		}
	}
	etcdDir := filepath.Join(e.dir, "etcd")
	if err := os.Mkdir(etcdDir, 0o700); err != nil {
		return fmt.Errorf("localenv: %w", err)
	}
	e.etcd, err = newEtcdCluster(ctx, e.etcdBin, etcdDir, e.cfg.EtcdMembers, e.cfg.StartTimeout, e.log)
	if e.etcd != nil {
		e.OnStop(e.etcd.stop)
	}
	if err != nil {
		return err
	}
	e.log.Info("etcd cluster ready", "members", e.cfg.EtcdMembers)
	if e.cfg.SkipAPIServer {
		return nil
	}
	a, err := e.StartAPIServer(ctx, e.cfg.APIServer)
	if err != nil {
		return err
	}
	e.rest, e.kubecfg = a.RESTConfig(), a.KubeconfigPath()
	if e.cfg.Cluster != nil {
		_, err := e.startCluster(ctx, a, *e.cfg.Cluster)
		return err
	}
	return nil
}

// StartAPIServer starts another kube-apiserver on the environment's etcd
// cluster, with its own key prefix, certificates and admin kubeconfig, and
// waits until it is ready. Stop stops it with the rest of the environment.
func (e *Env) StartAPIServer(ctx context.Context, cfg APIServerConfig) (*APIServer, error) {
	if e.etcd == nil {
		return nil, ErrUnsupported
	}
	if e.isStopped() {
		return nil, ErrStopped
	}
	a, err := e.startAPIServer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.apiservers = append(e.apiservers, a)
	e.mu.Unlock()
	e.Track(Component{Name: a.Name, Version: e.bins.version(serverbin.KubeAPIServer), Endpoint: a.URL, LogPath: a.LogPath(), Process: a.proc})
	e.log.Info("apiserver ready", "name", a.Name, "url", a.URL)
	return a, nil
}

// Track registers a process started on behalf of the environment: it is
// listed by Components and stopped by Stop (newest first).
func (e *Env) Track(c Component) {
	e.mu.Lock()
	e.components = append(e.components, c)
	e.mu.Unlock()
	if c.Process != nil {
		e.OnStop(c.Process.Stop)
	}
}

// OnStop registers a function that Stop calls; functions run newest first.
func (e *Env) OnStop(f func() error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cleanups = append(e.cleanups, f)
}

// Components lists the environment's servers: the etcd members, then every
// tracked component in start order.
func (e *Env) Components() []Component {
	var out []Component
	if e.etcd != nil {
		for _, m := range e.etcd.Members() {
			out = append(out, Component{Name: m.Name, Version: e.bins.version(serverbin.Etcd), Endpoint: m.ClientURL,
				LogPath: m.LogPath(), Process: m.process()})
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return append(out, e.components...)
}

// Stop stops everything the environment started, newest first, and removes
// its directory (unless Config.Dir was given). It is safe to call more than
// once.
func (e *Env) Stop() error {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return nil
	}
	e.stopped = true
	cleanups := e.cleanups
	e.mu.Unlock()
	var errs []error
	for i := len(cleanups) - 1; i >= 0; i-- {
		errs = append(errs, cleanups[i]())
	}
	if e.ownsDir {
		errs = append(errs, os.RemoveAll(e.dir))
	}
	return errors.Join(errs...)
}

func (e *Env) isStopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

// Dir returns the environment's working directory.
func (e *Env) Dir() string { return e.dir }

// Provider returns the provider backing the environment.
func (e *Env) Provider() Provider { return e.provider }

// StartDuration returns how long Start took.
func (e *Env) StartDuration() time.Duration { return e.started }

// RESTConfig returns a new admin rest.Config for the environment's first
// apiserver (nil with SkipAPIServer).
func (e *Env) RESTConfig() *rest.Config {
	if e.rest == nil {
		return nil
	}
	return rest.CopyConfig(e.rest)
}

// KubeconfigPath returns the admin kubeconfig file of the first apiserver.
func (e *Env) KubeconfigPath() string { return e.kubecfg }

// APIServers returns the running apiservers, first one first.
func (e *Env) APIServers() []*APIServer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*APIServer(nil), e.apiservers...)
}

// Etcd returns the etcd cluster, nil for the kind provider.
func (e *Env) Etcd() *EtcdCluster { return e.etcd }

// CA returns the environment's certificate authority. The apiservers' serving
// certificates are signed by it and they trust client certificates it
// issues; components added to the environment (an OIDC issuer, an S3 server)
// take their serving certificates from it too. On the kind provider it
// signs only the added components' certificates: the cluster has kind's.
func (e *Env) CA() *pki.CA { return e.ca }

// Logger returns the environment's logger.
func (e *Env) Logger() *slog.Logger { return e.log }

// StartT starts an environment for a test and stops it in t.Cleanup. It
// skips the test under -short and when the kind provider is unavailable, and
// fails it on any other start error. When the test fails, the tail of each
// component's log is added to the test output.
func StartT(t testing.TB, cfg Config) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts real servers (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	env, err := Start(ctx, cfg)
	if errors.Is(err, ErrKindUnavailable) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("start local environment: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range env.Components() {
				if c.LogPath != "" {
					t.Logf("--- %s log tail (%s):\n%s", c.Name, c.LogPath, process.Tail(c.LogPath, 20))
				}
			}
		}
		if err := env.Stop(); err != nil {
			t.Errorf("stop local environment: %v", err)
		}
	})
	return env
}
